"""Kept only for ``txn_apis.py``'s ``from coordinator.server.group_apis import TopicView``
while that module is being rewritten elsewhere: the group APIs' code is in their route
modules (``coordinator/server/apis/``) and ``TopicView`` in ``api_support.py``. Delete this
module once ``txn_apis.py`` imports ``TopicView`` from ``api_support``."""

from __future__ import annotations

from coordinator.server.api_support import TopicView

__all__ = ["TopicView"]
