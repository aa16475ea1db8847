"""Instances of one data dir share the CRLs' "never back in time" mark (red team "rt-wire6"). Each wrote the
mark from what it held in memory, last writer winning: an instance that had not seen a newer CRL another one
had recorded wrote its own older stamp back over it, and the next start took that older CRL again. Now a
write merges with the file under a lock (each CA's newest of the file's and the writer's), so no writer ever
moves a CA's stamp backwards, however their writes interleave; an instance adopts what the others recorded;
and a mark on disk that cannot be read is never overwritten (said, as a mark that cannot be written is)."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from sentinel_mcp.tls.crl_mark import MARK_FILE, CrlMark
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError
from tests.tls.conftest import Pki

pytestmark = pytest.mark.timeout(240)
X, Y = "a" * 64, "b" * 64


def _stamp(n: int) -> tuple[int, float, float | None]:
    return (n, 1_700_000_000.0 + n, None)


def _on_disk(path: Path) -> dict[str, int]:
    return {ca: stamp[0] for ca, stamp in json.loads(path.read_text())["cas"].items()}


def test_a_writer_that_had_not_seen_a_newer_crl_never_moves_the_mark_back(tmp_path: Path) -> None:
    path = tmp_path / MARK_FILE
    a, b = CrlMark(path), CrlMark(path)
    held_a = a.save({}, {X: _stamp(1)})  # instance a starts with CA X's CRL number 1
    held_b = b.save(b.load(), {X: _stamp(5)})  # b, started later, finds number 5 in force
    assert _on_disk(path) == {X: 5}
    # a learns of a CRL of another CA (Y): it writes, and X stays at 5
    held_a = a.save(held_a, {X: _stamp(1), Y: _stamp(2)})
    assert _on_disk(path) == {X: 5, Y: 2}
    assert held_a == {X: _stamp(5), Y: _stamp(2)}  # and a holds what the others recorded from now on
    held_b = b.save(held_b, {X: _stamp(5)})  # b, unchanged, writes nothing back: Y stays
    assert _on_disk(path) == {X: 5, Y: 2} and held_b[Y] == _stamp(2)


def _writer(path: str, ca: str, numbers: list[int]) -> None:
    mark, held = CrlMark(Path(path)), {}
    for n in numbers:
        held = mark.save(held, {ca: _stamp(n)})


def test_concurrent_writers_leave_each_cas_newest(tmp_path: Path) -> None:
    """Processes writing at once (each its own CA and one shared CA): the file ends with each CA's newest,
    whatever the interleaving (checked by count over several rounds, never by time)."""
    path = tmp_path / MARK_FILE
    ctx = multiprocessing.get_context("spawn")
    cas = ["%064x" % i for i in range(1, 5)]
    shared = "f" * 64
    for round_ in range(3):
        base = round_ * 100
        procs = [ctx.Process(target=_writer, args=(str(path), ca, list(range(base, base + 40))))
                 for ca in cas]
        procs += [ctx.Process(target=_writer, args=(str(path), shared, [base + 50 + i, base + i]))
                  for i in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
            assert p.exitcode == 0
        assert _on_disk(path) == {**{ca: base + 39 for ca in cas}, shared: base + 53}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".crl-mark.")]


def _tls(pki: Pki) -> FrontTLS:
    return FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")


def test_an_instance_adopts_the_newer_crl_another_recorded(tmp_path: Path, pki: Pki) -> None:
    """Two fronts of one data dir: one takes a newer CRL; the other, reloading its files, refuses to go
    back to the older CRL the newer one replaced (it is behind what the data dir has seen)."""
    path = tmp_path / "tls" / MARK_FILE
    older = pki.ca.crl_path.read_bytes()
    first = ServerContexts(_tls(pki), CrlMark(path))
    pki.ca.revoke("bob")
    second = ServerContexts(_tls(pki), CrlMark(path))  # started later: the newer CRL
    newer_number = max(_on_disk(path).values())
    pki.ca.crl_path.write_bytes(older)
    first.reload_now()  # it refuses the older CRL as the second would (serving on with what it had)
    assert any("older" in w for w in first.warnings), first.warnings
    assert max(_on_disk(path).values()) == newer_number
    with pytest.raises(TLSSetupError, match="older"):
        ServerContexts(_tls(pki), CrlMark(path))
    assert second.tls.crl == first.tls.crl


def test_a_mark_that_became_unreadable_is_never_overwritten(tmp_path: Path, pki: Pki) -> None:
    path = tmp_path / "tls" / MARK_FILE
    contexts = ServerContexts(_tls(pki), CrlMark(path))
    path.write_bytes(b"{broken")
    pki.ca.revoke("bob")
    contexts.reload_now()
    assert path.read_bytes() == b"{broken"  # the operator's to look at
    assert any("CRL mark" in w and str(path) in w for w in contexts.warnings), contexts.warnings
    os.unlink(path)
