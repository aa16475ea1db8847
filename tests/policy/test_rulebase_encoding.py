"""A rulebase file is UTF-8 text, read as such whatever the gateway's locale: SWI-Prolog's default encoding
follows LANG/LC_ALL, and under LC_ALL=C (a service or a container without a UTF-8 locale; Python's own
locale coercion is off when LC_ALL is set) it read ``blocked('café')`` as a five-character atom of
replacement characters, so a deny list of non-ASCII names never matched the caller's ``café`` and the call
went through. Bytes that are not UTF-8 (a Latin-1 editor, a UTF-16 file) were read silently, each as some
character, and the console's and the resource's copies of the file then failed to decode: now they are an
error naming the file, the line and the byte. A UTF-8 BOM and CRLF line ends are UTF-8 text and load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import Rulebase, RulebaseInfo

pytestmark = pytest.mark.timeout(120)

DENY_LIST = "fact(blocked/1).\nblocked_name('caf\u00e9').\nguard('t__w', [x = X], \\+ blocked_name(X)).\n"

DECIDE = """
import asyncio, sys
from pathlib import Path
from sentinel_mcp.core.decision import ToolCall
from tests.policy.policy_rig import make_guard

async def main():
    g = await make_guard(None, Path(sys.argv[2]), files=[Path(sys.argv[1])])
    try:
        d = await g.decide(ToolCall(name='t__w', server='t', tool='w', arguments={'x': 'caf\\u00e9'},
                                    session_id='s1'))
        print('DECISION', type(d).__name__)
    finally:
        await g.close()

asyncio.run(main())
"""


def call(**arguments: str) -> ToolCall:
    return ToolCall(name="t__w", server="t", tool="w", arguments=arguments, session_id="s1")


@pytest.mark.parametrize("locale", [{"LC_ALL": "C"}, {"LC_ALL": "POSIX", "LANG": "C"}])
def test_a_deny_list_of_non_ascii_names_holds_under_any_locale(
    tmp_path: Path, locale: dict[str, str]
) -> None:
    f = tmp_path / "deny.pl"
    f.write_text(DENY_LIST, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update(locale, PYTHONPATH=str(PROJECT_ROOT), PYTHONCOERCECLOCALE="0")
    r = subprocess.run(
        [sys.executable, "-c", DECIDE, str(f), str(tmp_path / "facts.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
        cwd=PROJECT_ROOT,
    )
    assert "DECISION Deny" in r.stdout, (r.stdout, r.stderr[-2000:])


BAD_BYTES = [
    # (bytes, line of the first byte that is not UTF-8)
    (b"fact(ok/1).\n\nblocked('caf\xe9').\n", 3),  # Latin-1
    (b"fact(ok/1).\n% caf\xe9 (a comment)\nother(a).\n", 2),
    (b"fact(ok/1).\nname('\xc3').\n", 2),  # a sequence cut short
    (b"fact(ok/1).\nname('\xed\xa0\x80').\n", 2),  # a surrogate written as UTF-8
    ("fact(ok/1).\n".encode("utf-16"), 1),  # UTF-16 with its BOM
    (b"fact(ok/1).\nname('\xc0\xaf').\n", 2),  # an overlong '/'
]


@pytest.mark.parametrize("data,line", BAD_BYTES)
async def test_bytes_that_are_not_utf8_are_an_error_with_file_and_line(
    tmp_path: Path, data: bytes, line: int
) -> None:
    f = tmp_path / "rb.pl"
    f.write_bytes(data)
    errors = [p for p in await check_files(shared_engine(), [f]) if p.severity == "error"]
    assert any(p.file == str(f) and p.line == line and "UTF-8" in p.message for p in errors), errors


async def test_a_utf8_bom_and_crlf_line_ends_load_and_decide(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_bytes(
        b"\xef\xbb\xbf" + DENY_LIST.replace("\n", "\r\n").encode("utf-8") + b"oops(X) :- nope(X).\r\n"
    )
    problems = await check_files(shared_engine(), [f])
    assert [(p.line, p.message) for p in problems] == [(4, "call to undefined predicate nope/1")], problems
    f.write_bytes(b"\xef\xbb\xbf" + DENY_LIST.replace("\n", "\r\n").encode("utf-8"))
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        assert isinstance(await g.decide(call(x="caf\u00e9")), Deny)
        assert isinstance(await g.decide(call(x="cafe")), Allow)
    finally:
        await g.close()


def test_a_file_changed_to_other_bytes_after_its_load_is_still_shown(tmp_path: Path) -> None:
    """What the resource sentinel://rulebase shows reads the files again: one since rewritten in Latin-1 is
    shown with replacement characters, not a decoding error."""
    f = tmp_path / "rb.pl"
    f.write_bytes(b"blocked('caf\xe9').\n")
    rb = Rulebase(version="v", module="m", files=[str(f)], info=RulebaseInfo())
    assert "blocked('caf\ufffd')" in rb.text()
