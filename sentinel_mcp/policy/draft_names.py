"""The names a draft writes: every text of the upstream's schemas (a tool's or property's name, an enum
value) reaches the Prolog text through ``quote`` or ``atom_text`` only, and every variable and predicate the
draft makes up from one is named here."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int
from sentinel_mcp.policy.prolog_text import LITERAL_TEXTS, term_text, to_prolog_chars
from sentinel_mcp.policy.questions import DONT_KNOW, DONT_KNOW_TITLE, humanize


def quote(atom: str) -> str:
    """A quoted Prolog atom of any text: quotes and backslashes escaped, and control characters (a line break
    in an enum value of a hostile schema) written as escapes, never as themselves. A lone surrogate (JSON
    allows ``"\\ud800"``), which SWI-Prolog will not read, is its stand-in: the character the engine gives the
    same argument (prolog_text.to_prolog_chars), so the choice still matches the value."""
    out = to_prolog_chars(atom).replace("\\", "\\\\").replace("'", "\\'")
    if not out.isprintable():
        out = "".join(c if c.isprintable() else f"\\x{ord(c):x}\\" for c in out)
    return "'" + out + "'"


# the operators SWI-Prolog reads by a name of letters (its current_op/3 table): a property named ``table`` or
# ``dynamic`` (a database tool's argument) written as it is made ``[table = Table]`` a syntax error, and the
# draft failed the check it is promised to pass. tests/policy/test_draft_quoting.py reads every operator the
# engine has back, so a new one fails there until it is named here.
OPERATOR_NAMES = frozenset({
    "as", "discontiguous", "div", "dynamic", "initialization", "is", "meta_predicate", "mod",
    "module_transparent", "multifile", "public", "rdiv", "rem", "table", "thread_initialization",
    "thread_local", "volatile", "xor",
})


def choice_text(value: object) -> str | None:
    """An enum value (any JSON value) as an askable's choice: the very term the guard reads a call's argument
    of that value as (sentinel_core.pl's from_call_json/2), so the answer's fact and the argument compare
    equal exactly when the values are equal. Python's text of a value was written before: ``True`` as the atom
    'True' and ``None`` as 'None', which no argument ever is (the guard denied every call with them), and the
    text "true" as the atom true, the boolean's term (choosing one let the other through). A number is the
    number a call's argument of it is (13.0 the 13: json_numbers.py). None when the value can be no choice:
    an object or a list (a choice is atomic), a number JSON has not, "I don't know" (every question's own
    answer, which the loader refuses as a choice), or a text spelling a literal (answered, it is the literal).
    ``offered``: the text the question offers a choice as (questions.py), for choices that share one."""
    if isinstance(value, bool) or value is None:
        return term_text(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        try:
            value = integral_as_int(value)
        except NumberTooLarge:
            return None
    if isinstance(value, (int, float)):
        try:
            return repr(value)
        except ValueError:  # more digits than Python writes (its int_max_str_digits): no real choice
            return None
    # a text shown as "I don't know" would stand beside that answer, which every question has
    if isinstance(value, str) and value != DONT_KNOW and value not in LITERAL_TEXTS \
            and offered(value) != offered(DONT_KNOW_TITLE):
        return quote(value)
    return None  # a text "true": a question's answer is the rulebase's atom (answer_facts.py), the literal's


def offered(value: object) -> str:
    """How a person reads a choice of ``value``: questions.py's option title when it has no label (the value
    humanized: ``True`` "True", ``None`` "None", ``in_progress`` "In progress"), folded as the loader compares
    titles (case and spacing aside: declaration_checks.pl's folded_title/2). Values read alike (1 and "1",
    "open" and "Open") make no question, and no rulebase loads with them: a draft keeps the first."""
    shown = humanize(value if isinstance(value, str) else integral_as_int(value))
    return " ".join(shown.split()).casefold()


def atom_text(name: str) -> str:
    """``name`` as a Prolog atom: as it is when it reads as one (``order_id``), quoted otherwise (``Amount``
    and ``_x`` read as variables, ``a.b`` as a dict access, ``a-b`` as a term, ``end.`` ends a clause,
    ``table`` is an operator)."""
    plain = re.fullmatch(r"[a-z][A-Za-z0-9_]*", name) and name not in OPERATOR_NAMES
    return name if plain else quote(name)


def clause_vars(names: list[str]) -> list[str]:
    """A variable for each name, distinct within one clause (``order_id`` and ``orderId`` are both OrderId:
    one variable would make the two arguments equal)."""
    fresh = Fresh()
    return [fresh(var_name(n)) for n in names]


class Fresh:
    """Names not given before: ``base``, else ``base`` and the next number free. Each base's numbers are
    tried from where the last one stopped: 10^5 names of one spelling (``a``, ``a_``, ``a.``) each tried
    every number before it, 10^10 steps for an upstream's schema of 3 MB."""

    def __init__(self, taken: Iterable[str] = (), between: str = "") -> None:
        self.taken = set(taken)
        self.between = between
        self._next: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        name, k = base, self._next.get(base, 2)
        while name in self.taken:
            name, k = f"{base}{self.between}{k}", k + 1
        self._next[base] = k
        self.taken.add(name)
        return name


def var_name(name: str) -> str:
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    text = "".join(p[:1].upper() + p[1:] for p in parts) or "X"
    return text if text[0].isalpha() else "V" + text


def pred_name(*parts: str) -> str:
    text = "_".join(p for p in (re.sub(r"[^a-z0-9]+", "_", x.lower()).strip("_") for x in parts) if p)
    return text if text and text[0].isalpha() else "p_" + text


def quoted_words(text: str, limit: int) -> str:
    """Someone else's words for a comment (a tool's description, a paragraph of the policy): between double
    quotes as JSON writes a string, so a quote in them cannot seem to end the quotation and go on in the
    drafter's voice, and every character that is not printable (a line break, which would end the comment,
    U+2028, a bidi override, a lone surrogate) as its ``\\u`` escape; at most ``limit`` characters of it."""
    out = "".join(c if c.isprintable() else _escape(c) for c in json.dumps(text[:limit], ensure_ascii=False))
    return out + ("..." if len(text) > limit else "")


def _escape(c: str) -> str:
    n = ord(c)
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    n -= 0x10000  # past the BMP: JSON's surrogate pair
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"
