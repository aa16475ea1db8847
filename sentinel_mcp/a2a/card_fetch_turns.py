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
again), ``MAX_QUEUED`` in all (beyond, the machine with the most names waiting gives up its fullest port's
newest: a machine of many before one of one, then a port of many before one of one; of equals, the one whose
turn comes last). So a name once waiting is served within ``MAX_QUEUED`` turns of its machine, and its machine
within a round of the machines waiting, whatever the flood's shape: it goes only if its machine is the fullest
and it is its newest (on a machine of one-name ports, a newcomer while the queue is full is the one that
goes: its ports are all alike, and it is heard again when announced again).

A name given its turn has ``GRANT_FOR`` seconds to use it (resolved again, checked); its machine's next
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
        while len(self._where) > MAX_QUEUED:
            self.forget(self._given_up())
        return name in self._where

    def _given_up(self) -> str:
        """The name that goes when too many wait: the machine waiting with the most names gives one (its
        share first), from its port with the most, its newest. Of equals, the one whose turn comes last (the
        newest, or the one served latest). Before, the first of equal ports went: a flood of one-name ports
        pushed out the name whose turn came next, and an agent on a machine of its own with it."""
        def count(ports: OrderedDict[str, OrderedDict[str, Waiting]]) -> int:
            return sum(len(names) for names in ports.values())

        # (max keeps the first of equals: the turn order reversed puts the last first)
        ports = max(reversed(self._machines.values()), key=count)
        names = max(reversed(ports.values()), key=len)
        return next(reversed(names))

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
