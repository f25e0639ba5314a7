"""The out-of-process controls: a small HTTP/1.1 API on loopback (``kcoord serve
--control-port P``), the same controls the pytest fixture has. Off by default.

==========================  =========================================================
``POST /time/advance``       ``{"seconds": 45}``: 45 s of coordinator time pass now
``GET /faults``              the armed faults
``POST /faults``             ``{"api_key": 8, "error_code": 27, "count": 1, "delay_ms": 0,
                             "drop": null|"before"|"after", "stall": false, "group_id": null,
                             "client_id": null}`` → 201 and the fault (with its ``id``);
                             ``api_key`` may be an API name, ``error_code`` an error name
                             (``"NOT_COORDINATOR"``)
``DELETE /faults/{id}``      remove one fault; ``DELETE /faults`` removes all
``GET /groups``              every group: ``group_id``, ``type``, ``state``,
                             ``generation_id``, ``members`` (a count)
``GET /groups/{id}``         one group straight from the coordinator, with its offsets
                             (404 if unknown)
``GET /groups/{id}/offsets`` its committed offsets, log-end offsets and lag
``GET /transactions``        every transactional id: state, producer id and epoch,
                             timeout, partitions, offsets staged by its open transaction
``POST /reset``              remove every fault and delete every group without members,
                             classic or consumer (DeleteGroups semantics: their offsets are
                             tombstoned)
``GET /brokers``             every broker: node id, address, live, coordinator partitions
``POST /brokers/{id}/stop``  stop a broker (``--brokers`` N > 1): listener closed,
                             connections reset, its partitions and groups fail over; the
                             last live broker is refused (409)
``POST /brokers/{id}/start`` start it again on its port (leadership stays where it is)
``POST /brokers/preferred-leaders``  give partitions back to their preferred replicas
``POST /groups/{id}/coordinator``    ``{"node_id": K}``: move the group's
                             ``__consumer_offsets`` partition (and its groups) to broker K
``GET /users``               every SCRAM user: name, mechanisms and iterations
``POST /users``              ``{"name": "alice", "password": "..."}``: both SCRAM
                             credentials, persisted (and PLAIN on a SASL listener); the
                             password is never answered or logged
``GET /acls``                every ACL, with Kafka's names
``POST /acls``               ``{"acls": [{"resource_type": "TOPIC", "resource_name": "t",
                             "pattern_type": "LITERAL", "principal": "User:alice",
                             "host": "*", "operation": "READ", "permission_type":
                             "ALLOW"}]}`` (needs ``authorizer.class.name``)
``DELETE /acls``             remove every ACL
==========================  =========================================================

Answers are JSON. Time moves only if the server runs on a ``trio.testing.MockClock``
(the CLI uses one when ``--control-port`` is given); otherwise ``/time/advance`` is 409.

The API is for loopback only, and refuses what a web page could forge (DNS rebinding, a
cross-site form post): a ``Host`` header naming anything but ``localhost``, ``127.0.0.1`` or
``::1`` is 403, and so is an ``Origin`` that is not such a name; every state-changing
request (POST, DELETE) without ``Content-Type: application/json`` is 415, with or without a
body (a page cannot send that type cross-site without a CORS preflight, which this API never
grants). A body is JSON nested at most ``MAX_JSON_DEPTH`` deep, its numbers finite and
within 64 bits (400 otherwise).
"""

from __future__ import annotations

import json
import logging
import math
from http import HTTPStatus
from typing import Any

import trio
import trio.testing

from coordinator.core import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    LocalContext,
    handle_delete_groups,
)
from coordinator.server.app import RunningServer
from coordinator.server.cluster import Cluster, ClusterError
from coordinator.server.faults import FaultInjector
from coordinator.testing.double import advance_seconds, jump_clock
from coordinator.testing.group_views import (
    describe_any,
    describe_transactions,
    describe_with_offsets,
    group_offsets,
)
from coordinator.testing.security_controls import control_route

__all__ = ["serve_control"]

log = logging.getLogger(__name__)

_MAX_REQUEST_BYTES = 65536
_READ_TIMEOUT_S = 10.0
#: The deepest nesting of arrays and objects a body may have (json would recurse past
#: Python's stack on a 20,000-deep array).
MAX_JSON_DEPTH = 32
_MAX_JSON_INT = 2**63
_STATE_CHANGING = frozenset({"POST", "DELETE", "PUT", "PATCH"})

class _HttpError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


