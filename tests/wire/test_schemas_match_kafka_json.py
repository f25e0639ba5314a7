"""Every registered message mirrors Kafka's JSON schema, version by version, where
kafka-python 3.0.12 ships that JSON (``kafka/protocol/schemas/resources``: Kafka's
``clients/src/main/resources/common/message`` files): at each registered version Kafka still has
the same fields in the same order, with the same types, nullability, tags and defaults, and
no registered version beyond Kafka's. (Versions Kafka 4.0 removed are checked against
kafka-python's hand-written structs in test_old_versions_kafka_python.)

A check of the declarations against Kafka's own text, beside the kio oracle (which checks
bytes against kio's generated code): a field kio generates alike whatever Kafka's default,
or a version range cut short, shows here.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import wire
from wire.fields import Field, Message, versions

_PRIMITIVES = {"bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64",
               "string", "bytes", "records", "uuid"}


def _schema_dir() -> Path:
    import kafka.protocol

    return Path(kafka.protocol.__file__).parent / "schemas" / "resources"


@cache
def kafka_json(name: str) -> dict[str, Any] | None:
    path = _schema_dir() / f"{name}.json"
    if not path.exists():
        return None
    text = "\n".join(line for line in path.read_text().splitlines()
                     if not line.strip().startswith("//"))
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def snake(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", name).lower()


def _default(kind: str, value: Any) -> Any:
    if value == "null":
        return None
    if kind == "bool":
        return str(value).lower() == "true"
    if kind == "string":
        return value
    if kind == "float64":
        return float(value)
    return int(str(value), 0)


def compare(json_fields: list[dict[str, Any]], fields: tuple[Field, ...], version: int,
            common: dict[str, list[dict[str, Any]]], path: str) -> list[str]:
    """The differences at ``version`` (empty when the declarations mirror the JSON)."""
    problems: list[str] = []
    present = [f for f in json_fields if version in versions(f["versions"])]
    mine = [f for f in fields if f.present_in(version)]
    names = [snake(f["name"]) for f in present]
    if names != [f.name for f in mine]:
        return [f"{path} v{version}: fields {[f.name for f in mine]} != Kafka's {names}"]
    for jf, wf in zip(present, mine, strict=True):
        where = f"{path}.{wf.name} v{version}"
        kind: str = jf["type"]
        sub = jf.get("fields")
        if kind.startswith("[]") and kind[2:] not in _PRIMITIVES:
            expected_type, sub = "[]", sub if sub is not None else common[kind[2:]]
        elif not kind.startswith("[]") and kind not in _PRIMITIVES:
            expected_type, sub = "struct", sub if sub is not None else common[kind]
        else:
            expected_type = kind
        if wf.type != expected_type:
            problems.append(f"{where}: type {wf.type} != {expected_type}")
        nullable = version in versions(jf.get("nullableVersions", "none"))
        if wf.nullable_in(version) != nullable and kind != "records":
            problems.append(f"{where}: nullable {wf.nullable_in(version)} != {nullable}")
        tagged = "tag" in jf and version in versions(jf.get("taggedVersions", "none"))
        if wf.is_tagged_in(version) != tagged or (tagged and wf.tag != jf["tag"]):
            problems.append(f"{where}: tag {wf.tag}/{wf.is_tagged_in(version)} != "
                            f"{jf.get('tag')}/{tagged}")
        if ("default" in jf and expected_type not in ("[]", "struct")
                and wf.default_value() != _default(kind, jf["default"])):
            problems.append(f"{where}: default {wf.default_value()!r} != {jf['default']!r}")
        if wf.compact != (jf.get("flexibleVersions") != "none"):
            problems.append(f"{where}: compact {wf.compact}")
        if expected_type in ("[]", "struct"):
            problems += compare(sub or [], wf.fields, version, common, f"{path}.{wf.name}")
    return problems


def _messages() -> list[tuple[str, Message]]:
    out = []
    for spec in wire.all_apis():
        for message in (spec.request, spec.response):
            if kafka_json(message.name) is not None:
                out.append((message.name, message))
    return out


MESSAGES = _messages()


def test_kafka_json_is_there_for_the_security_and_admin_apis() -> None:
    names = {name for name, _ in MESSAGES}
    assert {"SaslAuthenticateRequest", "CreateAclsResponse", "DescribeClusterResponse",
            "IncrementalAlterConfigsRequest", "ListConfigResourcesResponse"} <= names


@pytest.mark.parametrize(("name", "message"), MESSAGES, ids=[n for n, _ in MESSAGES])
def test_declarations_mirror_kafka_json(name: str, message: Message) -> None:
    schema = kafka_json(name)
    assert schema is not None
    assert schema["apiKey"] == message.api_key
    common = {c["name"]: c["fields"] for c in schema.get("commonStructs", [])}
    problems = []
    valid = versions(schema["validVersions"])
    assert valid.high is not None and message.versions()[-1] <= valid.high
    for version in message.versions():
        if version not in valid:  # removed by Kafka 4.0: test_old_versions_kafka_python
            continue
        if message.is_flexible(version) != (version in versions(schema["flexibleVersions"])):
            problems.append(f"v{version}: flexible")
        problems += compare(schema["fields"], message.fields, version, common, name)
    assert not problems, "\n".join(problems)
