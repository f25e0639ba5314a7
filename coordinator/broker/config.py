"""The broker surface's settings, under Kafka's config names, as strings.

The server owns the whole config dict (``ServerState.config``); the broker handlers only
read the keys below. The keys are ``coordinator.configs.broker_keys``' with the broker or
the transaction coordinator as reader (their names, types, defaults and bounds are there):
:func:`validate_broker_config` checks their values the way Kafka's ``ConfigDef`` does
(booleans case-insensitive, integers within their bounds).
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.configs.broker_keys import keys_read_by
from coordinator.configs.config_key import ConfigKey, Range, Reader
from wire.constants import TRANSACTION_VERSION_FEATURE, ConfigType

__all__ = [
    "AUTO_CREATE_TOPICS_ENABLE",
    "BROKER_CONFIG_DEFAULTS",
    "FETCH_MAX_BYTES",
    "MESSAGE_MAX_BYTES",
    "NUM_PARTITIONS",
    "OPTIONAL_KEYS",
    "auto_create_topics_enable",
    "fetch_max_bytes",
    "message_max_bytes",
    "num_partitions",
    "retention_bytes",
    "retention_check_interval_ms",
    "retention_ms",
    "segment_bytes",
    "setting",
    "transaction_version",
    "validate_broker_config",
]

AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable"
NUM_PARTITIONS = "num.partitions"
MESSAGE_MAX_BYTES = "message.max.bytes"
FETCH_MAX_BYTES = "fetch.max.bytes"
TRANSACTION_VERSION = TRANSACTION_VERSION_FEATURE
# Retention and segments of topic data (a topic's retention.ms / retention.bytes /
# segment.bytes override them).
LOG_RETENTION_HOURS = "log.retention.hours"
LOG_RETENTION_MINUTES = "log.retention.minutes"
LOG_RETENTION_MS = "log.retention.ms"
LOG_RETENTION_BYTES = "log.retention.bytes"
LOG_SEGMENT_BYTES = "log.segment.bytes"
LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms"

#: The keys validated here: the broker's and the transaction coordinator's.
_KEYS: dict[str, ConfigKey] = keys_read_by(Reader.BROKER, Reader.TRANSACTIONS)
BROKER_CONFIG_DEFAULTS: dict[str, str] = {
    name: key.default for name, key in _KEYS.items() if key.default is not None}
#: Known keys without a default: Kafka falls back to the next coarser one.
OPTIONAL_KEYS = frozenset(name for name, key in _KEYS.items() if key.default is None)
for _name in (AUTO_CREATE_TOPICS_ENABLE, NUM_PARTITIONS, MESSAGE_MAX_BYTES, FETCH_MAX_BYTES,
              TRANSACTION_VERSION, LOG_RETENTION_HOURS, LOG_RETENTION_MINUTES,
              LOG_RETENTION_MS, LOG_RETENTION_BYTES, LOG_SEGMENT_BYTES,
              LOG_RETENTION_CHECK_INTERVAL_MS):
    assert _name in _KEYS, _name


def _parse_bool(key: str, value: str) -> bool:
    text = value.strip().lower()
    if text == "true":
        return True
    if text == "false":
        return False
    raise ValueError(f"invalid value {value!r} for {key}: expected true or false")


def _parse_int(key: str, value: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise ValueError(f"invalid value {value!r} for {key}: expected an integer") from None
    known = _KEYS[key]
    low, high = known.bounds
    if number < low or (number > high and not _capped(known)):
        raise ValueError(f"invalid value {value!r} for {key}: must be at least {low}")
    if number > high:
        raise ValueError(f"invalid value {value!r} for {key}: the levels are {low} to {high}")
    return number


def _capped(key: ConfigKey) -> bool:
    """Whether the key's range has its own upper bound (transaction.version's levels), not
    only its type's."""
    return isinstance(key.validator, Range) and key.validator.high is not None


def validate_broker_config(props: Mapping[str, str]) -> dict[str, str]:
    """The broker keys of ``props`` normalised, defaults filled in; other keys are ignored.
    Raises ValueError with a one-line message for a bad value."""
    out = dict(BROKER_CONFIG_DEFAULTS)
    for key in (*BROKER_CONFIG_DEFAULTS, *sorted(OPTIONAL_KEYS)):
        if key not in props:
            continue
        value = props[key]
        if _KEYS[key].type is ConfigType.BOOLEAN:
            out[key] = "true" if _parse_bool(key, value) else "false"
        else:
            out[key] = str(_parse_int(key, value))
    return out


def setting(config: Mapping[str, str], key: str) -> str:
    """A broker key's value in ``config``, else its default."""
    return config.get(key, BROKER_CONFIG_DEFAULTS[key])



def auto_create_topics_enable(config: Mapping[str, str]) -> bool:
    """``auto.create.topics.enable`` (default true)."""
    return _parse_bool(AUTO_CREATE_TOPICS_ENABLE, setting(config, AUTO_CREATE_TOPICS_ENABLE))


def num_partitions(config: Mapping[str, str]) -> int:
    """``num.partitions``: partitions of auto-created topics and of CreateTopics with -1."""
    return _parse_int(NUM_PARTITIONS, setting(config, NUM_PARTITIONS))


def transaction_version(config: Mapping[str, str]) -> int:
    """``transaction.version``: the finalized TransactionVersion feature level."""
    return _parse_int(TRANSACTION_VERSION, setting(config, TRANSACTION_VERSION))


def message_max_bytes(config: Mapping[str, str]) -> int:
    """``message.max.bytes``: the largest record batch Produce accepts."""
    return _parse_int(MESSAGE_MAX_BYTES, setting(config, MESSAGE_MAX_BYTES))


def fetch_max_bytes(config: Mapping[str, str]) -> int:
    """``fetch.max.bytes``: the broker's cap on one Fetch response's records."""
    return _parse_int(FETCH_MAX_BYTES, setting(config, FETCH_MAX_BYTES))


def retention_ms(config: Mapping[str, str]) -> int:
    """Kafka's broker retention: ``log.retention.ms``, else minutes, else hours (-1: none)."""
    if LOG_RETENTION_MS in config:
        return int(config[LOG_RETENTION_MS])
    if LOG_RETENTION_MINUTES in config:
        minutes = int(config[LOG_RETENTION_MINUTES])
        return -1 if minutes < 0 else minutes * 60_000
    hours = int(setting(config, LOG_RETENTION_HOURS))
    return -1 if hours < 0 else hours * 3_600_000


def retention_bytes(config: Mapping[str, str]) -> int:
    """``log.retention.bytes`` (-1: no size limit)."""
    return int(setting(config, LOG_RETENTION_BYTES))


def segment_bytes(config: Mapping[str, str]) -> int:
    """``log.segment.bytes``."""
    return int(setting(config, LOG_SEGMENT_BYTES))


def retention_check_interval_ms(config: Mapping[str, str]) -> int:
    """``log.retention.check.interval.ms``."""
    return int(setting(config, LOG_RETENTION_CHECK_INTERVAL_MS))
