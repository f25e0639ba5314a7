"""``wire.checksum``: the crc32c package's C function, loaded without the package's
``__init__`` (its ``importlib.metadata`` version lookup and command line)."""

from __future__ import annotations

import subprocess
import sys

from wire.checksum import crc32c


def test_crc32c_check_value_and_continuation() -> None:
    # The CRC-32C catalogue's check value (RFC 3720 B.4 uses the same polynomial).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"6789", crc32c(b"12345")) == 0xE3069283
    assert crc32c(memoryview(b"x123456789")[1:]) == 0xE3069283
    assert crc32c(bytearray(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeroes


def test_is_the_packages_function() -> None:
    import crc32c as package

    assert package.crc32c is crc32c


def test_loading_it_skips_the_packages_init() -> None:
    code = ("import sys\n"
            "from wire.checksum import crc32c\n"
            "assert crc32c(b'123456789') == 0xE3069283\n"
            "print(sorted(m for m in ('crc32c', 'importlib.metadata', 'email', 'argparse')"
            " if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
