"""What an operator's rulebase may name (document_places.py, rulebase_loading.pl): a policy document inside
the declaring file's own directory (no '..', no absolute path out of it, no symbolic link out of it), an
inference budget under a hard ceiling. Each refusal is a load error naming the file, the line and the
problem; a rulebase that names what it may loads and quotes its document. Real SWI-Prolog, real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.rulebase import RulebaseError, load_rulebase

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio]

POLICY = "# Terms\n\nA refund is due within thirty days.\n"


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _rulebase(home: Path, path: str) -> Path:
    rb = home / "site.pl"
    rb.write_text("fact(colour/2).\n\n"
                  f"policy_document(terms, {_quoted(path)}).\n"
                  "guard('paint__set', [id = X],\n"
                  "      require(colour(X, red), 'red', policy_ref(terms, 'refund'))).\n")
    return rb


@pytest.fixture
def home(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    (rules / "docs").mkdir(parents=True)
    (rules / "terms.md").write_text(POLICY)
    (rules / "docs" / "terms.md").write_text(POLICY)
    (tmp_path / "secret.md").write_text("# Keys\n\nThe key is SECRET.\n")
    os.symlink(tmp_path / "secret.md", rules / "innocent.md")
    os.symlink(tmp_path, rules / "up")
    os.symlink(rules / "terms.md", rules / "alias.md")  # a link that stays inside
    return rules


OUTSIDE = [
    ("/etc/passwd", "outside"),
    ("/etc/./passwd", "outside"),
    ("../secret.md", "'..'"),
    ("docs/../../secret.md", "'..'"),
    ("docs/../terms.md", "'..'"),  # inside in the end, refused as written
    ("innocent.md", "through a link"),
    ("up/secret.md", "through a link"),
    ("~/.bashrc", None),  # a file named so in the home: not the user's (no shell expansion)
    ("", "empty"),
]


@pytest.mark.parametrize(("path", "why"), OUTSIDE)
async def test_a_document_outside_the_rulebases_directory_is_a_load_error(home: Path, path: str,
                                                                          why: str | None) -> None:
    rb = _rulebase(home, path)
    problems = [p for p in await check_files(shared_engine(), [rb])
                if p.severity == "error" and "policy_document(terms" in p.message]
    if why is None:
        assert not problems, problems
        return
    assert problems and problems[0].line == 3 and problems[0].file.endswith("site.pl"), problems
    assert why in problems[0].message, problems
    assert "SECRET" not in problems[0].message


async def test_an_absolute_path_out_of_the_directory_through_its_own_prefix_is_refused(home: Path) -> None:
    rb = _rulebase(home, str(home / "up" / "secret.md"))
    with pytest.raises(RulebaseError) as e:
        await load_rulebase(shared_engine(), [rb])
    assert any(p.line == 3 and "through a link" in p.message for p in e.value.problems), e.value.problems


@pytest.mark.parametrize("path", ["terms.md", "docs/terms.md", "./terms.md", "alias.md", "TERMS"])
async def test_a_document_inside_it_loads_and_is_quoted(home: Path, path: str, tmp_path: Path) -> None:
    path = str(home / "terms.md") if path == "TERMS" else path
    rb = _rulebase(home, path)
    problems = await check_files(shared_engine(), [rb])
    assert not [p for p in problems if p.severity == "error"], problems
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        docs = guard.documents()
        assert docs.paths["terms"].is_relative_to(home.resolve())
        cited = docs.cite("terms", "refund")
        assert cited is not None and "thirty days" in cited.quote
    finally:
        await guard.close()


async def test_the_shipped_rulebases_still_load_with_their_documents() -> None:
    for name in ("retail.pl", "airline.pl"):
        problems = await check_files(shared_engine(), [RULEBASES_DIR / name])
        assert not [p for p in problems if p.severity == "error"], (name, problems)


@pytest.mark.parametrize("option", ["inference_limit(100000001)", "inference_limit(9223372036854775807)",
                                    "extract_inference_limit(100000001)"])
async def test_an_inference_budget_over_the_ceiling_is_a_load_error(tmp_path: Path, option: str) -> None:
    rb = tmp_path / "site.pl"
    rb.write_text(f"fact(colour/2).\n\noption({option}).\nguard('paint__set', [id = X], colour(X, red)).\n")
    problems = [p for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
    assert problems and problems[0].line == 3 and problems[0].file.endswith("site.pl"), problems
    assert "100000000" in problems[0].message, problems


@pytest.mark.parametrize("option", ["inference_limit(100000000)", "extract_inference_limit(50000000)"])
async def test_an_inference_budget_at_the_ceiling_loads(tmp_path: Path, option: str) -> None:
    rb = tmp_path / "site.pl"
    rb.write_text(f"fact(colour/2).\noption({option}).\nguard('paint__set', [id = X], colour(X, red)).\n")
    problems = await check_files(shared_engine(), [rb])
    assert not [p for p in problems if p.severity == "error"], problems


@pytest.mark.parametrize("change", ["file 0666", "file 0622", "folder 0777", "another owns the file",
                                    "another owns the folder"])
async def test_a_document_another_account_could_change_is_a_load_error(
        home: Path, change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team "perms12": the document is quoted as the policy's own words in denials and proofs; a file (or
    a folder on its way) another local account could change let it rewrite them."""
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    rb = _rulebase(home, "docs/terms.md")
    doc, folder = home / "docs" / "terms.md", home / "docs"
    if change.startswith("file 0"):
        os.chmod(doc, int(change.split()[1], 8))
    elif change == "folder 0777":
        os.chmod(folder, 0o777)
    else:
        os.chown(doc if change.endswith("file") else folder, 54321, -1)
    problems = [p for p in await check_files(shared_engine(), [rb])
                if p.severity == "error" and "policy_document(terms" in p.message]
    assert problems and problems[0].line == 3, problems
    assert "another account could change" in problems[0].message, problems
    # a container's bind-mounted rulebase folder: the deployer's opt-out keeps its documents as its rulebases
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    assert not [p for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
