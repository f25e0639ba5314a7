"""kcoord storage: the append-only, checksummed record log behind the coordinator.

Modules: ``record_codec`` and ``schemas`` (Kafka's ``__consumer_offsets`` key/value
schemas), ``segment`` (entry framing, segment header), ``layout`` (file names, batches),
``log`` (the file log: recovery, appends, replay), ``replay`` (the replay fast path),
``async_log`` (Trio wrapper: group commit, interval fsync), ``compaction``, ``fs`` (file
system interface with fault injection for tests), ``errors`` (exceptions and their Kafka
error codes), ``dump`` (``kcoord log dump``). The byte format is in ``FORMAT.md``.
"""
