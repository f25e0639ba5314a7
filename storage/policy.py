"""The log's policies as types: imported by the server's option parsing before anything
heavy loads, so this module imports nothing."""

from __future__ import annotations

from typing import Literal

__all__ = ["FSYNC_POLICIES", "FsyncPolicy", "RecoverMode"]

FsyncPolicy = Literal["always", "interval", "never"]
FSYNC_POLICIES: tuple[FsyncPolicy, ...] = ("always", "interval", "never")
RecoverMode = Literal["fail", "truncate"]
