"""One config key as Kafka's ``ConfigDef`` defines it: name, type, default, validator,
documentation, whether it may change at runtime, and which part of kcoord reads it.

Every key kcoord knows is one :class:`ConfigKey` (``broker_keys``, ``definitions``); the
server's options, the cores' frozen configs and DescribeConfigs are derived from them.
Validators are data (:class:`Range`, :class:`OneOf`, :class:`ListOf`) so that the static
configuration's checks read the same bounds as AlterConfigs' (with Kafka's messages).
Parsing follows ``ConfigDef.parseType``, with Kafka's messages ("Invalid value x for
configuration y: Not a number of type LONG"). The two config errors live here too:
:class:`InvalidConfig` (a bad value) and :class:`ConfigError` (a resource's answer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from wire.constants import ConfigType, ErrorCode

__all__ = [
    "INT_MAX",
    "KAFKA_DEFAULT",
    "KAFKA_DOC_PREFIX",
    "LONG_MAX",
    "ConfigError",
    "ConfigKey",
    "InvalidConfig",
    "ListOf",
    "OneOf",
    "Range",
    "Reader",
    "Validator",
    "at_least",
    "between",
    "field_key",
    "kafka_defaults",
    "list_parts",
]

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class InvalidConfig(ValueError):
    """Kafka's ``ConfigException``: the message is Kafka's."""


class ConfigError(Exception):
    """A dynamic configuration request's answer for one resource: Kafka's error code and
    message (here, not with the config store: the broker surface's DescribeConfigs raises
    it for BROKER_LOGGER resources without importing the store and every record type)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Reader(StrEnum):
    """The part of kcoord a broker-level key configures when the server starts."""

    #: ``CoordinatorConfig``: the group coordinator (and share groups).
    GROUPS = "groups"
    #: ``TxnConfig``: the transaction coordinator (validated with the broker's keys).
    TRANSACTIONS = "transactions"
    #: ``ServeOptions``: the network layer, the cluster, the partition logs' files.
    SERVER = "server"
    #: The broker surface's config dict (``coordinator.broker.config``).
    BROKER = "broker"
    #: The listeners (``coordinator.server.listeners``, read before the other keys).
    LISTENERS = "listeners"
    #: The authorizer (``coordinator.server.security_setup``, read before the other keys).
    AUTHORIZER = "authorizer"
    #: A Kafka key that means nothing for one kcoord process: accepted with a warning.
    IGNORED = "ignored"


@dataclass(frozen=True, slots=True)
class Range:
    """``ConfigDef.Range``: ``between`` (``atLeast``: no upper bound), with its messages."""

    low: float | None
    high: float | None = None

    def __call__(self, _name: str, value: object) -> str | None:
        assert isinstance(value, int | float)
        if self.low is not None and value < self.low:
            return f"Value must be at least {self.low}"
        if self.high is not None and value > self.high:
            return f"Value must be no more than {self.high}"
        return None


@dataclass(frozen=True, slots=True)
class OneOf:
    """``ConfigDef.ValidString.in``."""

    options: tuple[str, ...]

    def __call__(self, _name: str, value: object) -> str | None:
        return None if value in self.options else self.message

    @property
    def message(self) -> str:
        """Kafka's message for a value that is not one of the options."""
        return f"String must be one of: {', '.join(self.options)}"


@dataclass(frozen=True, slots=True)
class ListOf:
    """``ConfigDef.ValidList.in``."""

    options: tuple[str, ...]

    def __call__(self, _name: str, value: object) -> str | None:
        assert isinstance(value, list)
        bad = [item for item in value if item not in self.options]
        return None if not bad else f"String must be one of: {', '.join(self.options)}"


Validator = Range | OneOf | ListOf


def between(low: float | None, high: float | None) -> Range:
    """``ConfigDef.Range.between``."""
    return Range(low, high)


def at_least(minimum: float) -> Range:
    """``ConfigDef.Range.atLeast``."""
    return Range(minimum, None)


#: A ``doc`` of this prefix and a key's name is Kafka's text for that key (``kafka_docs``,
#: imported only when documentation is asked for).
KAFKA_DOC_PREFIX = "kafka-doc:"

