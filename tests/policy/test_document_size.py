"""A policy document a rulebase names is read bounded, as the rulebase file is: one larger than
``MAX_DOCUMENT_BYTES`` (a file grown by mistake, a disk image renamed .md) was read whole into memory and
split into paragraphs at every load, check and search (300 MB took half a minute and exhausted the check's
budget). It is a problem naming the document and its size; a document of a policy's size loads as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.policy_documents import MAX_DOCUMENT_BYTES
from tests.policy.test_cli_and_checker import cli

pytestmark = pytest.mark.timeout(120)

RULEBASE = "policy_document(p, 'policy.md').\n"


def test_a_document_past_the_bound_is_a_problem_naming_it(tmp_path: Path) -> None:
    (tmp_path / "rb.pl").write_text(RULEBASE)
    with open(tmp_path / "policy.md", "wb") as f:
        f.truncate(MAX_DOCUMENT_BYTES + 1)  # sparse: no disk spent
    r = cli("check", str(tmp_path / "rb.pl"), cwd=tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "policy document p" in r.stdout and "larger than" in r.stdout, r.stdout


def test_a_document_of_a_policy_size_loads(tmp_path: Path) -> None:
    (tmp_path / "rb.pl").write_text(RULEBASE)
    (tmp_path / "policy.md").write_text("# Refunds\n\nA refund needs a receipt.\n" * 1000)
    r = cli("check", str(tmp_path / "rb.pl"), cwd=tmp_path)
    assert "error" not in r.stdout.split("file(s):")[0], r.stdout
