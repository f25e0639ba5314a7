"""Byte-rate quota enforcement: the rates Kafka's ``ClientQuotaManager`` measures and the
throttle time it answers (``producer_byte_rate`` on Produce, ``consumer_byte_rate`` on
Fetch), from the quotas of ``coordinator.configs.client_quotas``.

- Which quota applies to a (user, client id) is ``DefaultQuotaCallback``'s order:
  /users/<user>/clients/<client-id>, /users/<user>/clients/<default>, /users/<user>,
  /users/<default>/clients/<client-id>, /users/<default>/clients/<default>, /users/<default>,
  /clients/<client-id>, /clients/<default>; and the rate is shared by whoever has the same
  metric tags (``quotaMetricTags``: a user quota is measured per user, a client-id quota per
  client id, a (user, client-id) quota per pair).
- The rate is Kafka's ``Rate`` over a ``SampledStat``: ``quota.window.num`` (11) samples of
  ``quota.window.size.seconds`` (1 s), the elapsed window at least ``samples - 1`` windows.
  A value is recorded, then the rate checked: above the quota, the throttle time is
  ``(rate - quota) / quota * window`` (``QuotaUtils.throttleTime``).

Time is an argument (``now_ms``); the server mutes the connection (``server.throttling``)
until the time ``muted_until`` keeps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from coordinator.configs.client_quotas import CLIENT_ID, USER, ClientQuotas, Entity

__all__ = ["CONSUMER_BYTE_RATE", "PRODUCER_BYTE_RATE", "REQUEST_PERCENTAGE", "QuotaRates",
           "SampledRate",
           "quota_limit", "quota_metric_tags"]

PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE = "producer_byte_rate", "consumer_byte_rate"
#: Kafka's ``ClientRequestQuotaManager`` key: the percentage of one request-handling thread
#: a client may use (its requests' processing time, recorded as percent-seconds).
REQUEST_PERCENTAGE = "request_percentage"
#: ``quota.window.num`` and ``quota.window.size.seconds`` (Kafka's defaults).
QUOTA_WINDOW_NUM, QUOTA_WINDOW_MS = 11, 1000


class SampledRate:
    """Kafka's ``Rate`` with its ``SampledStat`` (a ring of windows)."""

    __slots__ = ("current", "samples", "window_count", "window_ms")

    def __init__(self, now_ms: int, window_count: int = QUOTA_WINDOW_NUM,
                 window_ms: int = QUOTA_WINDOW_MS) -> None:
        self.window_count = window_count
        self.window_ms = window_ms
        #: Each sample: [its window's start, the sum recorded in it].
        self.samples: list[list[float]] = [[now_ms, 0.0]]
        self.current = 0

    def record(self, value: float, now_ms: int) -> None:
        """Add ``value`` at ``now_ms`` (a new window when the current one is over)."""
        sample = self.samples[self.current]
        if now_ms - sample[0] >= self.window_ms:
            self.current = (self.current + 1) % self.window_count
            if self.current >= len(self.samples):
                self.samples.append([now_ms, 0.0])
            else:
                self.samples[self.current][:] = [now_ms, 0.0]
            sample = self.samples[self.current]
        sample[1] += value

    def _purge(self, now_ms: int) -> None:
        expire = self.window_count * self.window_ms
        for sample in self.samples:
            if now_ms - sample[0] >= expire:
                sample[:] = [now_ms, 0.0]

    def elapsed_ms(self, now_ms: int) -> float:
        """The window the rate divides by (``Rate.windowSize``)."""
        self._purge(now_ms)
        elapsed = now_ms - min(sample[0] for sample in self.samples)
        full = int(elapsed // self.window_ms)
        if full < self.window_count - 1:
            elapsed += (self.window_count - 1 - full) * self.window_ms
        return elapsed

    def rate(self, now_ms: int) -> float:
        """Per second (``Rate.measure``)."""
        elapsed = self.elapsed_ms(now_ms)
        return sum(sample[1] for sample in self.samples) / (elapsed / 1000)


def quota_metric_tags(quotas: Mapping[Entity, Mapping[str, float]], key: str, user: str,
                      client_id: str) -> tuple[str, str]:
    """(user tag, client-id tag) of a client's ``key`` rate: the components of the most
    specific entity with a ``key`` quota (``quotaMetricTags``)."""
    def has(*entity: tuple[str, str | None]) -> bool:
        return key in quotas.get(tuple(sorted(entity)), {})

    if has((USER, user), (CLIENT_ID, client_id)) or has((USER, user), (CLIENT_ID, None)):
        return user, client_id
    if has((USER, user)):
        return user, ""
    if has((USER, None), (CLIENT_ID, client_id)) or has((USER, None), (CLIENT_ID, None)):
        return user, client_id
    if has((USER, None)):
        return user, ""
    return "", client_id


def quota_limit(quotas: Mapping[Entity, Mapping[str, float]], key: str, user_tag: str,
                client_tag: str) -> float | None:
    """The ``key`` quota of a rate with these tags (``DefaultQuotaCallback.quotaLimit``)."""
    if user_tag and client_tag:
        order: tuple[tuple[tuple[str, str | None], ...], ...] = (
            ((USER, user_tag), (CLIENT_ID, client_tag)), ((USER, user_tag), (CLIENT_ID, None)),
            ((USER, None), (CLIENT_ID, client_tag)), ((USER, None), (CLIENT_ID, None)))
    elif user_tag:
        order = (((USER, user_tag),), ((USER, None),))
    elif client_tag:
        order = (((CLIENT_ID, client_tag),), ((CLIENT_ID, None),))
    else:
        return None
    for entity in order:
        found = quotas.get(tuple(sorted(entity)), {}).get(key)
        if found is not None:
            return found
    return None


class QuotaRates:
    """The measured rates of one process's brokers (each broker measures its own, as
    Kafka's brokers do), keyed by broker, quota key and metric tags."""

    def __init__(self, quotas: ClientQuotas) -> None:
        self.quotas = quotas
        self.rates: dict[tuple[int, str, str, str], SampledRate] = {}
        #: (broker, connection id) -> until when its connection is muted (now_ms clock).
        self.muted_until: dict[tuple[int, int], int] = {}

    @property
    def active(self) -> bool:
        """Whether any byte-rate quota is set (else nothing is measured)."""
        return self.quotas.byte_rate_quotas > 0

    @property
    def requests_active(self) -> bool:
        """Whether any request_percentage quota is set (else no request is timed)."""
        return self.quotas.request_quotas > 0

    def record(self, node_id: int, key: str, user: str, client_id: str, value: float,
               now_ms: int) -> int:
        """Record ``value`` (bytes; percent-seconds for ``REQUEST_PERCENTAGE``) of a client;
        the throttle time (ms) its rate now asks."""
        tags = quota_metric_tags(self.quotas.quotas, key, user, client_id)
        rate_key = (node_id, key, *tags)
        rate = self.rates.get(rate_key)
        if rate is None:
            rate = self.rates[rate_key] = SampledRate(now_ms)
        rate.record(value, now_ms)
        bound = quota_limit(self.quotas.quotas, key, *tags)
        if bound is None:
            return 0
        observed = rate.rate(now_ms)
        if observed <= bound:
            return 0
        # Java's Math.round (half up), not Python's round (half to even)
        throttle = math.floor((observed - bound) / bound * rate.elapsed_ms(now_ms) + 0.5)
        if key == REQUEST_PERCENTAGE:  # ClientRequestQuotaManager: at most one quota window
            return min(throttle, QUOTA_WINDOW_MS)
        return throttle

    def max_value_in_window(self, key: str, user: str, client_id: str) -> float | None:
        """The most a client may take in one quota window (``getMaxValueInQuotaWindow``:
        quota x (samples - 1) windows; a consumer's fetch is capped to it), None: no quota."""
        tags = quota_metric_tags(self.quotas.quotas, key, user, client_id)
        bound = quota_limit(self.quotas.quotas, key, *tags)
        if bound is None:
            return None
        return bound * (QUOTA_WINDOW_NUM - 1) * QUOTA_WINDOW_MS / 1000

    def unrecord(self, node_id: int, key: str, user: str, client_id: str, value: float,
                 now_ms: int) -> None:
        """Take back a throttled fetch's bytes (``unrecordQuotaSensor``: its data is not sent)."""
        tags = quota_metric_tags(self.quotas.quotas, key, user, client_id)
        rate = self.rates.get((node_id, key, *tags))
        if rate is not None:
            rate.record(-value, now_ms)
