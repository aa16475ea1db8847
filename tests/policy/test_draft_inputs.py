"""``sentinel-mcp draft``: the policy document and a saved tool list are files a person names, and the name
may be anything: ``/dev/zero`` (a whole read never ended, memory grew until killed), a FIFO (a plain open
waits for a writer forever), a huge file, bytes that are not UTF-8. Each is one line and exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.policy.draft_cli import MAX_DRAFT_INPUT_BYTES

pytestmark = pytest.mark.timeout(60)


def _named(tmp_path: Path, kind: str) -> str:
    if kind == "zero":
        return "/dev/zero"
    p = tmp_path / f"{kind}.in"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "huge":
        with open(p, "wb") as f:
            f.truncate(MAX_DRAFT_INPUT_BYTES + 1)
    elif kind == "binary":
        p.write_bytes(b"policy \xff\xfe text")
    return str(p)


@pytest.mark.parametrize("kind", ["zero", "fifo", "huge", "binary"])
@pytest.mark.parametrize("which", ["--policy", "--tools"])
def test_an_unreadable_input_is_one_line(tmp_path, monkeypatch, capsys, kind, which):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    policy = tmp_path / "policy.md"
    policy.write_text("# Policy\n\nCancel only your own bookings.\n")
    files = {"--policy": str(policy), "--tools": str(tmp_path / "tools.json")}
    (tmp_path / "tools.json").write_text('[{"name": "cancel", "inputSchema": {"type": "object"}}]')
    files[which] = _named(tmp_path, kind)
    code = main(["draft", "--server", "s", "--policy", files["--policy"], "--tools", files["--tools"],
                 "-o", str(tmp_path / "out.pl")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and files[which] in err, err
    assert not (tmp_path / "out.pl").exists()


def test_a_tool_list_nested_too_deep_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON nested past Python's recursion limit was told as a server that could not be listed (exit 1)."""
    (tmp_path / "policy.md").write_text("# P\n\nText.\n")
    (tmp_path / "tools.json").write_text("[" * 100_000 + "]" * 100_000)
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read the tools" in err and "nested too deeply" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_the_output_is_never_written_through_a_link_or_over_a_file(tmp_path: Path, monkeypatch) -> None:
    """``-o`` names a new file: a dangling link there (``exists()`` is false for it) was followed, and the
    draft written where it pointed; a file made while the tools were listed was replaced."""
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    policy = tmp_path / "policy.md"
    policy.write_text("# Policy\n\nCancel only your own bookings.\n")
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "cancel", "inputSchema": {"type": "object"}}]')
    target, out = tmp_path / "elsewhere.pl", tmp_path / "out.pl"
    out.symlink_to(target)
    code = main(["draft", "--server", "s", "--policy", str(policy), "--tools", str(tools), "-o", str(out)])
    assert code == 2 and not target.exists() and out.is_symlink()


def test_a_policy_elsewhere_is_copied_beside_the_draft_never_over_another_file(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """A rulebase's documents lie in its own directory (document_places.py): a policy outside the draft's is
    copied beside it under its own name, and the draft names it there; a different file of that name there is
    never replaced (exit 2), nor one reached through a link."""
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    (tmp_path / "docs").mkdir()
    policy = tmp_path / "docs" / "policy.md"
    policy.write_text("# Policy\n\nCancel only your own bookings.\n")
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "cancel", "inputSchema": {"type": "object"}}]')
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    argv = ["draft", "--server", "s", "--policy", str(policy), "--tools", str(tools), "-o"]
    assert main([*argv, str(tmp_path / "a" / "out.pl")]) == 0
    assert (tmp_path / "a" / "policy.md").read_text() == policy.read_text()
    assert "policy_document(s, 'policy.md')." in (tmp_path / "a" / "out.pl").read_text()
    (tmp_path / "b" / "policy.md").write_text("# Other\n\nSomething else.\n")
    assert main([*argv, str(tmp_path / "b" / "out.pl")]) == 2
    assert (tmp_path / "b" / "policy.md").read_text() == "# Other\n\nSomething else.\n"
    secret = tmp_path / "secret.md"
    secret.write_text("kept")
    (tmp_path / "c" / "policy.md").symlink_to(secret)
    assert main([*argv, str(tmp_path / "c" / "out.pl")]) == 2
    assert secret.read_text() == "kept"


POLICIES = {
    "a Prolog directive in a code fence": (
        "```prolog\n:- initialization(shell('touch {pwned}')).\nguard('s__cancel', [], true).\n```\n\n"
        "Cancel only your own bookings.\n"),
    "NUL and control bytes": "Cancel\x00 only\x1b[2J your own\x07 bookings.\n",
    "one huge line": "Cancel only your own bookings " + "and more " * 200_000 + ".\n",
    "a line separator before a directive": "Cancel only\u2028:- initialization(halt). your own bookings.\n",
    "quotes that close an anchor": "Cancel ')), guard('s__cancel', [], true). % only your own bookings.\n",
    "a bidi override": "Cancel only \u202eyour own\u202c bookings.\n",
}


@pytest.mark.parametrize("case", list(POLICIES))
def test_a_hostile_policy_adds_no_clause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The policy is the operator's but often pasted from elsewhere: its words reach the draft only quoted
    (a comment's JSON string, a citation's atom), so the draft holds the drafter's clauses alone and passes
    its check; nothing in it runs."""
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path / "state"))
    pwned = tmp_path / "pwned"
    policy = "# Cancel bookings\n\n" + POLICIES[case].replace("{pwned}", str(pwned))
    (tmp_path / "policy.md").write_text(policy)
    (tmp_path / "tools.json").write_text(json.dumps([{
        "name": "cancel", "annotations": {"destructiveHint": True},
        "inputSchema": {"type": "object", "properties": {"booking_id": {"type": "string"}}}}]))
    out = tmp_path / "out.pl"
    code = main(["draft", "--server", "s", "--policy", str(tmp_path / "policy.md"), "--tools",
                 str(tmp_path / "tools.json"), "-o", str(out)])
    assert code == 0 and not pwned.exists()
    clauses = [x for x in out.read_text().splitlines() if x and not x.startswith(("%", " "))]
    assert [c.split("(", 1)[0] for c in clauses] == ["policy_document", "guard"], clauses
    assert main(["check", str(out)]) == 0
