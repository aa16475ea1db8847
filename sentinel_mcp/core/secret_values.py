"""A secret argument's value masked wherever a text quotes it, however the text's writer spelled it.

A question's text is written by a rulebase (``format/2`` with ``~w``/``~q``/``~a`` of any argument), a guard
or a built-in: none of them may print a value the tool declares secret (``redactor.secret_arguments_of``).
So the value itself is looked for in the finished text, in any escaped spelling a writer could give it (as
it is, as JSON writes it inside a string, as Prolog quotes an atom with ``~q``, or any of them quoted again:
each character may follow a run of backslashes). Every string inside a secret value
(an object's or a list's too) counts, and a number's text.

Short values: a value of ``_ANYWHERE`` characters or more is masked wherever it appears, glued to other
words too; a shorter one (a 2-digit PIN) only where it stands apart (no letter or digit touching it), so a
secret "12" does not mask the "12" of "2012" while "PIN 12?" reads "PIN [redacted 2 chars]?".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sentinel_mcp.core.redactor import mask

__all__ = ["mask_secret_values", "secret_strings"]

_ANYWHERE = 4
_MAX_STRINGS = 256  # a secret argument is a password or a key, not a document: bounded work per text


def secret_strings(value: Any) -> Iterator[str]:
    """Every text inside a secret value: strings (nested in objects and lists too) and numbers' texts."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from secret_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from secret_strings(v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield json.dumps(value)


def _spelled(secret: str) -> str:
    """A pattern of the value in any escaped spelling: each character may follow a run of backslashes, as
    JSON's string, Prolog's quoted atom (``~q``) and either of them quoted again write a quote or a
    backslash. A run of the value's own backslashes is one run of one or more: the pattern has no two
    quantifiers side by side, so a value of backslashes costs no backtracking."""
    out, run = [], False
    for ch in secret:
        if ch == "\\":
            run = True
            continue
        out.append((r"\\+" if run else r"\\*") + re.escape(ch))
        run = False
    return "".join(out) + (r"\\+" if run else "")


def mask_secret_values(text: str, secrets: Iterable[str], *, limit: int = _MAX_STRINGS) -> str:
    """``text`` with each secret (in any escaped spelling: ``_spelled``) put as ``[redacted N chars]``, N the
    value's length. Longer secrets first, so a secret that holds a shorter one is masked whole. At most
    ``limit`` secrets are read (a caller with a bounded list of many principals' values passes its length)."""
    wanted: dict[str, str] = {}
    for n, secret in enumerate(secrets):
        if n == limit:
            break
        if secret:
            wanted.setdefault(secret, mask(secret))
    # any escaped spelling of a value, its backslashes taken out, is the value with its own taken out: a
    # value not so in the text is not in it (a substring test: no pattern is built for it)
    bare = text.replace("\\", "")
    for secret in sorted(wanted, key=len, reverse=True):
        if secret.replace("\\", "") not in bare:
            continue
        pattern = _spelled(secret)
        if len(secret) < _ANYWHERE:
            pattern = rf"(?<![^\W_]){pattern}(?![^\W_])"
        masked = wanted[secret]
        text = re.sub(pattern, lambda _m: masked, text)  # a function: the mask is no template
    return text
