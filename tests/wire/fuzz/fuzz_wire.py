"""Coverage-guided fuzzing of the wire layer with atheris (libFuzzer). Not run by pytest.

    . .venv/bin/activate && pip install atheris
    python tests/wire/fuzz/fuzz_wire.py --write-seeds /tmp/wire-corpus
    python tests/wire/fuzz/fuzz_wire.py /tmp/wire-corpus -max_total_time=300

The seeds are the golden client frames and a sample request of every (api, version). Each
input is used twice: as a request payload for ``decode_request`` (which must return a
DecodedRequest or raise CorruptFrame; an accepted request must re-encode and read back the
same), and as a byte stream cut into chunks for a ``FrameReader`` (which must hand back
exactly the frames in it, or raise FrameTooLarge for a bad prefix).
A crash leaves ``crash-<sha1>`` in the current directory; replay it with
``python tests/wire/fuzz/fuzz_wire.py crash-<sha1>``.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType

import atheris

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

with atheris.instrument_imports():
    import wire


def _load(name: str) -> ModuleType:
    modname = f"kcoord_wire_fixtures_{name}"
    path = Path(__file__).resolve().parents[1] / "fixtures" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module


def check_decode(data: bytes) -> None:
    try:
        req = wire.decode_request(data)
    except wire.CorruptFrame as exc:
        if len(data) >= 8:
            assert (exc.api_key, exc.api_version, exc.correlation_id) == struct.unpack_from(
                ">hhi", data)
        return
    again = wire.encode_request(req.api_key, req.api_version, req.correlation_id,
                                req.client_id, req.body)
    reread = wire.decode_request(again[4:])
    assert reread.body == req.body and reread.client_id == req.client_id


def check_reader(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    max_frame = fdp.ConsumeIntInRange(0, 64)
    stream = fdp.ConsumeBytes(fdp.remaining_bytes())
    # the reference: parse the stream by hand
    expected: list[bytes] = []
    pos, too_large = 0, False
    while len(stream) - pos >= 4:
        (size,) = struct.unpack_from(">i", stream, pos)
        if size < 0 or size > max_frame:
            too_large = True
            break
        if len(stream) - pos - 4 < size:
            break
        expected.append(stream[pos + 4 : pos + 4 + size])
        pos += 4 + size
    reader = wire.FrameReader(max_frame)
    got: list[bytes] = []
    raised = False
    cut = 0
    step = 1 + (len(stream) % 7)
    try:
        while cut < len(stream):
            reader.receive_data(stream[cut : cut + step])
            cut += step
            while (item := reader.next_frame()) is not wire.NEED_DATA:
                assert isinstance(item, bytes)
                got.append(item)
    except wire.FrameTooLarge:
        raised = True
    assert got == expected
    assert raised == too_large
    if not raised:
        assert reader.buffered == len(stream) - pos


def test_one_input(data: bytes) -> None:
    check_decode(data)
    check_reader(data)


def write_seeds(directory: Path) -> None:
    golden = _load("golden")
    samples = _load("samples")
    directory.mkdir(parents=True, exist_ok=True)
    for g in golden.load_golden_frames():
        (directory / f"golden-{g.id}").write_bytes(g.payload)
    for name, frame in samples.sample_request_frames():
        (directory / f"sample-{name}").write_bytes(frame[4:])


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--write-seeds":
        write_seeds(Path(sys.argv[2]))
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
