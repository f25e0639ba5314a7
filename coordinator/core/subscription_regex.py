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


def _re2j_refusal(pattern: str) -> str | None:
    """What RE2/J refuses in a pattern C++ RE2 compiled: ``\\C`` (any byte; RE2/J: an
    invalid escape sequence) and a capture group name used twice (RE2 keeps the first).
    Text between ``\\Q`` and ``\\E`` is literal, and so is ``(`` in a character class."""
    names: set[str] = set()
    i, end = 0, len(pattern)
    in_class = False
    while i < end:
        c = pattern[i]
        if c == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped == "Q":
                close = pattern.find("\\E", i + 2)
                i = end if close < 0 else close + 2
                continue
            if escaped == "C":
                return "invalid escape sequence"
            i += 2
        elif in_class:
            close = pattern.find(":]", i + 2) if pattern.startswith("[:", i) else -1
            if close >= 0:  # [:alpha:]
                i = close + 2
                continue
            in_class = c != "]"
            i += 1
        elif c == "[":
            in_class = True
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # a ] first in a class is literal
                i += 1
        elif pattern.startswith("(?P<", i) or pattern.startswith("(?<", i):
            first = i + (4 if pattern[i + 2] == "P" else 3)
            close = pattern.find(">", first)
            name = pattern[first:close]
            if name in names:
                return "duplicate capture group name"
            names.add(name)
            i = close + 1
        else:
            i += 1
    return None


def _options() -> Any:
    import re2  # ~3 ms: imported by the first regex subscription, not at start-up

    options = re2.Options()
    options.log_errors = False  # RE2 would log every refused pattern to stderr
    return options


def compile_regex(pattern: str) -> CompiledRegex:
    """The compiled pattern (RE2 caches recent compilations); InvalidRegularExpression with
    RE2/J's description when Kafka would refuse it."""
    import re2

    try:
        compiled: CompiledRegex = re2.compile(pattern, _options())
    except re2.error as exc:
        text = exc.args[0] if exc.args else ""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        raise InvalidRegularExpression(_re2j_description(str(text))) from None
    refusal = _re2j_refusal(pattern)
    if refusal is not None:
        raise InvalidRegularExpression(refusal)
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
