"""Kafka's ``sasl.jaas.config`` values: ``<loginModuleClass> <controlFlag> (<key>=<value>)*;``.

Parsed as Kafka's JaasConfig does with Java's StreamTokenizer: whitespace is every char up to
space; ``;`` and ``=`` stand alone; values may be quoted with ``"`` or ``'`` (backslash
escapes; a line end closes the quote); ``//`` and ``/* */`` are comments, and so is ``/`` to
the end of the line outside quotes. Errors are ValueErrors with Kafka's messages.

``PlainLoginModule`` options ``user_NAME="password"`` are PLAIN's users
(PlainServerCallbackHandler); ``OAuthBearerLoginModule`` options ``unsecuredValidator*``
configure the unsecured validator.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JaasEntry", "parse_jaas_config", "plain_users", "server_jaas_entry"]

_CONTROL_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@dataclass(frozen=True, slots=True)
class JaasEntry:
    login_module: str
    control_flag: str
    options: dict[str, str]

    def __repr__(self) -> str:  # options hold passwords
        return f"JaasEntry({self.login_module!r}, {self.control_flag!r}, {sorted(self.options)})"


def _is_word(c: str) -> bool:
    code = ord(c)
    return (32 < code <= 128 or code >= 160) and c not in ";='\"/"


def _tokens(text: str) -> list[tuple[str, str | None]]:
    """(type, value): type "w" word, "q" quoted string, or the ordinary char itself."""
    tokens: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if ord(c) <= 32:
            i += 1
        elif c == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                i = n if end == -1 else end + 2
            else:  # "//" and a lone "/" both comment out the rest of the line
                end = min((p for p in (text.find("\n", i), text.find("\r", i)) if p != -1),
                          default=n)
                i = end
        elif c in "\"'":
            i, value = _quoted(text, i + 1, c)
            tokens.append(("q", value))
        elif _is_word(c):
            start = i
            while i < n and _is_word(text[i]):
                i += 1
            tokens.append(("w", text[start:i]))
        else:
            tokens.append((c, None))
            i += 1
    return tokens


def _quoted(text: str, i: int, quote: str) -> tuple[int, str]:
    out = []
    n = len(text)
    while i < n and text[i] not in (quote, "\n", "\r"):
        c = text[i]
        if c == "\\" and i + 1 < n:
            i += 1
            c = text[i]
            if c in "01234567":
                digits = c
                limit = 3 if c <= "3" else 2
                while len(digits) < limit and i + 1 < n and text[i + 1] in "01234567":
                    i += 1
                    digits += text[i]
                c = chr(int(digits, 8))
            else:
                c = _ESCAPES.get(c, c)
        out.append(c)
        i += 1
    if i < n and text[i] == quote:
        i += 1
    return i, "".join(out)


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """Every login module entry in a ``sasl.jaas.config`` value."""
    tokens = _tokens(text)
    entries = []
    position = 0

    def next_token() -> tuple[str, str | None] | None:
        nonlocal position
        if position >= len(tokens):
            return None
        position += 1
        return tokens[position - 1]

    while (token := next_token()) is not None:
        login_module = token[1]
        flag = next_token()
        if flag is None:
            raise ValueError("Login module control flag not specified in JAAS config")
        if flag[1] is None:
            raise ValueError("Login module control flag is not available in the JAAS config")
        if flag[1].upper() not in _CONTROL_FLAGS:
            raise ValueError(f"Invalid login module control flag '{flag[1]}' in JAAS config")
        options: dict[str, str] = {}
        while (token := next_token()) is not None and token[0] != ";":
            key = token[1]
            equals, value = next_token(), next_token()
            if equals is None or equals[0] != "=" or value is None or value[1] is None:
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            options[str(key)] = value[1]
        if token is None:
            raise ValueError("JAAS config entry not terminated by semi-colon")
        entries.append(JaasEntry(str(login_module), flag[1].upper(), options))
    if not entries:
        raise ValueError("Login module not specified in JAAS config")
    return entries


def server_jaas_entry(text: str) -> JaasEntry:
    """A listener's ``...sasl.jaas.config``: exactly one login module (JaasContext)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise ValueError(
            f"JAAS config property contains {len(entries)} login modules, should be 1 module"
        )
    return entries[0]


def plain_users(entry: JaasEntry) -> dict[str, str]:
    """PLAIN's users from ``user_NAME="password"`` options."""
    return {
        key[len("user_"):]: value for key, value in entry.options.items()
        if key.startswith("user_")
    }
