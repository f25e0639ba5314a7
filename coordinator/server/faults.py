"""Fault injection: make the broker misbehave on purpose, per API key.

A :class:`Fault` matches requests of one API key (optionally only for one group id or one
client id) and, for the next ``count`` of them (``None``: until removed), does one or more
of: answer with ``error_code`` instead of handling the request, delay the response by
``delay_ms``, drop the connection before or after handling, or stall (never answer).
Like librdkafka's mock-cluster error pushes and franz-go kfake's control hooks, but from
Python and over HTTP. Every injection and every hit is logged; faults are removable. The
test double (``coordinator.testing``) and the HTTP control API arm them;
``dispatch.handler_for`` wraps the handler of each request one matches
(``dispatch.FaultedHandler``, answering errors with ``wire.error_response``), so requests
no fault matches keep the fast lane.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from dataclasses import asdict, dataclass
from typing import Any, Literal

from wire import ApiKey, DecodedRequest, ErrorCode

__all__ = ["DropWhen", "Fault", "FaultInjector"]

log = logging.getLogger(__name__)

DropWhen = Literal["before", "after"]

#: The longest delay a fault injects (an hour).
MAX_DELAY_MS = 3_600_000


def resolve_api_key(api_key: int | str) -> int:
    """An API key from a key or a Kafka API name ("OffsetCommit", "offset_commit"); it must
    be one kcoord serves (ValueError otherwise)."""
    from coordinator.server.served_apis import SERVED_API_KEYS

    if isinstance(api_key, str):
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api_key).upper()
        try:
            key = int(ApiKey[name])
        except KeyError:
            raise ValueError(f"unknown Kafka API {api_key!r}") from None
    elif isinstance(api_key, bool) or not isinstance(api_key, int):
        raise ValueError(f"api_key must be a Kafka API key or name, got {api_key!r}")
    else:
        key = api_key
    if key not in SERVED_API_KEYS:
        raise ValueError(f"API key {key} is not served by kcoord")
    return key


@dataclass
class Fault:
    """One injected misbehaviour (see the module docstring)."""

    id: int
    api_key: int
    error_code: int | None = None
    count: int | None = 1
    delay_ms: int = 0
    drop: DropWhen | None = None
    stall: bool = False
    group_id: str | None = None
    client_id: str | None = None
    #: Only requests to this broker (``--brokers``); None: any broker.
    node_id: int | None = None
    hits: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view (the HTTP control API returns it)."""
        return asdict(self)


def _error_code(value: object) -> int:
    """A Kafka error code from its number or its name ("NOT_COORDINATOR"); ValueError
    otherwise."""
    if isinstance(value, str):
        try:
            return int(ErrorCode[value.strip().upper()])
        except KeyError:
            raise ValueError(f"error_code {value!r} is not a Kafka error name") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"error_code must be an error code or name, got {value!r}")
    try:
        return int(ErrorCode(value))
    except ValueError:
        raise ValueError(f"error_code {value} is not a Kafka error code") from None


class FaultInjector:
    """The set of active faults. Thread-safe: tests add faults from their own thread."""

    def __init__(self) -> None:
        self._faults: dict[int, Fault] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def add(
        self,
        api_key: int | str,
        *,
        error_code: int | str | None = None,
        count: int | None = 1,
        delay_ms: int = 0,
        drop: DropWhen | None = None,
        stall: bool = False,
        group_id: str | None = None,
        client_id: str | None = None,
        node_id: int | None = None,
    ) -> Fault:
        """Register a fault; returns it (its ``id`` removes it). ``api_key`` is a key or a
        Kafka API name ("OffsetCommit"); it must be an API kcoord serves, and
        ``error_code`` a Kafka error code or its name (ValueError otherwise)."""
        api_key = resolve_api_key(api_key)
        if error_code is not None:
            error_code = _error_code(error_code)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise ValueError(f"count must be an integer, got {count!r}")
        if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) or delay_ms > MAX_DELAY_MS:
            raise ValueError(f"delay_ms must be an integer of at most {MAX_DELAY_MS}")
        if count is not None and count < 1:
            raise ValueError("count must be at least 1, or null (None) for until removed")
        if delay_ms < 0:
            raise ValueError("delay_ms cannot be negative")
        if drop not in (None, "before", "after"):
            raise ValueError('drop must be "before", "after" or null (None)')
        if node_id is not None and (isinstance(node_id, bool) or not isinstance(node_id, int)
                                    or node_id < 0):
            raise ValueError(f"node_id must be a broker's node id, got {node_id!r}")
        if not isinstance(stall, bool):
            raise ValueError(f"stall must be true or false, got {stall!r}")
        for name, value in (("group_id", group_id), ("client_id", client_id)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a string or null (None), got {value!r}")
        if error_code is None and not delay_ms and drop is None and not stall:
            raise ValueError("a fault needs error_code, delay_ms, drop or stall")
        with self._lock:
            fault = Fault(
                next(self._ids),
                api_key,
                error_code,
                count,
                delay_ms,
                drop,
                stall,
                group_id,
                client_id,
                node_id,
            )
            self._faults[fault.id] = fault
        log.warning("fault injected: %s", fault.as_dict())
        return fault

    def remove(self, fault_id: int) -> bool:
        """Remove a fault; False if it was not (or no longer) active."""
        with self._lock:
            removed = self._faults.pop(fault_id, None)
        if removed is not None:
            log.warning("fault removed: %s", removed.as_dict())
        return removed is not None

    def clear(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()
        log.warning("all faults removed")

    def active(self) -> list[Fault]:
        """The faults still armed."""
        with self._lock:
            return list(self._faults.values())

    def __bool__(self) -> bool:
        return bool(self._faults)

    def match(self, request: DecodedRequest, node_id: int = 0) -> Fault | None:
        """The first fault matching ``request`` to broker ``node_id`` (consuming one of its
        hits), or None."""
        if not self._faults:
            return None
        groups = _group_ids(request)
        with self._lock:
            for fault in self._faults.values():
                if fault.api_key != request.api_key:
                    continue
                if fault.client_id is not None and fault.client_id != request.client_id:
                    continue
                if fault.node_id is not None and fault.node_id != node_id:
                    continue
                if fault.group_id is not None and fault.group_id not in groups:
                    continue
                fault.hits += 1
                if fault.count is not None:
                    fault.count -= 1
                    if fault.count == 0:
                        del self._faults[fault.id]
                break
            else:
                return None
        log.warning(
            "fault %d hits %s v%d (correlation id %d, client %r)",
            fault.id,
            request.spec.name,
            request.api_version,
            request.correlation_id,
            request.client_id,
        )
        return fault


def _group_ids(request: DecodedRequest) -> set[str]:
    body = request.body
    found = set()
    if isinstance(body.get("group_id"), str):
        found.add(body["group_id"])
    for group in body.get("groups") or ():
        if isinstance(group, dict) and isinstance(group.get("group_id"), str):
            found.add(group["group_id"])
        elif isinstance(group, str):  # DescribeGroups / DeleteGroups carry plain names
            found.add(group)
    for name in body.get("groups_names") or ():
        found.add(name)
    return found
