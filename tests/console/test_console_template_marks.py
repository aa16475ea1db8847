"""Every value a console page shows goes through the one marker (``web.shown`` / ``shown_id``: bidi,
zero-width and control characters shown as ``⟨U+XXXX⟩``), or is one reviewed here as never from outside
(red team "rt-limits7").

What broke: some values were HTML-escaped but not marked: an audit row's ``decision`` and ``chain_status``,
a fact's ``provenance`` (the session page and every proof tree), a build's and a step's ``state``, a pin's
changed field names, a replay's recorded and candidate decisions, a rulebase version's name, a principal's
name. Escaping keeps U+202E: a stored ``decision`` of ``"\u202eyned"`` read "deny" as "allow" reads "wolla".
Each is marked now; the source check below fails on any new ``{{ value }}`` that is neither marked nor
reviewed, and the render checks show the marker at work on the values named above."""

from __future__ import annotations

import html
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from sentinel_mcp.console import web

TEMPLATES = Path(web.__file__).resolve().parent / "templates"
OUTPUT = re.compile(r"{{(.*?)}}", re.S)
# filters whose output carries no character from outside unmarked (a marker, a time, a number, a class word,
# a URL-encoded or sent form value)
MARKING = re.compile(r"\|\s*(shown|shown_id|when|remaining|css_word|sent_value|segment|routable|urlencode|"
                     r"length|round|int)\b")
# (template, expression) -> why it is shown as it is: Sentinel's own numbers, names and constants, or a
# value that must round-trip unchanged in an attribute (a form's field name, a hidden input)
REVIEWED: dict[tuple[str, str], str] = {
    **{("_macros.html", e): "a count" for e in ("pairs|length - max_arguments", "pairs|length",
                                                "'s' if pairs|length - max_arguments != 1")},
    ("_macros.html", "tree(c, live)"): "a macro: its own values are marked within",
    **{("activity.html", e): "a number Sentinel formats" for e in (
        "'%.1f'|format(r.latency_ms) if r.latency_ms is not none else ''",
        "'%.1f'|format(r.timings.get(s, 0))")},
    ("activity.html", "'ok' if r.chain_status == 'verified' else 'bad'"): "a constant",
    **{(t, e): "a constant of audit_seal (tampered, unsigned), set by the reader, never from the row"
       for t, e in (("activity.html", "r.seal"), ("proof.html", "row.seal"))},
    ("activity.html", "s"): "a stage name of audit_view.STAGES",
    **{("activity.html", e): "the viewer's own filter, round-tripped in its input's value"
       for e in ("filters.principal", "filters.session", "filters.since", "filters.tool", "filters.until")},
    ("activity.html", "c"): "a choice of Sentinel's filter list", ("activity.html", "d"): "a decision choice",
    ("agent_run.html", "'%.1f'|format(run.finished - run.started)"): "a number",
    ("agent_run.html", "arguments(s.get('arguments'))"): "a macro: marked within",
    ("agent_run.html", "arguments(s.get('decision'))"): "a macro: marked within",
    ("agent_run.html", "loop.index"): "a count", ("agent_run.html", "run.tokens"): "a count",
    ("agent_run.html", "s.get('seconds')"): "a number", ("agent_run.html", "s.n"): "a count",
    ("agent_runs.html", "r.steps"): "a count", ("agent_runs.html", "r.tokens"): "a count",
    **{(t, "csrf"): "Sentinel's token" for t in ("base.html", "consents.html", "inbox.html", "pin.html",
                                                 "policy.html", "session.html")},
    ("base.html", "kind"): "a live-count kind", ("base.html", "n"): "a count",
    ("base.html", "path"): "a route",
    **{("build.html", e): "a count" for e in ("done", "files|length", "model_calls", "task.completion_tokens",
                                              "task.prompt_tokens", "total or 1", "total", "missing_calls",
                                              "missing_steps")},
    # a count, or "?" where it is withheld as unsigned (a server store's row edited in SQL)
    **{("build.html", f'{e} if {e} is not none else "?"'): "a count or '?'"
       for e in ("model_calls", "task.completion_tokens", "task.prompt_tokens")},
    ("build_file.html", "content"): "marked in builds_pages (safe_text, its lines kept)",
    **{("builds.html", e): "a count" for e in ("t.done", "t.total or 1", "t.total")},
    ("consents.html", "max_kind"): "a constant", ("consents.html", "max_purpose"): "a constant",
    ("consents.html", "s.max_retention"): "a number", ("consents.html", "s.scope.value"): "an enum's value",
    ("consents.html", "s.sensor.value"): "an enum's value",
    ("inbox.html", "'denied' if i.denied else 'approved'"): "a constant",
    ("inbox.html", "'number' if f.kind == 'number' else 'text'"): "a constant",
    ("inbox.html", "arguments(item.arguments, card_chars if item.whole else cut_value, "
                   "card_chars if item.whole else cut_name)"): "a macro: marked within",
    ("inbox.html", "item.look_alikes"): "a count",
    ("inbox.html", "f.name"): "a form field's name (q<n>.<key>), round-tripped; its title is shown marked",
    ("inbox.html", "item.asked"): "a hidden input, round-tripped", ("inbox.html", "item.id"): "Sentinel's id",
    ("inbox.html", "q.message"): "Marked by the core (asking.py): marked once, not twice",
    ("inbox.html", "value"): "an option's value, round-tripped; its label is shown marked",
    ("inbox.html", "loop.index"): "a count", ("inbox.html", "max_reply"): "a constant",
    ("inbox.html", "max_text"): "a constant", ("inbox.html", "unlisted"): "a count",
    ("login.html", "login_csrf"): "Sentinel's token", ("login_once.html", "login_csrf"): "Sentinel's token",
    ("login_once.html", "token"): "the link's own token, round-tripped in its input",
    ("pin.html", "f.held"): "ASCII-escaped JSON (pins_pages._text)",
    ("pin.html", "f.pinned"): "ASCII-escaped JSON (pins_pages._text)",
    ("pin.html", "pin.held_whole"): "ASCII-escaped JSON (pins_pages._text)",
    ("pin.html", "pin.digest"): "a hex digest", ("pin.html", "pin.pinned_digest"): "a hex digest",
    ("pin.html", "pin.tool"): "a hidden input, round-tripped; shown marked elsewhere on the page",
    ("pins.html", "more"): "a count",
    ("policy.html", "candidate"): "the owner's candidate in its textarea, edited as it is",
    ("policy.html", "current.version"): "a hex digest",
    ("policy.html", "f"): "a rulebase file of the owner's",
    ("policy.html", "f.name"): "a rulebase file's name, round-tripped in a form",
    ("policy.html", "name"): "a rulebase file's name (an included one's as its include gives it), "
                             "round-tripped in a form and in the address: shown marked beside it",
    ("policy.html", "holder.poll_interval"): "a number", ("policy.html", "out_of_reach"): "a count",
    ("policy.html", "since"): "a count", ("policy.html", "report.limits"): "Sentinel's own text",
    ("policy.html", "tree(after, none)"): "a macro: marked within",
    ("policy.html", "tree(before, none)"): "a macro: marked within",
    **{("policy.html", e): "a count or digest" for e in (
        "current.info.askables|length", "current.info.bindings|length", "current.info.guards|length",
        "report.candidate_version", "report.changes|length", "report.current_version", "report.examined",
        "report.skipped_default", "report.skipped_other|length", "report.unreproducible|length")},
    ("policy_history.html", "'ok' if l.ok else 'bad'"): "a constant",
    ("policy_history.html", "holder.poll_interval"): "a number",
    ("policy_history.html", "v"): "an option's value, round-tripped; its label is shown marked",
    ("problem.html", "message"): "Sentinel's refusal, outside parts marked where it is composed (compose)",
    ("proof.html", "'%.1f'|format(row.latency_ms)"): "a number",
    ("proof.html", "'%.1f'|format(row.timings.get(s, 0))"): "a number",
    ("proof.html", "'ok' if row.chain_status == 'verified' else 'bad'"): "a constant",
    ("proof.html", "arguments(row.arguments)"): "a macro: marked within",
    ("proof.html", "s"): "a stage name of audit_view.STAGES", ("proof.html", "tree(root, live)"): "a macro",
    ("session.html", "unlisted"): "a count", ("session.html", "wanted"): "a count",
    ("sessions.html", "n"): "a count",
    ("upstreams.html", "'s' if held != 1"): "a constant",
    ("upstreams.html", "'their definitions' if held != 1 else 'its definition'"): "a constant",
    ("upstreams.html", "held"): "a count", ("upstreams.html", "u.breaker"): "Sentinel's breaker state",
    ("upstreams.html", "u.reconnects"): "a count", ("upstreams.html", "u.state"): "Sentinel's state word",
    ("upstreams.html", "'—' if u.reconnects is none else u.reconnects"): "a count, or a dash (withheld)",
}


