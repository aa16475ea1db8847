"""``sentinel-mcp swarm status`` and ``list`` print a build's text marked and cut: its rows may be written by
anyone who can write the store, its file names by its own tools, its warnings quote a model. Before, a
terminal escape, a direction override or a forged line in an error, a file name or a warning reached the
operator's terminal raw, at any length; and counters withheld as unsigned (None) crashed ``status``
(TypeError adding None)."""

from __future__ import annotations

import pytest

from sentinel_mcp.swarm.cli import _list_line, _print_status

HOSTILE = {
    "escape": "\x1b[2J\x1b[31mall good",
    "line": "boom\n[COMPLETED] task t1: COMPLETED",
    "override": "ok \u202egnp.exe",
    "long": "x" * 100_000,
}


def status(text: str, **more: object) -> dict:
    return {"task_id": "t20261205-150000-abcdef", "state": "FAILED", "error": text, "workspace": text,
            "model_calls": 3, "prompt_tokens": 10, "completion_tokens": 5, "files": [text],
            "warnings": [text], "report": {"verifier": {"quality_score": text}}} | more


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_status_shows_each_text_marked_and_cut(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    _print_status(status(HOSTILE[kind]), as_json=False)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "\n[COMPLETED]" not in out
    assert len(out) < 5_000


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_list_shows_each_text_marked_and_cut(kind: str) -> None:
    line = _list_line({"task_id": HOSTILE[kind], "state": HOSTILE[kind], "app_name": HOSTILE[kind],
                       "error": HOSTILE[kind]})
    assert "\x1b" not in line and "\u202e" not in line and "\n" not in line and len(line) < 1_000


def test_status_with_counters_withheld_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    _print_status(status("boom", model_calls=None, prompt_tokens=None, completion_tokens=None,
                         unverified=["model_calls", "prompt_tokens", "completion_tokens", "warnings"],
                         rows_missing={"model_calls": 2}), as_json=False)
    out = capsys.readouterr().out
    assert "model calls: ?, tokens: ?" in out and "not signed by this cluster" in out
    assert "2 recorded model_calls row(s) missing" in out
