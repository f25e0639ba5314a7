"""The capture broker's output (used by capture_broker.py): the field-by-field
annotation of a request frame with the schema, the choice of one frame per (api, version),
and the fixture module written for a client (one hex chunk per field, with a comment
naming the field and its value).
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import uuid
from io import BytesIO

from capture_server import Captured

import wire
from wire.fast_primitives import (
    read_exact,
    read_uvarint,
    read_varint,
    read_varlong,
)
from wire.header import REQUEST_HEADER, request_header_version
from wire.schema import Field

_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H",
          "uint32": ">I", "float64": ">d", "bool": ">?"}


class Annotator:
    """Walks a frame with the schema and yields (chunk bytes, comment) per field."""

    def __init__(self, data: bytes) -> None:
        self.io = BytesIO(data)
        self.chunks: list[tuple[bytes, str]] = []
        self.mark = 0

    def emit(self, comment: str) -> None:
        end = self.io.tell()
        chunk = self.io.getvalue()[self.mark:end]
        self.chunks.append((chunk, comment))
        self.mark = end

    def value(self, f: Field, version: int, flexible: bool, path: str) -> None:
        compact = flexible and f.compact
        kind = f.type
        if kind == "struct":
            self.struct(f.fields, version, flexible, path)
        elif kind.startswith("[]"):
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">i", read_exact(self.io, 4))[0]
            if n < 0:
                self.emit(f"{path} = null")
                return
            self.emit(f"{path}: {n} element{'s' if n != 1 else ''}")
            element = kind[2:]
            for i in range(n):
                if element:
                    self.value(Field(f.name, element), version, flexible, f"{path}[{i}]")
                else:
                    self.struct(f.fields, version, flexible, f"{path}[{i}]")
        elif kind == "string":
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">h", read_exact(self.io, 2))[0]
            if n < 0:
                self.emit(f"{path} = null")
            else:
                self.emit(f"{path} = {read_exact(self.io, n).decode()!r}")
        elif kind in ("bytes", "records"):
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">i", read_exact(self.io, 4))[0]
            if n < 0:
                self.emit(f"{path} = null")
                return
            self.emit(f"{path}: {n} bytes")
            for i in range(0, n, 32):
                read_exact(self.io, min(32, n - i))
                self.emit(f"{path} [{i}:{min(i + 32, n)}]")
        elif kind == "uuid":
            self.emit_after(f"{path} = {uuid.UUID(bytes=read_exact(self.io, 16))}")
        elif kind in _FIXED:
            fmt = struct.Struct(_FIXED[kind])
            (v,) = fmt.unpack(read_exact(self.io, fmt.size))
            self.emit(f"{path} = {v!r}")
        elif kind == "varint":
            self.emit(f"{path} = {read_varint(self.io)}")
        elif kind == "varlong":
            self.emit(f"{path} = {read_varlong(self.io)}")
        elif kind == "uvarint":
            self.emit(f"{path} = {read_uvarint(self.io)}")
        else:
            raise ValueError(kind)

    def emit_after(self, comment: str) -> None:
        self.emit(comment)

    def struct(self, fields: tuple[Field, ...], version: int, flexible: bool,
               path: str) -> None:
        prefix = f"{path}." if path else ""
        tagged = {}
        for f in fields:
            if not f.present_in(version):
                continue
            if flexible and f.is_tagged_in(version):
                tagged[f.tag] = f
                continue
            self.value(f, version, flexible, prefix + f.name)
        if flexible:
            count = read_uvarint(self.io)
            self.emit(f"{prefix}tagged fields: {count}")
            for _ in range(count):
                tag = read_uvarint(self.io)
                size = read_uvarint(self.io)
                known = tagged.get(tag)
                self.emit(f"{prefix}tag {tag} ({known.name if known else 'unknown'}), "
                          f"{size} bytes")
                if known is not None:
                    self.value(known, version, flexible, prefix + known.name)
                else:
                    read_exact(self.io, size)
                    self.emit(f"{prefix}tag {tag} data")


def annotate(frame: bytes) -> list[tuple[bytes, str]]:
    a = Annotator(frame)
    (size,) = struct.unpack(">i", read_exact(a.io, 4))
    a.emit(f"size prefix = {size}")
    key, version, _ = wire.peek_request_header(frame[4:])
    spec = wire.lookup(key)
    assert spec is not None
    a.struct(REQUEST_HEADER.fields, request_header_version(spec, version),
             request_header_version(spec, version) >= 2, "")
    a.chunks[1] = (a.chunks[1][0], f"{a.chunks[1][1]} ({spec.name})")
    if a.chunks[-1][1].startswith("tagged fields"):
        a.chunks[-1] = (a.chunks[-1][0], f"header {a.chunks[-1][1]}")
    a.struct(spec.request.fields, version, spec.request.is_flexible(version), "")
    if a.io.tell() != len(frame):
        read_exact(a.io, len(frame) - a.io.tell())
        a.emit("!! trailing bytes not covered by the schema")
    return a.chunks


# ---------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------

# Which frame of an (api, version) to keep when a client sent several: the last one for
# APIs whose later requests carry more (JoinGroup after MEMBER_ID_REQUIRED has the member
# id, the second SyncGroup carries a real assignment, later Metadata asks for topics).
KEEP_LAST = {3, 11, 14}


def select(frames: list[Captured]) -> list[Captured]:
    chosen: dict[tuple[int, int], Captured] = {}
    for c in frames:
        k = (c.api_key, c.api_version)
        if k not in chosen or c.api_key in KEEP_LAST:
            chosen[k] = c
    return [chosen[k] for k in sorted(chosen)]


def module_name(client: str) -> str:
    return client.replace("-", "_")


def render(client: str, version: str, frames: list[Captured]) -> str:
    lines = [
        f'"""Request frames sent by {client} {version}, captured on 127.0.0.1 by',
        "tests/wire/capture/capture_broker.py (do not edit by hand; re-run the script).",
        "",
        "One entry per (api, version) the client sent. Each frame is the whole frame as",
        "sent on the socket, 4-byte size prefix included, one hex chunk per field.",
        '"""',
        "",
        "# ruff: noqa: E501",
        "",
        f"CLIENT = {client!r}",
        f"CLIENT_VERSION = {version!r}",
        "",
        "# (api name, api key, api version, correlation id) -> frame",
        "FRAMES: dict[tuple[str, int, int, int], bytes] = {",
    ]
    for c in frames:
        spec = wire.lookup(c.api_key)
        name = spec.name if spec else f"api{c.api_key}"
        lines.append(f"    # {client}: {name} v{c.api_version}, correlation id {c.correlation_id}")
        lines.append(f"    ({name!r}, {c.api_key}, {c.api_version}, {c.correlation_id}): "
                     "bytes.fromhex(")
        try:
            chunks = annotate(c.frame)
        except Exception as exc:  # not decodable: one raw chunk per 32 bytes
            chunks = [(c.frame[i:i + 32], f"raw ({exc})" if i == 0 else "raw")
                      for i in range(0, len(c.frame), 32)]
        for chunk, comment in chunks:
            if not chunk:
                continue
            lines.append(f'        "{chunk.hex()}"  # {comment}')
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def client_version(client: str) -> str:
    if client == "kcat":
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout
        m = re.search(r"Version (\S+) .*?librdkafka (\S+)", out)
        return f"{m.group(1)} (librdkafka {m.group(2)})" if m else "?"
    code = {
        "kafka-python": "import kafka; print(kafka.__version__)",
        "aiokafka": "import aiokafka; print(aiokafka.__version__)",
        "confluent-kafka": "import confluent_kafka as m; "
        "print(m.__version__, '(librdkafka', m.libversion()[0] + ')')",
    }[client]
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True).stdout.strip()
