"""A failing test that used the ``kcoord`` fixture reports its groups and what each client
connection sent (issue 32 item 12): "no partitions for 20 s" then says whether the client
went silent or the server did not assign."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["pytester"]

STALLED = '''
import socket
from wire import decode_response, encode_request

def test_stalls(kcoord):
    with socket.create_connection(("127.0.0.1", kcoord.port), timeout=10) as sock:
        sock.sendall(encode_request(11, 3, 1, "stalled-client", {
            "group_id": "stalled-group", "session_timeout_ms": 10000,
            "rebalance_timeout_ms": 10000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}]}))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            data += sock.recv(65536)
        assert decode_response(11, 3, data[4:])[1]["error_code"] == 0
        assert False, "no partitions"

def test_passes(kcoord):
    assert kcoord.port
'''


def test_a_failing_test_reports_its_groups_and_client_connections(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=STALLED)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert re.search(r"^-+ kcoord -+$", out, re.MULTILINE), out
    assert "group 'stalled-group'" in out and '"state": "CompletingRebalance"' in out
    assert "client 'stalled-client':" in out and "JOIN_GROUP" in out
    assert out.count("server clock") == 1  # the passing test adds nothing
