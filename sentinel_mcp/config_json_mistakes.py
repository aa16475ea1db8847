"""What a config file's JSON error means, in words that say what to change: the JSON reader's own message
(``Expecting value``, ``Invalid control character at``) names the parser's state, not the user's mistake.

The mistakes are the ones a hand-written or pasted config makes: a comment (VS Code's ``mcp.json`` takes them,
JSON does not), a trailing comma, single quotes, a tab typed into a string, an empty file, a YAML file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_YAML_LINE = re.compile(r"[A-Za-z_][\w-]*\s*:(\s|$)")
_CONTROL = {"\t": ("a tab", "\\t"), "\n": ("a line break", "\\n"), "\r": ("a carriage return", "\\r")}


def json_mistake(text: str, path: Path, error: json.JSONDecodeError) -> tuple[int, int, str]:
    """(line, column, problem) of ``error`` in ``text``: the place of the mistake (a trailing comma's own
    line, not the bracket after it) and what it is."""
    line, column, at = error.lineno, error.colno, error.pos
    rest = text[at:at + 2]
    if path.suffix.lower() in (".yaml", ".yml"):
        return line, column, "Sentinel's config file is JSON, not YAML: write it as one JSON object"
    if not text.strip():
        return line, column, 'the file is empty: a config is one JSON object, e.g. {"mcpServers": {}}'
    if rest in ("//", "/*"):
        return line, column, ("a comment: JSON has none (VS Code's mcp.json allows them, Sentinel reads "
                              "plain JSON): remove it")
    if error.msg.startswith("Invalid control character") and at < len(text):
        code = ord(text[at])
        name, escape = _CONTROL.get(text[at], ("a control character", f"\\u{code:04x}"))
        return line, column, (f"a control character (U+{code:04X}, {name}) inside a string: write it as "
                              f"{escape}, or end the string before it")
    before = text[:at].rstrip()
    if before.endswith(",") and text[at:at + 1] in ("}", "]"):
        comma = len(before) - 1
        return (text.count("\n", 0, comma) + 1, comma - text.rfind("\n", 0, comma),
                f"a trailing comma before {text[at]!r}: JSON allows none, remove it")
    if text[at:at + 1] == "'":
        return line, column, "single quotes: JSON takes double quotes around keys and strings"
    start = len(text) - len(text.lstrip())
    if at == start and _YAML_LINE.match(text[start:].splitlines()[0]):
        return line, column, ("this looks like YAML: Sentinel's config file is JSON (one object, keys and "
                              "strings in double quotes)")
    return line, column, error.msg
