"""Text as a person is shown it: what is really there, not what it can be made to look like.

A value shown in a confirmation (an argument, a label read off a screen, an upstream's question) may carry
characters that change what a person reads: right-to-left overrides that reverse a file name, zero-width
characters that split a word, control characters and terminal escapes that rewrite a console line, or a
value so long that the part that matters scrolls away. Everything shown to a person passes through here:

- characters of the Unicode categories Cc (controls, ESC), Cf (format: bidi controls, zero-width, tags),
  Cs (surrogates), Co (private use), Cn (unassigned), Zl and Zp (line and paragraph separators), and the
  other default-ignorable code points (variation selectors, Hangul fillers, ...) are shown as ``⟨U+XXXX⟩``;
- a value longer than its limit is cut, with a visible mark saying how many characters were left out;
- the caller can say which values were changed (``display_note``), so the person knows.

Display only: the arguments a tool receives are never changed.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable

VALUE_LIMIT = 300  # characters of one value in a question
MESSAGE_LIMIT = 2000  # characters of a whole question or notice
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Unicode's Default_Ignorable_Code_Point ranges: drawn as nothing even where their category is not Cf
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)


def is_hidden(ch: str) -> bool:
    """True for a character a person cannot see as itself (it is shown as ``⟨U+XXXX⟩``)."""
    if " " <= ch <= "~":
        return False  # printable ASCII, the common case
    if unicodedata.category(ch) in _HIDDEN_CATEGORIES:
        return True
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _DEFAULT_IGNORABLE)


@dataclass(frozen=True)
class Shown:
    """A value as shown, and what was changed to show it safely."""

    text: str
    hidden: int = 0  # characters made visible as ⟨U+XXXX⟩
    cut: int = 0  # characters left out at the end

    @property
    def changed(self) -> bool:
        return bool(self.hidden or self.cut)

    def what_changed(self) -> str:
        parts = []
        if self.hidden:
            parts.append(f"{self.hidden} invisible, control or direction-changing character"
                         f"{'s' if self.hidden != 1 else ''} shown as ⟨U+…⟩")
        if self.cut:
            parts.append(f"cut, {self.cut} more character{'s' if self.cut != 1 else ''} not shown")
        return " and ".join(parts)


def shown(value: Any, limit: int = VALUE_LIMIT, *, keep_newlines: bool = False) -> Shown:
    """``value`` (a string, or anything as compact JSON) rendered safely for a person.

    ``keep_newlines`` keeps line feeds and tabs (multi-line tool results on a terminal); everything else
    hidden is made visible.
    """
    text = value if isinstance(value, str) else _json(value)
    cut = max(0, len(text) - limit)
    if cut:
        text = text[:limit]
    if text.isprintable() and not any(is_hidden(ch) for ch in text if ord(ch) >= 0x00AD):
        hidden = 0  # the common case: nothing to mark (isprintable is false for every hidden category)
    else:
        out: list[str] = []
        hidden = 0
        for ch in text:
            if keep_newlines and ch in "\n\t":
                out.append(ch)
            elif is_hidden(ch):
                out.append(f"⟨U+{ord(ch):04X}⟩")
                hidden += 1
            else:
                out.append(ch)
        text = "".join(out)
    if cut:
        text += f"…⟨{cut} more characters not shown⟩"
    return Shown(text, hidden, cut)


def safe_text(value: Any, limit: int = MESSAGE_LIMIT, *, keep_newlines: bool = False) -> str:
    """Just the rendered text (for notices and log-like output where no note is added)."""
    return shown(value, limit, keep_newlines=keep_newlines).text


def display_note(changed: Iterable[tuple[str, Shown]]) -> str:
    """One sentence naming the values changed for display, or "" when none was."""
    items = [f"{name}: {s.what_changed()}" for name, s in changed if s.changed]
    if not items:
        return ""
    return "[Shown safely — " + "; ".join(items) + "]"


def safe_question(message: str, values: dict[str, Any] | None = None, *,
                  limit: int = MESSAGE_LIMIT, value_limit: int = VALUE_LIMIT) -> tuple[str, list[str]]:
    """A question's final text, safe to show, with a note naming what was changed; and those names.

    ``values`` are the values the question may quote (a call's arguments). A long string value that
    appears verbatim in the message is cut to ``value_limit`` there, so the rest of the question stays in
    view; values that carry hidden characters are named in the note.
    """
    changed: list[tuple[str, Shown]] = []
    for name, value in (values or {}).items():
        if not isinstance(value, str):
            value = _json(value)
        s = shown(value, value_limit)
        if s.cut and len(value) > value_limit and value in message:
            message = message.replace(value, value[:value_limit] + f"…⟨{s.cut} more characters not shown⟩")
        if s.changed:
            changed.append((f"value of {safe_text(name, 60)}", s))
    whole = shown(message, limit)
    if whole.hidden and not any(s.hidden for _, s in changed):
        changed.append(("this question", Shown("", whole.hidden, 0)))
    if whole.cut:
        changed.append(("this question", Shown("", 0, whole.cut)))
    note = display_note(changed)
    return (f"{whole.text} {note}" if note else whole.text), [name for name, _ in changed]


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)
