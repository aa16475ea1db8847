"""Text as a person is shown it: what is really there, not what it can be made to look like.

A value shown in a confirmation (an argument, a label read off a screen, an upstream's question) may carry
characters that change what a person reads: right-to-left overrides that reverse a file name, zero-width
characters that split a word, control characters and terminal escapes that rewrite a console line, or a
value so long that the part that matters scrolls away. Everything shown to a person passes through here:

- characters of the Unicode categories Cc (controls, ESC), Cf (format: bidi controls, zero-width, tags),
  Cs (surrogates), Co (private use), Cn (unassigned), Zl and Zp (line and paragraph separators), and the
  other default-ignorable code points (variation selectors, Hangul fillers, ...) are shown as ``⟨U+XXXX⟩``;
- so is every bracket and quotation mark but a short allow list of ordinary ones, and every other character
  that can pass for the marking's own brackets (``mark_brackets``: ``⟨`` and ``⟩`` themselves, ``〈〉``,
  ``❬❭``, ``＜＞``, ``˂˃``, ...; ASCII ``( ) [ ] { } < >``, ``“ ” ‘ ’ « » ‹ ›`` and the like are shown
  raw): a value that types out ``⟨U+202E⟩`` reads
  ``⟨U+27E8⟩U+202E⟨U+27E9⟩``, so every ``⟨U+XXXX⟩`` a person sees is Sentinel's;
- text already shown here is a ``Marked`` string: shown again, its marks are kept as they are (text is marked
  once, where it enters); ``compose`` joins marked pieces and raw ones into one marked text;
- a value longer than its limit is cut, with a visible mark saying how many characters were left out;
- the caller can say which values were changed (``display_note``), so the person knows.

Display only: the arguments a tool receives are never changed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable

from sentinel_mcp.core.mark_brackets import passes_for_mark_bracket
from sentinel_mcp.core.quoted_spans import cut_point, quoted_spans

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


class Marked(str):
    """Text already shown by this module: every ``⟨U+XXXX⟩`` in it is Sentinel's mark, so showing it again
    keeps its brackets (a plain ``str`` is a raw value, whose brackets are marked)."""

    __slots__ = ()


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
    brackets: int = 0  # characters like the marking's brackets, shown as ⟨U+XXXX⟩
    mixed: int = 0  # words mixing letters of scripts no honest word mixes (shown as they are, and said)

    @property
    def changed(self) -> bool:
        return bool(self.hidden or self.cut or self.brackets or self.mixed)

    def what_changed(self) -> str:
        parts = []
        if self.hidden:
            parts.append(f"{self.hidden} invisible, control or direction-changing character"
                         f"{'s' if self.hidden != 1 else ''} shown as ⟨U+…⟩")
        if self.brackets:
            parts.append(f"{self.brackets} bracket{'s' if self.brackets != 1 else ''} like Sentinel's marks "
                         "shown as ⟨U+…⟩")
        if self.cut:
            parts.append(f"cut, {self.cut} more character{'s' if self.cut != 1 else ''} not shown")
        if self.mixed:
            parts.append(f"{self.mixed} word{'s' if self.mixed != 1 else ''} mixing the letters of different "
                         "scripts (look-alike letters: it may not read as what it is)")
        return " and ".join(parts)


def shown(value: Any, limit: int = VALUE_LIMIT, *, keep_newlines: bool = False) -> Shown:
    """``value`` (a string, or anything as compact JSON) rendered safely for a person.

    ``keep_newlines`` keeps line feeds and tabs (multi-line tool results on a terminal); everything else
    hidden is made visible. A ``Marked`` value keeps its brackets (they are Sentinel's marks).
    """
    raw = not isinstance(value, Marked)
    text = value if isinstance(value, str) else _json(value)
    cut = max(0, len(text) - limit)
    if cut:
        text = text[:limit]
        if not raw:  # a marked text is cut before a mark it would cut into ("⟨U+20"), never inside it
            start = text.rfind("⟨")
            if start >= 0 and text.find("⟩", start) < 0:
                cut += len(text) - start
                text = text[:start]
    hidden = brackets = 0
    if not text.isprintable() or any(
        is_hidden(ch) or (raw and passes_for_mark_bracket(ch)) for ch in text if ord(ch) >= 0x00AD
    ):  # else the common case: nothing to mark (isprintable is false for every hidden category)
        out: list[str] = []
        for ch in text:
            if keep_newlines and ch in "\n\t":
                out.append(ch)
            elif is_hidden(ch):
                out.append(f"⟨U+{ord(ch):04X}⟩")
                hidden += 1
            elif raw and passes_for_mark_bracket(ch):
                out.append(f"⟨U+{ord(ch):04X}⟩")
                brackets += 1
            else:
                out.append(ch)
        text = "".join(out)
    if cut:
        text += f"…⟨{cut} more characters not shown⟩"
    return Shown(Marked(text), hidden, cut, brackets)


def shown_to_approve(value: Any, limit: int = VALUE_LIMIT) -> Shown:
    """``shown``, for a value a person is asked to approve: its look-alike words counted too ("pаypal.com"
    with a Cyrillic а reads as the Latin one, and a yes to what it reads as is not a yes to what it is)."""
    s = shown(value, limit)
    text = value if isinstance(value, str) else _json(value)
    if text.isascii():
        return s
    from sentinel_mcp.core.look_alike_names import mixed_words  # (it reads this module: imported on use)

    mixed = mixed_words(text[:limit])
    return Shown(s.text, s.hidden, s.cut, s.brackets, mixed) if mixed else s


def safe_text(value: Any, limit: int = MESSAGE_LIMIT, *, keep_newlines: bool = False) -> Marked:
    """Just the rendered text (for notices and log-like output where no note is added)."""
    return Marked(shown(value, limit, keep_newlines=keep_newlines).text)


def compose(*parts: Any) -> Marked:
    """One marked text of ``parts``: a ``Marked`` part is kept as it is, any other is shown (a raw value, or
    Sentinel's own wording, which has nothing to mark). Uncut: the whole is cut where it is shown."""
    return Marked("".join(p if isinstance(p, Marked) else shown(p, len(p) if isinstance(p, str) else
                                                                   MESSAGE_LIMIT).text for p in parts))


def said(error: BaseException) -> str:
    """``error``'s message as raised: ``Marked`` when it was raised so (Sentinel's words around values it
    marked), else ``str(error)``, a raw value. ``str`` of a ``Marked`` message is a plain str, whose marks,
    shown again, would read as typed out (``⟨U+27E8⟩U+202E⟨U+27E9⟩``): pass an error's text on by this."""
    message = error.args[0] if len(error.args) == 1 else None
    return message if isinstance(message, Marked) else str(error)


def error_text(error: BaseException, limit: int = MESSAGE_LIMIT) -> Marked:
    """``error``'s message as shown: one raised as ``Marked`` keeps its marks; any other is marked here."""
    return safe_text(said(error), limit)


_MARK = re.compile(r"⟨U\+([0-9A-F]{4,6})⟩|…⟨(\d+) more characters not shown⟩")


def unmarked(text: str) -> str:
    """The raw text a ``Marked`` text shows (a plain ``str`` is raw already): where marked text crosses into
    data (JSON, a Prolog fact, an audit row) it goes raw, to be marked once where it is shown. Each of
    Sentinel's marks is its character again; a cut's mark reads "… (N more characters not shown)" (its
    brackets would be marked as typed out). Only a mark ``shown`` makes is undone: any other text is left
    as it is."""
    if not isinstance(text, Marked):
        return text

    def undo(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            return f"… ({m.group(2)} more characters not shown)"
        cp = int(m.group(1), 16)
        if 0xD800 <= cp <= 0xDFFF:  # a lone surrogate cannot be stored as UTF-8: the replacement character
            return "\ufffd"
        ch = chr(cp) if cp <= 0x10FFFF else ""
        return ch if ch and (is_hidden(ch) or passes_for_mark_bracket(ch)) else m.group(0)

    return str(_MARK.sub(undo, text))


def display_note(changed: Iterable[tuple[str, Shown]]) -> Marked:
    """One sentence naming the values changed for display, or "" when none was (the names are marked)."""
    items = [f"{name}: {s.what_changed()}" for name, s in changed if s.changed]
    if not items:
        return Marked("")
    return Marked("[Shown safely — " + "; ".join(items) + "]")


def safe_question(message: str, values: dict[str, Any] | None = None, *,
                  limit: int = MESSAGE_LIMIT, value_limit: int = VALUE_LIMIT) -> tuple[Marked, list[str]]:
    """A question's final text, safe to show, with a note naming what was changed; and those names.

    Every word of the question's own is shown: what is cut is values, each inside its quotes (``“…”``,
    found by its quotes: ``quoted_spans``) or, a long value shown bare, where the call's argument appears
    verbatim; each cut says how much was left out. A value is cut to ``value_limit``, and all of them
    further, evenly, when together they would push the question (with its note) past ``limit``. Only a
    question whose own words alone pass ``limit`` is cut as a whole (and the note says so). ``values`` are
    the values the question may quote (a call's arguments): those that carry hidden characters, look-alike
    letters or were cut are named in the note. A ``Marked`` message was made safe where it was made: shown
    again, it is only kept within ``limit``.
    """
    changed: list[tuple[str, Shown]] = []
    long_values: list[str] = []
    for name, value in (values or {}).items():
        if not isinstance(value, str):
            value = _json(value)
        s = shown_to_approve(value, value_limit)
        if s.cut:
            long_values.append(value)
        if s.changed:
            changed.append((f"value of {safe_text(name, 60)}", s))
    pieces = [(False, message)] if isinstance(message, Marked) else _pieces(message, long_values, value_limit)
    parts = [(is_value, shown(p, len(p))) for is_value, p in pieces]
    hidden = sum(s.hidden for _, s in parts)
    brackets = sum(s.brackets for _, s in parts)
    if hidden and not any(s.hidden for _, s in changed):
        changed.append(("this question", Shown("", hidden, 0)))
    if brackets and not any(s.brackets for _, s in changed):
        changed.append(("this question", Shown("", 0, 0, brackets)))
    note = display_note(changed)
    room = limit - (len(note) + 1 if note else 0)
    cap = _value_cap([len(s.text) for v, s in parts if v], room - sum(len(s.text) for v, s in parts if not v),
                     value_limit)
    if cap is not None:
        body = "".join(_cut_value(p, cap) if v else s.text for (v, p), (_, s) in zip(pieces, parts))
        return Marked(f"{body} {note}" if note else body), [name for name, _ in changed]
    # the question's own words pass the bound: cut as a whole (its values only marks), within the bound
    body = "".join(_cut_value(p, 0) if v else s.text for (v, p), (_, s) in zip(pieces, parts))
    cut = max(0, len(body) - room)
    for _ in range(3):  # the note names the count it cuts: settled in a pass or two (its digits)
        note = display_note([*changed, ("this question", Shown("", 0, max(cut, 1)))])
        whole = shown(Marked(body), limit - len(note) - 1)
        if whole.cut == cut:
            break
        cut = whole.cut
    return Marked(f"{whole.text} {note}"), [name for name, _ in changed] + ["this question"]


_CUT_MARK = len("…⟨99999 more characters not shown⟩")


def _pieces(message: str, long_values: list[str], value_limit: int) -> list[tuple[bool, str]]:
    """``message`` as (is a value, raw text) pieces: each quote's inside a value, and outside the quotes
    each long argument that appears verbatim (a long value shown bare)."""
    out: list[tuple[bool, str]] = []
    at = 0
    for start, end in quoted_spans(message):
        out += _bare_values(message[at:start], long_values)
        out.append((True, message[start:end]))
        at = end
    out += _bare_values(message[at:], long_values)
    return [(v, p) for v, p in out if p]


def _bare_values(text: str, long_values: list[str]) -> list[tuple[bool, str]]:
    pieces: list[tuple[bool, str]] = [(False, text)]
    for value in sorted(long_values, key=len, reverse=True):
        pieces = [q for v, p in pieces for q in ([(v, p)] if v or value not in p else _split(p, value))]
    return pieces


def _split(text: str, value: str) -> list[tuple[bool, str]]:
    raw = text.split(value)
    return [q for i, r in enumerate(raw) for q in (((True, value), (False, r)) if i else ((False, r),))]


def _value_cap(lengths: list[int], room: int, value_limit: int) -> int | None:
    """The most characters any one value may show so that all of them (each cut one with its mark) fit
    ``room``: ``value_limit`` when that fits, else less, down to none (a value's mark alone); None when not
    even that fits."""
    def need(cap: int) -> int:
        return sum(n if n <= cap else cap + _CUT_MARK for n in lengths)

    if need(value_limit) <= room:
        return value_limit
    lo, hi = 0, value_limit
    if need(lo) > room:
        return None
    while lo < hi:  # the largest cap that fits (need grows with cap)
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if need(mid) <= room else (lo, mid - 1)
    return lo


def _cut_value(value: str, cap: int) -> str:
    """``value`` shown in at most ``cap`` characters (its marks counted), cut where it must be with the
    mark saying how many of its characters were left out (never inside an escape)."""
    whole = shown(value, len(value)).text
    if len(whole) <= cap:
        return whole
    lo, hi = 0, min(cap, len(value))
    while lo < hi:  # the longest beginning whose shown text fits cap
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if len(shown(value[:mid], mid).text) <= cap else (lo, mid - 1)
    n = cut_point(value, lo)
    return shown(value[:n], n).text + f"…⟨{len(value) - n} more characters not shown⟩"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)
