"""``Metrics.observe`` builds a principal's latency map once, not a throw-away dict on every call (issue
21: ``self.latency.setdefault(who, {})`` built its default each time). Checked against main's ``observe``
(a copy below, as it stood at the fork point c6bb5127): over generated audit entries (principals past
``MAX_PRINCIPALS``, none, calls with and without a latency, routed and unrouted tools, tools past
``MAX_SERIES``) both leave the same calls, latencies and tool set; counted: the latency map is looked up,
never ``setdefault``-ed (on main: once a call)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from sentinel_mcp.gateway import metrics as metrics_module
from sentinel_mcp.gateway.metrics import MAX_PRINCIPALS, MAX_SERIES, UNROUTED, Histogram, Metrics


def _main_observe(self: Metrics, entry: Any) -> None:
    tool = entry.tool if entry.upstream else UNROUTED
    tool = tool if tool in self._tools or len(self._tools) < MAX_SERIES else "other"
    self._tools.add(tool)
    who = entry.principal
    calls = self.calls.get(who)
    if calls is None:
        if who is not None and len(self.calls) >= MAX_PRINCIPALS:
            who = None
        calls = self.calls.setdefault(who, {})
    key = (tool, entry.upstream or "", entry.origin, entry.decision, entry.outcome)
    calls[key] = calls.get(key, 0) + 1
    if entry.latency_ms is not None:
        hkey = (entry.upstream or "", entry.decision)
        hists = self.latency.setdefault(who, {})
        hist = hists.get(hkey)
        if hist is None:
            hist = hists[hkey] = Histogram()
        hist.observe(entry.latency_ms / 1000)


def _entries(rng: random.Random, n: int) -> list[Any]:
    out = []
    for _ in range(n):
        out.append(SimpleNamespace(
            tool=(f"t{rng.randint(0, MAX_SERIES + 500)}" if rng.random() < 0.6
                  else rng.choice(["a", "b", "c"])),
            upstream=rng.choice(["up", "other", "", None]),
            principal=None if rng.random() < 0.05 else f"p{rng.randint(0, MAX_PRINCIPALS + 100)}",
            origin=rng.choice(["client", "agent"]), decision=rng.choice(["allow", "deny", "confirm"]),
            outcome=rng.choice(["ok", "error", "denied"]),
            latency_ms=None if rng.random() < 0.2 else rng.choice([0.0, 0.4, 3.0, 70.0, 1e6])))
    return out


def _state(m: Metrics) -> Any:
    return (m.calls, sorted(m._tools, key=str),
            {who: {k: (h.counts, h.total, h.count) for k, h in hists.items()}
             for who, hists in m.latency.items()})


def test_observe_leaves_mains_figures() -> None:
    entries = _entries(random.Random(21), 20_000)
    mine, main = Metrics(), Metrics()
    for e in entries:
        mine.observe(e)
        _main_observe(main, e)
    assert _state(mine) == _state(main)
    # the bounds were reached
    assert len(main.calls) >= MAX_PRINCIPALS and None in main.latency and "other" in main._tools


class _CountedDict(dict):  # type: ignore[type-arg]
    setdefaults = 0

    def setdefault(self, *args: Any) -> Any:
        _CountedDict.setdefaults += 1
        return super().setdefault(*args)


def test_the_latency_map_is_not_setdefaulted_each_call() -> None:
    m = Metrics()
    m.latency = _CountedDict()
    entry = SimpleNamespace(tool="noop", upstream="up", principal="alice", origin="client", decision="allow",
                            outcome="ok", latency_ms=1.5)
    for _ in range(50):
        m.observe(entry)  # type: ignore[arg-type]
    assert m.latency["alice"][("up", "allow")].count == 50
    assert _CountedDict.setdefaults == 0
    assert metrics_module.Metrics.observe is not _main_observe
