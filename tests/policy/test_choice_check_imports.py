"""A check of a rulebase with choice lists (its questions' options are checked as it loads:
``rulebase._unaskable_choices``) imports none of the MCP SDK's transport (``mcp``: its client and server,
~0.7 s of CPU in every check child, after the request came), only the wire types (``mcp_types``, the same
objects ``mcp.types`` names). ``sentinel-mcp db migrate`` (every server store's schema) imports neither."""

from __future__ import annotations

import subprocess
import sys

from sentinel_mcp.paths import RULEBASES_DIR

_SDK = "sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.'))"


def _run(probe: str) -> str:
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_a_check_of_choice_lists_in_the_check_child_imports_no_mcp_transport() -> None:
    files = [str(RULEBASES_DIR / name) for name in ("default.pl", "airline.pl", "retail.pl")]
    probe = (
        "import asyncio, sys\nimport sentinel_mcp.policy.check_child as c\nc._warm()\n"
        f"problems = asyncio.run(c._check({{'files': {files!r}}}))\n"
        # the choices were read (a load that failed before them would prove nothing)
        "import sentinel_mcp.policy.questions\n"
        "print(len(problems), 'sentinel_mcp.policy.questions' in sys.modules)\n"
        f"print({_SDK})\n"
    )
    checked, imported = _run(probe).splitlines()
    assert checked.split()[1] == "True", checked
    assert imported == "[]", imported


def test_the_question_builder_uses_the_very_types_of_the_sdk() -> None:
    """``mcp_types`` and ``mcp.types`` name the same classes: an answer the SDK made is still one the
    question builder's modules accept (``isinstance``)."""
    probe = (
        "import mcp.types as t\nfrom sentinel_mcp.core import asking, own_voice\n"
        "print(asking.ElicitResult is t.ElicitResult, own_voice.TextContent is t.TextContent,"
        " own_voice.EmbeddedResource is t.EmbeddedResource, own_voice.ResourceLink is t.ResourceLink,"
        " own_voice.TextResourceContents is t.TextResourceContents)\n"
    )
    assert _run(probe) == "True True True True True"


def test_db_migrates_schemas_import_no_mcp() -> None:
    probe = (
        "import sys\nfrom sentinel_mcp.app.server_stores import server_schemas\nserver_schemas()\n"
        f"print({_SDK}, 'mcp_types' in sys.modules)\n"
    )
    assert _run(probe) == "[] False"
