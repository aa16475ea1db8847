"""Whose an orchestrator's sub-task is.

A peer's free-form intent is offered to the orchestrator in a context of that peer's (``<peer>:<id>``:
``peer_threads``), and the orchestrator hands parts of it back to Sentinel as sub-tasks in that context.
Such a sub-task serves the peer: it runs as the peer's call (its reach, its consents, its policy), and the
orchestrator must be able to make it too (``GatewayPort.refusal_for``): least privilege, the intersection.
It ran as the orchestrator alone, and a peer read through it what it was never granted (the location, a
screen, a write). Only the orchestrator's own tasks are read this way (any other caller's context is its own
business), and naming a principal gains it nothing beyond its own grants: an id of that form naming no
principal reaches nothing (fail closed).
"""

from __future__ import annotations


def asking_principal(orchestrator: str | None, caller: str, context_id: str) -> str | None:
    """The principal a task of ``caller`` in ``context_id`` serves, when ``caller`` is the orchestrator and
    the context is in another principal's form; None: the caller's own task."""
    if orchestrator is None or caller != orchestrator:
        return None
    who, sep, rest = context_id.partition(":")
    return who if sep and who and rest and who != caller else None
