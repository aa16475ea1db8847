"""A rulebase file is read without quasi-quotations: SWI-Prolog's reader calls a ``{|Syntax||Text|}``'s
syntax (any one some module declared, as library(strings), html_write or js_write do) as a goal while it
reads, in the gateway's engine, before any check of the clause. None is declared there today, and the
rehearsal's child process reads a file first; the engine's own read must not depend on either."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)

CALLED = (
    "( catch(user:sn_test_qq_called, _, fail) -> C = true ; C = false ), "
    "sentinel_core:to_json_atom(json([c=C]), Out)"
)


async def test_a_declared_quasi_quotation_syntax_is_not_called_while_reading(tmp_path: Path) -> None:
    engine = shared_engine()
    # a syntax of the engine's own (as a library would declare one) that leaves a trace when it is called
    await engine.goal(
        "( current_predicate(user:sn_test_qq/4) -> true ; "
        "assertz(user:(sn_test_qq(_, _, _, x) :- assertz(user:sn_test_qq_called))), "
        "user:quasi_quotation_syntax(user:sn_test_qq) ), retractall(user:sn_test_qq_called)"
    )
    f = tmp_path / "rb.pl"
    f.write_text("fact(ok/1).\nx({|sn_test_qq||abc|}).\nguard('t__w', [x = X], ok(X)).\n")
    out = await engine.load("rb_test_qq", [str(f)])
    await engine.unload("rb_test_qq")
    assert await engine.json_query(CALLED) == {"c": "false"}
    assert [(e["line"], "quasi-quotations" in e["message"]) for e in out["errors"]] == [(2, True)], out
