"""The compiled constructs and the reference ones (``compiled=False``) are the same codec.

For every registered (api, version, direction) — including the versions kio lacks — both
parse the same bytes to equal Containers and build equal bytes from the same dict, for
Hypothesis samples drawn from the wire schema (with unknown tagged fields), the
deterministic full / minimal samples, and kio's samples where kio has the schema. They
also fail alike: on every truncation of a message, on randomly corrupted messages, on
out-of-range varints and on nulls in non-nullable fields.

``KCOORD_ORACLE_EXAMPLES`` overrides the number of Hypothesis examples per case (12 in
the default run, to keep it under ten minutes; CI runs 60 in a step of its own).
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from kio_oracle import kio_full_sample, kio_minimal_sample, kio_to_wire
from oracle import (
    Case,
    all_cases,
    assert_absent_at_defaults,
    to_plain,
    typed,
    wire_decode,
    wire_encode,
    wire_full_sample,
    wire_minimal_sample,
    wire_project,
    wire_strategy,
)

from wire.schema import UNKNOWN_TAGS

CASES = all_cases()
IDS = [c.id for c in CASES]
EXAMPLES = int(os.environ.get("KCOORD_ORACLE_EXAMPLES", "12")) * 2 // 3


def _expected(case: Case, body: dict[str, Any]) -> dict[str, Any]:
    """What decoding the encoding of ``body`` gives, projected: ``body`` itself (the
    samples set every field the version carries), empty unknown-tag maps dropped."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: clean(v) for k, v in value.items() if not (k == UNKNOWN_TAGS and not v)
            }
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(body)


def check_same(case: Case, body: dict[str, Any]) -> None:
    fields, version = case.message.fields, case.version
    compiled = wire_encode(case, body, compiled=True)
    reference = wire_encode(case, body, compiled=False)
    assert compiled.hex() == reference.hex()

    from_compiled = wire_decode(case, compiled, compiled=True)
    from_reference = wire_decode(case, compiled, compiled=False)
    assert to_plain(from_compiled) == to_plain(from_reference)
    assert from_compiled == from_reference
    assert typed(wire_project(from_compiled, fields, version)) == typed(_expected(case, body))
    assert typed(to_plain(from_compiled)) == typed(to_plain(from_reference))
    assert_absent_at_defaults(from_compiled, fields, version)
    assert_absent_at_defaults(from_reference, fields, version)

    # decoded messages re-encode to the same bytes, either way
    assert wire_encode(case, from_compiled, compiled=False) == compiled
    assert wire_encode(case, from_reference, compiled=True) == compiled


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hypothesis_samples(case: Case) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(wire_strategy(case.message.fields, case.version, case.flexible))
    def run(body: dict[str, Any]) -> None:
        check_same(case, body)

    run()


def _samples(case: Case) -> list[dict[str, Any]]:
    fields, version = case.message.fields, case.version
    samples = [wire_full_sample(fields, version), wire_minimal_sample(fields, version)]
    if case.kio_class is not None:
        samples.append(kio_to_wire(kio_full_sample(case.kio_class), fields, version))
        samples.append(kio_to_wire(kio_minimal_sample(case.kio_class), fields, version))
    return samples


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_deterministic_samples(case: Case) -> None:
    for body in _samples(case):
        check_same(case, body)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_truncations_fail_alike(case: Case) -> None:
    """Every strict prefix of a full message is rejected by both."""
    data = wire_encode(case, wire_full_sample(case.message.fields, case.version))
    for end in range(len(data)):
        for compiled in (True, False):
            with pytest.raises(Exception):  # noqa: B017 - construct / wire errors
                wire_decode(case, data[:end], compiled=compiled)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_null_in_non_nullable_fails_alike(case: Case) -> None:
    """Building null where the version does not allow it fails in both."""
    version = case.version
    full = wire_full_sample(case.message.fields, version)
    for f in case.message.fields:
        if not f.present_in(version) or f.nullable_in(version) or f.is_tagged_in(version):
            continue
        if f.type not in ("string", "bytes") and not f.type.startswith("[]"):
            continue
        body = {**full, f.name: None}
        for compiled in (True, False):
            with pytest.raises(Exception):  # noqa: B017
                wire_encode(case, body, compiled=compiled)


def _outcome(case: Case, data: bytes, compiled: bool) -> Any:
    try:
        return ("decoded", to_plain(wire_decode(case, data, compiled=compiled)))
    except AssertionError:
        return ("trailing bytes",)
    except Exception:
        return ("rejected",)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_corruptions_decode_alike(case: Case) -> None:
    """Seeded random byte corruptions of a full message: both reject it, or both decode it
    to the same thing."""
    rng = random.Random(case.id)
    data = wire_encode(case, wire_full_sample(case.message.fields, case.version))
    if not data:
        return
    for _ in range(40):
        corrupted = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            corrupted[rng.randrange(len(data))] = rng.choice(
                [0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256)]
            )
        assert _outcome(case, bytes(corrupted), True) == _outcome(
            case, bytes(corrupted), False
        ), bytes(corrupted).hex()


HEARTBEAT_V4 = "02" "67" "00000001" "02" "6d" "00"


@pytest.mark.parametrize(
    "tail",
    [
        "01" "ffffffff1f" "00",  # unknown tag 2**33 - 1: above 32 bits
        "01" "05" "ffffffff1f",  # tag size above 32 bits
        "8080808010",  # tag count 2**32
    ],
    ids=["tag", "size", "count"],
)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_varints_above_32_bits_rejected(tail: str, compiled: bool) -> None:
    case = next(c for c in CASES if c.id == "Heartbeat-v4-request")
    with pytest.raises(Exception, match="out of range"):
        wire_decode(case, bytes.fromhex(HEARTBEAT_V4 + tail), compiled=compiled)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_tagged_field_with_trailing_bytes_rejected(compiled: bool) -> None:
    """A known tagged field whose value does not fill its declared size."""
    fetch = next(c for c in CASES if c.id == "Fetch-v12-request")
    data = bytes.fromhex(
        "ffffffff" "000001f4" "00000001" "00000400" "00" "00000000" "ffffffff" "01" "01" "01"
        "01" "00" "03" "00" "6364"  # tag 0 (cluster_id), 3 bytes: null + 2 stray bytes
    )
    with pytest.raises(Exception, match="trailing bytes"):
        wire_decode(fetch, data, compiled=compiled)
