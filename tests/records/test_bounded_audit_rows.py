"""An audit row keeps a tool's arguments and a decision's proof within their record limits
(``core/record_bounds.py``: ``AUDIT_ARGUMENTS``, ``AUDIT_PROOF``): what a hostile client sends (a megabyte
string, fifty thousand keys, ninety thousand items) or a rulebase proves (ten thousand levels deep, an integer
of ten thousand digits) is stored cut, as valid JSON that says it was cut, by how much, and the hash of the
full value; the call's outcome is what it was, and the chain still verifies."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.record_bounds import AUDIT_ARGUMENTS, AUDIT_PROOF, CUT_KEY, canonical_digest, was_cut
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, read_audit
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.gateway.call_record import META_KEY

from .rig import audit_rows, recorder_config

BIG = "A" * 900_000  # under the gateway's cap on one call's arguments (1 MB)


def _deep(levels: int) -> list:
    root: list = []
    cur = root
    for _ in range(levels):
        cur.append([])
        cur = cur[0]
    return root


async def test_a_hostile_clients_arguments_are_stored_cut_verifiable_and_the_calls_unchanged(tmp_path):
    config = recorder_config(tmp_path)
    many_keys = {"text": "x"} | {f"k{i}": i for i in range(50_000)}
    long_list = {"text": ["y"] * 90_000}
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            echoed = await c.call_tool("rec__echo", {"text": BIG})
            keys = await c.call_tool("rec__echo", many_keys)
            listed = await c.call_tool("rec__echo", long_list)
    assert not echoed.is_error and echoed.content[0].text == BIG  # answered whole: only the record is cut
    # the keys it does not declare: refused before the guard (undeclared_arguments), and still recorded cut
    assert keys.is_error and "is not one the tool declares" in keys.content[0].text, keys.content[0].text
    assert listed.is_error  # a list for a string: refused, as before
    rows = {r["decision_id"]: [] for r in audit_rows(config.store_path)}
    for r in audit_rows(config.store_path):
        rows[r["decision_id"]].append(r)
    for result, sent in ((echoed, {"text": BIG}), (keys, many_keys), (listed, long_list)):
        mine = rows[result.meta[META_KEY]]
        assert mine
        for r in mine:
            if r["arguments"] is None:
                continue
            assert len(r["arguments"]) < AUDIT_ARGUMENTS.chars + 1000, len(r["arguments"])
            stored = json.loads(r["arguments"])  # valid JSON, never a text cut mid-value
            assert was_cut(stored), r["arguments"][:200]
            notice = stored[CUT_KEY]
            assert notice["full_sha256"], notice
            assert (notice["full_sha256"], notice["full_chars"]) == canonical_digest(sent)
            assert r["tool"] == "rec__echo" and r["decision"] and r["session"]
    assert verify_file(config.store_path).ok or all(verify_file(f).ok for f in _files(config.store_path))
    calls = await read_audit(config.store_path, tail=10)
    assert all(isinstance(c["arguments"], dict) for c in calls)  # read back as JSON, cut or not


def _files(store: Path) -> list[Path]:
    from sentinel_mcp.gateway.audit import audit_files

    return audit_files(store)


async def test_a_proof_ten_thousand_levels_deep_or_with_a_huge_integer_is_stored_cut(tmp_path):
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    proofs = [_deep(10_000), {"n": 10 ** 10_000}, {"goal": "ok", "facts": [f"f{i}" for i in range(100_000)]}]
    try:
        for n, proof in enumerate(proofs):
            await log.write(AuditEntry(session="s", tool=f"t{n}", decision="allow", outcome="ok",
                                       arguments={"deep": _deep(5_000)} if n == 0 else {"i": n},
                                       proof=proof, reason="r" * 100_000))
        calls = await log.read(tail=10)
    finally:
        await log.close()
    assert [c["tool"] for c in calls] == ["t0", "t1", "t2"]
    for c in calls:
        assert was_cut(c["proof"]) and len(json.dumps(c["proof"])) < AUDIT_PROOF.chars + 1000
        assert c["decision"] == "allow" and c["outcome"] == "ok" and len(c["reason"]) < 25_000
    assert was_cut(calls[0]["arguments"])
    assert verify_file(store).ok


async def test_a_call_kept_cut_is_not_replayed_as_if_the_cut_copy_were_the_call(tmp_path):
    """The what-if replay decides recorded calls again: a call whose arguments were kept cut is skipped and
    said so, never decided on its cut copy (another call); the whole one beside it is still replayed."""
    import subprocess
    import sys

    from sentinel_mcp.config import load_config

    from .rig import ROOT, write_config

    rules = tmp_path / "rec.pl"
    rules.write_text("guard('rec__echo', [text = T], nonvar(T)).\n")
    cfg = write_config(tmp_path, rulebases=[str(rules)])
    cfg.chmod(0o600)
    async with running_gateway(load_config(cfg)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server) as c:
            small = await c.call_tool("rec__echo", {"text": "short"})
            big = await c.call_tool("rec__echo", {"text": BIG})
    assert not small.is_error and not big.is_error, (small.content, big.content)
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "replay", "--rulebase",
                          str(rules), "--all"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Replayed 1 recorded call(s)" in run.stdout, run.stdout
    assert "its arguments and proof were kept cut in the record" in run.stdout, run.stdout


async def test_the_proof_page_shows_the_kept_tree_and_says_it_was_cut(tmp_path):
    from sentinel_mcp.console.proof_view import facts_in, proof_nodes

    tree = {"goal": "cancel_ok(r1)", "by": [{"fact": f"leg(r1, f{i})", "provenance": "observed"}
                                            for i in range(2_000)]}
    proof = {"tree": tree, "rulebase_version": "v1", "note": "n" * 100_000}
    log = await AuditLog(tmp_path / "sentinel.db").open()
    try:
        await log.write(AuditEntry(session="s", tool="t", decision="allow", outcome="ok", proof=proof))
        [call] = await log.read(tail=1)
    finally:
        await log.close()
    root, rest = proof_nodes(call["proof"])
    assert root is not None and "leg(r1, f0)" in facts_in(root)  # the kept part of the tree, as a tree
    assert rest["cut"]["full_sha256"] == canonical_digest(proof)[0] and rest["rulebase_version"] == "v1"