_TYPE_BOUNDS = {ConfigType.INT: INT_MAX, ConfigType.SHORT: 2**15 - 1, ConfigType.LONG: LONG_MAX}


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One key: its type, default (as Kafka prints it; None: no default), documentation,
    validator, whether it is dynamic (AlterConfigs may change it on a broker) and its
    reader (None: no static reader; a dynamic-only key)."""

    name: str
    type: ConfigType
    default: str | None
    doc: str
    validator: Validator | None = None
    dynamic: bool = False
    reader: Reader | None = None

    @property
    def documentation(self) -> str:
        """The key's documentation (Kafka's text where ``doc`` refers to it)."""
        if not self.doc.startswith(KAFKA_DOC_PREFIX):
            return self.doc
        from coordinator.configs.kafka_docs import kafka_doc  # only when asked for
        return kafka_doc(self.doc[len(KAFKA_DOC_PREFIX):])

    def parse(self, value: str) -> object:
        """``value`` parsed and validated; InvalidConfig with Kafka's message otherwise."""
        parsed = _parse(self.name, self.type, value)
        if self.validator is not None:
            problem = self.validator(self.name, parsed)
            if problem is not None:
                shown = ",".join(parsed) if isinstance(parsed, list) else value
                raise InvalidConfig(
                    f"Invalid value {shown} for configuration {self.name}: {problem}")
        return parsed

    @property
    def bounds(self) -> tuple[int, int]:
        """The accepted integers: the validator's range within the type's."""
        top = _TYPE_BOUNDS.get(self.type, LONG_MAX)
        low, high = (self.validator.low, self.validator.high) if isinstance(
            self.validator, Range) else (None, None)
        return (-top - 1 if low is None else int(low), top if high is None else int(high))

    @property
    def typed_default(self) -> int | bool | str:
        """The default as the static config holds it (integers, booleans; text as given)."""
        assert self.default is not None, f"{self.name} has no default"
        if self.type in _TYPE_BOUNDS:
            return int(self.default)
        if self.type is ConfigType.BOOLEAN:
            return self.default == "true"
        return self.default


#: A frozen config's field default that :func:`kafka_defaults` replaces with its key's.
KAFKA_DEFAULT: Any = object()
_Config = TypeVar("_Config", bound=type)


def field_key(field_name: str) -> str:
    """The key a config field holds: its name with dots for underscores."""
    return field_name.replace("_", ".")


def kafka_defaults(keys: Mapping[str, ConfigKey]) -> Callable[[_Config], _Config]:
    """A class decorator (under ``@dataclass``): each field whose default is
    ``KAFKA_DEFAULT`` takes its key's default (``field_key``), so a core's typed frozen
    config names its keys once and copies no default."""
    def fill(cls: _Config) -> _Config:
        for name in cls.__annotations__:
            if cls.__dict__.get(name) is KAFKA_DEFAULT:
                setattr(cls, name, keys[field_key(name)].typed_default)
        return cls
    return fill


def list_parts(value: str | None) -> list[str]:
    """A LIST value's items (``ConfigDef.parseType``: trimmed, empty items dropped)."""
    if value is None or not value.strip():
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def _parse(name: str, kind: ConfigType, value: str) -> object:
    text = value.strip()

    def bad(what: str) -> InvalidConfig:
        return InvalidConfig(f"Invalid value {value} for configuration {name}: {what}")

    if kind is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise bad("Expected value to be either true or false")
    if kind in _TYPE_BOUNDS:
        bound = _TYPE_BOUNDS[kind]
        try:
            number = int(text)
        except ValueError:
            raise bad(f"Not a number of type {kind.name}") from None
        if not -bound - 1 <= number <= bound:
            raise bad(f"Not a number of type {kind.name}")
        return number
    if kind is ConfigType.DOUBLE:
        try:
            return float(text)
        except ValueError:
            raise bad("Not a number of type DOUBLE") from None
    if kind is ConfigType.LIST:
        return list_parts(value)
    return text
