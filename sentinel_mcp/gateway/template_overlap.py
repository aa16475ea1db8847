"""Which servers' URI templates could match the same URI: conservatively, by their literal prefixes.

Every URI a template matches starts with the template's text before its first ``{``. Two templates whose
prefixes differ where both have characters can never match one URI; any other two might (one prefix starts
with the other). That over-approximates (``a://x/{k}`` and ``a://{k}/y`` are said to overlap), which is the
safe side: an overlap is withheld and reported, never settled by which server sorts first.

A sweep over the sorted prefixes keeps the chain of prefixes the current one starts with (they sort before
it and nest), each with up to two of the servers above and below it: linear in the listing's size, however
hostile the templates (all equal, one long chain), so no upstream can stall the catalog's rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def literal_prefix(template: str) -> str:
    cut = template.find("{")
    return template if cut < 0 else template[:cut]


@dataclass
class _Open:
    prefix: str
    index: int
    above: frozenset[str]  # servers of the prefixes this one starts with (at most two kept)
    below: set[str] = field(default_factory=set)  # servers of this one and those that start with it


def _starts(text: str, prefix: str) -> bool:
    return text.startswith(prefix)


def _two(servers: set[str] | frozenset[str]) -> set[str]:
    return set(sorted(servers)[:2])  # two distinct servers say "another server" for anyone


def overlapping(templates: list[tuple[str, str]]) -> set[int]:
    """The indexes of ``(server, template)`` pairs that another server's template could overlap."""
    order = sorted(range(len(templates)), key=lambda i: literal_prefix(templates[i][1]))
    hit: set[int] = set()
    chain: list[_Open] = []

    def close() -> None:
        done = chain.pop()
        server = templates[done.index][0]
        if any(s != server for s in done.below):
            hit.add(done.index)
        if chain:
            chain[-1].below = _two(chain[-1].below | done.below)

    for i in order:
        server, template = templates[i]
        prefix = literal_prefix(template)
        while chain and not _starts(prefix, chain[-1].prefix):
            close()
        above = frozenset(_two(chain[-1].above | {templates[chain[-1].index][0]})) if chain else frozenset()
        if any(s != server for s in above):
            hit.add(i)
        chain.append(_Open(prefix, i, above, {server}))
    while chain:
        close()
    return hit
