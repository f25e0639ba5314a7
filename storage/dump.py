"""``kcoord log dump DIR``: print a data directory's records, like kafka-dump-log with the
offsets decoder. Read-only and lock-free, so it works on the directory of a running server;
a torn tail or corruption is reported on stderr (exit status 1) after the good records.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    RecordKey,
    RecordValue,
)
from storage.security_records import UserScramCredentialValue
from wire.consumer_protocol import decode_assignment, decode_subscription

from .directory import find_segments
from .record_codec import RecordDecodeError, UnknownKey, decode_key, decode_value
from .record_mapping import to_fields
from .record_types import RECORD_TYPES
from .segment import HEADER_SIZE, SegmentHeaderError, decode_header, scan_entries

__all__ = ["DumpedEntry", "iter_directory", "main"]


@dataclass(frozen=True, slots=True)
class DumpedEntry:
    """One entry as the dump shows it."""

    offset: int
    segment: str
    pos: int
    key_bytes: bytes
    value_bytes: bytes | None


def iter_directory(directory: str, problems: list[str]) -> Iterator[DumpedEntry]:
    """Every valid entry of every segment in ``directory`` (a committed compaction output
    read in place of the segments it replaces, as the next open makes it); what stops a
    segment early is appended to ``problems``."""
    for seg in find_segments(directory):
        name, base = seg.name, seg.base
        with open(seg.path, "rb") as f:
            data = f.read()
        try:
            decode_header(data)
        except SegmentHeaderError as exc:
            problems.append(f"{name}: bad segment header: {exc}")
            continue
        scan = scan_entries(data, HEADER_SIZE)
        for i, ((key, value), pos) in enumerate(zip(scan.entries, scan.positions, strict=True)):
            yield DumpedEntry(base + i, name, pos, key, value)
        if scan.stop is not None:
            bad = HEADER_SIZE + scan.valid_bytes
            problems.append(
                f"{name}: stopped at byte {bad} of {len(data)}: "
                f"{scan.stop.value} ({scan.stop_detail}); {len(data) - bad} bytes not shown"
            )


def _text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple | list):
        return "[" + ";".join(_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _key_fields(key: RecordKey | UnknownKey) -> tuple[str, dict[str, Any]]:
    if isinstance(key, OffsetCommitKey):
        return "offset_commit", {"group": key.group, "topic": key.topic, "partition": key.partition}
    if isinstance(key, GroupMetadataKey):
        return "group_metadata", {"group": key.group}
    if isinstance(key, RebalanceEventKey):
        return "rebalance_event", {"group": key.group}
    if isinstance(key, UnknownKey):
        return "unknown", {"version": key.version, "raw": key.raw.hex()}
    # Kafka 4's consumer group records: snake_case of the key's name, every field as is.
    return _kind(type(key)), to_fields(key)


def _kind(key_type: type) -> str:
    """A record type's name in the dump: snake_case of its key class, without "Key"."""
    name = key_type.__name__.removesuffix("Key")
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def record_type_names() -> list[str]:
    """Every ``type`` a dumped record can have (what ``--type`` takes), sorted."""
    names = {_kind(t.key_type) for t in RECORD_TYPES.values()}
    return sorted(names | {"offset_commit", "group_metadata", "rebalance_event", "unknown",
                           "undecodable"})


def _decoded(protocol_type: str, kind: str, data: bytes) -> Any:
    """A consumer-protocol member's subscription (its topics) or assignment (topic ->
    partitions), as ``describe_group`` shows them; other protocols' bytes as they are."""
    if protocol_type != "consumer" or not data:
        return data
    try:
        if kind == "subscription":
            return {"topics": list(decode_subscription(data).topics)}
        return {topic: list(partitions) for topic, partitions in decode_assignment(data)}
    except Exception:  # not what the consumer protocol writes: show the bytes
        return data


def _value_fields(value: RecordValue) -> dict[str, Any]:
    if isinstance(value, UserScramCredentialValue):  # the keys stay out of dumps
        return {"iterations": value.iterations, "salt": "[hidden]", "stored_key": "[hidden]",
                "server_key": "[hidden]"}
    if isinstance(value, OffsetCommitValue):
        return {
            "offset": value.offset,
            "leader_epoch": value.leader_epoch,
            "metadata": value.metadata,
            "commit_timestamp": value.commit_timestamp,
            "expire_timestamp": value.expire_timestamp,
        }
    if isinstance(value, GroupMetadataValue):
        return {
            "protocol_type": value.protocol_type,
            "generation": value.generation,
            "protocol": value.protocol,
            "leader": value.leader,
            "current_state_timestamp": value.current_state_timestamp,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "rebalance_timeout": m.rebalance_timeout,
                    "session_timeout": m.session_timeout,
                    "subscription": _decoded(value.protocol_type, "subscription",
                                             m.subscription),
                    "assignment": _decoded(value.protocol_type, "assignment", m.assignment),
                }
                for m in value.members
            ],
        }
    if not isinstance(value, RebalanceEventValue):  # a consumer group record
        return to_fields(value)
    return {
        "event": value.event,
        "timestamp": value.timestamp,
        "generation": value.generation,
        "member_id": value.member_id,
        "group_instance_id": value.group_instance_id,
        "reason": value.reason,
        "members": list(value.members),
    }


