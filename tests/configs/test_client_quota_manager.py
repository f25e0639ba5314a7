"""Kafka's ClientQuotaManagerTest (core/src/test/scala/unit/kafka/server), mirrored by name
on ``coordinator.configs.quota_rates`` (see COVERAGE.md): which quota applies to a (user,
client id), which clients share a rate, and the throttle time of Kafka's sampled rate, time
given as an argument (Kafka's MockTime)."""

from __future__ import annotations

from coordinator.configs.client_quotas import ClientQuotas, QuotaAlteration, entity_of
from coordinator.configs.quota_rates import (
    PRODUCER_BYTE_RATE,
    QUOTA_WINDOW_NUM,
    REQUEST_PERCENTAGE,
    QuotaRates,
    quota_limit,
    quota_metric_tags,
)

DEFAULT = object()  # the default entity of a type (a null name)


def set_quota(quotas: ClientQuotas, user: object, client_id: object,
              bound: float | None, key: str = PRODUCER_BYTE_RATE) -> None:
    """Kafka's updateQuota: the entity of the given user and/or client id (None: not a
    component; DEFAULT: the type's default entity)."""
    parts = [(kind, None if name is DEFAULT else name)
             for kind, name in (("user", user), ("client-id", client_id)) if name is not None]
    records, results = quotas.alter([QuotaAlteration(entity_of(parts),  # type: ignore[arg-type]
                                                     ((key, bound),))])
    assert all(r is None for r in results.values())
    for record in records:
        quotas.apply(record)


def bound_of(quotas: ClientQuotas, user: str, client_id: str) -> float | None:
    tags = quota_metric_tags(quotas.quotas, PRODUCER_BYTE_RATE, user, client_id)
    return quota_limit(quotas.quotas, PRODUCER_BYTE_RATE, *tags)


def record(rates: QuotaRates, user: str, client_id: str, value: float, now_ms: int) -> int:
    return rates.record(0, PRODUCER_BYTE_RATE, user, client_id, value, now_ms)


def quota_parsing(client1: tuple[str, str, object, object],
                  client2: tuple[str, str, object, object], random_client: tuple[str, str],
                  default_client: tuple[object, object]) -> None:
    """Kafka's testQuotaParsing: clients are (user, client id, config user, config client)."""
    quotas = ClientQuotas()
    rates = QuotaRates(quotas)
    set_quota(quotas, client1[2], client1[3], 2000)
    set_quota(quotas, client2[2], client2[3], 4000)
    assert bound_of(quotas, *random_client) is None  # unlimited (Long.MaxValue)
    assert bound_of(quotas, client1[0], client1[1]) == 2000
    assert bound_of(quotas, client2[0], client2[1]) == 4000
    assert record(rates, client1[0], client1[1], 2500 * QUOTA_WINDOW_NUM, 0) > 0
    set_quota(quotas, client1[2], client1[3], 3000)
    assert bound_of(quotas, client1[0], client1[1]) == 3000
    assert record(rates, client1[0], client1[1], 0, 0) == 0
    set_quota(quotas, client1[2], client1[3], 500)
    assert record(rates, client1[0], client1[1], 0, 0) > 0
    set_quota(quotas, client1[2], client1[3], None)
    set_quota(quotas, default_client[0], default_client[1], 4000)
    assert bound_of(quotas, client1[0], client1[1]) == 4000
    assert record(rates, client1[0], client1[1], 1000 * QUOTA_WINDOW_NUM, 0) == 0


def test_client_id_quota_parsing() -> None:
    quota_parsing(("ANONYMOUS", "p1", None, "p1"), ("ANONYMOUS", "p2", None, "p2"),
                  ("ANONYMOUS", "random-client-id"), (None, DEFAULT))


def test_user_quota_parsing() -> None:
    quota_parsing(("User1", "p1", "User1", None), ("User2", "p2", "User2", None),
                  ("RandomUser", "random-client-id"), (DEFAULT, None))


def test_user_client_id_quota_parsing() -> None:
    quota_parsing(("User1", "p1", "User1", "p1"), ("User2", "p2", "User2", "p2"),
                  ("RandomUser", "random-client-id"), (DEFAULT, DEFAULT))


