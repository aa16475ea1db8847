"""A syntax error names its line and says what is wrong in words. SWI-Prolog places an unclosed ``/*``
comment at line 0 (the error is raised at the end of the file, with no position): the problem named no line
at all, and said ``end_of_file_in_block_comment``. Now it names the line and column where the comment opens;
an unclosed quote, a character that cannot appear and an unknown escape are said in words too."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("text,line,column,words", [
    ("p(a).\n/* closed */ q(b).\n\n  /* never closed\nr(c).\n", 4, 3, "a /* comment is never closed"),
    ("p(a).\n/* closed */\nq('*/', b).\n  /* open\n", 4, 3, "a /* comment is never closed"),
    ("/* open at the start\np(a).\n", 1, 1, "a /* comment is never closed"),
    ("p(a).\nq('abc).\nr(b).\n", 2, None, "a quoted text is never closed (a missing '"),
    ("p(a).\nq(\"abc).\n", 2, None, "a quoted text is never closed (a missing \""),
    ("p(a).\nq(\x01).\n", 2, None, "a character that cannot appear here"),
    ("p(a).\nq('\\z').\n", 2, None, "an unknown escape \\z in a quoted text"),
])
async def test_a_syntax_error_names_its_line_and_says_what_is_wrong(tmp_path: Path, text: str, line: int,
                                                                    column: int | None, words: str) -> None:
    f = tmp_path / "rb.pl"
    f.write_text(text)
    problems = [p for p in await check_files(shared_engine(), [f]) if p.severity == "error"]
    assert len(problems) == 1, problems
    (p,) = problems
    assert (p.file, p.line) == (str(f), line) and words in p.message, p
    assert column is None or p.column == column, p
