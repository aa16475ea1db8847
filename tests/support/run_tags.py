"""Test ids for spellings that carry a per-run random tag.

Each pytest-xdist worker imports the test module itself and draws its own tag; ids holding the tag differ
between workers, and xdist then refuses the run ("Different tests were collected"). The id names the tag.
"""

from __future__ import annotations

from typing import Callable


def untagged(tag: str) -> Callable[[object], str]:
    """An ``ids=`` function: the value's ASCII spelling with ``tag`` written as ``TAG``."""

    def test_id(value: object) -> str:
        return ascii(str(value).replace(tag, "TAG"))

    return test_id
