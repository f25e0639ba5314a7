"""``python -m coordinator``: the same entry point as the ``kcoord`` command."""

from coordinator.cli import main

raise SystemExit(main())
