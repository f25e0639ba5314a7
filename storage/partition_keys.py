"""The keys of a topic partition log's entries (a segment log of Kafka record batches).

A batch entry's key is the batch's base offset; two markers have no value: a log-start
entry (DeleteRecords moved the log start) and the cleaner's cleaned-start entry. The topic
store reads them at every start; the log cleaner writes them. Apart from ``log_cleaner``
so that opening the topic store does not import the cleaner (it costs 30-100 ms of start-up
on a shared two-core machine, measured with ``-X importtime``).
"""

from __future__ import annotations

import struct

__all__ = ["BATCH_KEY", "CLEANED_START_PREFIX", "LOG_START_PREFIX"]

#: The key of a batch entry: its base offset.
BATCH_KEY = struct.Struct(">q")
#: A log-start entry's key starts with this (then the offset, int64); it has no value:
#: DeleteRecords moved the log start there (it only moves up).
LOG_START_PREFIX = b"L"
#: The cleaner's entry at the head of the log's first segment: the log start offset when it
#: cleaned (it may lie below the first batch kept); no value.
CLEANED_START_PREFIX = b"C"
