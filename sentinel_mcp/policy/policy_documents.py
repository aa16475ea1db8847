"""The policy documents a rulebase formalises (``policy_document(Name, Path)``), and what its citations quote.

A rule cites its text with ``policy_ref(Document, Anchor)``: the anchor is a fragment of a sentence of the
document (case, markup and spacing do not matter). It resolves to that sentence, its paragraph, the heading
above it and the paragraph's lines, so a denial (and an allow proof) can quote the policy in its own words.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes
from sentinel_mcp.policy.document_places import document_place, home_of
from sentinel_mcp.policy.rulebase import Rulebase
from sentinel_mcp.policy.untrusted_rules import UntrustedRules
from sentinel_mcp.search.paragraphs import Paragraph, normalize, split_markdown

log = logging.getLogger(__name__)
QUOTE_LIMIT = 400
SECTION_MARK = "\u203a"  # 'Section › fragment': the fragment as it stands under that section
# a policy document's bytes, as a rulebase file's are bounded (clause_bounds.MAX_FILE_BYTES): a real policy is
# tens of KB; a file past this (grown by mistake, a disk image named .md) was read whole at every load
MAX_DOCUMENT_BYTES = 8_000_000


@dataclass(frozen=True)
class Citation:
    document: str
    path: str
    heading: str
    quote: str  # the cited sentence (or paragraph)
    line_start: int
    line_end: int
    paragraph: int  # index of the paragraph in its document

    def as_dict(self) -> dict[str, Any]:
        return {"document": self.document, "path": self.path, "heading": self.heading, "quote": self.quote,
                "lines": [self.line_start, self.line_end]}


def document_text(path: Path) -> str:
    """A policy document's text: a regular file of at most MAX_DOCUMENT_BYTES in UTF-8, else ``TooLarge``,
    ``OSError`` or ``UnicodeDecodeError``."""
    return read_regular_bytes(path, MAX_DOCUMENT_BYTES).decode("utf-8")


def resolve_document(path: str, declared_in: str) -> Path | None:
    """A declared path, relative to the declaring rulebase file, when it lies in that file's own directory
    (document_places.py: a rulebase that names another does not load); None otherwise."""
    found, _ = document_place(path, declared_in)
    return found if found is not None and found.is_file() else None


class PolicyDocuments:
    def __init__(self, untrusted: UntrustedRules | None = None) -> None:
        # None: any file (the rulebases in force are the owner's); else a client's candidate (its bounds)
        self.untrusted = untrusted
        self.paths: dict[str, Path] = {}
        self.paragraphs: dict[str, list[Paragraph]] = {}
        self.problems: list[tuple[str, str]] = []  # (document name, what is wrong)
        # (document, anchor) -> its citation: every decision quotes the same few anchors, and resolving one
        # normalizes every paragraph of its document (the documents never change: a new rulebase version
        # gets new PolicyDocuments). Bounded, as anchors could come from anywhere.
        self._cited: dict[tuple[str, str], Citation | None] = {}
        # (document, anchor) -> the fields a citation adds to a proof node (quote_tree: one look-up per node)
        self._quoted: dict[tuple[str, str], dict[str, Any]] = {}
        self._normal: dict[str, list[tuple[Paragraph, str, str]]] = {}  # (the documents never change)

    @classmethod
    def of_rulebase(cls, rb: Rulebase, untrusted: UntrustedRules | None = None) -> "PolicyDocuments":
        docs = cls(untrusted)
        for d in rb.info.documents:
            docs.add(d.name, d.path, d.file)
        return docs

    @classmethod
    def of_paragraphs(cls, name: str, path: str, paragraphs: list[Paragraph]) -> "PolicyDocuments":
        """One document already split (a draft's policy): its citations resolved as a loaded one's."""
        docs = cls()
        docs.paths[name] = Path(path)
        docs.paragraphs[name] = paragraphs
        return docs

    def add(self, name: str, path: str, declared_in: str) -> None:
        if self.untrusted is None:
            found = resolve_document(path, declared_in)
        else:
            found = self.untrusted.resolve(path, declared_in)
        if found is None and self.untrusted is not None:
            self.problems.append(
                (name, f"policy document {name}: {path} is not one of the documents the rulebase in force "
                       "declares (a candidate may cite only those)")
            )
            return
        if found is None:
            self.problems.append(
                (
                    name,
                    f"policy document {name}: {path} not found (a path starts at {home_of(declared_in)}, and "
                    "may not leave it)",
                )
            )
            return
        try:
            text = document_text(found)
        except TooLarge:
            self.problems.append((name, f"policy document {name}: {found} is larger than "
                                        f"{MAX_DOCUMENT_BYTES:,} bytes (a policy is tens of KB)"))
            return
        except (OSError, UnicodeDecodeError) as e:
            self.problems.append((name, f"policy document {name}: {found} cannot be read ({e})"))
            return
        self.paths[name] = found
        self.paragraphs[name] = split_markdown(text, name)

    # ---------------------------------------------------------------- citations
    def _holding(self, document: str, anchor: str) -> list[tuple[int, Paragraph, str]]:
        """(index, paragraph, normalized fragment) of every paragraph that holds an anchor; an anchor
        ``'Section › fragment'`` only counts paragraphs under a heading whose path names that section (for a
        sentence the policy repeats word for word in several sections)."""
        section, _, fragment = anchor.rpartition(SECTION_MARK)
        wanted, where = normalize(fragment), normalize(section)
        if not wanted:
            return []
        return [
            (i, p, wanted)
            for i, (p, text, heading) in enumerate(self._normalized(document))
            if wanted in text and (not where or where in heading)
        ]

    def _normalized(self, document: str) -> list[tuple[Paragraph, str, str]]:
        """Each paragraph with its text and heading as anchors are matched (once per document: a draft looks
        up several anchors for each of a server's tools)."""
        got = self._normal.get(document)
        if got is None:
            got = self._normal[document] = [
                (p, normalize(p.text), normalize(p.heading_text)) for p in self.paragraphs.get(document, [])
            ]
        return got

    def cite(self, document: str, anchor: str) -> Citation | None:
        """The sentence an anchor names (first paragraph that holds it), or None."""
        key = (document, anchor)
        if key in self._cited:
            return self._cited[key]
        if len(self._cited) >= 4096:
            self._cited.clear()
        cited = self._cited[key] = self._cite(document, anchor)
        return cited

    def _cite(self, document: str, anchor: str) -> Citation | None:
        for i, p, wanted in self._holding(document, anchor)[:1]:
            sentence = next((s for s in p.sentences if wanted in normalize(s)), p.text)
            if sentence.endswith(":"):  # it introduces a list: the list is what it says
                sentence = p.text
            return Citation(
                document,
                str(self.paths[document]),
                p.heading_text,
                _cut(sentence),
                p.line_start,
                p.line_end,
                i,
            )
        return None

    def matches(self, document: str, anchor: str) -> int:
        """In how many paragraphs an anchor occurs."""
        return len(self._holding(document, anchor))

    def names_one_sentence(self, document: str, anchor: str) -> bool:
        """Whether an anchor names one place of the document: whole words that occur once in it (under its
        section, when the anchor names one). A citation resolves to the first sentence holding its anchor,
        so an anchor such as 'the', or a piece of a word, quoted a sentence the rule never formalised."""
        held = self._holding(document, anchor)
        if not held:
            return False
        words = re.compile(r"(?<!\w)" + re.escape(held[0][2]) + r"(?!\w)")
        texts = self._normalized(document)
        return sum(len(words.findall(texts[i][1])) for i, _, _ in held) == 1

    def quote_violations(self, violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Broken rules as shown: each reason followed by the policy sentence it cites."""
        out = []
        for v in violations:
            item = dict(v)
            ref = v.get("policy")
            cited = self.cite(ref["document"], ref["anchor"]) if isinstance(ref, dict) else None
            if cited is not None and isinstance(ref, dict):
                item["policy"] = {**ref, **cited.as_dict()}
                item["text"] = f"{v['reason']} (policy, {cited.heading}: \u201c{cited.quote}\u201d)"
            else:
                item["text"] = v["reason"]
            out.append(item)
        return out

    def quote_tree(self, tree: Any) -> Any:
        """A proof tree with the quoted sentence beside every citation in it. The tree is changed in place (it
        is
        the engine's answer to one pass, parsed for this decision): copying every node cost more than quoting.

        On every decision's path (the gateway audits every proof): one walk, exact type tests first (parsed
        JSON
        has no subclasses of dict or list), and each anchor's citation fields computed once."""
        quoted = self._quoted
        stack = [tree]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            if type(node) is list:
                for v in node:
                    t = type(v)
                    if t is dict or t is list or (t is not str and isinstance(v, (dict, list))):
                        push(v)
            elif type(node) is dict:
                ref = None
                for k, v in node.items():
                    if k == "policy":
                        ref = v
                    else:
                        t = type(v)
                        if t is dict or t is list or (t is not str and isinstance(v, (dict, list))):
                            push(v)
                if isinstance(ref, dict) and "anchor" in ref:
                    key = (ref.get("document", ""), ref["anchor"])
                    fields = quoted.get(key) if type(key[0]) is str and type(key[1]) is str else None
                    if fields is None:
                        cited = self.cite(*key)
                        if cited is None:
                            continue
                        fields = cited.as_dict()
                        if len(quoted) >= 4096:
                            quoted.clear()
                        quoted[key] = fields
                    node["policy"] = {**ref, **fields, "lines": list(fields["lines"])}
            elif isinstance(node, (list, dict)):  # not from the JSON parser: the general walk
                self._quote_any(node, stack)
        return tree

    def _quote_any(self, node: Any, stack: list[Any]) -> None:
        """One node of a tree not made by the JSON parser (subclasses of dict or list), as the walk always
        did."""
        if isinstance(node, list):
            stack.extend(node)
            return
        ref = node.get("policy")
        if isinstance(ref, dict) and "anchor" in ref:
            cited = self.cite(ref.get("document", ""), ref["anchor"])
            if cited is not None:
                node["policy"] = {**ref, **cited.as_dict()}
        stack.extend(v for k, v in node.items() if k != "policy" and isinstance(v, (list, dict)))

    # ---------------------------------------------------------------- coverage
    def coverage(self, citations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Per document: how many of its paragraphs some citation resolves to, and which ones none does."""
        cited: dict[str, set[int]] = {name: set() for name in self.paragraphs}
        for c in citations:  # a sentence the policy repeats is cited wherever it stands (in its section)
            for i, _, _ in self._holding(c["document"], c["anchor"]):
                cited.setdefault(c["document"], set()).add(i)
        out = {}
        for name, paras in self.paragraphs.items():
            out[name] = {
                "paragraphs": len(paras),
                "cited": len(cited[name]),
                "share": (len(cited[name]) / len(paras)) if paras else 1.0,
                "uncited": [p for i, p in enumerate(paras) if i not in cited[name]],
            }
        return out


def _cut(text: str) -> str:
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT].rsplit(" ", 1)[0] + " …"