def _describe(entry: DumpedEntry) -> dict[str, Any]:
    """The entry as a JSON-able dict (bytes fields base64)."""
    out: dict[str, Any] = {"offset": entry.offset, "segment": entry.segment, "pos": entry.pos}
    try:
        key = decode_key(entry.key_bytes)
    except RecordDecodeError as exc:
        out.update(type="undecodable", error=str(exc), key_hex=entry.key_bytes.hex())
        return out
    kind, fields = _key_fields(key)
    out["type"] = kind
    out["key_version"] = int.from_bytes(entry.key_bytes[:2], "big", signed=True)
    out["key"] = fields
    if entry.value_bytes is None:
        out["value"] = None
        return out
    out["value_version"] = int.from_bytes(entry.value_bytes[:2], "big", signed=True)
    if isinstance(key, UnknownKey):
        out["value_hex"] = entry.value_bytes.hex()
        return out
    try:
        out["value"] = _value_fields(decode_value(key, entry.value_bytes))
    except RecordDecodeError as exc:
        out["error"] = str(exc)
        out["value_hex"] = entry.value_bytes.hex()
    return out


def _json_default(obj: object) -> str:
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _iso(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC (the text dump's timestamps)."""
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _line(d: dict[str, Any]) -> str:
    head = f"offset: {d['offset']} segment: {d['segment']} pos: {d['pos']}"
    if d["type"] == "undecodable":
        return f"{head} key: <undecodable: {d['error']}> key_hex: {d['key_hex']}"
    key = ",".join(f"{k}={_text(v)}" for k, v in d["key"].items())
    text = f"{head} key: {d['type']}::{key}"
    if d.get("value", 0) is None:
        return f"{text} payload: <DELETE>"
    if d["type"] == "unknown":
        return f"{text} payload: value_hex={d['value_hex']}"
    if "value" not in d:
        return f"{text} payload: <undecodable: {d['error']}> value_hex: {d['value_hex']}"
    fields = []
    for k, v in d["value"].items():
        if k.endswith("timestamp") and isinstance(v, int) and v >= 0:
            v = _iso(v)
        if k == "members" and d["type"] == "group_metadata":
            v = (
                "["
                + ";".join(
                    "{" + ",".join(f"{mk}={_text(mv)}" for mk, mv in m.items()) + "}" for m in v
                )
                + "]"
            )
            fields.append(f"{k}={v}")
        else:
            fields.append(f"{k}={_text(tuple(v) if isinstance(v, list) else v)}")
    return f"{text} payload: {','.join(fields)}"


def _quiet(out: TextIO) -> None:
    """Point a broken stdout at /dev/null, so the interpreter's last flush is silent."""
    try:
        fd = out.fileno()
    except (OSError, ValueError):  # not a real file (a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def main(
    argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Entry point of ``kcoord log dump``. Exit 0: clean; 1: damaged data (reported on
    stderr); 2: bad usage or unreadable directory."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = argparse.ArgumentParser(
        prog="kcoord log dump",
        description="Print the records of a kcoord data directory, one per line.",
    )
    parser.add_argument("directory", metavar="DIR", help="the data directory (--data-dir)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--group", action="append", default=[], metavar="GROUP",
                        help="only records of this group (repeatable)")
    parser.add_argument("--type", action="append", default=[], metavar="TYPE", dest="types",
                        help="only records of this type: offset_commit, group_metadata, "
                        "rebalance_event, consumer_group_metadata, ... (repeatable)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    directory: str = args.directory
    known = record_type_names()
    unknown = sorted(set(args.types) - set(known))
    if unknown:
        print(f"kcoord log dump: unknown --type {', '.join(unknown)}; the types are: "
              f"{', '.join(known)}", file=err)
        return 2
    if not os.path.isdir(directory):
        print(f"kcoord log dump: {directory}: not a directory", file=err)
        return 2
    if not find_segments(directory):
        print(f"kcoord log dump: {directory}: no kcoord log here (no segment files)", file=err)
        return 2
    groups, types = set(args.group), set(args.types)
    problems: list[str] = []
    try:
        for entry in iter_directory(directory, problems):
            d = _describe(entry)
            if groups and d.get("key", {}).get("group") not in groups:
                continue
            if types and d["type"] not in types:
                continue
            if args.json:
                out.write(json.dumps(d, default=_json_default, ensure_ascii=False) + "\n")
            else:
                out.write(_line(d) + "\n")
        out.flush()
    except BrokenPipeError:  # the reader went away (``log dump DIR | head``): stop quietly
        _quiet(out)
        return 0
    except OSError as exc:
        print(f"kcoord log dump: {directory}: {exc.strerror or exc}", file=err)
        return 2
    for problem in problems:
        print(f"kcoord log dump: {problem}", file=err)
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