def test_quota_config_precedence() -> None:
    quotas = ClientQuotas()
    rates = QuotaRates(quotas)

    def check(user: str, client_id: str, bound: float, value: float, throttled: bool) -> None:
        assert bound_of(quotas, user, client_id) == bound
        assert (record(rates, user, client_id, value * QUOTA_WINDOW_NUM, 0) > 0) == throttled

    for user, client_id, bound in ((DEFAULT, None, 1000), (None, DEFAULT, 2000),
                                   (DEFAULT, DEFAULT, 3000), ("userA", None, 4000),
                                   ("userA", "client1", 5000), ("userB", None, 6000),
                                   ("userB", "client1", 7000), ("userB", DEFAULT, 8000),
                                   ("userC", None, 10000), (None, "client1", 9000)):
        set_quota(quotas, user, client_id, bound)
    check("userA", "client1", 5000, 4500, False)
    check("userA", "client2", 4000, 4500, True)
    check("userA", "client3", 4000, 0, True)
    check("userA", "client1", 5000, 0, False)
    check("userB", "client1", 7000, 8000, True)
    check("userB", "client2", 8000, 7000, False)
    check("userB", "client3", 8000, 7000, False)
    check("userD", "client1", 3000, 3500, True)
    check("userD", "client2", 3000, 2500, False)
    check("userE", "client1", 3000, 2500, False)
    set_quota(quotas, DEFAULT, DEFAULT, None)
    check("userD", "client1", 1000, 0, False)
    check("userE", "client4", 1000, 1500, True)
    check("userF", "client4", 1000, 800, False)
    check("userF", "client5", 1000, 800, True)
    set_quota(quotas, DEFAULT, None, None)
    check("userF", "client4", 2000, 0, False)
    check("userF", "client5", 2000, 0, False)
    check("userF", "client5", 2000, 2500, True)
    check("userG", "client5", 2000, 0, True)
    set_quota(quotas, "userA", None, 8000)
    set_quota(quotas, "userA", "client1", 10000)
    check("userA", "client2", 8000, 0, False)
    check("userA", "client2", 8000, 4500, True)
    check("userA", "client1", 10000, 0, False)
    check("userA", "client1", 10000, 6000, True)
    set_quota(quotas, "userA", "client1", None)
    check("userA", "client6", 8000, 0, True)
    set_quota(quotas, "userA", "client6", 11000)
    check("userA", "client6", 11000, 8500, False)
    set_quota(quotas, "userA", DEFAULT, 12000)
    set_quota(quotas, "userA", "client6", None)
    check("userA", "client6", 12000, 4000, True)


def test_quota_violation() -> None:
    quotas = ClientQuotas()
    rates = QuotaRates(quotas)
    set_quota(quotas, None, DEFAULT, 500)
    now = 0
    for _ in range(10):  # under the quota: no throttle
        assert record(rates, "ANONYMOUS", "unknown", 400, now) == 0
        now += 1000
    # A spike: (400 * 10 + 2000 + 300) / 10.5 s = 600 B/s; (600 - 500) / 500 * 10.5 s
    now += 500
    assert record(rates, "ANONYMOUS", "unknown", 2300, now) == 2100
    now += 2100
    for _ in range(10):
        record(rates, "ANONYMOUS", "unknown", 400, now)
        now += 1000
    assert record(rates, "ANONYMOUS", "unknown", 0, now) == 0  # the spike rolled over


def test_no_byte_rate_quota_means_nothing_is_measured() -> None:
    quotas = ClientQuotas()
    rates = QuotaRates(quotas)
    assert not rates.active
    set_quota(quotas, "u", None, 100)
    assert rates.active and quotas.byte_rate_quotas == 1
    set_quota(quotas, "u", None, None)
    assert not rates.active and quotas.byte_rate_quotas == 0


def test_request_percentage_quota_violation() -> None:
    """Kafka's ClientRequestQuotaManagerTest: a request quota of 1 % of a thread (10 ms of
    handling per second), throttle times capped at one quota window (1 s)."""
    quotas = ClientQuotas()
    rates = QuotaRates(quotas)
    set_quota(quotas, "ANONYMOUS", "test-client", 1.0, REQUEST_PERCENTAGE)
    assert rates.requests_active and not rates.active

    def spent(millis: float, now_ms: int) -> int:  # millisToPercent: percent-seconds
        return rates.record(0, REQUEST_PERCENTAGE, "ANONYMOUS", "test-client",
                            millis * 1e6 * 100 / 1e9, now_ms)

    now = 0
    for _ in range(10):
        assert spent(4, now) == 0
        now += 1000
    # 4 * 10 + 67.1 = 107.1 ms in 10.5 s = 10.2 ms per second: (10.2 - 10) / 10 * 10.5 s
    now += 500
    assert spent(67.1, now) == 210
    now += 210
    for _ in range(11):
        spent(4, now)
        now += 1000
    assert spent(0, now) == 0  # the bursty sample rolled over
    # A spike needing more than one window to come back under the quota: capped at 1 s.
    assert spent(500, now) == 1000
    for _ in range(10):
        now += 1000
        assert spent(0, now) == 1000
    now += 1000
    assert spent(0, now) == 0
