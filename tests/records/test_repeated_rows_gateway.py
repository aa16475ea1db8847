"""Through a real gateway (a recorder upstream in its own process, a rulebase proved by SWI-Prolog, SQLite):
the audit rows and the answers of a set of calls (allowed with a proof, denied, asked, refused arguments,
an unknown tool, hostile texts: cards, IBANs, codes, secrets, lone surrogates, NULs, a megabyte) are the same
whether a call's outcome row takes its decision row's redacted arguments and proof (``audit_repeats.py``) or
redacts them again (as before)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.audit import AuditLog, redact_entry
from sentinel_mcp.gateway.audit_repeats import RepeatedRows

from .rig import RECORDER, audit_rows

RULES = """
guard('rec__echo', [text = T], require(\\+ sub_atom(T, _, _, _, forbidden), 'the text is forbidden')).
guard('rec__do', [mark = M], confirmed('Do ~w?', [M])).
"""
TEXTS = ["hello", "4111 1111 1111 1111", "pay to DE89 3704 0044 0532 0130 00", "Kartenprüfnummer: 737",
         "Twój kod482913", "password=hunter2hunter2", "sk-live-0123456789abcdef0123", "a\u0000b",
         "\u202egnp.exe", "forbidden words", "é" * 200, "x" * 1_000_000]
CALLS: list[tuple[str, dict[str, Any]]] = [
    *(("rec__echo", {"text": t}) for t in TEXTS),
    ("rec__echo", {"text": ["4000", "0566", "5566", "5556"]}),  # refused: a list for a string
    ("rec__echo", {"text": "x", "password": "hunter2hunter2"}),  # refused: a key it does not declare
    ("rec__do", {"mark": "m1"}),  # asked
    ("rec__nothing", {"a": "4111 1111 1111 1111"}),  # unknown
]
COLUMNS = ("event", "decision", "outcome", "tool", "upstream", "origin", "arg_digest", "arguments", "reason",
           "proof", "error", "policy_version", "principal")


async def _run(tmp: Path) -> tuple[list[Any], list[tuple[Any, ...]]]:
    rules = tmp / "rec.pl"
    rules.write_text(RULES)
    config = parse_config({"mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER]}},
                           "sentinel": {"data_dir": str(tmp / "data"), "builtins": [],
                                        "rulebases": [str(rules)]}},
                          source="<test>", base_dir=tmp)
    answers = []
    async with running_gateway(config) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server) as c:
            for name, arguments in CALLS:
                r = await c.call_tool(name, arguments)
                answers.append((r.is_error, [b.model_dump(mode="json") for b in r.content],
                                r.structured_content))
    rows = [tuple(_same_run(r, k) for k in COLUMNS) for r in audit_rows(config.store_path)]
    return answers, rows


def _same_run(row: dict[str, Any], column: str) -> Any:
    """A column as two runs can compare it: the rulebase's version (its file's path is in it) and Prolog's
    variable numbers left out."""
    value = row[column]
    if column == "policy_version":
        return value is not None
    if column == "proof" and value is not None:
        value = re.sub(r'"rulebase": "[0-9a-f]{64}"', '"rulebase": "R"', value)
        value = re.sub(r"\b_[0-9]+\b", "_V", value)
    return value


async def test_rows_and_answers_are_the_same_with_and_without_repeats(tmp_path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    taken: list[bool] = []
    differ: list[Any] = []
    real_take, real_row = RepeatedRows.take, AuditLog.row

    def counted(self: RepeatedRows, entry: Any) -> Any:
        got = real_take(self, entry)
        taken.append(got is not None)
        return got

    def checked(self: AuditLog, entry: Any) -> Any:
        # the row the redactor gives this entry alone (another redactor: nothing repeated), and the stored one
        alone = real_row(AuditLog(self.path, chain=self.chain, redactor=lambda e: redact_entry(e)), entry)
        row = real_row(self, entry)
        if row != alone:
            differ.append((row, alone))
        return row

    monkeypatch.setattr(RepeatedRows, "take", counted)
    monkeypatch.setattr(AuditLog, "row", checked)
    answers, rows = await _run(tmp_path / "a")
    assert not differ, differ[:3]
    assert sum(taken) >= 8, taken  # the allowed calls' outcome rows took their decision rows' work
    monkeypatch.setattr(RepeatedRows, "take", lambda self, entry: None)  # as before: every row alone
    answers_before, rows_before = await _run(tmp_path / "b")
    assert answers == answers_before
    assert [r[:4] for r in rows] == [r[:4] for r in rows_before]  # the same rows (proofs' variables differ)
    stored = json.dumps(rows, ensure_ascii=False)
    for secret in ("1111 1111", "3704", "482913", "hunter2hunter2"):
        assert secret not in stored, secret
    kinds = {(r[0], r[1], r[2]) for r in rows}
    assert {("decision", "allow", "forwarded"), ("outcome", "allow", "ok")} <= kinds, kinds
    assert any(k[1] == "deny" for k in kinds) and any(k[1] == "ask" for k in kinds), kinds
    assert any(k[1] == "error" for k in kinds), kinds
