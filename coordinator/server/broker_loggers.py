"""The BROKER_LOGGER config resource (KIP-412): this process's loggers and their levels, as
Kafka's ``Log4jController.loggers`` lists its log4j loggers -- ``root`` and every logger
created so far, each with its effective level (its own, else its nearest ancestor's), in
log4j's names (Python's WARNING is WARN, CRITICAL is FATAL, anything below DEBUG TRACE).
"""

from __future__ import annotations

import logging

__all__ = ["ROOT_LOGGER", "log4j_level", "logger_levels"]

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
