"""The process's file descriptors, shared out so that neither connections nor segment files
can take the ones the other needs (issue 32 item 6).

At start the soft ``RLIMIT_NOFILE`` is raised to the hard limit, as the JVM does for Kafka
(HotSpot's ``MaxFDLimit``, on by default). Of what that allows, ``RESERVED`` descriptors
stay free for everything else (the metadata log, listeners, a segment read, a directory
fsync, a new partition's first files); the partition logs keep at most a quarter of the
rest open (``kcoord.max.open.segment.files`` if lower), and connections get what remains:
one more is closed as soon as it is accepted, like one beyond ``max.connections``. A flood
of connections therefore never leaves storage without a descriptor, and accept failing
with EMFILE (still possible: other processes, the early listener) only pauses accepting
(``trio.serve_listeners`` waits 100 ms and retries).
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass

__all__ = ["RESERVED", "DescriptorBudget", "descriptor_budget"]

log = logging.getLogger(__name__)

#: Descriptors kept for everything but connections and open segment files.
RESERVED = 64
_MIN_SHARE = 8


@dataclass(frozen=True)
class DescriptorBudget:
    """How many descriptors segment files and connections may each hold."""

    limit: int
    segment_files: int
    connections: int


def _raise_soft_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.debug("cannot raise the descriptor limit to %d: %s", hard, exc)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def descriptor_budget(max_open_segment_files: int) -> DescriptorBudget:
    """The shares for this process's descriptor limit (raised to the hard limit first)."""
    limit = _raise_soft_limit()
    spare = max(limit - RESERVED, 2 * _MIN_SHARE)
    files = max(_MIN_SHARE, min(max_open_segment_files, spare // 4))
    return DescriptorBudget(limit, files, max(_MIN_SHARE, spare - files))
