"""Whose credentials a task resumed from its stored round is run under: the check it resumes with.

A task waiting for an answer keeps the stamp of the request that started (or last continued) it
(``PendingCall.credential``, ``identity/credential_stamp.py``): the process that took that request kept a
closure too, but a task read back (after a restart, on another replica of one store) has only the stamp.
Resumed without a new request of its caller (the person's answer in the console), its call is sent only
while that stamp still proves its owner; a stamp that cannot be proved here, or a missing one where the
owner's credentials can lapse (a row from before stamps, or one whose stamp was taken out: a token file, a
client certificate, an owner no resolver names now), fails closed.
"""

from __future__ import annotations

from typing import Any, Callable

from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.identity.credential_stamp import StampCheck
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed

Check = Callable[[], Any]


def resumed_check(authenticator: Authenticator | None, record: TaskRecord,
                  pending: PendingCall) -> Check | None:
    """The check ``record``'s call is sent under when it resumes without a request of its caller."""
    if record.recheck is not None:  # this process took the request: its own check
        return record.recheck
    stamp = pending.credential
    if stamp is not None:
        if authenticator is None or not isinstance(stamp, dict) or stamp.get("principal") != record.owner:
            return _refused("the credentials that started it cannot be proved here")
        return StampCheck(authenticator, stamp)
    # a row from before stamps (or one whose stamp was taken out): unchecked only for an owner whose every
    # way in holds for the process's life (fixed tokens of the config); a token file, a client certificate,
    # a resolver that cannot say whom it names, an owner nobody signs in as now: refused
    if authenticator is not None and not authenticator.lasts_named(record.owner):
        return _refused("the credentials that started it were not recorded, and its owner's can lapse")
    return None  # credentials that hold for the process's life (or none: stdio)


def _refused(why: str) -> Check:
    def check() -> Any:
        raise AuthFailed(why)

    return check
