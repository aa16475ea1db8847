"""A check of a rulebase with choice lists (its questions' options are checked as it loads:
``rulebase._unaskable_choices``) imports none of the MCP SDK's transport (``mcp``: its client and
server, ~0.7 s of CPU in every check child, after the request came), only the wire types (``mcp_types``,
the same objects ``mcp.types`` names). The policy guard imports no ``mcp`` either; ``sentinel-mcp db
migrate`` (every server store's schema) imports neither."""

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


def test_the_policy_guard_imports_no_mcp_transport() -> None:
    probe = f"import sys\nimport sentinel_mcp.policy.guard\nprint({_SDK})\n"
    assert _run(probe) == "[]"


# the modules that name the wire types by ``mcp_types``: each type the very class ``mcp.types`` names, so what
# the SDK made is what they accept (``isinstance``), and what they make is the SDK's
_BY_MCP_TYPES = [
    "sentinel_mcp.core.asking", "sentinel_mcp.core.own_voice", "sentinel_mcp.core.caller_link",
    "sentinel_mcp.core.builtin", "sentinel_mcp.core.tool_ref", "sentinel_mcp.core.port",
    "sentinel_mcp.policy.own_tools", "sentinel_mcp.policy.solver", "sentinel_mcp.policy.draft_check",
    "sentinel_mcp.policy.caller_resources", "sentinel_mcp.policy.observe_step", "sentinel_mcp.policy.draft",
    "sentinel_mcp.policy.check_process",
]


def test_each_wire_type_is_the_sdks_very_class() -> None:
    probe = (
        "import importlib, mcp.types as t\nseen, other = 0, []\n"
        f"for name in {_BY_MCP_TYPES!r}:\n"
        "    for key, value in vars(importlib.import_module(name)).items():\n"
        "        if isinstance(value, type) and value.__module__.startswith('mcp_types'):\n"
        "            seen += 1\n"
        "            if getattr(t, key, None) is not value: other.append((name, key))\n"
        "print(seen > 20, other)\n"
    )
    assert _run(probe) == "True []"


def test_db_migrates_schemas_import_no_mcp() -> None:
    probe = (
        "import sys\nfrom sentinel_mcp.app.server_stores import server_schemas\nserver_schemas()\n"
        f"print({_SDK}, 'mcp_types' in sys.modules)\n"
    )
    assert _run(probe) == "[] False"