def unmarked() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(TEMPLATES.glob("*.html")):
        for expr in OUTPUT.findall(path.read_text()):
            expr = " ".join(expr.split())
            if not MARKING.search(expr) or expr.startswith("'%.1f'|format"):
                found.add((path.name, expr))
    return found


def test_every_value_a_page_shows_is_marked_or_reviewed():
    # model.html shows the local model's own figures (counts, sizes, seconds) and nothing else
    found = {k for k in unmarked() if k[0] != "model.html" or "model." not in k[1]}
    new = sorted(found - set(REVIEWED))
    assert not new, f"shown unmarked and not reviewed (mark it with |shown, or review it here): {new}"


HOSTILE = "al\u202elow\u200b"


def render_macro(name: str, *args: object) -> str:
    module = web._environment().get_template("_macros.html").module
    return html.unescape(str(getattr(module, name)(*args)))


@pytest.mark.parametrize("where", ["kind", "provenance"])
def test_a_proof_trees_kind_and_a_facts_provenance_are_marked(where: str):
    node = SimpleNamespace(kind=HOSTILE if where == "kind" else "fact", label="x", note=None, children=[],
                           fact="f1")
    live = {"f1": SimpleNamespace(expires_at=None, provenance=HOSTILE if where == "provenance" else "user")}
    out = render_macro("tree", node, live)
    assert "\u202e" not in out and "\u200b" not in out, out
    assert "⟨U+202E⟩" in out and "⟨U+200B⟩" in out, out


@pytest.mark.parametrize("template, field, snippet", [
    ("activity.html", "decision", '<span class="decision">{{ r.decision|shown(40) }}</span>'),
    ("session.html", "provenance", "{{ f.provenance|shown(100) }}"),
    ("proof.html", "decision", "{{ row.decision|shown(40) }}"),
    ("build.html", "state", "{{ task.state|shown(40) }}"),
])
def test_the_named_values_render_marked(template: str, field: str, snippet: str):
    source = (TEMPLATES / template).read_text()
    assert snippet in source, (template, snippet)
    env = web._environment()
    out = html.unescape(env.from_string(snippet).render(
        r=SimpleNamespace(decision=HOSTILE), f=SimpleNamespace(provenance=HOSTILE),
        row=SimpleNamespace(decision=HOSTILE), task=SimpleNamespace(state=HOSTILE)))
    assert "\u202e" not in out and "⟨U+202E⟩" in out, out
