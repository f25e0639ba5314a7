"""Fuzzing ``wire.decode_request``: whatever the bytes, it returns a DecodedRequest or raises
CorruptFrame (UnsupportedVersion for an unknown key/version), never anything else, and
it does not hang (each decode is bounded at 10 s; hypothesis' own deadline is off).

Inputs: mutations (bit flips, byte insertions and deletions, truncations, overwritten
length fields, splices) of the golden client frames and of a sample request of every
implemented (api, version); random bodies behind a valid header for every (api, version);
every truncation of every sample. The default run takes a few seconds; the ``slow``
variants (``pytest -m slow tests/wire/test_fuzz.py``) run many more examples.
"""

from __future__ import annotations

import importlib.util
import random
import struct
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wire
from wire.varint import encode_uvarint


def _load(name: str) -> ModuleType:
    """A helper module of tests/wire/fixtures, loaded by path under a unique name."""
    modname = f"kcoord_wire_fixtures_{name}"
    if modname not in sys.modules:
        path = Path(__file__).parent / "fixtures" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    return sys.modules[modname]


golden = _load("golden")
samples = _load("samples")

GOLDEN = [g.payload for g in golden.load_golden_frames()]
SAMPLES = [(name, frame[4:]) for name, frame in samples.sample_request_frames()]
SEEDS = GOLDEN + [payload for _, payload in SAMPLES]
API_VERSIONS = samples.all_api_versions()
# A hang detector, not a speed test (speed is in tests/benchmarks/bench_wire.py): a decode
# that loops on a crafted length would take far longer, while a loaded 2-core machine can
# stall a normal decode for a second (it failed once at 1 s under load 10).
MAX_SECONDS = 10.0

