"""The topics a consumer group can subscribe to, as the coordinator sees them (Kafka's
MetadataImage, reduced to what the consumer group protocol reads): name, id and partition
count per topic. The broker hands the core a new image whenever its topics change; the core
never reads the broker's topic store itself.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from coordinator.core.subscription_regex import InvalidRegularExpression, compile_regex
from wire.bounded_cache import BoundedCache

__all__ = ["EMPTY_IMAGE", "TopicsImage"]

#: The most patterns one image keeps the matches of.
_MAX_MEMOISED_REGEXES = 4096


class TopicsImage:
    """An immutable snapshot of the broker's topics. ``version`` orders images (it is the
    broker's topic-store version), so the core can tell whether anything changed."""

    __slots__ = ("_regex_matches", "by_id", "by_name", "version")

    def __init__(self, topics: Iterable[tuple[str, uuid.UUID, int]] = (), version: int = 0):
        self.by_name: Mapping[str, tuple[uuid.UUID, int]] = MappingProxyType(
            {name: (topic_id, partitions) for name, topic_id, partitions in topics}
        )
        self.by_id: Mapping[uuid.UUID, str] = MappingProxyType(
            {topic_id: name for name, (topic_id, _) in self.by_name.items()}
        )
        self.version = version
        # Each pattern is matched against this image's names once, whoever subscribes to it.
        self._regex_matches: BoundedCache[str, frozenset[uuid.UUID]] = BoundedCache(
            _MAX_MEMOISED_REGEXES)

    def resolve(self, names: Iterable[str], regex: str | None) -> frozenset[uuid.UUID]:
        """Ids of the existing topics among ``names`` or whose whole name ``regex`` (RE2
        syntax) matches."""
        by_name = self.by_name
        ids = {by_name[name][0] for name in names if name in by_name}
        if regex is not None:
            ids.update(self._matching(regex))
        return frozenset(ids)

    def _matching(self, regex: str) -> frozenset[uuid.UUID]:
        matches = self._regex_matches.get(regex)
        if matches is None:
            try:
                compiled = compile_regex(regex)
            except InvalidRegularExpression:  # persisted by a writer that accepted it
                compiled = None
            by_name = self.by_name
            # (A full cache holds patterns of members long gone, as a rule.)
            matches = self._regex_matches.put(regex, frozenset(
                by_name[name][0] for name in by_name
                if compiled is not None and compiled.fullmatch(name)
            ))
        return matches

    def metadata_hash(self, topic_ids: Iterable[uuid.UUID]) -> int:
        """A stable 64-bit hash of the topics' names, ids and partition counts (Kafka's
        group metadata hash, KIP-1101, in spirit: a change means the group must rebalance).
        0 for no topics."""
        lines = []
        for topic_id in sorted(topic_ids):
            name = self.by_id.get(topic_id)
            if name is not None:
                lines.append(f"{name}\0{topic_id}\0{self.by_name[name][1]}")
        if not lines:
            return 0
        digest = hashlib.blake2b("\n".join(lines).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)


#: What the core sees before the broker hands it topics; its version matches no topic store's
#: (those start at 0), so the first request always installs the broker's image.
EMPTY_IMAGE = TopicsImage(version=-1)
