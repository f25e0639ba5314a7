"""A member's ``SubscribedTopicRegex`` (KIP-848) as Kafka compiles it: RE2 syntax, matched
against whole topic names in time linear in the name (Kafka uses RE2/J,
``com.google.re2j.Pattern``, for exactly this reason; kcoord uses Google's RE2 through the
``google-re2`` binding, imported on the first regex). A pattern RE2 refuses is Kafka's
INVALID_REGULAR_EXPRESSION with RE2/J's description of the error
(``Utils.throwIfRegularExpressionIsInvalid``).

The core matches on the event loop, so the work of one request is bounded too: a pattern's
RE2 program size times the number of topics it is matched against may not exceed
``MAX_REGEX_MATCH_WORK`` (Kafka matches on a background executor instead).
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = [
    "MAX_REGEX_MATCH_WORK",
    "CompiledRegex",
    "InvalidRegularExpression",
    "compile_regex",
    "invalid_regex_message",
    "require_bounded_match",
]

#: The most RE2 program instructions times topic names one request may match (topic names are at
#: most 249 characters, so a match is at most 249 steps per instruction): about 0.2 s for the
#: worst pattern RE2 must run without its DFA, 1 µs-scale per topic for ordinary ones.
MAX_REGEX_MATCH_WORK = 200_000


class CompiledRegex(Protocol):
    """What the core uses of a compiled RE2 pattern."""

    @property
    def programsize(self) -> int: ...

    def fullmatch(self, text: str) -> object | None: ...


class InvalidRegularExpression(ValueError):
    """A pattern Kafka would refuse; ``description`` is RE2/J's ``getDescription()``."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


def invalid_regex_message(regex: str, description: str) -> str:
    """Kafka's INVALID_REGULAR_EXPRESSION message (``throwIfRegularExpressionIsInvalid``)."""
    return f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}."


# C++ RE2 reports "<code text>: <fragment>"; RE2/J (Kafka) describes the same errors in Go's
# regexp/syntax words. Longest prefix first: "invalid character class range" before
# "invalid character class".
_RE2J_DESCRIPTIONS = (
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class range"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("missing ]", "missing closing ]"),
    ("missing )", "missing closing )"),
    ("unexpected )", "missing closing )"),  # RE2/J's parseRightParen
    ("trailing \\", "trailing backslash at end of expression"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid named capture group", "invalid named capture"),
)


def _re2j_description(re2_error: str) -> str:
    for prefix, description in _RE2J_DESCRIPTIONS:
        if re2_error.startswith(prefix):
            return description
    return re2_error.split(": ", 1)[0]  # e.g. "pattern too large - compile failed"


def _has_any_byte_escape(pattern: str) -> bool:
    """Whether the pattern uses ``\\C`` (any byte): C++ RE2 accepts it, RE2/J refuses it as
    an invalid escape sequence. Text between ``\\Q`` and ``\\E`` is literal."""
    i, end = 0, len(pattern)
    while i < end:
        if pattern[i] != "\\" or i + 1 == end:
            i += 1
            continue
        escaped = pattern[i + 1]
        if escaped == "C":
            return True
        if escaped == "Q":
            close = pattern.find("\\E", i + 2)
            i = end if close < 0 else close + 2
            continue
        i += 2
    return False


def _options() -> Any:
    import re2  # ~3 ms: imported by the first regex subscription, not at start-up

    options = re2.Options()
    options.log_errors = False  # RE2 would log every refused pattern to stderr
    return options


def compile_regex(pattern: str) -> CompiledRegex:
    """The compiled pattern (RE2 caches recent compilations); InvalidRegularExpression with
    RE2/J's description when Kafka would refuse it."""
    import re2

    if _has_any_byte_escape(pattern):
        raise InvalidRegularExpression("invalid escape sequence")
    try:
        compiled: CompiledRegex = re2.compile(pattern, _options())
    except re2.error as exc:
        text = exc.args[0] if exc.args else ""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        raise InvalidRegularExpression(_re2j_description(str(text))) from None
    return compiled


def require_bounded_match(regex: CompiledRegex, topic_count: int) -> None:
    """InvalidRegularExpression when matching ``regex`` against ``topic_count`` topic names
    would exceed ``MAX_REGEX_MATCH_WORK``."""
    work = regex.programsize * topic_count
    if work > MAX_REGEX_MATCH_WORK:
        raise InvalidRegularExpression(
            f"its RE2 program of {regex.programsize} instructions matched against "
            f"{topic_count} topics exceeds kcoord's bound of {MAX_REGEX_MATCH_WORK} "
            "instructions times topics per request"
        )
