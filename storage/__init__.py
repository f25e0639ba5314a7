"""kcoord storage: the append-only, checksummed record log behind the coordinator.

Modules, bottom up:

- ``records``: the record types (frozen dataclasses); ``record_schemas``: their byte layout,
  declared with wire's schema DSL; ``record_mapping``: the generic mapping between the two;
  ``record_codec``: records <-> bytes (the record-type table, and fast paths for commits).
- ``segment``: the segment header and entry framing: the one walk over entries every reader
  builds on (``frames``) and the general reader that says why a walk stopped
  (``scan_entries``); ``fast_decode``: the decoding loop replay runs first, on ``frames``;
  ``live_index``: the chunked check open runs, which also notes each key's newest entry;
  ``full_replay``: ``Log.replay``, every record (fast path first, then the general one);
  ``live_replay``: ``Log.replay_live``, decoding only those (what the server replays);
  ``segment_summary``: a closed segment's sidecar summary of that check, which open uses
  instead of walking its entries when the segment's CRC-32 matches.
- ``directory``: file names, the directory lock and the one view of a data directory's segments
  (``find_segments``); ``batch``: records framed for one write; ``policy``: the fsync and
  recovery policies.
- ``recovery`` (what ``Log.open`` repairs), ``log`` (the file log: appends, replay),
  ``async_log`` (the Trio side: writes and fsyncs off the event loop, interval flushing,
  compaction), ``compaction``, ``child_process`` (the server's snapshot builds and
  compaction rewrites run as ``python -m`` children: ``snapshot_process``,
  ``compaction_process``, so they do not hold the GIL its event loop needs), ``fs``
  (file-system interface with fault injection for tests), ``errors`` (exceptions and the
  Kafka append error each stands for), ``dump`` (``kcoord log dump``), and ``pipeline``
  (the PySpark jobs).

The byte format is in ``FORMAT.md``.
"""
