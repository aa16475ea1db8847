"""The phone's words (a tool result, a label an error quotes, the model's answer written from the screens)
inside text whose lines are Sentinel's own: the model's context, a run's summary. They never start a line of
their own that reads as Sentinel's ("Current screen:", "  2. click 'Send': done", "Sentinel: approved"):
a line is kept on one line, or each of its lines is quoted. Every line break ``str.splitlines`` knows counts
(\\r, U+2028, U+0085, \\x0b, ...): a reader or a model's tokenizer may take any of them as one."""

from __future__ import annotations

QUOTE = "| "


def one_line(text: str) -> str:
    """``text`` on one line: each line break is a space."""
    return " ".join(text.splitlines())


def quoted(text: str) -> str:
    """``text`` with each of its lines quoted."""
    return "\n".join(QUOTE + line for line in text.splitlines())
