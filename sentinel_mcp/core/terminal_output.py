"""The command line's output edge: what a ``sentinel-mcp`` command writes to the terminal is inert.

A command prints values other people chose (a client's session label, a fact a tool's result taught, an
upstream's tool name, a peer's card, a rulebase someone else wrote, rows another instance stored). Each
command marks the values it knows are foreign (``display_text.safe_text``), but one forgotten field is
enough for an escape to clear the screen, write the clipboard (OSC 52), plant a link (OSC 8), overwrite a
line (``\\r``, backspaces) or reverse one (U+202E). So both of the CLI's streams pass through here, whatever
the command prints: every character ``display_text`` hides (controls, C1, format and direction characters,
separators, unassigned) is written as ``⟨U+XXXX⟩``; line feeds and tabs stay. Text already marked has none
left, so it passes unchanged; JSON written with ``ensure_ascii`` has none either.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any, Iterator, TextIO

from sentinel_mcp.core.display_text import is_hidden

_KEPT = frozenset("\n\t")


def inert(text: str) -> str:
    """``text`` with every character a terminal could act on, or a person could not see, shown as a mark."""
    if text.isprintable():
        return text  # the common case: nothing to mark
    return "".join(f"⟨U+{ord(ch):04X}⟩" if ch not in _KEPT and is_hidden(ch) else ch for ch in text)


class InertStream:
    """A text stream that writes through ``inert``; everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(inert(text))
        return len(text)  # what was asked to be written (print and the logging handler check nothing more)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def inert_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` written through ``inert`` within, as they were after."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(out), InertStream(err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def reader_gone() -> None:
    """Nothing more reaches stdout (its reader stopped reading): the interpreter's last flush would fail again
    and complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a file (a test's capture): nothing to quiet


def only_broken_pipes(error: BaseException) -> bool:
    """A broken pipe, or a group of errors (a task group's: a stdio server's writer) holding only those: the
    reader is gone, whichever task met it first."""
    if isinstance(error, BrokenPipeError):
        return True
    if isinstance(error, BaseExceptionGroup):
        return all(only_broken_pipes(e) for e in error.exceptions)
    return False
