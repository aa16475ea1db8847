"""Every text of an upstream's schemas reaches a draft's Prolog through ``quote`` or ``atom_text``
(draft_names.py): proven here by writing each hostile spelling and reading it back with SWI-Prolog's own
``read_term``, as the loader reads a rulebase. The written text is one line, reads as one atom, and that atom
is the text (a lone surrogate as its stand-in, the character the engine gives the same argument)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from sentinel_mcp.policy.draft_names import atom_text, quote
from sentinel_mcp.policy.prolog_text import to_prolog_chars

pytestmark = pytest.mark.timeout(120)

SWIPL = shutil.which("swipl")

HOSTILE = [
    "a'b", "a''b", "'", "\\", "a\\b", "\\'", "a\\'b", "\\x41\\", "\\e", "\\u0041", "\\\n", "a\nb", "a\rb",
    "*/", "/*", "%", "% x", "0'c", "0'", '"', '"x"', "`", "end. ", "x.\n:- initialization(halt).",
    "x').\nguard('shop__wipe', [], true).\n%", "\x00", "a\x00b", "\x07\x1b[2J", "\x7f", "\x85", "\u2028",
    "\u2029", "\u202e", "\u2066x\u2069", "\ufeff", "\u00a0", "\u3000", "e\u0301", "\u00e9", "\ud800",
    "a\udfffb",
    "\U0010f7ff", "\U0010f800", "\U0001f600", "\U000e0041", "x" * 100_000, "", " ", "Amount", "_", "_x",
    "a.b", "a-b", "x.", "end.", "[]", "{}", "|", ",", "!", ";", "a b", "9lives", "a:b", "a/b", "a=b", "=",
    "\u0430dmin", "\u0391",
]


def _operators() -> list[str]:
    """Every operator SWI-Prolog reads by name: a name that is one (``table``, ``dynamic``) is no atom by
    itself (``[table = Table]`` is a syntax error)."""
    assert SWIPL, "SWI-Prolog is part of the build"
    out = subprocess.run(
        [SWIPL, "-q", "-g", "forall((current_op(_, _, O), atom(O)), (atom_codes(O, C), "
                            "format('~w~n', [C]))), halt"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    return sorted({"".join(map(chr, json.loads(line))) for line in out.splitlines()})


def _read_back(tmp_path: Path, written: list[str]) -> list[list[int] | str]:
    """Each written text read by ``read_term`` (via term_string, on its own line) where the draft writes one:
    in an argument pattern's list (``[order_id = OrderId]``) and as an argument; its atom's codes, or why
    it is none."""
    src = tmp_path / "written.txt"
    src.write_text("".join(f"t([{w} = _, {w} = _], {w})\n" for w in written), encoding="utf-8")
    goal = (
        f"open('{src}', read, S, [encoding(utf8)]), "
        "repeat, read_line_to_string(S, L), "
        "( L == end_of_file -> ! ; "
        "  catch(( term_string(T, L), ( T = t([A = _, A = _], A), atom(A) -> atom_codes(A, C), "
        "          format('~w~n', [C]) ; "
        "          format('\"not an atom\"~n') ) ), _, format('\"syntax error\"~n')), fail ), halt"
    )
    out = subprocess.run([SWIPL or "swipl", "-q", "-g", goal], capture_output=True, text=True, check=True,
                         timeout=100).stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("writer", [quote, atom_text])
def test_every_text_reads_back_as_itself(tmp_path: Path, writer) -> None:
    texts = HOSTILE + _operators()
    written = [writer(t) for t in texts]
    assert all("\n" not in w and w.isprintable() for w in written)
    got = _read_back(tmp_path, written)
    assert len(got) == len(texts)
    wrong = [(t[:40], w[:60], g if isinstance(g, str) else "other atom")
             for t, w, g in zip(texts, written, got)
             if g != [ord(c) for c in to_prolog_chars(t)]]
    assert wrong == []


def test_a_property_named_as_an_operator_drafts_a_rulebase_that_checks(tmp_path: Path) -> None:
    """``table`` is a database tool's usual argument, and an operator: the draft failed its own check."""
    from sentinel_mcp.cli import main
    from sentinel_mcp.policy.draft import draft_rulebase

    props = {n: {"type": "string"} for n in ("table", "dynamic", "is", "row_id")}
    tools = [
        {"name": "delete_rows", "annotations": {"destructiveHint": True},
         "inputSchema": {"type": "object", "properties": props}},
        {"name": "get_rows", "annotations": {"readOnlyHint": True},
         "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}},
         "outputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}},
    ]
    (tmp_path / "policy.md").write_text("# Rows\n\nRows are deleted only on request.\n")
    draft = draft_rulebase("db", tools, "db", "policy.md", [])
    (tmp_path / "draft.pl").write_text(draft.text)
    assert main(["check", str(tmp_path / "draft.pl")]) == 0, draft.text
