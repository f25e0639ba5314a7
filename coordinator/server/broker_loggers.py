"""The BROKER_LOGGER config resource (KIP-412): this process's loggers and their levels, as
Kafka's ``Log4jController.loggers`` lists its log4j loggers -- ``root`` and every logger
created so far, each with its effective level (its own, else its nearest ancestor's), in
log4j's names (Python's WARNING is WARN, CRITICAL is FATAL, anything below DEBUG TRACE).

IncrementalAlterConfigs sets (SET) or unsets (DELETE) a logger's level at once, unless
``validate_only``, validated as Kafka's ``RuntimeLoggerManager`` (messages word for word, the
node-id one's repeated id included); nothing is persisted, as in Kafka. The levels are the
process's: every broker of a multi-broker process shares them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from coordinator.configs.config_key import ConfigError
from wire.constants import AlterConfigOpType, ErrorCode

__all__ = ["ROOT_LOGGER", "alter_logger_levels", "log4j_level", "logger_levels"]

ROOT_LOGGER = "root"

_LEVELS = ((logging.CRITICAL, "FATAL"), (logging.ERROR, "ERROR"), (logging.WARNING, "WARN"),
           (logging.INFO, "INFO"), (logging.DEBUG, "DEBUG"))


def log4j_level(level: int) -> str:
    """A Python logging level in log4j's name."""
    for at_least, name in _LEVELS:
        if level >= at_least:
            return name
    return "TRACE"


def logger_levels() -> dict[str, str]:
    """``root`` and every existing logger, by name, with its effective level."""
    levels = {ROOT_LOGGER: log4j_level(logging.getLogger().getEffectiveLevel())}
    for name, logger in sorted(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):  # not a placeholder of a dotted prefix
            levels[name] = log4j_level(logger.getEffectiveLevel())
    return levels


#: log4j's levels (``LogLevelConfig.VALID_LOG_LEVELS``) as Python levels (TRACE below DEBUG).
_PYTHON_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO,
                  "WARN": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
_VALID_LEVELS = ", ".join(sorted(_PYTHON_LEVELS))


def _existing(name: str) -> logging.Logger:
    if name == ROOT_LOGGER:
        return logging.getLogger()
    found = logging.Logger.manager.loggerDict.get(name)
    if not isinstance(found, logging.Logger):
        raise ConfigError(ErrorCode.INVALID_CONFIG, f"Logger {name} does not exist!")
    return found


def alter_logger_levels(node_id: int, resource_name: str,
                        ops: Sequence[tuple[str, int, str | None]], validate_only: bool) -> None:
    """``RuntimeLoggerManager.applyChangesForResource``: (logger, operation, level) ops of
    one BROKER_LOGGER resource validated, then applied unless ``validate_only``; ConfigError."""
    try:
        requested = int(resource_name)
    except ValueError:
        raise ConfigError(ErrorCode.INVALID_REQUEST,
                          f"Node id must be an integer, but it is: {resource_name}") from None
    if requested != node_id:
        raise ConfigError(ErrorCode.INVALID_REQUEST,  # Kafka's message names its own id twice
                          f"Unexpected node id. Expected {node_id}, but received {node_id}")
    changes = []
    for name, op, level in ops:
        if op == AlterConfigOpType.SET:
            logger = _existing(name)
            if level not in _PYTHON_LEVELS:
                raise ConfigError(ErrorCode.INVALID_CONFIG, (
                    f"Cannot set the log level of {name} to {level} as it is not a supported "
                    f"log level. Valid log levels are {_VALID_LEVELS}"))
            changes.append((logger, _PYTHON_LEVELS[level]))
        elif op == AlterConfigOpType.DELETE:
            logger = _existing(name)
            if name == ROOT_LOGGER:
                raise ConfigError(ErrorCode.INVALID_REQUEST,
                                  f"Removing the log level of the {ROOT_LOGGER} logger is not "
                                  "allowed")
            changes.append((logger, logging.NOTSET))
        elif op in (AlterConfigOpType.APPEND, AlterConfigOpType.SUBTRACT):
            raise ConfigError(ErrorCode.INVALID_REQUEST, f"{AlterConfigOpType(op).name} "
                              "operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise ConfigError(ErrorCode.INVALID_REQUEST, f"Unknown operation type {op} is not "
                              "allowed for the BROKER_LOGGER resource")
    if not validate_only:
        for logger, python_level in changes:
            logger.setLevel(python_level)
