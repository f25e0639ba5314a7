"""Client quotas: the quota of each entity, and the records that change them (Kafka's
``ClientQuotaControlManager``, which plans AlterClientQuotas, and ``ClientQuotasImage``,
which answers DescribeClientQuotas).

An entity is a set of (entity type, entity name) components: ``user``, ``client-id`` (alone
or together) or ``ip`` (alone); a null name is the type's default entity. Its quotas are
``producer_byte_rate`` and ``consumer_byte_rate`` (LONG), ``request_percentage`` and
``controller_mutation_rate`` (DOUBLE) for users and client ids, ``connection_creation_rate``
(INT) for an ip. Planning (``alter``) validates each entity and returns the records it
writes, changing nothing; ``apply`` changes state from one record, live (once durable) and
at replay alike. Kafka's messages are kept word for word, their typos included.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from storage.config_records import (
    ClientQuotaEntityData,
    ClientQuotaRecordKey,
    ClientQuotaRecordValue,
)
from storage.records import Record
from wire.constants import ErrorCode

__all__ = [
    "CLIENT_ID",
    "IP",
    "MATCH_DEFAULT",
    "MATCH_EXACT",
    "MATCH_SPECIFIED",
    "USER",
    "ClientQuotas",
    "Entity",
    "FilterComponent",
    "QuotaAlteration",
    "QuotaError",
    "entity_of",
    "is_ip_literal",
]

USER, CLIENT_ID, IP = "user", "client-id", "ip"
#: DescribeClientQuotas' match types (``DescribeClientQuotasRequest.MATCH_TYPE_*``).
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

#: An entity: its (type, name) components, sorted by type (Java's HashMap order for
#: user and client-id, the order Kafka prints them in).
Entity = tuple[tuple[str, str | None], ...]

_LONG, _INT, _DOUBLE = "LONG", "INT", "DOUBLE"
#: ``QuotaConfig.userAndClientQuotaConfigs`` and ``QuotaConfig.ipConfigs``: key -> type.
USER_AND_CLIENT_KEYS = {"producer_byte_rate": _LONG, "consumer_byte_rate": _LONG,
                        "request_percentage": _DOUBLE, "controller_mutation_rate": _DOUBLE}
IP_KEYS = {"connection_creation_rate": _INT}
_BYTE_RATE_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate"})
#: The largest value of each integral type, as Java compares a double with it.
_MAX = {_LONG: float(2**63 - 1), _INT: float(2**31 - 1)}
_TOO_LARGE = {_LONG: "a LONG", _INT: "an INT"}


class QuotaError(Exception):
    """An entity's (or a describe request's) answer: Kafka's error code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> QuotaError:
    return QuotaError(ErrorCode.INVALID_REQUEST, message)


@dataclass(frozen=True, slots=True)
class QuotaAlteration:
    """One AlterClientQuotas entry: its entity and (key, value) ops, a None value removing
    the key (Kafka's ``ClientQuotaAlteration``)."""

    entity: Entity
    ops: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True, slots=True)
class FilterComponent:
    """One DescribeClientQuotas filter component."""

    entity_type: str
    match_type: int
    match: str | None


def entity_of(components: Iterable[tuple[str, str | None]]) -> Entity:
    """The entity of (type, name) components; a type given twice keeps its last name, as
    the request's ``HashMap`` does."""
    return tuple(sorted(dict(components).items()))


