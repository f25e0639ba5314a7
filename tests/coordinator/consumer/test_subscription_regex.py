"""SubscribedTopicRegex as Kafka compiles it (RE2/J): matched in linear time, refused with
RE2/J's description of the error, and the matching work of one request bounded."""

from __future__ import annotations

import time
import uuid

import pytest
from consumer_harness import ConsumerHarness, assignment

from coordinator.core import ErrorCode
from coordinator.core.subscription_regex import MAX_REGEX_MATCH_WORK, compile_regex

T1 = uuid.UUID(int=101)


def _join(h: ConsumerHarness, regex: str) -> object:
    return h.consumer_heartbeat("m1", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                                subscribed_topic_regex=regex, server_assignor="range")


def test_catastrophic_backtracking_pattern_matches_in_linear_time() -> None:
    """``(.*?)+X`` against a 24-character name held Python's backtracking ``re`` for about
    3 s (4x per two more characters); RE2 answers at once."""
    h = ConsumerHarness(**{"a" * 24: (T1, 1), "orders-X": (uuid.UUID(int=102), 2)})
    start = time.perf_counter()
    answer = _join(h, "(.*?)+X")
    elapsed = time.perf_counter() - start
    assert answer.error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    assert elapsed < 0.5, elapsed
    assert assignment(answer) == {uuid.UUID(int=102): [0, 1]}
    h.assert_live_equals_replay()


@pytest.mark.parametrize(("regex", "description"), [
    ("[foo", "missing closing ]"),
    ("(foo", "missing closing )"),
    ("foo)", "missing closing )"),
    ("(?=foo)", "invalid or unsupported Perl syntax"),  # lookahead: re accepted it
    ("(?<=f)oo", "invalid or unsupported Perl syntax"),
    ("fo**", "invalid nested repetition operator"),
    ("*foo", "missing argument to repetition operator"),
    ("fo{1001}", "invalid repeat count"),
    ("(f)\\1", "invalid escape sequence"),  # backreference: re accepted it
    ("f\\C", "invalid escape sequence"),  # RE2 takes \C (any byte), RE2/J does not
    ("[z-a]", "invalid character class range"),
    ("foo\\", "trailing backslash at end of expression"),
    ("(?P<t>f)(?P<t>o)", "duplicate capture group name"),  # RE2 keeps the first, RE2/J refuses
    ("[\\C]oo", "invalid escape sequence"),
])
def test_invalid_regex_answers_kafkas_message(regex: str, description: str) -> None:
    h = ConsumerHarness()
    answer = _join(h, regex)
    assert answer.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION  # type: ignore[attr-defined]
    assert answer.error_message == (  # type: ignore[attr-defined]
        f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}.")
    assert not h.records


def test_re2_syntax_kafka_accepts() -> None:
    """What RE2/J accepts and Python's re would read otherwise: \\Q...\\E quoting, \\z, (?P<>)."""
    h = ConsumerHarness(**{"a.b": (T1, 1), "axb": (uuid.UUID(int=102), 1)})
    answer = _join(h, "(?P<topic>\\Qa.b\\E)\\z")
    assert answer.error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    assert assignment(answer) == {T1: [0]}
    assert compile_regex("\\QC\\C\\E").fullmatch("C\\C")  # \C quoted is literal
    assert compile_regex("[(?P<a>](?P<a>x)").fullmatch("(x")  # ( in a class is literal


def test_regex_match_work_per_request_is_bounded() -> None:
    """A pattern whose RE2 program times the number of topics exceeds the bound is refused
    before any topic is matched; a smaller one against the same topics is accepted."""
    big = "|".join(f"t{i}x" for i in range(400))
    size = compile_regex(big).programsize
    count = MAX_REGEX_MATCH_WORK // size + 1
    topics = {f"t{i}": (uuid.UUID(int=1000 + i), 1) for i in range(count)}
    h = ConsumerHarness(**topics)
    answer = _join(h, big)
    assert answer.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION  # type: ignore[attr-defined]
    assert f"against {count} topics exceeds" in answer.error_message  # type: ignore[attr-defined]
    assert not h.records
    answer = _join(h, "t1")
    assert answer.error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    assert assignment(answer) == {uuid.UUID(int=1001): [0]}


def test_image_matches_each_pattern_once() -> None:
    """Groups subscribed to the same pattern share one match of the image's names."""
    h = ConsumerHarness(**{"orders-1": (T1, 1)})
    image = h.coordinator.topics_image
    first = image.resolve((), "orders-.*")
    assert first == {T1}
    assert image.resolve(["nosuch"], "orders-.*") == first
    assert image._regex_matches == {"orders-.*": first}  # one entry, matched once


def test_a_regex_the_group_has_is_not_checked_again() -> None:
    """Kafka checks a regex when a member brings one no member of its group has; topics
    created later may push the same pattern past the bound: the member re-sending it keeps
    its place and a member joining with it is admitted, a group new to it is refused."""
    regex = "|".join(f"t{i}x" for i in range(400))
    size = compile_regex(regex).programsize
    h = ConsumerHarness(**{"t1x": (T1, 1)})
    joined = _join(h, regex)
    assert joined.error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    h.set_topics(**{f"t{i}": (uuid.UUID(int=1000 + i), 1)
                    for i in range(MAX_REGEX_MATCH_WORK // size + 1)}, t1x=(T1, 1))
    again = h.consumer_heartbeat("m1", joined.member_epoch,  # type: ignore[attr-defined]
                                 subscribed_topic_regex=regex, topic_partitions=[])
    assert again.error_code == ErrorCode.NONE, again.error_message  # type: ignore[attr-defined]
    newcomer = h.consumer_heartbeat("m2", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                                    subscribed_topic_regex=regex, server_assignor="range")
    assert newcomer.error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    other = h.consumer_heartbeat("m3", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                                 subscribed_topic_regex=regex, group_id="other-group")
    assert other.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION  # type: ignore[attr-defined]
