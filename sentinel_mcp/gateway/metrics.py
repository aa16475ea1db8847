"""Prometheus metrics at ``/metrics`` (text exposition format 0.0.4): calls, decisions, latencies, upstream
health.

Fed by every audited decision (``Gateway.observers``), so it counts exactly what the audit log records. Plain
dicts on the hot path; label sets are bounded: a tool label is a name the catalog routed (every other name a
caller sends counts as ``tool="unknown"``), and past ``MAX_SERIES`` as ``tool="other"``.

Every series is kept per principal (never shown as a label) and rendered for a viewer: the operator
(``viewer=None``) sees all principals' calls summed, and the upstreams' figures; any other principal sees
its own calls only (``viewer=<name>``): the counts, decisions and latencies of alice's calls are not bob's
to read, nor are the upstreams' shared figures (calls in flight, reconnects), which move with everyone's.
Past ``MAX_PRINCIPALS`` names, a principal's calls count for the operator alone.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Iterable

from sentinel_mcp.gateway.unfit_notices import LABELS, MALFORMED, UNKNOWN

if TYPE_CHECKING:
    from sentinel_mcp.gateway.audit import AuditEntry
    from sentinel_mcp.gateway.catalog_health import CatalogHealth

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
MAX_SERIES = 2000
MAX_PRINCIPALS = 1024  # names kept apart; past them calls count under None, which only the operator reads
UNROUTED = "unknown"  # the tool label of every call the catalog did not route
STATES = ("connecting", "ready", "backoff", "stopped")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return "{" + inner + "}" if inner else ""


class Histogram:
    __slots__ = ("counts", "total", "count")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds
        self.count += 1


CallKey = tuple[str, str, str, str, str]  # (tool, upstream, origin, decision, outcome)
LatencyKey = tuple[str, str]  # (upstream, decision)


class Metrics:
    def __init__(self) -> None:
        # principal (None: past MAX_PRINCIPALS, or a call with none) -> (tool, ...) -> count
        self.calls: dict[str | None, dict[CallKey, int]] = {}
        # principal -> (upstream, decision) -> seconds
        self.latency: dict[str | None, dict[LatencyKey, Histogram]] = {}
        self._tools: set[str] = set()

    def observe(self, entry: "AuditEntry") -> None:
        # a name the catalog did not route (no upstream: unknown, out of the caller's reach, refused before
        # routing) is the caller's own text: one label for all of them, so made-up names neither take the
        # bounded series from real tools nor show what one caller typed to every reader of /metrics
        tool = entry.tool if entry.upstream else UNROUTED
        if tool not in self._tools:  # a known tool (nearly every call) adds nothing
            if len(self._tools) >= MAX_SERIES:
                tool = "other"
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
            hists = self.latency.get(who)
            if hists is None:  # not ``setdefault``: its default dict would be built on every call
                hists = self.latency[who] = {}
            hist = hists.get(hkey)
            if hist is None:
                hist = hists[hkey] = Histogram()
            hist.observe(entry.latency_ms / 1000)

    def _calls_of(self, viewer: str | None) -> dict[CallKey, int]:
        """``viewer``'s own counts, or (None: the operator) every principal's summed."""
        if viewer is not None:
            return self.calls.get(viewer, {})
        whole: dict[CallKey, int] = {}
        for calls in self.calls.values():
            for key, n in calls.items():
                whole[key] = whole.get(key, 0) + n
        return whole

    def _latency_of(self, viewer: str | None) -> dict[LatencyKey, Histogram]:
        if viewer is not None:
            return self.latency.get(viewer, {})
        whole: dict[LatencyKey, Histogram] = {}
        for hists in self.latency.values():
            for key, h in hists.items():
                sum_ = whole.get(key)
                if sum_ is None:
                    sum_ = whole[key] = Histogram()
                sum_.counts = [a + b for a, b in zip(sum_.counts, h.counts)]
                sum_.total += h.total
                sum_.count += h.count
        return whole

    def render(self, catalog: "CatalogHealth | None" = None, *, viewer: str | None = None) -> str:
        """The exposition as ``viewer`` may read it: None is the operator (every principal's calls and the
        upstreams' figures); a principal's name, its own calls only (``catalog`` is not shown to it)."""
        out: list[str] = []
        own_calls = self._calls_of(viewer)
        own_latency = self._latency_of(viewer)
        out += [
            "# HELP sentinel_calls_total Tool calls by tool, upstream, origin, decision and outcome.",
            "# TYPE sentinel_calls_total counter",
        ]
        for (tool, upstream, origin, decision, outcome), n in sorted(own_calls.items()):
            pairs = [("tool", tool), ("upstream", upstream), ("origin", origin)]
            labels = _labels([*pairs, ("decision", decision), ("outcome", outcome)])
            out.append(f"sentinel_calls_total{labels} {n}")
        decisions: dict[str, int] = {}
        for (_, _, _, decision, _), n in own_calls.items():
            decisions[decision] = decisions.get(decision, 0) + n
        out += [
            "# HELP sentinel_decisions_total Guard decisions (allow, deny, ask, error).",
            "# TYPE sentinel_decisions_total counter",
        ]
        out += [
            f"sentinel_decisions_total{_labels([('decision', d)])} {n}" for d, n in sorted(decisions.items())
        ]
        out += [
            "# HELP sentinel_call_duration_seconds Time from a call's arrival to its outcome.",
            "# TYPE sentinel_call_duration_seconds histogram",
        ]
        for (upstream, decision), h in sorted(own_latency.items()):
            base = [("upstream", upstream), ("decision", decision)]
            running = 0
            for bound, count in zip((*BUCKETS, float("inf")), h.counts):
                running += count
                le = "+Inf" if bound == float("inf") else repr(bound)
                out.append(f"sentinel_call_duration_seconds_bucket{_labels([*base, ('le', le)])} {running}")
            out.append(f"sentinel_call_duration_seconds_sum{_labels(base)} {h.total:.6f}")
            out.append(f"sentinel_call_duration_seconds_count{_labels(base)} {h.count}")
        if catalog is not None and viewer is None:
            out += self._upstreams(catalog)
        return "\n".join(out) + "\n"

    @staticmethod
    def _upstreams(catalog: "CatalogHealth") -> list[str]:
        ups = sorted(catalog.upstreams(), key=lambda u: u.name)
        out = [
            "# HELP sentinel_upstream_up 1 when the upstream is connected and ready.",
            "# TYPE sentinel_upstream_up gauge",
        ]
        out += [
            f"sentinel_upstream_up{_labels([('upstream', u.name)])} {int(u.state == 'ready')}" for u in ups
        ]
        out += [
            "# HELP sentinel_upstream_state The upstream's connection state (one series per state).",
            "# TYPE sentinel_upstream_state gauge",
        ]
        for u in ups:
            out += [
                f"sentinel_upstream_state{_labels([('upstream', u.name), ('state', s)])} {int(u.state == s)}"
                for s in STATES
            ]
        out += [
            "# HELP sentinel_upstream_reconnects_total Reconnects since start.",
            "# TYPE sentinel_upstream_reconnects_total counter",
        ]
        out += [
            f"sentinel_upstream_reconnects_total{_labels([('upstream', u.name)])} {u.reconnects}" for u in ups
        ]
        out += [
            "# HELP sentinel_upstream_breaker_open 1 while the upstream's circuit breaker refuses calls.",
            "# TYPE sentinel_upstream_breaker_open gauge",
        ]
        out += [
            f"sentinel_upstream_breaker_open{_labels([('upstream', u.name)])} "
            f"{int(u.breaker == 'open')}"
            for u in ups
        ]
        out += [
            "# HELP sentinel_upstream_tools Tools the upstream offers.",
            "# TYPE sentinel_upstream_tools gauge",
        ]
        out += [f"sentinel_upstream_tools{_labels([('upstream', u.name)])} {u.tools}" for u in ups]
        for name, kind, what, value in (
            ("calls_in_flight", "gauge", "Tool calls sent to the upstream and not yet answered.",
             lambda u: u.calls_in_flight),
            ("calls_waiting", "gauge", "Tool calls waiting for one of the upstream's max_in_flight slots.",
             lambda u: u.calls_waiting),
            ("calls_waiting_turn", "gauge",
             "Tool calls waiting while another caller's calls take their turn at the upstream.",
             lambda u: u.calls_waiting_turn),
            ("notices_dropped_total", "counter",
             "The upstream's log lines and progress to clients dropped at the notice queue's bounds.",
             lambda u: u.notices_dropped),
            ("pushes_refused_total", "counter",
             "The upstream's requests (elicitation, sampling, roots) refused at once: too many waiting.",
             lambda u: u.pushes_refused),
            ("pushes_not_permitted_total", "counter",
             "The upstream's requests of a kind its relays setting does not permit, refused.",
             lambda u: u.pushes_not_permitted),
            ("updates_unsubscribed_total", "counter",
             "The upstream's resources/updated for URIs no client subscribed to through it, dropped.",
             lambda u: u.updates_unsubscribed),
            ("pushes_unrouted_total", "counter",
             "The upstream's log lines, requests and progress attributed to no call, so shown to no client.",
             lambda u: u.pushes_unrouted),
            ("notice_pauses_total", "counter",
             "Times the upstream's reading paused: more notices reaching no client than its budget.",
             lambda u: u.notice_pauses),
            ("principals_refused_total", "counter",
             "Principals refused a session of their own past the upstream's max_principals (per_principal).",
             lambda u: u.principals_refused),
        ):
            out += [f"# HELP sentinel_upstream_{name} {what}", f"# TYPE sentinel_upstream_{name} {kind}"]
            out += [f"sentinel_upstream_{name}{_labels([('upstream', u.name)])} {value(u)}" for u in ups]
        out += ["# HELP sentinel_upstream_notices_unfit_total The upstream's notices no client can take, by "
                "why (a method no era defines; params not of their method's shape).",
                "# TYPE sentinel_upstream_notices_unfit_total counter"]
        for u in ups:  # the reasons are Sentinel's two words, never what the upstream sent
            for reason, n in ((LABELS[UNKNOWN], u.notices_unknown), (LABELS[MALFORMED], u.notices_malformed)):
                labels = _labels([("upstream", u.name), ("reason", reason)])
                out.append(f"sentinel_upstream_notices_unfit_total{labels} {n}")
        return out
