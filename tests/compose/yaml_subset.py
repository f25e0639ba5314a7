"""A loader for the small YAML subset compose/compose.yaml is written in (no new test deps).

Block mappings and block sequences by indentation; scalars plain, 'single-quoted',
"double-quoted" (JSON escapes) or a JSON flow sequence (``["a", "b"]``); comments. Plain
scalars resolve like YAML 1.2's core schema for what the subset allows: integers, true/false,
null/~/empty, else strings. Anything else -- anchors, tags, block scalars, flow mappings,
mappings inside sequences, tabs, YAML 1.1 booleans (yes/no/on/off), floats -- is refused
with ``YamlSubsetError`` rather than guessed at, so a file that leaves the subset fails loudly.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["YamlSubsetError", "load"]

_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|\.inf|\.nan", re.I)
_AMBIGUOUS = {"yes", "no", "on", "off", "y", "n"}


class YamlSubsetError(ValueError):
    """The text leaves the supported subset (or is not valid YAML)."""


def _strip_comment(line: str, lineno: int) -> str:
    quote = ""
    skip = False
    for i, c in enumerate(line):
        if skip:
            skip = False
        elif quote:
            if c == "'" == quote and line[i + 1 : i + 2] == "'":
                skip = True  # '' inside a single-quoted scalar
            elif c == "\\" and quote == '"':
                skip = True  # an escape inside a double-quoted scalar
            elif c == quote:
                quote = ""
        elif c in "'\"" and (i == 0 or line[i - 1] in " [,-:"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] == " "):
            return line[:i].rstrip()
    if quote:
        raise YamlSubsetError(f"line {lineno}: unterminated quote")
    return line.rstrip()


def _scalar(text: str, lineno: int) -> Any:
    if text[0] in "&*!|>{%@`":
        raise YamlSubsetError(f"line {lineno}: unsupported syntax {text!r}")
    if text[0] in '["':
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise YamlSubsetError(f"line {lineno}: not a JSON flow value {text!r}") from None
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise YamlSubsetError(f"line {lineno}: flow sequences hold strings only")
        return value
    if text[0] == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise YamlSubsetError(f"line {lineno}: bad single-quoted scalar {text!r}")
        return text[1:-1].replace("''", "'")
    if text in {"null", "Null", "NULL", "~"}:
        return None
    if text in {"true", "True", "TRUE"}:
        return True
    if text in {"false", "False", "FALSE"}:
        return False
    if text.lower() in _AMBIGUOUS or (_FLOAT.fullmatch(text) and not _INT.fullmatch(text)):
        raise YamlSubsetError(f"line {lineno}: ambiguous plain scalar {text!r}; quote it")
    if _INT.fullmatch(text):
        return int(text)
    if ": " in text or text.endswith(":") or " #" in text:
        raise YamlSubsetError(f"line {lineno}: unsupported plain scalar {text!r}")
    return text


def load(text: str) -> Any:
    """The value of a YAML document written in the subset."""
    lines: list[tuple[int, str, int]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError(f"line {lineno}: tab indentation")
        if raw.strip() in {"---", "..."}:
            raise YamlSubsetError(f"line {lineno}: document markers are not supported")
        content = _strip_comment(raw, lineno)
        if content.strip():
            lines.append((len(content) - len(content.lstrip(" ")), content.strip(), lineno))
    if not lines:
        return None
    value, end = _block(lines, 0, lines[0][0])
    if end != len(lines):
        raise YamlSubsetError(f"line {lines[end][2]}: unexpected indentation")
    return value


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def _nested(lines: list[tuple[int, str, int]], i: int, indent: int, lineno: int) -> Any:
    """The block after a ``key:`` or ``-`` line at ``indent`` (None when there is none)."""
    if i < len(lines):
        child_indent, child, _ = lines[i]
        if child_indent > indent or (child_indent == indent and _is_item(child)):
            return _block(lines, i, child_indent)
    return None, i


def _block(lines: list[tuple[int, str, int]], i: int, indent: int) -> tuple[Any, int]:
    if _is_item(lines[i][1]):
        items: list[Any] = []
        while i < len(lines) and lines[i][0] == indent and _is_item(lines[i][1]):
            _, content, lineno = lines[i]
            rest = content[1:].strip()
            if not rest:
                value, i = _nested(lines, i + 1, indent + 1, lineno)
                items.append(value)
                continue
            if rest[0] not in "'\"[" and (": " in rest or rest.endswith(":")):
                raise YamlSubsetError(f"line {lineno}: mappings inside sequences not supported")
            items.append(_scalar(rest, lineno))
            i += 1
        return items, i
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        _, content, lineno = lines[i]
        if _is_item(content):
            raise YamlSubsetError(f"line {lineno}: sequence item where a key was expected")
        if ": " in content:
            key, rest = content.split(": ", 1)
            rest = rest.strip()
        elif content.endswith(":"):
            key, rest = content[:-1], ""
        else:
            raise YamlSubsetError(f"line {lineno}: expected `key: value`, got {content!r}")
        if not key or key[0] in "'\"?&*!{[" or key in mapping:
            raise YamlSubsetError(f"line {lineno}: unsupported or duplicate key {key!r}")
        if rest:
            mapping[key] = _scalar(rest, lineno)
            i += 1
        else:
            mapping[key], i = _nested(lines, i + 1, indent, lineno)
    if i < len(lines) and lines[i][0] > indent:
        raise YamlSubsetError(f"line {lines[i][2]}: unexpected indentation")
    return mapping, i
