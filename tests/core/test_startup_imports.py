"""Cold start (issue 21): the modules `serve` imports before it answers its first tools/list do not import the
heavy libraries only some later request needs (numpy: the search index, opened on the first search; jinja2: the
console's templates, made for the first page). A fresh interpreter, so nothing another test imported counts."""

from __future__ import annotations

import subprocess
import sys

LAZY = ("numpy", "jinja2")


def test_start_up_modules_leave_heavy_libraries_unimported() -> None:
    code = ("import sys, sentinel_mcp.cli, sentinel_mcp.app.serve, sentinel_mcp.policy.guard, "
            "sentinel_mcp.policy.own_tools, sentinel_mcp.console.app; "
            f"print(','.join(m for m in {LAZY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"imported at start-up: {out.stdout.strip()}"


def test_the_lazy_parts_still_work() -> None:
    code = ("import asyncio, sys, tempfile, pathlib\n"
            "from sentinel_mcp.search.search_service import SearchService\n"
            "from sentinel_mcp.console.web import Console\n"
            "async def main():\n"
            "    s = await SearchService(pathlib.Path(tempfile.mkdtemp()) / 'p.db').open()\n"
            "    await s.close()\n"
            "asyncio.run(main())\n"
            "c = Console({}, None, None)\n"
            "assert c.templates is c.templates and c.templates.get_template('problem.html')\n"
            "print('numpy' in sys.modules, 'jinja2' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