def entity_text(entity: Entity) -> str:
    """Kafka's ``ClientQuotaEntity.toString``."""
    inner = ", ".join(f"{kind}={name}" for kind, name in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


def is_ip_literal(name: str) -> bool:
    """Whether ``name`` is an IPv4 or IPv6 address (no lookup needed)."""
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


class ClientQuotas:
    """Every entity's quotas, their planning and replay (module docstring)."""

    def __init__(self) -> None:
        self.quotas: dict[Entity, dict[str, float]] = {}
        #: How many producer_byte_rate and consumer_byte_rate quotas are set (enforced
        #: only while there are some: ``coordinator.configs.quota_rates``).
        self.byte_rate_quotas = 0
        #: How many request_percentage quotas are set (likewise).
        self.request_quotas = 0

    # ------------------------------------------------------------------ planning

    def alter(self, alterations: Sequence[QuotaAlteration],
              resolvable: Callable[[str], bool] = is_ip_literal,
              ) -> tuple[list[Record], dict[Entity, QuotaError | None]]:
        """The records AlterClientQuotas writes and each entity's answer (None: done); an
        ip entity's name is valid if ``resolvable`` says so (``InetAddress.getByName``)."""
        records: list[Record] = []
        results: dict[Entity, QuotaError | None] = {}
        for alteration in alterations:
            entity = alteration.entity
            ops: dict[str, float | None] = {}
            for key, value in alteration.ops:
                if key in ops:
                    results[entity] = _invalid(f"Duplicate quota key {key} not updating quota "
                                               f"for this entity {entity_text(entity)}")
                else:
                    ops[key] = value
            if entity in results:  # a duplicate key, or the entity seen before
                results[entity] = _invalid(f"Ignoring duplicate entity {entity_text(entity)}")
                continue
            try:
                records += self._alter_entity(entity, ops, resolvable)
                results[entity] = None
            except QuotaError as exc:
                results[entity] = exc
        return records, results

    def _alter_entity(self, entity: Entity, ops: Mapping[str, float | None],
                      resolvable: Callable[[str], bool]) -> list[Record]:
        keys = _keys_of(entity, resolvable)
        current = self.quotas.get(entity, {})
        record_entity = tuple(ClientQuotaEntityData(kind, name) for kind, name in entity)
        out = []
        for key, value in ops.items():
            if value is None:
                if key in current:
                    out.append(Record(ClientQuotaRecordKey(record_entity, key), None))
                continue
            _validate_value(keys, key, value)
            if current.get(key) != value:
                out.append(Record(ClientQuotaRecordKey(record_entity, key),
                                  ClientQuotaRecordValue(value)))
        return out

    # ------------------------------------------------------------------ reading

    def describe(self, components: Sequence[FilterComponent],
                 strict: bool) -> list[tuple[Entity, dict[str, float]]]:
        """The entities a DescribeClientQuotas filter matches, with their quotas; a bad
        filter raises QuotaError (``ClientQuotasImage.describe``)."""
        exact: dict[str, str | None] = {}
        specified: set[str] = set()
        for component in components:
            kind = component.entity_type
            if not kind:
                raise _invalid("Invalid empty entity type.")
            if kind in exact or kind in specified:
                raise _invalid(f"Entity type {kind} cannot appear more than once in the filter.")
            if kind not in (IP, USER, CLIENT_ID):
                raise QuotaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
            if component.match_type == MATCH_EXACT:
                if component.match is None:
                    raise _invalid("Request specified MATCH_TYPE_EXACT, but set match string "
                                   "to null.")
                exact[kind] = component.match
            elif component.match_type == MATCH_DEFAULT:
                if component.match is not None:
                    raise _invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a "
                                   "match string.")
                exact[kind] = None
            elif component.match_type == MATCH_SPECIFIED:
                if component.match is not None:
                    raise _invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified "
                                   "a match string.")
                specified.add(kind)
            else:
                raise _invalid(f"Unknown match type {component.match_type}")
        named = set(exact) | specified
        if IP in named and named & {USER, CLIENT_ID}:
            raise _invalid("Invalid entity filter component combination. IP filter component "
                           "should not be used with user or clientId filter component.")
        return [(entity, dict(quotas)) for entity, quotas in self.quotas.items()
                if _matches(dict(entity), exact, specified, strict)]

    # ------------------------------------------------------------------ applying

    def apply(self, record: Record) -> None:
        """Change state from one client quota record (live, once durable, and at replay)."""
        key, value = record.key, record.value
        assert isinstance(key, ClientQuotaRecordKey)
        entity = entity_of((e.entity_type, e.entity_name) for e in key.entity)
        counted = key.key in _BYTE_RATE_KEYS
        requests = key.key == "request_percentage"
        if value is None:
            quotas = self.quotas.get(entity, {})
            if quotas.pop(key.key, None) is not None:
                self.byte_rate_quotas -= counted
                self.request_quotas -= requests
            if not quotas:
                self.quotas.pop(entity, None)
        else:
            assert isinstance(value, ClientQuotaRecordValue)
            quotas = self.quotas.setdefault(entity, {})
            if key.key not in quotas:
                self.byte_rate_quotas += counted
                self.request_quotas += requests
            quotas[key.key] = value.value


def _keys_of(entity: Entity, resolvable: Callable[[str], bool]) -> Mapping[str, str]:
    """``validateEntity`` then ``configKeysForEntityType``: the keys the entity may set."""
    if not entity:
        raise _invalid("Invalid empty client quota entity")
    for kind, name in entity:
        if kind not in (USER, CLIENT_ID, IP):
            raise _invalid(f"Unhandled client quota entity type: {kind}")
        if name == "":
            raise _invalid(f"Empty {kind} not supported")
    kinds = dict(entity)
    if IP in kinds:
        if USER in kinds or CLIENT_ID in kinds:
            # Kafka's message, its missing space included
            raise _invalid("Invalid quota entity combination, IP entity shouldnot be combined "
                           "with User or ClientId")
        ip = kinds[IP]
        if ip is not None and not resolvable(ip):
            raise _invalid(f"{ip} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_AND_CLIENT_KEYS


def _validate_value(keys: Mapping[str, str], key: str, value: float) -> None:
    """``validateQuotaKeyValue``: a known key, a positive value that fits its type."""
    kind = keys.get(key)
    if kind is None:
        raise _invalid(f"Invalid configuration key {key}")
    if value <= 0.0:
        raise _invalid(f"Quota {key} must be greater than 0")
    if kind == _DOUBLE:
        return
    if value > _MAX[kind]:
        raise _invalid(f"Proposed value for {key} is too large for {_TOO_LARGE[kind]}.")
    if abs(value % 1.0) > 1e-6:
        raise _invalid(f"{key} cannot be a fractional value.")


def _matches(entity: Mapping[str, str | None], exact: Mapping[str, str | None],
             specified: set[str], strict: bool) -> bool:
    """Whether an entity matches a filter (Kafka's ``ClientQuotaControlManager.matches``,
    which answers as ``ClientQuotasImage.matches`` does)."""
    if strict and len(entity) != len(exact) + len(specified):
        return False
    for kind, name in exact.items():
        if kind not in entity or entity[kind] != name:
            return False
    return all(kind in entity for kind in specified)
