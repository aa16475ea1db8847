"""``sentinel-mcp draft`` checks its draft before it offers it, with the checker ``check --connect`` and the
gateway's load use, against the tools it drafted from (by identity). A draft is built from hostile text (an
upstream's schemas, a policy document): any way that text finds into a clause is caught there, not by the
person who trusts the file. A draft the checker finds an error in is not written, and the errors are said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.policy import draft as draft_module

pytestmark = pytest.mark.timeout(90)

TOOLS = [
    {"name": "get_order", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
     "outputSchema": {"type": "object", "properties": {"status": {"type": "string"}}}},
    {"name": "cancel_order", "annotations": {"destructiveHint": True},
     "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                      "reason": {"type": "string"}}}},
]


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    (tmp_path / "policy.md").write_text("# Shop\n\n## Cancel\n\nCancel an order only when it is pending.\n")
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    out = tmp_path / "rulebases" / "shop.pl"
    out.parent.mkdir()
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json"), "-o", str(out)])
    return code, capsys.readouterr().err, out


def test_a_draft_that_checks_clean_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err, out = _run(tmp_path, capsys)
    assert code == 0 and out.exists(), err
    assert "guard('shop__cancel_order'" in out.read_text()


@pytest.mark.parametrize(
    "escaped",
    [
        "guard('shop__cancel_order', [], undefined_goal).\n",  # an undefined predicate
        "guard('shop__cancel_ordr', [], true).\n",  # a tool the server does not have
        "binding(x(S), tool('shop__cancel_order', []), extract([S = '/s']), []).\n",  # a write as a binding
        # a "not yet" where an unknown outcome of the write is not seen (a second cancel after a timeout)
        "fact(cancelled_x/1). effect('shop__cancel_order', [order_id = O], [establish(cancelled_x(O))]).\n"
        "guard('shop__get_order', [order_id = O], ( aggregate_all(count, cancelled_x(O), N), N =:= 0 )).\n",
    ],
)
def test_a_draft_the_checker_finds_an_error_in_is_not_offered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, escaped: str
) -> None:
    """Stands for any hostile text that once reached a clause (a property name, a $ref into a default):
    the clause the draft would have held."""
    real = draft_module.draft_rulebase

    def leaky(*args: Any, **kwargs: Any) -> draft_module.Draft:
        d = real(*args, **kwargs)
        d.text += escaped
        return d

    monkeypatch.setattr(draft_module, "draft_rulebase", leaky)
    code, err, out = _run(tmp_path, capsys)
    assert code == 1 and not out.exists(), err
    assert "the draft fails its check" in err and "error" in err, err
    assert not (tmp_path / "pwned").exists()


def test_a_directive_in_a_draft_runs_nothing_and_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = draft_module.draft_rulebase

    def leaky(*args: Any, **kwargs: Any) -> draft_module.Draft:
        d = real(*args, **kwargs)
        d.text += f":- initialization(shell('touch {tmp_path / 'pwned'}')).\n"
        return d

    monkeypatch.setattr(draft_module, "draft_rulebase", leaky)
    code, err, out = _run(tmp_path, capsys)
    assert "directive not executed" in err, err
    assert not (tmp_path / "pwned").exists()
    # the drafter writes none: a directive is hostile text that got out, and the draft is not offered
    assert code == 1 and not out.exists(), err