async def serve_control(
    running: RunningServer,
    faults: FaultInjector,
    port: int,
    *,
    host: str = "127.0.0.1",
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the control API until cancelled; reports the bound port."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = int(listeners[0].socket.getsockname()[1])
    log.info("control API listening on %s:%d", host, bound)
    api = _ControlApi(running, faults)
    task_status.started(bound)
    await trio.serve_listeners(api.handle_stream, listeners)


class _ControlApi:
    def __init__(self, running: RunningServer, faults: FaultInjector) -> None:
        self.running = running
        self.faults = faults

    async def handle_stream(self, stream: trio.SocketStream) -> None:
        try:
            with trio.fail_after(_READ_TIMEOUT_S):
                method, path, body = await _read_request(stream)
            status, answer = await self.route(method, path, body)
        except _HttpError as exc:
            status, answer = exc.status, {"error": str(exc)}
        except trio.TooSlowError:
            status, answer = HTTPStatus.REQUEST_TIMEOUT, {"error": "request not received in time"}
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        except Exception:  # a bug in a route must never stop the server it controls
            log.exception("control API request failed")
            status, answer = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error"}
        payload = json.dumps(answer, default=_json_default).encode()
        head = (
            f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        ).encode()
        try:
            await stream.send_all(head + payload)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    async def route(self, method: str, path: str, body: Any) -> tuple[HTTPStatus, Any]:
        parts = [p for p in path.split("?")[0].split("/") if p]
        if parts == ["time", "advance"] and method == "POST":
            return HTTPStatus.OK, await self.advance(body)
        if parts == ["faults"] and method == "GET":
            return HTTPStatus.OK, [f.as_dict() for f in self.faults.active()]
        if parts == ["faults"] and method == "POST":
            return HTTPStatus.CREATED, self.add_fault(body)
        if parts == ["faults"] and method == "DELETE":
            self.faults.clear()
            return HTTPStatus.OK, {"removed": "all"}
        if len(parts) == 2 and parts[0] == "faults" and method == "DELETE":
            fault_id = _small_int(parts[1])
            if fault_id is None or not self.faults.remove(fault_id):
                raise _HttpError(HTTPStatus.NOT_FOUND, f"no fault {parts[1][:40]!r}")
            return HTTPStatus.OK, {"removed": fault_id}
        if parts == ["groups"] and method == "GET":
            return HTTPStatus.OK, self.groups()
        if len(parts) == 3 and parts[0] == "groups" and parts[2] == "offsets" and method == "GET":
            if self.group(parts[1]) is None:
                raise _HttpError(HTTPStatus.NOT_FOUND, f"no group {parts[1]!r}")
            return HTTPStatus.OK, group_offsets(self.running.server, parts[1])
        if len(parts) == 2 and parts[0] == "groups" and method == "GET":
            group = self.group(parts[1])
            if group is None:
                raise _HttpError(HTTPStatus.NOT_FOUND, f"no group {parts[1]!r}")
            return HTTPStatus.OK, group
        if parts == ["transactions"] and method == "GET":
            return HTTPStatus.OK, describe_transactions(self.running.server)
        if parts == ["reset"] and method == "POST":
            return HTTPStatus.OK, await self.reset()
        if parts[:1] == ["brokers"] or parts[-1:] == ["coordinator"]:
            return await self.brokers(method, parts, body)
        if parts in (["users"], ["acls"]):
            try:
                status, answer = await control_route(self.running, method, parts, body)
            except LookupError as exc:
                raise _HttpError(HTTPStatus.NOT_FOUND, str(exc)) from None
            except ValueError as exc:
                raise _HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
            return HTTPStatus(status), answer
        raise _HttpError(HTTPStatus.NOT_FOUND, f"no route {method} {path}")

    async def advance(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or "seconds" not in body:
            raise _HttpError(HTTPStatus.BAD_REQUEST, 'body must be {"seconds": <number>}')
        try:
            seconds = advance_seconds(body["seconds"])
        except ValueError as exc:
            raise _HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        clock = trio.lowlevel.current_clock()
        if not isinstance(clock, trio.testing.MockClock):
            raise _HttpError(HTTPStatus.CONFLICT, "this server's clock cannot be moved")
        await jump_clock(clock, seconds, self.running)
        return {"advanced_seconds": seconds, "now_ms": self.running.runtime.now_ms()}

    async def brokers(self, method: str, parts: list[str], body: Any) -> tuple[HTTPStatus, Any]:
        """``GET /brokers``, ``POST /brokers/{id}/stop|start``,
        ``POST /brokers/preferred-leaders``, ``POST /groups/{id}/coordinator``."""
        brokers = self.running.brokers
        if parts == ["brokers"] and method == "GET":
            if brokers is None:
                identity = self.running.server.identity
                return HTTPStatus.OK, [{"node_id": identity.node_id, "host": identity.host,
                                        "port": identity.port, "live": True}]
            return HTTPStatus.OK, brokers.cluster.describe()
        if method != "POST":
            raise _HttpError(HTTPStatus.NOT_FOUND, f"no route {method} /{'/'.join(parts)}")
        if brokers is None:
            raise _HttpError(HTTPStatus.CONFLICT,
                             "kcoord runs one broker; start it with --brokers N to use this")
        try:
            if parts == ["brokers", "preferred-leaders"]:
                return HTTPStatus.OK, await brokers.elect_preferred_leaders()
            if len(parts) == 3 and parts[0] == "brokers" and parts[2] in ("stop", "start"):
                node_id = _node_id(brokers.cluster, parts[1])
                if parts[2] == "stop":
                    return HTTPStatus.OK, await brokers.stop(node_id)
                return HTTPStatus.OK, await brokers.start(node_id)
            if len(parts) == 3 and parts[0] == "groups":
                if not isinstance(body, dict) or set(body) != {"node_id"}:
                    raise _HttpError(HTTPStatus.BAD_REQUEST, 'body must be {"node_id": <id>}')
                node_id = _node_id(brokers.cluster, body["node_id"])
                return HTTPStatus.OK, await brokers.move_coordinator(parts[1], node_id)
        except ClusterError as exc:
            raise _HttpError(HTTPStatus.CONFLICT, str(exc)) from exc
        except OSError as exc:  # the port of a stopped broker was taken meanwhile
            raise _HttpError(HTTPStatus.CONFLICT, f"cannot listen again: {exc}") from exc
        raise _HttpError(HTTPStatus.NOT_FOUND, f"no route {method} /{'/'.join(parts)}")

    def add_fault(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("api_key"), int | str):
            raise _HttpError(HTTPStatus.BAD_REQUEST,
                             "body must be a JSON object with api_key (a key or an API name)")
        allowed = {"error_code", "count", "delay_ms", "drop", "stall", "group_id", "client_id",
                   "node_id"}
        unknown = set(body) - allowed - {"api_key"}
        if unknown:
            raise _HttpError(HTTPStatus.BAD_REQUEST, f"unknown fields {sorted(unknown)}")
        try:
            fault = self.faults.add(body["api_key"], **{k: body[k] for k in allowed & set(body)})
        except (TypeError, ValueError) as exc:
            raise _HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
        return fault.as_dict()

    def groups(self) -> list[dict[str, Any]]:
        coordinator = self.running.runtime.coordinator
        out = []
        for group_id in sorted(coordinator.group_ids()):
            described = describe_any(coordinator, group_id)
            if described is not None:
                out.append(
                    {
                        "group_id": group_id,
                        "type": described["type"],
                        "state": described["state"],
                        "generation_id": described["generation_id"],
                        "members": len(described["members"]),
                    }
                )
        return out

    def group(self, group_id: str) -> dict[str, Any] | None:
        return describe_with_offsets(self.running.server, group_id)

    async def reset(self) -> dict[str, Any]:
        self.faults.clear()
        runtime = self.running.runtime
        coordinator = runtime.coordinator
        empty = [  # classic and consumer (KIP-848) groups alike
            g
            for g in coordinator.group_ids()
            if (described := describe_any(coordinator, g)) is not None
            and not described["members"]
        ]
        request: DeleteGroupsRequest = {"groups_names": empty}
        response: DeleteGroupsResponse = await runtime.call(
            handle_delete_groups, LocalContext(api_version=2), request
        )
        return {
            "faults": "cleared",
            "deleted_groups": [
                r["group_id"] for r in response["results"] if r["error_code"] == 0
            ],
        }


def _small_int(text: str) -> int | None:
    """A path segment of 1-9 ASCII digits as an int, else None (``str.isdigit`` takes "²",
    which ``int`` refuses; 5,000 digits would pass the 4,300-digit limit's ValueError)."""
    if not 0 < len(text) <= 9 or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def _node_id(cluster: Cluster, raw: Any) -> int:
    """A broker id from a path segment or a JSON value: 400 when not an integer, 404 when
    no such broker."""
    if isinstance(raw, str):
        parsed = _small_int(raw)
        if parsed is None:
            raise _HttpError(HTTPStatus.BAD_REQUEST,
                             f"node id must be an integer, got {raw[:40]!r}")
        raw = parsed
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise _HttpError(HTTPStatus.BAD_REQUEST, f"node id must be an integer, got {raw!r}")
    try:
        return cluster.check_node(raw)
    except ClusterError as exc:
        raise _HttpError(HTTPStatus.NOT_FOUND, str(exc)) from exc


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _loopback_host(value: str) -> bool:
    """Whether a Host header names this machine's loopback (any port)."""
    host = value.lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    return host in _LOOPBACK_NAMES


def _loopback_origin(value: str) -> bool:
    """Whether an Origin header (``scheme://host[:port]``) names this machine's loopback;
    ``null`` (a sandboxed or file page) does not."""
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return False
    return _loopback_host(rest.partition("/")[0])


async def _read_request(stream: trio.SocketStream) -> tuple[str, str, Any]:
    data = bytearray()
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(4096)
        if not chunk:
            raise _HttpError(HTTPStatus.BAD_REQUEST, "connection closed mid-request")
        data += chunk
        if len(data) > _MAX_REQUEST_BYTES:
            raise _HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, path, _version = lines[0].split(" ", 2)
    except ValueError:
        raise _HttpError(HTTPStatus.BAD_REQUEST, "malformed request line") from None
    length = 0
    content_type = ""
    origin: str | None = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            digits = value.strip()
            if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
                raise _HttpError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
            length = int(digits)
        elif name == "host" and not _loopback_host(value.strip()):
            raise _HttpError(HTTPStatus.FORBIDDEN,
                             f"Host {value.strip()!r} is not a loopback name: the control API "
                             "is for loopback only")
        elif name == "content-type":
            content_type = value.split(";", 1)[0].strip().lower()
        elif name == "origin":
            origin = value.strip()
    if origin is not None and not _loopback_origin(origin):
        raise _HttpError(HTTPStatus.FORBIDDEN,
                         f"Origin {origin!r} is not a loopback name: the control API is for "
                         "loopback only")
    if (length or method in _STATE_CHANGING) and content_type != "application/json":
        raise _HttpError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                         "a state-changing request (or one with a body) must be sent as "
                         "Content-Type: application/json, with or without a body")
    if length > _MAX_REQUEST_BYTES:
        raise _HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body too large")
    body = bytearray(rest)
    while len(body) < length:
        chunk = await stream.receive_some(length - len(body))
        if not chunk:
            raise _HttpError(HTTPStatus.BAD_REQUEST, "connection closed mid-body")
        body += chunk
    if not length:
        return method, path, None
    return method, path, _parse_json(bytes(body[:length]))


def _parse_json(raw: bytes) -> Any:
    """The body as JSON, or 400: nested at most ``MAX_JSON_DEPTH`` deep (checked before
    parsing), no NaN or Infinity, every number within 64 bits."""
    if _json_depth(raw) > MAX_JSON_DEPTH:
        raise _HttpError(HTTPStatus.BAD_REQUEST,
                         f"body is nested deeper than {MAX_JSON_DEPTH} levels")

    def refuse_constant(name: str) -> Any:
        raise _HttpError(HTTPStatus.BAD_REQUEST, f"body holds {name}: numbers must be finite")

    try:
        body = json.loads(raw, parse_constant=refuse_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError; an int of >4300 digits
        raise _HttpError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from None
    _check_numbers(body)
    return body


def _json_depth(raw: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in ``raw`` outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _check_numbers(value: Any) -> None:
    """400 for a float that is not finite (1e400 parses as inf) or an int beyond 64 bits."""
    if isinstance(value, dict):
        for item in value.values():
            _check_numbers(item)
    elif isinstance(value, list):
        for item in value:
            _check_numbers(item)
    elif isinstance(value, float) and not math.isfinite(value):
        raise _HttpError(HTTPStatus.BAD_REQUEST, "body holds a number that is not finite")
    elif isinstance(value, int) and not isinstance(value, bool) and not (
        -_MAX_JSON_INT <= value < _MAX_JSON_INT
    ):
        raise _HttpError(HTTPStatus.BAD_REQUEST, "body holds an integer beyond 64 bits")


def _json_default(value: Any) -> Any:
    """What JSON cannot hold natively (UUIDs, enums, tuples as keys' values) as text."""
    return str(value)
