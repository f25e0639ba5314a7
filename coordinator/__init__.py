"""kcoord's coordinator: the sans-I/O group coordinator core, its records and config, and the
Trio server and CLI around it."""
