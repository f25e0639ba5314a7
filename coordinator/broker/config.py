"""The broker surface's settings, under Kafka's config names, as strings.

The server owns the whole config dict (``ServerState.config``); the broker handlers only
read the keys below. :func:`validate_broker_config` checks the values of these keys the
way Kafka's ``ConfigDef`` does (booleans case-insensitive, integers with a lower bound).
"""

from __future__ import annotations

from collections.abc import Mapping

from wire.constants import MAX_TRANSACTION_VERSION, TRANSACTION_VERSION_FEATURE

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
    "transaction_version",
    "validate_broker_config",
]

AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable"
NUM_PARTITIONS = "num.partitions"
MESSAGE_MAX_BYTES = "message.max.bytes"
FETCH_MAX_BYTES = "fetch.max.bytes"
# The transaction coordinator's (coordinator/server/txn_runtime.py reads them).
TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms"
TRANSACTIONAL_ID_EXPIRATION_MS = "transactional.id.expiration.ms"
TRANSACTION_ABORT_INTERVAL_MS = "transaction.abort.timed.out.transaction.cleanup.interval.ms"
TRANSACTION_REMOVE_INTERVAL_MS = "transaction.remove.expired.transaction.cleanup.interval.ms"
# The finalized level of Kafka's transaction.version feature (0-2; Kafka 4 finalizes 2 on
# a new cluster). Kafka sets it with kafka-features / kafka-storage format; here a key.
TRANSACTION_VERSION = TRANSACTION_VERSION_FEATURE
# Retention and segments of topic data (a topic's retention.ms / retention.bytes /
# segment.bytes override them).
LOG_RETENTION_HOURS = "log.retention.hours"
LOG_RETENTION_MINUTES = "log.retention.minutes"
LOG_RETENTION_MS = "log.retention.ms"
LOG_RETENTION_BYTES = "log.retention.bytes"
LOG_SEGMENT_BYTES = "log.segment.bytes"
LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms"
# The log cleaner of compacted topics (coordinator/broker/log_cleaning.py reads them; a
# topic's delete.retention.ms / min.compaction.lag.ms / max.compaction.lag.ms override).
LOG_CLEANER_ENABLE = "log.cleaner.enable"
LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms"
LOG_CLEANER_DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size"
LOG_CLEANER_DELETE_RETENTION_MS = "log.cleaner.delete.retention.ms"
LOG_CLEANER_MIN_COMPACTION_LAG_MS = "log.cleaner.min.compaction.lag.ms"
LOG_CLEANER_MAX_COMPACTION_LAG_MS = "log.cleaner.max.compaction.lag.ms"
#: Known keys without a default: Kafka falls back to the next coarser one.
OPTIONAL_KEYS = frozenset({LOG_RETENTION_MINUTES, LOG_RETENTION_MS})
_INT64_MAX = 2**63 - 1
_INT64_MAX_DEFAULT = 2**63 - 1
#: Keys whose values are Kafka longs (the others are ints).
_LONG_KEYS = frozenset({LOG_RETENTION_MS, LOG_RETENTION_BYTES, LOG_RETENTION_CHECK_INTERVAL_MS,
                        LOG_CLEANER_BACKOFF_MS, LOG_CLEANER_DEDUPE_BUFFER_SIZE,
                        LOG_CLEANER_DELETE_RETENTION_MS, LOG_CLEANER_MIN_COMPACTION_LAG_MS,
                        LOG_CLEANER_MAX_COMPACTION_LAG_MS})
_BOOL_KEYS = frozenset({AUTO_CREATE_TOPICS_ENABLE, LOG_CLEANER_ENABLE})

BROKER_CONFIG_DEFAULTS: dict[str, str] = {
    AUTO_CREATE_TOPICS_ENABLE: "true",
    NUM_PARTITIONS: "1",
    # Kafka's defaults: 1 MiB + 12 bytes of batch overhead; 55 MiB per fetch response.
    MESSAGE_MAX_BYTES: "1048588",
    FETCH_MAX_BYTES: "57671680",
    TRANSACTION_MAX_TIMEOUT_MS: "900000",
    TRANSACTIONAL_ID_EXPIRATION_MS: "604800000",
    TRANSACTION_ABORT_INTERVAL_MS: "10000",
    TRANSACTION_REMOVE_INTERVAL_MS: "3600000",
    TRANSACTION_VERSION: str(MAX_TRANSACTION_VERSION),
    LOG_RETENTION_HOURS: "168",
    LOG_RETENTION_BYTES: "-1",
    LOG_SEGMENT_BYTES: "1073741824",
    LOG_RETENTION_CHECK_INTERVAL_MS: "300000",
    LOG_CLEANER_ENABLE: "true",
    LOG_CLEANER_BACKOFF_MS: "15000",
    LOG_CLEANER_DEDUPE_BUFFER_SIZE: "134217728",
    LOG_CLEANER_DELETE_RETENTION_MS: "86400000",
    LOG_CLEANER_MIN_COMPACTION_LAG_MS: "0",
    LOG_CLEANER_MAX_COMPACTION_LAG_MS: str(_INT64_MAX_DEFAULT),
}

