"""Whose card is fetched next when a machine's fetch rate is spent (``card_fetch_budget.py``): the names whose
fetch was deferred wait here, and each fetch the machine may make goes to its ports in turn (round-robin),
and within a port to its names in turn, oldest first.

Why: deferred names waited in the browser's queue, each sleeping its own wait, and whichever woke first
took the machine's next fetch. One announcer on this machine under 500 names filled the queue with its
sleeping names (honest agents announced after them waited beyond it, forgotten before their turn) and woke
most often. Now a deferred name gives its place in the queue back and waits here; a name of a machine whose
names wait takes its turn behind them (its port joins the round), so an honest agent on its own port is
fetched within one round of the ports waiting, however many names another port announces.

Bounded: ``PER_PORT`` names a (machine, port) (its oldest kept: the others are heard again when announced
again), ``MAX_QUEUED`` in all (beyond, the fullest port's newest name goes: a port of many before one of
one). A name given its turn has ``GRANT_FOR`` seconds to use it (resolved again, checked); its machine's next
turn waits until it has, or its check ended (``done``)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from sentinel_mcp.a2a.card_fetch_budget import CardFetchBudget, fetch_key, port_key

PER_PORT = 16
MAX_QUEUED = 256
GRANT_FOR = 30.0


@dataclass
class Waiting:
    endpoint: str  # the base URL its fetch was deferred for
    check: Any  # what the browser runs to check it again (opaque here)


class FetchTurns:
    def __init__(self, budget: CardFetchBudget, clock: Callable[[], float] | None = None) -> None:
        self._budget = budget
        self._clock = clock or budget.clock
        # machine -> port -> name -> its wait (each level in turn order: served ones move to the end)
        self._machines: OrderedDict[str, OrderedDict[str, OrderedDict[str, Waiting]]] = OrderedDict()
        self._where: dict[str, tuple[str, str]] = {}  # name -> its (machine, port)
        self._granted: dict[str, tuple[str, float]] = {}  # machine -> the name given its turn, until when

    def __contains__(self, name: str) -> bool:
        return name in self._where

    def __len__(self) -> int:
        return len(self._where)

    def names(self) -> frozenset[str]:
        return frozenset(self._where)

    def at(self, endpoint: str) -> int:
        """Names waiting for the (machine, port) of ``endpoint``."""
        ports = self._machines.get(fetch_key(endpoint))
        return len(ports.get(port_key(endpoint), ())) if ports is not None else 0

    def waits_turn(self, name: str, endpoint: str) -> bool:
        """Whether a fetch for ``name`` from ``endpoint`` that the rate allows must still wait its turn: other
        names of that machine wait, or hold its turn."""
        machine = fetch_key(endpoint)
        granted = self._live_grant(machine)
        if granted is not None:
            return granted != name
        return bool(self._machines.get(machine))

    def add(self, name: str, endpoint: str, check: Any) -> bool:
        """``name``'s fetch from ``endpoint`` was deferred: it waits its turn (False: forgotten, its port's
        share is full)."""
        self.forget(name)
        machine, port = fetch_key(endpoint), port_key(endpoint)
        ports = self._machines.setdefault(machine, OrderedDict())
        names = ports.setdefault(port, OrderedDict())
        if len(names) >= PER_PORT:
            return False
        names[name] = Waiting(endpoint, check)
        self._where[name] = (machine, port)
        while len(self._where) > MAX_QUEUED:  # the fullest port's newest goes (of equals, the oldest port's)
            fullest = max((n for p in self._machines.values() for n in p.values()), key=len)
            self.forget(next(reversed(fullest)))
        return name in self._where

    def forget(self, name: str) -> None:
        where = self._where.pop(name, None)
        if where is None:
            return
        machine, port = where
        ports = self._machines[machine]
        ports[port].pop(name, None)
        if not ports[port]:
            del ports[port]
        if not ports:
            del self._machines[machine]

    def done(self, name: str) -> None:
        """``name``'s check ended (its fetch made, or not needed): its machine's turn passes on."""
        for machine, (holder, _) in list(self._granted.items()):
            if holder == name:
                del self._granted[machine]

    def next(self) -> tuple[str, Any] | float | None:
        """The name whose turn it is now (given the turn: the budget lets it fetch) and its check; else the
        seconds until one may be (None: none waits)."""
        soonest: float | None = None
        for machine in list(self._granted):  # (turns given and never used go, whoever is waiting)
            self._live_grant(machine)
        for machine in list(self._machines):
            if self._live_grant(machine) is not None:
                continue
            ports = self._machines[machine]
            for port in list(ports):
                for name, waiting in ports[port].items():
                    wait = self._budget.wait(name, waiting.endpoint)
                    if wait > 0:
                        soonest = wait if soonest is None else min(soonest, wait)
                        continue
                    self.forget(name)
                    if port in ports:
                        ports.move_to_end(port)  # the port's next name after every other port's
                    if machine in self._machines:
                        self._machines.move_to_end(machine)
                    self._granted[machine] = (name, self._clock() + GRANT_FOR)
                    return name, waiting.check
        return soonest

    def _live_grant(self, machine: str) -> str | None:
        granted = self._granted.get(machine)
        if granted is None:
            return None
        if self._clock() > granted[1]:  # not used in time (its check lost, or never came): the turn passes
            del self._granted[machine]
            return None
        return granted[0]
