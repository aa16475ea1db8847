"""A rulebase clause nested deep enough kills SWI-Prolog's reader with SIGSEGV; the bounds are checked in
Python first (policy/clause_bounds.py), so `check`, start-up and a hot reload name the file and line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.clause_bounds import MAX_CLAUSE_TOKENS, MAX_NESTING, MAX_RAW_NESTING, text_problems

pytestmark = pytest.mark.timeout(120)
DEEP = 60_000  # well past what crashes the reader on an 8 MB stack


@pytest.mark.parametrize("name,text,why", [
    ("parens", "ok.\nc(" + "f(" * DEEP + "x" + ")" * DEEP + ").\n", "nests brackets"),
    ("lists", "ok.\nc(" + "[" * DEEP + "]" * DEEP + ").\n", "nests brackets"),
    ("prefix operators", "ok.\nd :- " + "\\+ " * DEEP + "true.\n", "tokens"),
    ("a conjunction", "ok.\nb :- " + ", ".join(["true"] * DEEP) + ".\n", "tokens"),
    ("a refused clause", "ok.\na = " + "f(" * DEEP + "x" + ")" * DEEP + ".\n", "nests brackets"),
])
def test_check_names_the_file_and_line_instead_of_crashing(tmp_path, name, text, why):
    bad = tmp_path / "deep.pl"
    bad.write_text(text)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], "data_dir": str(tmp_path)}}))
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "check", str(bad)],
                         capture_output=True, text=True, timeout=100)
    assert run.returncode == 1, (run.returncode, run.stdout[-500:], run.stderr[-500:])
    assert f"{bad}:2: error:" in run.stdout and why in run.stdout


def test_what_is_quoted_or_commented_does_not_count():
    text = ("a('((((((', \"[[[[\", `{{{{`, 0'(, 0''', 0'\\\\). % ((((((\n"
            "/* [[[[[[ */ b(x) :- c(y). q :- X = 'don''t (', X \\= \"it\\\"s [\".\n")
    assert text_problems(text.replace("((((((", "(" * (MAX_NESTING + 5))) == []
    nested = "p(" + "f(" * (MAX_NESTING + 1) + ")" * (MAX_NESTING + 1) + ").\n"
    deep = f"the clause nests brackets more than {MAX_NESTING:,} deep"
    assert text_problems("a.\n" + nested) == [(2, deep)]
    long = "q(" + ",".join(["1"] * MAX_CLAUSE_TOKENS) + ").\n"
    assert text_problems(long)[0][0] == 1


def test_every_shipped_rulebase_is_within_the_bounds():
    files = list(RULEBASES_DIR.glob("*.pl"))
    assert files and all(text_problems(f.read_text()) == [] for f in files)


@pytest.mark.parametrize("clause", [
    "seed(x(X)) :- seed(x(X)).",
    "binding(p(X), t, [], 60) :- binding(p(X), t, [], 60).",
    "askable(q(X), 'Q?', yes_no, [user]) :- repeat, fail.",
    "fact(N/A) :- fact(N/A).",
    "read_only(T) :- read_only(T).",
])
def test_a_declaration_with_a_body_is_refused_it_would_run_at_load_time(tmp_path, clause):
    bad = tmp_path / "loop.pl"
    bad.write_text("ok.\n" + clause + "\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], "data_dir": str(tmp_path)}}))
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "check", str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and f"{bad}:2: error: the declaration" in run.stdout, run.stdout + run.stderr


DEEP_TERM = "f(" * DEEP + "x" + ")" * DEEP


@pytest.mark.parametrize("around", [
    "16'FF", "2'101", "36'zz", "8'17", "0'a", "0''", "0'''", "0'\\n", "0'\\'", "0'\\\\",
    "1_000", "0x1F", "0o17",
])
def test_numbers_with_a_quote_do_not_hide_a_deep_term(around):
    """SWI-Prolog reads 16'FF as a number (and 0'a as a character code): the quote opens nothing, so what
    follows is counted (a quote taken as an opening one hid a term that crashed the reader)."""
    text = f"ok.\nhelper({around}, {DEEP_TERM}, {around}).\n"
    assert text_problems(text) == [(2, f"the clause nests brackets more than {MAX_NESTING:,} deep")], around


def test_a_quote_after_digits_that_are_no_radix_still_opens_a_quoted_atom():
    # 37 is no radix and 1'a' is a syntax error in SWI-Prolog; either way the quoted part holds the brackets
    assert text_problems("a(37'" + "(" * (MAX_NESTING + 5) + "').\n") == []
    assert text_problems("a(x1'" + "(" * (MAX_NESTING + 5) + "').\n") == []


@pytest.mark.parametrize("hidden", ["'", "\"", "`", "0'", "16'", "'abc", "37'", "{|string||"])
def test_a_term_hidden_from_the_lexer_is_still_refused_by_the_raw_count(hidden):
    """Whatever the lexer makes of a quote (an unclosed one, a quasi-quotation, a radix it misreads), the
    count of every bracket outside comments sees a deep term."""
    problems = text_problems(f"ok.\nhelper({hidden}x, {DEEP_TERM}).\n")
    assert problems and problems[0][0] == 2 and "nest" in problems[0][1], (hidden, problems)


def test_the_raw_count_overestimates_brackets_inside_quotes_only_past_its_own_bound():
    assert text_problems(f"ok.\nhelper('{'(' * (MAX_RAW_NESTING - 1)}').\n") == []
    assert text_problems(f"ok.\nhelper('{'(' * (MAX_RAW_NESTING + 1)}').\n") == [
        (2, f"brackets nest more than {MAX_RAW_NESTING:,} deep here (counting those inside quotes too)")]
    assert text_problems(f"ok.\n% {'(' * (MAX_RAW_NESTING + 1)}\n/* {'[' * (MAX_RAW_NESTING + 1)} */\n") == []
