"""A published rulebase version as a replica writes it out: names are checked, never trusted (a row in the
shared
database is input like any other); a good version round-trips with the documents it cites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.policy.rulebase import RulebaseError
from sentinel_mcp.policy.shared_rulebases import MAX_BODY, materialize


def body(files: list[tuple[str, str]], docs: list[tuple[str, str]] = ()) -> str:  # type: ignore[assignment]
    return json.dumps(
        {
            "files": [{"name": n, "text": t} for n, t in files],
            "documents": [{"path": p, "text": t} for p, t in docs],
        }
    )


def test_a_good_version_is_written_out_with_its_documents(tmp_path: Path) -> None:
    out = materialize(
        body([("a.pl", "x."), ("b.pl", "y.")], [("docs/policy.md", "# P"), ("top.md", "t")]), tmp_path / "v"
    )
    assert [p.name for p in out] == ["a.pl", "b.pl"] and out[0].read_text() == "x."
    assert (tmp_path / "v" / "docs" / "policy.md").read_text() == "# P"
    again = materialize(body([("c.pl", "z.")]), tmp_path / "v")  # a directory is rewritten whole
    assert [p.name for p in again] == ["c.pl"] and not (tmp_path / "v" / "a.pl").exists()


@pytest.mark.parametrize(
    "files",
    [
        [("../escape.pl", "x.")],
        [("/etc/passwd", "x.")],
        [("..", "x.")],
        [(".hidden.pl", "x.")],
        [("a/b.pl", "x.")],
        [("a\\b.pl", "x.")],
        [("a.pl\0", "x.")],
        [("a.pl\n", "x.")],
        [("", "x.")],
        [("a.pl", "x."), ("a.pl", "y.")],
        [],
    ],
)
def test_unsafe_or_malformed_file_names_are_refused(tmp_path: Path, files: list[tuple[str, str]]) -> None:
    with pytest.raises(RulebaseError):
        materialize(body(files), tmp_path / "v")
    assert not list(tmp_path.parent.rglob("escape.pl"))


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        '{"files": 5}',
        '{"files": [{"name": "a.pl"}]}',
        "{}",
        '{"files": [{"name": "a.pl", "text": "x."}], "documents": 7}',
    ],
)
def test_malformed_bodies_are_refused(tmp_path: Path, raw: str) -> None:
    with pytest.raises(RulebaseError):
        materialize(raw, tmp_path / "v")


def test_documents_outside_the_directory_are_not_written(tmp_path: Path) -> None:
    out = materialize(
        body([("a.pl", "x.")], [("../up.md", "u"), ("/abs.md", "a"), ("ok/../../x.md", "x")]), tmp_path / "v"
    )
    assert [p.name for p in out] == ["a.pl"]
    assert sorted(p.name for p in (tmp_path / "v").rglob("*")) == ["a.pl"]


def test_an_oversized_version_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(RulebaseError, match="larger than"):
        materialize(body([("a.pl", "x" * (MAX_BODY + 1))]), tmp_path / "v")
    assert not (tmp_path / "v").exists()


def test_the_digest_of_files_read_is_their_versions_digest(tmp_path: Path) -> None:
    """What ``version_body`` checks a body against: the digest of the bytes it read equals the version's own
    (``content_digest``), for several files, empty ones and bytes that are not UTF-8; any change moves it."""
    from sentinel_mcp.policy.rulebase_digest import bytes_digest, content_digest

    files = [tmp_path / "a.pl", tmp_path / "b.pl", tmp_path / "c.pl"]
    for f, data in zip(files, [b"x.\n", b"", b"\xff\xfe y."]):
        f.write_bytes(data)
    read = [(str(f), f.read_bytes()) for f in files]
    assert bytes_digest(read) == content_digest(files)
    assert bytes_digest([read[0], read[2], read[1]]) != content_digest(files)  # order counts
    assert bytes_digest([(read[0][0], b"x. \n"), *read[1:]]) != content_digest(files)
    assert bytes_digest([(read[0][0] + "x", read[0][1]), *read[1:]]) != content_digest(files)


async def test_a_version_with_included_files_is_published_and_loads_on_a_replica(tmp_path: Path) -> None:
    """Its included files go with it, at the names the includes give (the version is their digest too: a
    body of the configured files alone was refused as changed on disk)."""
    from sentinel_mcp.policy.engine import shared_engine
    from sentinel_mcp.policy.rulebase import load_rulebase
    from sentinel_mcp.policy.shared_rulebases import version_body

    here = tmp_path / "here"
    (here / "sub").mkdir(parents=True)
    (here / "main.pl").write_text(":- include_rules('sub/bags.pl').\n")
    (here / "sub" / "bags.pl").write_text("guard('t__bags', [n = N], (integer(N), N =< 2)).\n")
    rb = await load_rulebase(shared_engine(), [here / "main.pl"])
    out = materialize(version_body(rb), tmp_path / "replica")
    assert [p.name for p in out] == ["main.pl"]
    assert (tmp_path / "replica" / "sub" / "bags.pl").is_file()
    adopted = await load_rulebase(shared_engine(), out, rb.version)
    assert adopted.info.guards == rb.info.guards == ["t__bags"]


@pytest.mark.parametrize("name", ["../escape.pl", "/etc/escape.pl", "a/../../escape.pl", "a.pl", "x.txt", ""])
def test_an_included_file_of_an_unsafe_name_is_refused(tmp_path: Path, name: str) -> None:
    published = json.dumps({"files": [{"name": "a.pl", "text": "x."},
                                      {"name": name, "text": "y.", "included": True}]})
    with pytest.raises(RulebaseError):
        materialize(published, tmp_path / "v")
    assert not list(tmp_path.parent.rglob("escape.pl"))
