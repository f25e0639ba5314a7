"""The one registry of implemented APIs: it refuses duplicates and is the single source of
the versions ApiVersions advertises, so kcoord never advertises what it cannot decode and
encode (the server advertises the registered APIs it also routes: ``coordinator/server/
apis.py``; codecs may land before their handlers).

``VERSION_TABLE`` lists every API with its module (under ``wire.apis``) and version range;
ApiVersions is answered from it without importing the modules (startup time), and each
module's schemas must have exactly its range (``register`` refuses anything else; every
module is imported by ``all_apis`` and so by the wire tests). ``lookup`` imports an API's
module on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from wire.fields import Message

__all__ = ["VERSION_TABLE", "ApiSpec", "ApiVersionRange", "all_apis", "implemented", "lookup",
           "register"]


class ApiVersionRange(NamedTuple):
    """One implemented API: its key, module (``wire.apis.<module>``) and version range."""

    api_key: int
    module: str
    min_version: int
    max_version: int


VERSION_TABLE: tuple[ApiVersionRange, ...] = (
    ApiVersionRange(0, "produce", 3, 13),
    ApiVersionRange(1, "fetch", 4, 18),
    ApiVersionRange(2, "list_offsets", 0, 11),
    ApiVersionRange(3, "metadata", 0, 13),
    ApiVersionRange(8, "offset_commit", 0, 10),
    ApiVersionRange(9, "offset_fetch", 0, 10),
    ApiVersionRange(10, "find_coordinator", 0, 6),
    ApiVersionRange(11, "join_group", 0, 9),
    ApiVersionRange(12, "heartbeat", 0, 4),
    ApiVersionRange(13, "leave_group", 0, 5),
    ApiVersionRange(14, "sync_group", 0, 5),
    ApiVersionRange(15, "describe_groups", 0, 6),
    ApiVersionRange(16, "list_groups", 0, 5),
    ApiVersionRange(17, "sasl_handshake", 0, 1),
    ApiVersionRange(18, "api_versions", 0, 4),
    ApiVersionRange(19, "create_topics", 0, 7),
    ApiVersionRange(20, "delete_topics", 0, 6),
    ApiVersionRange(21, "delete_records", 0, 2),
    ApiVersionRange(22, "init_producer_id", 0, 5),
    ApiVersionRange(23, "offset_for_leader_epoch", 2, 4),
    ApiVersionRange(24, "add_partitions_to_txn", 0, 5),
    ApiVersionRange(25, "add_offsets_to_txn", 0, 4),
    ApiVersionRange(26, "end_txn", 0, 5),
    ApiVersionRange(28, "txn_offset_commit", 0, 5),
    ApiVersionRange(29, "describe_acls", 1, 3),
    ApiVersionRange(30, "create_acls", 1, 3),
    ApiVersionRange(31, "delete_acls", 1, 3),
    ApiVersionRange(32, "describe_configs", 0, 4),
    ApiVersionRange(33, "alter_configs", 0, 2),
    ApiVersionRange(34, "alter_replica_log_dirs", 1, 2),
    ApiVersionRange(35, "describe_log_dirs", 1, 4),
    ApiVersionRange(36, "sasl_authenticate", 0, 2),
    ApiVersionRange(37, "create_partitions", 0, 3),
    ApiVersionRange(42, "delete_groups", 0, 2),
    ApiVersionRange(43, "elect_leaders", 0, 2),
    ApiVersionRange(44, "incremental_alter_configs", 0, 1),
    ApiVersionRange(45, "alter_partition_reassignments", 0, 1),
    ApiVersionRange(46, "list_partition_reassignments", 0, 0),
    ApiVersionRange(47, "offset_delete", 0, 0),
    ApiVersionRange(48, "describe_client_quotas", 0, 1),
    ApiVersionRange(49, "alter_client_quotas", 0, 1),
    ApiVersionRange(50, "describe_user_scram_credentials", 0, 0),
    ApiVersionRange(51, "alter_user_scram_credentials", 0, 0),
    ApiVersionRange(55, "describe_quorum", 0, 2),
    ApiVersionRange(60, "describe_cluster", 0, 2),
    ApiVersionRange(61, "describe_producers", 0, 0),
    ApiVersionRange(65, "describe_transactions", 0, 0),
    ApiVersionRange(66, "list_transactions", 0, 1),
    ApiVersionRange(68, "consumer_group_heartbeat", 0, 1),
    ApiVersionRange(69, "consumer_group_describe", 0, 1),
    ApiVersionRange(74, "list_config_resources", 0, 1),
    ApiVersionRange(75, "describe_topic_partitions", 0, 0),
    ApiVersionRange(76, "share_group_heartbeat", 1, 1),
    ApiVersionRange(77, "share_group_describe", 1, 1),
    ApiVersionRange(78, "share_fetch", 1, 2),
    ApiVersionRange(79, "share_acknowledge", 1, 2),
    ApiVersionRange(90, "describe_share_group_offsets", 0, 1),
    ApiVersionRange(91, "alter_share_group_offsets", 0, 0),
    ApiVersionRange(92, "delete_share_group_offsets", 0, 0),
)
_BY_KEY = {api.api_key: api for api in VERSION_TABLE}


@dataclass(frozen=True)
class ApiSpec:
    """One Kafka API: its key, name and request/response schemas (same version range)."""

    api_key: int
    name: str
    request: Message
    response: Message

    @cached_property
    def min_version(self) -> int:
        """Lowest implemented version."""
        return self.request.version_range.start

    @cached_property
    def max_version(self) -> int:
        """Highest implemented version."""
        return self.request.version_range.stop - 1

    def supports(self, version: int) -> bool:
        """Whether ``version`` is implemented."""
        return self.min_version <= version <= self.max_version


_REGISTRY: dict[int, ApiSpec] = {}


def register(spec: ApiSpec) -> ApiSpec:
    """Add an API; a second registration of the same key, or one whose versions are not
    ``VERSION_TABLE``'s, is a programming error."""
    if spec.api_key in _REGISTRY:
        raise ValueError(f"API key {spec.api_key} ({spec.name}) is already registered")
    if spec.request.versions() != spec.response.versions():
        raise ValueError(f"{spec.name}: request and response version ranges differ")
    declared = _BY_KEY.get(spec.api_key)
    if declared is None or (declared.min_version, declared.max_version) != (
        spec.min_version,
        spec.max_version,
    ):
        raise ValueError(f"{spec.name}: versions v{spec.min_version}-v{spec.max_version} are "
                         f"not VERSION_TABLE's {declared}")
    _REGISTRY[spec.api_key] = spec
    return spec


def implemented(api_key: int) -> bool:
    """Whether ``api_key`` is an implemented API (without importing its module)."""
    return api_key in _BY_KEY


def lookup(api_key: int) -> ApiSpec | None:
    """The registered API for a key (its module imported on first use), or None."""
    spec = _REGISTRY.get(api_key)
    if spec is None and api_key in _BY_KEY:
        importlib.import_module(f"wire.apis.{_BY_KEY[api_key].module}")
        spec = _REGISTRY[api_key]
    return spec


def all_apis() -> list[ApiSpec]:
    """Every API, by key (importing every module)."""
    specs = [lookup(api.api_key) for api in VERSION_TABLE]
    return sorted((s for s in specs if s is not None), key=lambda s: s.api_key)
