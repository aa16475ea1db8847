"""The citations a draft writes name the paragraph it lists for the tool, found by the same look-up ``check``
and every denial use. The draft built its anchor by stripping characters the look-up keeps (``user_id``
became ``userid``: a quote the policy does not contain, an error in the draft) and took a sentence's first
words even when the policy repeats them elsewhere (the denial quoted another section's sentence)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.policy.draft import draft_rulebase
from sentinel_mcp.policy.policy_documents import PolicyDocuments
from sentinel_mcp.search.paragraphs import split_markdown

pytestmark = pytest.mark.timeout(90)

CANCEL: dict[str, Any] = {
    "name": "cancel_order",
    "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                     "reason": {"type": "string"}}},
}


def _live_anchors(text: str) -> list[str]:
    live = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))
    return [re.sub(r"\\(.)", r"\1", m) for m in re.findall(r"policy_ref\(shop, '((?:[^'\\]|\\.)*)'\)", live)]


def _draft(tmp_path: Path, policy: str) -> tuple[str, PolicyDocuments, list[Any]]:
    (tmp_path / "policy.md").write_text(policy)
    paragraphs = split_markdown(policy, "shop")
    text = draft_rulebase("shop", [CANCEL], "shop", "policy.md", paragraphs).text
    docs = PolicyDocuments.of_paragraphs("shop", "policy.md", paragraphs)
    return text, docs, paragraphs


def _check_clean_of_citations(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "draft.pl").write_text(text)
    main(["check", str(tmp_path / "draft.pl")])
    out = capsys.readouterr().out
    assert "anchor" not in out, out


@pytest.mark.parametrize(
    "first",
    [
        "Cancel an order only if its user_id matches the user's.",
        "Cancel the __order__ only when the customer's *own* order is `pending`.",
        "Cancel orders › only pending ones, the owner's.",
        "Cancel the order ('cancel_order') if asked \\ twice.",
    ],
)
def test_a_drafted_citation_is_found_once_in_the_policy(
    tmp_path: Path, first: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, docs, _ = _draft(tmp_path, f"# Shop\n\n## Orders\n\n{first} The agent confirms it.\n")
    anchors = _live_anchors(text)
    assert anchors, text
    for a in anchors:
        assert docs.names_one_sentence("shop", a), (a, text)
    _check_clean_of_citations(tmp_path, text, capsys)


def test_a_repeated_sentence_is_cited_in_the_section_the_draft_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = "The user must give the order id and confirm before you cancel the order."
    policy = f"# Shop\n\n## Returns\n\n{same}\n\n## Cancel order\n\n{same}\n"
    text, docs, paragraphs = _draft(tmp_path, policy)
    listed = re.search(r"%   line (\d+) ", text)
    assert listed, text
    anchors = _live_anchors(text)
    assert anchors, text
    for a in anchors:
        cited = docs.cite("shop", a)
        assert cited is not None and cited.line_start == int(listed.group(1)), (a, text)
        assert docs.names_one_sentence("shop", a), a
    _check_clean_of_citations(tmp_path, text, capsys)
