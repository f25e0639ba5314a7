"""kafka-python group timings for bench_server.py: formation of N consumers, rebalance after
a graceful leave, static member restart (consumers polling in threads)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench_brokers import PARTITIONS, TOPIC


class _Member:
    """A kafka-python consumer polling in a thread (the benchmark's group member)."""

    def __init__(self, bootstrap: str, group: str, **config: Any) -> None:
        import threading

        self.consumer: Any = None
        self._stop = threading.Event()
        self._close = True
        self._args = (bootstrap, group, config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from kafka import KafkaConsumer

        bootstrap, group, config = self._args
        settings = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500, **config}
        c = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **settings
        )
        self.consumer = c
        c.subscribe([TOPIC])
        while not self._stop.is_set():
            c.poll(timeout_ms=1000)  # shorter polls hit a kafka-python leader race
        if self._close:
            c.close()

    def owned(self) -> frozenset[int]:
        # Updated by kafka-python's I/O thread: readable from here at any time.
        c = self.consumer
        return frozenset(tp.partition for tp in c.assignment()) if c is not None else frozenset()

    def generation(self) -> int:
        return int(self.consumer._coordinator._generation.generation_id)

    def stop(self, close: bool = True) -> None:
        self._close = close
        self._stop.set()
        self.thread.join(20)


def _covered(members: list[_Member]) -> bool:
    owned = [m.owned() for m in members]
    flat = [p for o in owned for p in o]
    return all(owned) and len(flat) == PARTITIONS and len(set(flat)) == PARTITIONS


def _wait(condition: Callable[[], bool], timeout: float = 60) -> float:
    began = time.perf_counter()
    while not condition():
        if time.perf_counter() - began > timeout:
            return float("nan")
        time.sleep(0.005)
    return time.perf_counter() - began


def group_scenarios(bootstrap: str, sizes: list[int]) -> dict[str, str]:
    """kafka-python timings: formation of N, rebalance after a graceful leave, static restart."""
    import warnings

    warnings.simplefilter("ignore")
    out: dict[str, str] = {}
    for n in sizes:
        members = [_Member(bootstrap, f"formation-{n}") for _ in range(n)]
        out[f"group of {n} formed"] = f"{_wait(lambda m=members: _covered(m)):.2f} s"
        for m in members:
            m.stop()
    a, b = _Member(bootstrap, "leave"), _Member(bootstrap, "leave")
    _wait(lambda: _covered([a, b]))
    b.stop(close=True)
    out["rebalance after a graceful leave"] = f"{_wait(lambda: _covered([a])):.2f} s"
    a.stop()
    static = {"session_timeout_ms": 10000}
    a = _Member(bootstrap, "static", group_instance_id="s0", **static)
    b = _Member(bootstrap, "static", group_instance_id="s1", **static)
    _wait(lambda: _covered([a, b]))
    generation, owned = a.generation(), b.owned()
    b.stop(close=True)  # a static member sends no LeaveGroup
    b = _Member(bootstrap, "static", group_instance_id="s1", **static)
    took = _wait(lambda: b.owned() == owned and _covered([a, b]))
    rebalanced = "no rebalance" if a.generation() == generation else "with a rebalance"
    out["static member restart"] = f"{took:.2f} s, {rebalanced}"
    a.stop()
    b.stop()
    return out