_INT_MINIMUM = {
    NUM_PARTITIONS: 1,
    MESSAGE_MAX_BYTES: 0,
    FETCH_MAX_BYTES: 1024,
    TRANSACTION_MAX_TIMEOUT_MS: 1,
    TRANSACTIONAL_ID_EXPIRATION_MS: 1,
    TRANSACTION_ABORT_INTERVAL_MS: 1,
    TRANSACTION_REMOVE_INTERVAL_MS: 1,
    TRANSACTION_VERSION: 0,
    LOG_RETENTION_HOURS: -1,
    LOG_RETENTION_MINUTES: -1,
    LOG_RETENTION_MS: -1,
    LOG_RETENTION_BYTES: -1,
    LOG_SEGMENT_BYTES: 64,
    LOG_RETENTION_CHECK_INTERVAL_MS: 1,
    LOG_CLEANER_BACKOFF_MS: 0,
    LOG_CLEANER_DEDUPE_BUFFER_SIZE: 0,
    LOG_CLEANER_DELETE_RETENTION_MS: 0,
    LOG_CLEANER_MIN_COMPACTION_LAG_MS: 0,
    LOG_CLEANER_MAX_COMPACTION_LAG_MS: 1,
}
_INT32_MAX = 2**31 - 1


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
    minimum = _INT_MINIMUM[key]
    if not minimum <= number <= (_INT64_MAX if key in _LONG_KEYS else _INT32_MAX):
        raise ValueError(f"invalid value {value!r} for {key}: must be at least {minimum}")
    if key == TRANSACTION_VERSION and number > MAX_TRANSACTION_VERSION:
        raise ValueError(
            f"invalid value {value!r} for {key}: the levels are 0 to {MAX_TRANSACTION_VERSION}"
        )
    return number


def validate_broker_config(props: Mapping[str, str]) -> dict[str, str]:
    """The broker keys of ``props`` normalised, defaults filled in; other keys are ignored.
    Raises ValueError with a one-line message for a bad value."""
    out = dict(BROKER_CONFIG_DEFAULTS)
    for key in (*BROKER_CONFIG_DEFAULTS, *sorted(OPTIONAL_KEYS)):
        if key not in props:
            continue
        value = props[key]
        if key in _BOOL_KEYS:
            out[key] = "true" if _parse_bool(key, value) else "false"
        else:
            out[key] = str(_parse_int(key, value))
    return out


def _get(config: Mapping[str, str], key: str) -> str:
    return config.get(key, BROKER_CONFIG_DEFAULTS[key])


def auto_create_topics_enable(config: Mapping[str, str]) -> bool:
    """``auto.create.topics.enable`` (default true)."""
    return _parse_bool(AUTO_CREATE_TOPICS_ENABLE, _get(config, AUTO_CREATE_TOPICS_ENABLE))


def num_partitions(config: Mapping[str, str]) -> int:
    """``num.partitions``: partitions of auto-created topics and of CreateTopics with -1."""
    return _parse_int(NUM_PARTITIONS, _get(config, NUM_PARTITIONS))


def transaction_version(config: Mapping[str, str]) -> int:
    """``transaction.version``: the finalized TransactionVersion feature level."""
    return _parse_int(TRANSACTION_VERSION, _get(config, TRANSACTION_VERSION))


def message_max_bytes(config: Mapping[str, str]) -> int:
    """``message.max.bytes``: the largest record batch Produce accepts."""
    return _parse_int(MESSAGE_MAX_BYTES, _get(config, MESSAGE_MAX_BYTES))


def fetch_max_bytes(config: Mapping[str, str]) -> int:
    """``fetch.max.bytes``: the broker's cap on one Fetch response's records."""
    return _parse_int(FETCH_MAX_BYTES, _get(config, FETCH_MAX_BYTES))


def retention_ms(config: Mapping[str, str]) -> int:
    """Kafka's broker retention: ``log.retention.ms``, else minutes, else hours (-1: none)."""
    if LOG_RETENTION_MS in config:
        return int(config[LOG_RETENTION_MS])
    if LOG_RETENTION_MINUTES in config:
        minutes = int(config[LOG_RETENTION_MINUTES])
        return -1 if minutes < 0 else minutes * 60_000
    hours = int(_get(config, LOG_RETENTION_HOURS))
    return -1 if hours < 0 else hours * 3_600_000


def retention_bytes(config: Mapping[str, str]) -> int:
    """``log.retention.bytes`` (-1: no size limit)."""
    return int(_get(config, LOG_RETENTION_BYTES))


def segment_bytes(config: Mapping[str, str]) -> int:
    """``log.segment.bytes``."""
    return int(_get(config, LOG_SEGMENT_BYTES))


def retention_check_interval_ms(config: Mapping[str, str]) -> int:
    """``log.retention.check.interval.ms``."""
    return int(_get(config, LOG_RETENTION_CHECK_INTERVAL_MS))
