"""``consent grant --expires-in``: a validity that is not a positive finite number of seconds is refused on
stderr with exit 2 and nothing granted ("inf" was stored as a consent expiring at Infinity, and printed as
``Infinity``, which is not JSON)."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.gateway.consents import ConsentBook


@pytest.mark.parametrize("seconds", ["inf", "nan", "0", "-5", "1e999"])
def test_a_validity_that_is_not_a_positive_finite_number_grants_nothing(tmp_path, monkeypatch, capsys,
                                                                          seconds):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    assert main(["consent", "grant", "bob", "messages", "--expires-in", seconds]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "expires" in out.err, out
    book = ConsentBook(tmp_path / "consents.db")
    try:
        assert book.list("bob") == []
    finally:
        book.close()


def test_a_good_validity_grants_and_prints_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    assert main(["consent", "grant", "bob", "messages", "--expires-in", "60"]) == 0
    assert json.loads(capsys.readouterr().out)["granted"]["principal"] == "bob"
