"""Numbers on the command line, checked by argparse so a wrong one is a one-line usage error: a count reaches
SQLite's LIMIT, where 26 digits overflow (a traceback) and -1 means no limit at all."""

from __future__ import annotations

import argparse

MAX_COUNT = 1_000_000_000


def count(text: str) -> int:
    """A whole number from 1 to MAX_COUNT."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1 to {MAX_COUNT:,}")
    return value