FAST = settings(max_examples=1500, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# (the slow tests take the ``slow_selected`` fixture, which only skips: nothing to reset)
SLOW = settings(FAST, max_examples=15_000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture
def slow_selected(request: pytest.FixtureRequest) -> None:
    """The slow variants run only when asked for with ``-m slow``."""
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("slow fuzz variant: run with -m slow")


# ---------------------------------------------------------------------------------------
# the property
# ---------------------------------------------------------------------------------------


def check_decode(payload: bytes) -> wire.DecodedRequest | wire.CorruptFrame:
    """Decode ``payload``; fail the test unless the outcome is one of the two allowed."""
    start = time.perf_counter()
    try:
        result: wire.DecodedRequest | wire.CorruptFrame = wire.decode_request(payload)
    except wire.CorruptFrame as exc:  # anything else propagates and fails the test
        result = exc
    elapsed = time.perf_counter() - start
    assert elapsed < MAX_SECONDS, f"decode took {elapsed:.3f}s for {payload.hex()}"

    header = struct.unpack_from(">hhi", payload) if len(payload) >= 8 else None
    if isinstance(result, wire.CorruptFrame):
        if header is not None:  # what is known of the request travels with the error
            assert (result.api_key, result.api_version, result.correlation_id) == header
        if isinstance(result, wire.UnsupportedVersion):
            assert header is not None
            spec = wire.lookup(header[0])
            assert spec is None or not spec.supports(header[1])
        return result

    assert isinstance(result, wire.DecodedRequest)
    assert header == (result.api_key, result.api_version, result.correlation_id)
    assert result.spec is wire.lookup(result.api_key)
    # whatever was accepted can be written back, and reads back the same
    again = wire.encode_request(result.api_key, result.api_version, result.correlation_id,
                                result.client_id, result.body)
    reread = wire.decode_request(again[4:])
    assert reread.client_id == result.client_id
    assert reread.body == result.body
    return result


# ---------------------------------------------------------------------------------------
# mutations
# ---------------------------------------------------------------------------------------

_LENGTHS = [-2, -1, 0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 2**31 - 1]


@st.composite
def length_bytes(draw: st.DrawFn, size_hint: int) -> bytes:
    """A plausible-but-wrong length or count, in one of Kafka's encodings."""
    value = draw(st.sampled_from([*_LENGTHS, size_hint, size_hint + 1, size_hint - 1])
                 | st.integers(-(2**31), 2**31 - 1))
    kind = draw(st.sampled_from(["int16", "int32", "uvarint"]))
    if kind == "int16":
        return struct.pack(">h", max(-(2**15), min(2**15 - 1, value)))
    if kind == "int32":
        return struct.pack(">i", value)
    return encode_uvarint(value & 0xFFFFFFFF)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes], keep_header: bool) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    low = 8 if keep_header else 0
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "length",
                                   "splice", "duplicate"]))
        hi = len(data)
        if hi <= low and op not in ("insert", "splice"):
            op = "insert"
        if op == "flip":
            i = draw(st.integers(low, hi - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "set":
            i = draw(st.integers(low, hi - 1))
            data[i] = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFE, 0xFF]) | st.integers(0, 255))
        elif op == "insert":
            i = draw(st.integers(low, hi))
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            i = draw(st.integers(low, hi - 1))
            del data[i : i + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[draw(st.integers(low, hi - 1)) :]
        elif op == "length":
            i = draw(st.integers(low, hi - 1))
            field = draw(length_bytes(hi - i))
            data[i : i + len(field)] = field
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            a = draw(st.integers(0, len(other)))
            i = draw(st.integers(low, hi))
            data[i:] = other[a:]
        else:  # duplicate a slice in place
            i = draw(st.integers(low, hi - 1))
            j = draw(st.integers(i, min(hi, i + 32)))
            data[j:j] = data[i:j]
    return bytes(data)


@FAST
@given(mutated(SEEDS, keep_header=True))
def test_mutated_bodies(payload: bytes) -> None:
    check_decode(payload)


@FAST
@given(mutated(SEEDS, keep_header=False))
def test_mutated_anywhere(payload: bytes) -> None:
    check_decode(payload)


@FAST
@given(mutated(GOLDEN, keep_header=True))
def test_mutated_golden_frames(payload: bytes) -> None:
    check_decode(payload)


@pytest.mark.slow
@SLOW
@given(mutated(SEEDS, keep_header=True))
def test_mutated_bodies_slow(slow_selected: None, payload: bytes) -> None:
    check_decode(payload)


@pytest.mark.slow
@SLOW
@given(mutated(SEEDS, keep_header=False))
def test_mutated_anywhere_slow(slow_selected: None, payload: bytes) -> None:
    check_decode(payload)


# ---------------------------------------------------------------------------------------
# random bodies behind a valid header, for every (api, version)
# ---------------------------------------------------------------------------------------


def valid_header(api_key: int, version: int, correlation_id: int, client_id: bool) -> bytes:
    """The 8-byte prefix, plus (``client_id``) a valid client id and, for a flexible
    version, an empty header tag section: the rest then goes straight to the body."""
    out = struct.pack(">hhi", api_key, version, correlation_id)
    if client_id:
        out += struct.pack(">h", 4) + b"fuzz"
        spec = wire.lookup(api_key)
        assert spec is not None
        if spec.request.is_flexible(version):
            out += b"\x00"
    return out


@pytest.mark.parametrize(("api_key", "version"), API_VERSIONS,
                         ids=[f"{k}-v{v}" for k, v in API_VERSIONS])
def test_random_bytes_behind_a_valid_header(api_key: int, version: int) -> None:
    rng = random.Random(api_key * 1000 + version)  # deterministic per (api, version)
    for i in range(150):
        size = rng.choice([0, 1, 2, 3, 4, 5, 8, 16, 64, 256, 1024])
        body = rng.randbytes(size)
        if i % 3 == 2:  # low bytes make plausible small counts and lengths
            body = bytes(b & rng.choice([0x01, 0x03, 0x0F]) for b in body)
        check_decode(valid_header(api_key, version, i, client_id=bool(i % 2)) + body)


@FAST
@given(st.sampled_from(API_VERSIONS), st.booleans(), st.binary(max_size=512))
def test_random_bytes_hypothesis(api: tuple[int, int], client_id: bool, body: bytes) -> None:
    check_decode(valid_header(*api, 7, client_id) + body)


@pytest.mark.slow
@SLOW
@given(st.sampled_from(API_VERSIONS), st.booleans(), st.binary(max_size=4096))
def test_random_bytes_slow(slow_selected: None, api: tuple[int, int], client_id: bool,
                           body: bytes) -> None:
    check_decode(valid_header(*api, 7, client_id) + body)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(st.integers(-(2**15), 2**15 - 1), st.integers(-(2**15), 2**15 - 1),
       st.integers(-(2**31), 2**31 - 1), st.binary(max_size=64))
def test_unknown_keys_and_versions(key: int, version: int, corr: int, rest: bytes) -> None:
    spec = wire.lookup(key)
    payload = struct.pack(">hhi", key, version, corr) + rest
    if spec is not None and spec.supports(version):
        check_decode(payload)
        return
    with pytest.raises(wire.UnsupportedVersion) as info:
        wire.decode_request(payload)
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (
        key, version, corr)


@pytest.mark.parametrize("payload", [b"", b"\x00", bytes.fromhex("001200"),
                                     bytes.fromhex("00120003000000")])
def test_shorter_than_a_header(payload: bytes) -> None:
    with pytest.raises(wire.CorruptFrame) as info:
        wire.decode_request(payload)
    assert not isinstance(info.value, wire.UnsupportedVersion)
    assert info.value.api_key is None and info.value.correlation_id is None


# ---------------------------------------------------------------------------------------
# samples: valid for every (api, version), and every truncation refused
# ---------------------------------------------------------------------------------------


def test_samples_cover_every_api_version() -> None:
    covered = {wire.peek_request_header(p)[:2] for _, p in SAMPLES}
    assert covered == set(API_VERSIONS)
    for _, payload in SAMPLES:
        assert isinstance(check_decode(payload), wire.DecodedRequest)


@pytest.mark.parametrize("payload", [p for _, p in SAMPLES], ids=[n for n, _ in SAMPLES])
def test_every_truncation_of_a_sample_is_refused(payload: bytes) -> None:
    accepted = [n for n in range(len(payload))
                if not isinstance(check_decode(payload[:n]), wire.CorruptFrame)]
    assert accepted == [], f"prefixes of these lengths decoded: {accepted}"


@pytest.mark.parametrize(("hex_payload", "missing"), [
    # DescribeGroups v3: groups=[] then include_authorized_operations (bool)
    ("000f0003" "00000001" "ffff" "00000000" "00", 1),
    # Metadata v8: topics=null, then three bools
    ("00030008" "00000001" "ffff" "ffffffff" "000000", 1),
    ("00030008" "00000001" "ffff" "ffffffff" "000000", 2),
    ("00030008" "00000001" "ffff" "ffffffff" "000000", 3),
    # CreateTopics v4: topics=[], timeout_ms, then validate_only (bool)
    ("00130004" "00000001" "ffff" "00000000" "0000ea60" "00", 1),
])
def test_missing_trailing_bool_is_refused(hex_payload: str, missing: int) -> None:
    """Regression (found by these tests): construct's compiled ``Flag`` reads
    ``io.read(1) != b'\\x00'``, so a bool missing at the end of a frame decoded as True
    where Kafka (ByteBuffer.get) refuses the frame."""
    complete = bytes.fromhex(hex_payload)
    assert isinstance(check_decode(complete), wire.DecodedRequest)
    with pytest.raises(wire.CorruptFrame):
        wire.decode_request(complete[:-missing])
