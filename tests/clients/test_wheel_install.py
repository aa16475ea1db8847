"""Install like a user: build the wheel, install it outside the checkout (a fresh venv, pipx, uvx), and run the
embedded default through a real MCP client: an allowed governed call, and one that the airline rulebase asks
about (so the shipped rulebases, grammars and device screens came with the wheel)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

from ..conftest import ROOT

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # a copy of the sources: building must not write into the checkout (build/, *.egg-info)
    src = out / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", "__pycache__",
                                                            "build", "*.egg-info", ".pytest_cache", "state"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True, timeout=300)
    (built,) = out.glob("sentinel_mcp_gateway-*.whl")
    return built


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment outside the checkout: nothing points at the sources or the test venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != str(BIN))
    env.update(HOME=str(home), SENTINEL_DATA_DIR=str(home / "state"), **extra)
    return env


async def run_embedded_default(command: list[str], env: dict[str, str], cwd: Path) -> str:
    """Serve the embedded default over stdio from the installed command; returns what it wrote on stderr."""
    asked: list[str] = []

    async def answer(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        content = {}
        for key, spec in (params.requested_schema or {}).get("properties", {}).items():
            content[key] = True if spec.get("type") == "boolean" else (spec.get("enum") or ["change_of_plan"])[0]
        return ElicitResult(action="accept", content=content)

    errors = cwd / "stderr.txt"
    shell = f'exec {" ".join(command)} serve 2>"{errors}"'
    params = StdioServerParameters(command="/bin/sh", args=["-c", shell], env=env, cwd=str(cwd))
    async with Client(params, mode="legacy", elicitation_callback=answer) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"airline__cancel_reservation", "airline__get_user_details", "sentinel__sentinel_facts",
                "device__screen_read", "sensors__sensor_read", "llm__llm_generate", "swarm__swarm_build"} <= names
        user = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
        assert not user.is_error and asked == [], user.content[0].text
        result = await c.call_tool("airline__cancel_reservation", {"reservation_id": "NO6JO3"})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["status"] == "cancelled"
        # a question only airline.pl asks: the Prolog guard runs on the shipped rulebases
        assert "Why do you want to cancel reservation NO6JO3?" in asked, asked
    stderr = errors.read_text()
    assert "not started" not in stderr and "unavailable" not in stderr, stderr
    return stderr


async def test_wheel_in_a_fresh_venv_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = user_env(tmp_path)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, env=env, cwd=tmp_path,
                   capture_output=True, timeout=400)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import sentinel_mcp, sentinel_mcp.paths as p; "
                            "print(sentinel_mcp.__file__); print(p.RULEBASES_DIR); print(p.GRAMMARS_DIR)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert all(w.startswith(str(venv)) for w in where), where  # the installed copy, not the sources
    assert len(list(Path(where[1]).glob("*.pl"))) >= 5 and len(list(Path(where[2]).glob("*.gbnf"))) >= 6
    await run_embedded_default([str(venv / "bin" / "sentinel-mcp")], env, tmp_path)


async def test_pipx_install_of_the_wheel(wheel: Path, tmp_path: Path) -> None:
    env = user_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
                   PIPX_MAN_DIR=str(tmp_path / "man"), PIPX_DEFAULT_PYTHON=sys._base_executable)
    done = subprocess.run([str(BIN / "pipx"), "install", str(wheel)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    await run_embedded_default([str(tmp_path / "bin" / "sentinel-mcp")], env, tmp_path)


async def test_uvx_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    env = user_env(tmp_path, UV_PYTHON=sys._base_executable, UV_PYTHON_DOWNLOADS="never",
                   UV_TOOL_DIR=str(tmp_path / "uv-tools"), UV_CACHE_DIR=str(Path.home() / ".cache" / "uv"))
    uvx = [str(BIN / "uvx"), "--from", str(wheel), "sentinel-mcp"]
    # the first run resolves and installs; time it apart from the MCP session's own start-up
    warm = subprocess.run([*uvx, "--help"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400)
    assert warm.returncode == 0 and "serve" in warm.stdout, warm.stderr[-2000:]
    await run_embedded_default(uvx, env, tmp_path)
