"""``kcoord groups list|describe``: consumer groups and their lag, as
``kafka-consumer-groups.sh --list`` / ``--describe --group G`` print them, against kcoord or
any Kafka broker.

    kcoord groups list [--bootstrap HOST:PORT]
    kcoord groups describe GROUP [GROUP ...] [--bootstrap HOST:PORT]

``describe`` finds the group's coordinator (FindCoordinator), reads its members
(ConsumerGroupDescribe for a consumer-protocol group where the broker serves it, else
DescribeGroups with the members' assignments decoded), its committed offsets (OffsetFetch,
every partition), and each partition's log-end offset from its leader (Metadata, then
ListOffsets "latest"), and prints Kafka's columns: GROUP, TOPIC, PARTITION, CURRENT-OFFSET,
LOG-END-OFFSET, LAG, CONSUMER-ID, HOST, CLIENT-ID ("-" where there is none). A group with no
members and no offsets is reported as Kafka's tool does ("Consumer group 'G' has no active
members." / "does not exist."). A share group (KIP-932) is described by its members, as
``kafka-share-groups.sh --describe --members`` prints them (ShareGroupDescribe), then, after
a blank line, its share partitions as ``kafka-share-groups.sh --describe`` prints them
(DescribeShareGroupOffsets): GROUP, TOPIC, PARTITION, START-OFFSET, LAG (KIP-1226's lag:
records neither acknowledged nor archived from the start offset to the high watermark; "-"
where the broker reports none).

Exit status: 0; 1 when a broker cannot be reached or answers with an error; 2 bad
arguments. Stdlib sockets and kcoord's wire codec only.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import wire
from coordinator.ping import parse_bootstrap
from wire.consumer_protocol import decode_assignment

__all__ = ["main"]

CLIENT_ID = "kcoord-groups"
TIMEOUT_S = 10.0
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
GROUP_ID_NOT_FOUND = 69
COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
           "CONSUMER-ID", "HOST", "CLIENT-ID")
SHARE_COLUMNS = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
SHARE_OFFSET_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")


class _UsageError(Exception):
    """A bad command line (exit status 2)."""


class _Failure(Exception):
    """A broker could not be reached or answered with an error (exit status 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


class _Connection:
    """One blocking connection to a broker, with the API versions both sides speak."""

    def __init__(self, host: str, port: int) -> None:
        try:
            self.sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
        except OSError as exc:
            raise _Failure(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
        self.where = f"{host}:{port}"
        self.correlation_id = 0
        self.reader = wire.FrameReader(max_frame_bytes=64 << 20)
        answer = self.call(18, 0, {})
        self.versions: dict[int, tuple[int, int]] = {
            int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}

    def version(self, api_key: int, ours: int) -> int | None:
        """The highest version up to ``ours`` the broker serves (None: not served)."""
        served = self.versions.get(api_key)
        if served is None or served[0] > ours:
            return None
        return min(served[1], ours)

    def call(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        self.correlation_id += 1
        try:
            self.sock.sendall(wire.encode_request(api_key, version, self.correlation_id,
                                                  CLIENT_ID, body))
            while (payload := self.reader.next_frame()) is wire.NEED_DATA:
                data = self.sock.recv(1 << 16)
                if not data:
                    raise _Failure(f"{self.where} closed the connection")
                self.reader.receive_data(data)
        except OSError as exc:
            raise _Failure(f"{self.where}: {exc.strerror or exc}") from None
        assert isinstance(payload, bytes)
        _, response = wire.decode_response(api_key, version, payload)
        return response

    def close(self) -> None:
        self.sock.close()


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kcoord groups",
                     description="List consumer groups, or describe their members and lag.")
    commands = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("list", "list the groups"),
                       ("describe", "members, committed offsets and lag of groups")):
        sub = commands.add_parser(name, help=text)
        if name == "describe":
            sub.add_argument("groups", nargs="+", metavar="GROUP")
        sub.add_argument("--bootstrap", default="127.0.0.1:9092", metavar="HOST:PORT",
                         help="a broker of the cluster (default 127.0.0.1:9092)")
    return parser


def _list_on(conn: _Connection) -> set[str]:
    version = conn.version(16, 4) or 0
    answer = conn.call(16, version, {"states_filter": [], "types_filter": []})
    if answer.error_code:
        raise _Failure(f"ListGroups on {conn.where} answered error {answer.error_code}")
    return {g.group_id for g in answer.groups}


def list_groups(conn: _Connection) -> list[str]:
    """Every group of the cluster: each broker lists the groups it coordinates, so every
    broker Metadata names is asked (as Kafka's AdminClient does)."""
    metadata = conn.call(3, conn.version(3, 9) or 1, {
        "topics": [], "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False})
    brokers = sorted({(b.host, b.port) for b in metadata.brokers})
    groups = _list_on(conn)
    for host, port in brokers:
        if f"{host}:{port}" == conn.where:
            continue
        other = _Connection(host, port)
        try:
            groups |= _list_on(other)
        finally:
            other.close()
    return sorted(groups)


def _coordinator(conn: _Connection, group: str) -> tuple[str, int]:
    answer = conn.call(10, 2, {"key": group, "key_type": 0})
    if answer.error_code:
        raise _Failure(f"FindCoordinator for {group!r} answered error {answer.error_code}")
    return answer.host, answer.port


def _members(conn: _Connection, group: str) -> tuple[str, dict[tuple[str, int], tuple[str, str,
                                                                                       str]]]:
    """(state, {(topic, partition): (consumer id, host, client id)})."""
    owners: dict[tuple[str, int], tuple[str, str, str]] = {}
    version = conn.version(69, 0)
    if version is not None:
        described = conn.call(69, version, {"group_ids": [group],
                                            "include_authorized_operations": False})
        (consumer_group,) = described.groups
        if consumer_group.error_code == 0:
            for m in consumer_group.members:
                for tp in m.assignment.topic_partitions:
                    for p in tp.partitions:
                        owners[(tp.topic_name, p)] = (m.member_id, m.client_host, m.client_id)
            return consumer_group.group_state, owners
    answer = conn.call(15, conn.version(15, 5) or 0, {"groups": [group],
                                                      "include_authorized_operations": False})
    (described_group,) = answer.groups
    if described_group.error_code not in (0, GROUP_ID_NOT_FOUND):
        raise _Failure(f"DescribeGroups answered error {described_group.error_code}")
    for m in described_group.members:
        if described_group.protocol_type != "consumer" or not m.member_assignment:
            continue
        try:
            assignment = decode_assignment(bytes(m.member_assignment))
        except Exception:
            continue
        for topic, partitions in assignment:
            for p in partitions:
                owners[(topic, p)] = (m.member_id, m.client_host, m.client_id)
    return described_group.group_state, owners


def _share_lines(conn: _Connection, group: str) -> list[str] | None:
    """A share group's members, then its share partitions' start offsets and lag (the
    module docstring); None when the group is no share group or the broker serves no
    ShareGroupDescribe."""
    members = _share_members(conn, group)
    if members is None:
        return None
    offsets = _share_offsets(conn, group)
    return members + (["", *offsets] if offsets else [])


def _share_offsets(conn: _Connection, group: str) -> list[str]:
    """The share partitions' table (none when the broker serves no
    DescribeShareGroupOffsets or the group has no share partitions)."""
    version = conn.version(90, 1)
    if version is None:
        return []
    answer = conn.call(90, version, {"groups": [{"group_id": group, "topics": None}]})
    (described,) = answer.groups
    if described.error_code:
        raise _Failure(f"DescribeShareGroupOffsets for {group!r} answered error "
                       f"{described.error_code}")
    found = sorted((t.topic_name, p.partition_index, p.start_offset, p.get("lag", -1))
                   for t in described.topics for p in t.partitions if p.error_code == 0)
    rows = [(group, topic, str(partition), _text(start if start >= 0 else None),
             _text(lag if lag >= 0 else None)) for topic, partition, start, lag in found]
    if not rows:
        return []
    widths = [max(len(c), *(len(r[i]) for r in rows))
              for i, c in enumerate(SHARE_OFFSET_COLUMNS)]
    return [_row(SHARE_OFFSET_COLUMNS, widths), *(_row(r, widths) for r in rows)]


def _share_members(conn: _Connection, group: str) -> list[str] | None:
    """A share group's members as ``kafka-share-groups.sh --describe --members`` prints
    them (GROUP, CONSUMER-ID, HOST, CLIENT-ID, #PARTITIONS, ASSIGNMENT); None when the
    group is no share group or the broker serves no ShareGroupDescribe."""
    version = conn.version(77, 1)
    if version is None:
        return None
    answer = conn.call(77, version, {"group_ids": [group],
                                     "include_authorized_operations": False})
    (described,) = answer.groups
    if described.error_code != 0:
        return None
    if not described.members:
        return [f"Share group '{group}' has no active members."]
    rows = []
    for m in sorted(described.members, key=lambda m: m.member_id):
        parts = sorted((tp.topic_name, p) for tp in m.assignment.topic_partitions
                       for p in tp.partitions)
        rows.append((group, m.member_id, m.client_host, m.client_id, str(len(parts)),
                     ",".join(f"{t}:{p}" for t, p in parts) or "-"))
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(SHARE_COLUMNS)]
    return [_row(SHARE_COLUMNS, widths), *(_row(r, widths) for r in rows)]


def _committed(conn: _Connection, group: str) -> dict[tuple[str, int], int]:
    version = conn.version(9, 7) or 1
    if version >= 2:
        body: dict[str, Any] = {"group_id": group, "topics": None, "require_stable": False}
    else:
        body = {"group_id": group, "topics": []}
    answer = conn.call(9, version, body)
    if answer.error_code:
        raise _Failure(f"OffsetFetch for {group!r} answered error {answer.error_code}")
    return {(t.name, p.partition_index): p.committed_offset
            for t in answer.topics for p in t.partitions if p.committed_offset >= 0}


def _log_end_offsets(conn: _Connection, partitions: set[tuple[str, int]]) -> dict[
        tuple[str, int], int]:
    """Each partition's log-end offset, asked of its leader."""
    topics = sorted({t for t, _ in partitions})
    if not topics:
        return {}
    metadata = conn.call(3, conn.version(3, 9) or 4, {
        "topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False})
    brokers = {b.node_id: (b.host, b.port) for b in metadata.brokers}
    by_leader: dict[int, list[tuple[str, int]]] = {}
    for topic in metadata.topics:
        for p in topic.partitions:
            if (topic.name, p.partition_index) in partitions and p.leader_id in brokers:
                by_leader.setdefault(p.leader_id, []).append((topic.name, p.partition_index))
    ends: dict[tuple[str, int], int] = {}
    for leader, wanted in by_leader.items():
        leader_conn = _Connection(*brokers[leader])
        try:
            by_topic: dict[str, list[int]] = {}
            for t, p in wanted:
                by_topic.setdefault(t, []).append(p)
            answer = leader_conn.call(2, leader_conn.version(2, 5) or 1, {
                "replica_id": -1, "isolation_level": 0, "topics": [
                    {"name": t, "partitions": [
                        {"partition_index": p, "current_leader_epoch": -1, "timestamp": -1}
                        for p in ps]} for t, ps in by_topic.items()]})
        finally:
            leader_conn.close()
        for t in answer.topics:
            for p in t.partitions:
                if p.error_code == 0:
                    ends[(t.name, p.partition_index)] = p.offset
    return ends


class GroupNotFound(Exception):
    """The group does not exist (Dead, or unknown, with no committed offsets)."""


def describe(conn: _Connection, group: str) -> list[str]:
    """The lines ``kafka-consumer-groups.sh --describe --group G`` prints for one group;
    GroupNotFound when there is no such group."""
    coordinator = _Connection(*_coordinator(conn, group))
    try:
        share_lines = _share_lines(coordinator, group)
        if share_lines is not None:
            return share_lines
        state, owners = _members(coordinator, group)
        committed = _committed(coordinator, group)
    finally:
        coordinator.close()
    if state in ("Dead", "") and not committed:
        raise GroupNotFound(group)
    partitions = set(committed) | set(owners)
    ends = _log_end_offsets(conn, partitions)
    rows = []
    for topic, partition in sorted(partitions):
        current = committed.get((topic, partition))
        end = ends.get((topic, partition))
        lag = end - current if current is not None and end is not None else None
        consumer, host, client = owners.get((topic, partition), ("-", "-", "-"))
        rows.append((group, topic, str(partition), _text(current), _text(end), _text(lag),
                     consumer, host, client))
    lines = []
    if not owners:
        lines.append(f"Consumer group '{group}' has no active members.")
        lines.append("")
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    lines.append(_row(COLUMNS, widths))
    lines.extend(_row(r, widths) for r in rows)
    return lines


def _text(value: int | None) -> str:
    return "-" if value is None else str(value)


def _row(cells: Sequence[str], widths: list[int]) -> str:
    return " ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def main(argv: Sequence[str]) -> int:
    """``kcoord groups ...``; the exit status."""
    try:
        args = _parser().parse_args(list(argv))
        host, port = parse_bootstrap(args.bootstrap)
    except (_UsageError, ValueError) as exc:
        print(f"kcoord groups: {exc}", file=sys.stderr)
        return EXIT_USAGE
    status = EXIT_OK
    try:
        conn = _Connection(host, port)
        try:
            if args.action == "list":
                lines = list_groups(conn)
            else:
                lines = []
                for i, group in enumerate(args.groups):
                    if i:
                        lines.append("")
                    try:
                        lines.extend(describe(conn, group))
                    except GroupNotFound:
                        # kafka-consumer-groups.sh's words, on stdout as it prints them;
                        # the exit status says it too.
                        lines.append(f"Error: Consumer group '{group}' does not exist.")
                        status = EXIT_FAILURE
        finally:
            conn.close()
    except _Failure as exc:
        print(f"kcoord groups: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    for line in lines:
        print(line)
    return status
