"""Models still open when the interpreter exits are closed first.

llama-cpp-python frees a model in `Llama.__del__`; at interpreter exit that runs after its module globals are
gone and prints `TypeError: 'NoneType' object is not callable` for every model left open. An exit hook closes
them while everything still exists."""

from __future__ import annotations

import atexit
import weakref
from typing import Protocol


class Closable(Protocol):
    def close(self) -> None: ...


_open: weakref.WeakSet[Closable] = weakref.WeakSet()


def remember(model: Closable) -> None:
    """Close `model` at exit unless it is closed or collected before."""
    _open.add(model)


def forget(model: Closable) -> None:
    _open.discard(model)


def _close_all() -> None:
    for model in list(_open):
        try:
            model.close()
        except Exception:  # noqa: BLE001 - exiting anyway; one model's failure must not keep the others open
            pass


atexit.register(_close_all)
