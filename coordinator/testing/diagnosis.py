"""What a failing test's kcoord saw, for its report (issue 32 item 12).

"Two tests got no partitions for 20 s" says nothing about whose fault it was. When a test
using the ``kcoord`` fixture fails, the plugin adds a ``kcoord`` section to its report:
every group as the coordinator holds it (state, generation, members and their
assignments), and every connection's tally (``coordinator/server/tally.py``): its client
id, the bytes and requests it sent, and how long before the failure it last sent each API,
on the server's clock, and how each member's last renewing request was answered. A member
without partitions whose client sent no Heartbeat, JoinGroup or SyncGroup for a while is a
silent client; one whose requests kept arriving while its group stayed unassigned points
at the server. A group preparing a rebalance names the members whose JoinGroup it still
waits for (``group_views.join_waits``): a consumer an earlier step left open and unpolled
heartbeats on and holds the others without partitions for its rebalance timeout.
"""

from __future__ import annotations

import json
from typing import Any

from wire.constants import ApiKey

__all__ = ["failure_report"]


def _api_name(api_key: int) -> str:
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"api {api_key}"


def connection_line(tally: dict[str, Any], now: float) -> str:
    """One connection's tally as a line: what it sent, when it last sent each API, and how
    each member's last renewing request was answered."""
    last = ", ".join(f"{_api_name(key)} {now - at:.1f} s ago"
                     for key, at in sorted(tally["last_at"].items(), key=lambda kv: -kv[1]))
    closed = ("" if tally["closed_at"] is None
              else f", closed {now - tally['closed_at']:.1f} s ago")
    answers = "".join(
        f"; {member} {_api_name(a['api_key'])} generation {a['generation']} answered "
        f"{a['error_code']} {now - a['at']:.1f} s ago"
        + ("" if a["renewed_at"] is None else
           f" (renewed generation {a['renewed_generation']} {now - a['renewed_at']:.1f} s ago)")
        for member, a in tally.get("answers", {}).items())
    return (f"connection {tally['connection_id']} client {tally['client_id']!r}: "
            f"{tally['bytes_in']} bytes in {tally['requests']} requests{closed}; "
            f"last: {last or 'nothing'}{answers}")


def failure_report(server: Any) -> str:
    """The groups and connections of a running ``KcoordServer`` as text."""
    now = server.server_time()
    lines = [f"server clock {now:.3f} s"]
    for group_id in server.group_ids():
        lines.append(f"group {group_id!r}: "
                     f"{json.dumps(server.describe_group(group_id), default=str)}")
    lines += server.join_waits()
    lines += [connection_line(tally, now) for tally in server.connection_tallies()]
    return "\n".join(lines)
