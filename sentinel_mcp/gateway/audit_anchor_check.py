"""``audit verify`` against the anchor (``audit_anchor.py``): the data dir's chains as the anchor knows them.

What is checked, beyond each chain's own rows and head (``audit_chain.py``):

- every anchor line's MAC with the key, and that each follows the one before (an edited, cut, reordered line,
  or a wrong key, is BROKEN naming the line); the first line names this data dir;
- every anchored chain is where it was (its file, under its instance directory's name), has at least the
  anchored rows, and its hash after each anchored row count is the anchored one (a tail cut with the head
  rewound, a chain recomputed after an edit, a chain removed with its head, an older copy restored);
- every chain in an instance's file is named after that instance's directory (files swapped or moved);
- a chain with rows that the anchor never named is BROKEN (grafted in from elsewhere). A gateway anchors its
  chain (0 rows) before its first call, and the first anchoring gateway adopts every chain already there.

Not detectable: changes to rows committed after a chain's last anchor (the window), and anything done by
someone who can also write the anchor directory or read its key.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit_anchor import KNOWN_FROM, AnchorError, AnchorLog, load_key
from sentinel_mcp.gateway.audit_chain import ChainReport, Marks, verify_file
from sentinel_mcp.storage.instances import INSTANCES


def _said(rec: dict[str, Any]) -> str:
    when = datetime.datetime.fromtimestamp(rec["ts"], datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"anchor line {rec['seq']}, {when}"


def anchored_marks(records: list[dict[str, Any]]) -> dict[str, Marks]:
    """place -> chain -> rows -> (hash, where the anchor said it); the first saying of a position counts.
    Only chains the anchor knew from their birth (``start``), adopted when it was made (``adopt``) or carried
    as such through a compaction (``carried``) count: a chain named first by a ``settled`` line (an ended
    instance's head, anchored by a later start) is not vouched for by it."""
    known = {(r["place"], r["chain"]) for r in records if r["kind"] in KNOWN_FROM}
    out: dict[str, Marks] = {}
    for rec in records[1:]:
        if (rec["place"], rec["chain"]) not in known:
            continue
        chains = out.setdefault(rec["place"], {})
        chains.setdefault(rec["chain"], {}).setdefault(rec["rows"], (rec["hash"], _said(rec)))
    return out


def verify_anchored(path: Path, anchor: AnchorLog, seal: bytes | None = None) -> ChainReport:
    """Every audit file of the store at ``path`` checked against the anchor (blocking); with ``seal`` (the
    audit's seal key), every row's seal too: rows changed after a chain's last anchor are the anchor's
    window, not the seal's."""
    from sentinel_mcp.gateway.audit import audit_files

    try:
        key = load_key(anchor.dir, create=False)
        records = anchor.read(key)
    except AnchorError as e:
        return ChainReport(problem=str(e), files=0)
    except OSError as e:
        return ChainReport(problem=f"cannot verify: the anchor cannot be read ({e})", files=0)
    expected = anchored_marks(records)
    store_dir = Path(path).parent
    files = audit_files(path)
    total = ChainReport(files=len(files), anchored=len(records))
    seen_places = set()
    for file in files:
        place = file.relative_to(store_dir).as_posix()
        seen_places.add(place)
        marks = expected.get(place, {})
        report = verify_file(file, marks, seal)
        misplaced = _misplaced(file, report.counts)  # the plainer cause, named first
        if misplaced:
            report.problem, report.broken_row = misplaced, None
        elif report.ok:
            report.problem = _unanchored(place, report.counts, marks)
        if not report.ok:
            report.file, report.files, report.anchored = file, len(files), len(records)
            return report
        total.rows += report.rows
        total.chains += report.chains
        total.unsealed += report.unsealed
    for place, chains in expected.items():
        if place in seen_places:
            continue
        for chain, mark in chains.items():
            most = max(mark, default=0)
            if most > 0:
                total.problem = (
                    f"{place} (chain {chain}, {most} rows anchored, {mark[most][1]}) is missing: its "
                    f"instance directory was removed, renamed or hidden{_hidden(store_dir, place)}"
                )
                total.file = store_dir / place
                return total
    if not files:
        total.problem = f"no audit log at {path} (nor in {store_dir / INSTANCES})"
    return total


def _misplaced(file: Path, counts: dict[str, int]) -> str | None:
    """A chain in another instance's directory (instance files swapped, or one moved)."""
    if file.parent.parent.name != INSTANCES:
        return None
    for chain in sorted(counts):
        if chain != file.parent.name:
            return (
                f"instance directory {file.parent.name} holds chain {chain}: the files of two instances were "
                "swapped, or one was moved here"
            )
    return None


def _unanchored(place: str, counts: dict[str, int], marks: Marks) -> str | None:
    """A chain with rows the anchor never named (grafted in from elsewhere)."""
    for chain, n in sorted(counts.items()):
        if n > 0 and chain not in marks:
            return (
                f"chain {chain} ({n} rows in {place}) was never anchored: an instance grafted in from "
                "elsewhere, or rows written by a gateway that did not anchor them"
            )
    return None


def _hidden(store_dir: Path, place: str) -> str:
    parts = place.split("/")
    if len(parts) != 3 or parts[0] != INSTANCES:
        return ""
    try:
        names = [p.name for p in (store_dir / INSTANCES).iterdir()]
        near = [n for n in names if parts[1] in n and n != parts[1]]
    except OSError:
        return ""
    return f" (found as {', '.join(sorted(near))})" if near else ""
