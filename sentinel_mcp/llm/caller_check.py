"""The caller's credential check, asked again while its call waits for the model and while it runs.

A call of the local model may wait long for its turn (another party's generations, up to
``max_generation_seconds`` each) and then run for as long. The gateway checked the caller once, before the
built-in got the call; a token rotated or a certificate revoked meanwhile still had its queued calls
computed, to the end. The built-in takes the call's check along (``core/caller_checks.check_of``) and asks it
when the call's turn of the model comes and before each chunk of work (``generation_clock``): a check that
fails (or raises anything: it fails closed) ends the call ``CredentialsLapsed``.

The check reads followed token files and may run their change hooks: it is always asked on the event loop,
from a generation's worker thread through ``anyio.from_thread``, never on the worker itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.from_thread

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.llm.errors import CredentialsLapsed

Check = Callable[[], Any]
OUTCOME = "credentials_lapsed"  # the audit row's outcome, as the gateway's own refusal of a lapsed call


def lapsed(check: Check | None, where: str) -> CredentialsLapsed | None:
    """The error when ``check`` says the caller's credentials no longer hold (None: they hold, or there is no
    check: credentials that hold for the process's life). On the event loop."""
    if check is None:
        return None
    try:
        check()
    except Exception as e:  # noqa: BLE001 - AuthFailed, or a check that could not answer: either fails closed
        return CredentialsLapsed(compose(
            f"{OUTCOME}: the credentials this call was sent with no longer hold (", safe_text(str(e), 200),
            f"); it was stopped {where} and nothing more was computed for it",
        ))
    return None


def ask(check: Check | None, where: str) -> None:
    """Raise ``CredentialsLapsed`` when ``check`` fails. On the event loop."""
    error = lapsed(check, where)
    if error is not None:
        raise error


def ask_from_worker(check: Check | None, where: str) -> CredentialsLapsed | None:
    """``lapsed``, from a worker thread started by ``anyio.to_thread``: the check runs on the event loop."""
    if check is None:
        return None
    try:
        return anyio.from_thread.run_sync(lapsed, check, where)
    except RuntimeError:  # not a thread of an event loop (a blocking in-process caller): asked here
        return lapsed(check, where)
