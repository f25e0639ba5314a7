"""The broker surface's settings, under Kafka's config names, as strings.

The server owns the whole config dict (``ServerState.config``); the broker handlers only
read the keys below. :func:`validate_broker_config` checks the values of these keys the
way Kafka's ``ConfigDef`` does (booleans case-insensitive, integers with a lower bound).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "AUTO_CREATE_TOPICS_ENABLE",
    "BROKER_CONFIG_DEFAULTS",
    "FETCH_MAX_BYTES",
    "MESSAGE_MAX_BYTES",
    "NUM_PARTITIONS",
    "auto_create_topics_enable",
    "fetch_max_bytes",
    "message_max_bytes",
    "num_partitions",
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
}

_INT_MINIMUM = {
    NUM_PARTITIONS: 1,
    MESSAGE_MAX_BYTES: 0,
    FETCH_MAX_BYTES: 1024,
    TRANSACTION_MAX_TIMEOUT_MS: 1,
    TRANSACTIONAL_ID_EXPIRATION_MS: 1,
    TRANSACTION_ABORT_INTERVAL_MS: 1,
    TRANSACTION_REMOVE_INTERVAL_MS: 1,
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
    if not minimum <= number <= _INT32_MAX:
        raise ValueError(f"invalid value {value!r} for {key}: must be at least {minimum}")
    return number


def validate_broker_config(props: Mapping[str, str]) -> dict[str, str]:
    """The broker keys of ``props`` normalised, defaults filled in; other keys are ignored.
    Raises ValueError with a one-line message for a bad value."""
    out = dict(BROKER_CONFIG_DEFAULTS)
    for key in BROKER_CONFIG_DEFAULTS:
        if key not in props:
            continue
        value = props[key]
        if key == AUTO_CREATE_TOPICS_ENABLE:
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


def message_max_bytes(config: Mapping[str, str]) -> int:
    """``message.max.bytes``: the largest record batch Produce accepts."""
    return _parse_int(MESSAGE_MAX_BYTES, _get(config, MESSAGE_MAX_BYTES))


def fetch_max_bytes(config: Mapping[str, str]) -> int:
    """``fetch.max.bytes``: the broker's cap on one Fetch response's records."""
    return _parse_int(FETCH_MAX_BYTES, _get(config, FETCH_MAX_BYTES))
