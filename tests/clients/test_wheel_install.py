"""Install like a user: build the wheel, install it outside the checkout (a fresh venv, pipx, uvx), and run
the
embedded default through a real MCP client: an allowed governed call, and one that the airline rulebase asks
about (so the shipped rulebases, grammars and device screens came with the wheel)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import ssl
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from ..conftest import ROOT, free_port, stop_process, wait_http

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

BIN = Path(sys.executable).parent


DOCKERFILE = ROOT / "Dockerfile"


def dockerfile() -> dict[str, list[str]]:
    """The Dockerfile's instructions by keyword, continuation lines joined (``RUN`` in order of appearance).
    """
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    steps: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            steps.setdefault(keyword, []).append(" ".join(rest.split()))
    return steps


def docker_run(command: str, python: str, wheels: Path) -> list[str]:
    """A Dockerfile RUN command for this machine: ``python`` is the given interpreter, /wheels a directory."""
    assert command.startswith("python -m pip "), command
    return [python, *command.split()[1:]]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built like the Dockerfile's build stage: only what it COPYs, then its ``pip wheel`` command."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def build_wheel(out: Path, env: dict[str, str] | None = None) -> Path:
    src = out / "src"
    src.mkdir(parents=True)
    for copy in dockerfile()["COPY"]:
        if copy.startswith("--from="):
            continue
        *sources, _target = copy.split()
        for name in sources:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, src / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(source, src / name)
    build = next(r for r in dockerfile()["RUN"] if " wheel " in r)
    command = [a.replace("/wheels", str(out)) for a in docker_run(build, sys.executable, out)]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300, cwd=src, env=env)
    (built,) = out.glob("sentinel_mcp_gateway-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv outside the checkout, the wheel installed by the Dockerfile's run-stage ``pip install``."""
    home = tmp_path_factory.mktemp("home")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = (
        next(r for r in dockerfile()["RUN"] if " install " in r and "/wheels" in r).split("&&")[0].strip()
    )
    command = [
        a.replace("/wheels/*.whl", str(wheel))
        for a in docker_run(install, str(venv / "bin" / "python"), wheel.parent)
    ]
    subprocess.run(command, check=True, env=user_env(home), cwd=home, capture_output=True, timeout=400)
    return venv


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
            content[key] = (
                True if spec.get("type") == "boolean" else (spec.get("enum") or ["change_of_plan"])[0]
            )
        return ElicitResult(action="accept", content=content)

    errors = cwd / "stderr.txt"
    shell = f'exec {" ".join(command)} serve 2>"{errors}"'
    params = StdioServerParameters(command="/bin/sh", args=["-c", shell], env=env, cwd=str(cwd))
    async with Client(params, mode="legacy", elicitation_callback=answer) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {
            "airline__cancel_reservation",
            "airline__get_user_details",
            "sentinel__sentinel_facts",
            "device__screen_read",
            "sensors__sensor_read",
            "llm__llm_generate",
            "swarm__swarm_build",
        } <= names
        # the traveller's profile is personal: the user consents once ("remember"), then reads just run
        user = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
        assert not user.is_error and len(asked) == 1 and "traveller profile" in asked[0], user.content[0].text
        again = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
        assert not again.is_error and len(asked) == 1, again.content[0].text
        result = await c.call_tool("airline__cancel_reservation", {"reservation_id": "NO6JO3"})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["status"] == "cancelled"
        # a question only airline.pl asks: the Prolog guard runs on the shipped rulebases
        assert "Why do you want to cancel reservation NO6JO3?" in asked, asked
    stderr = errors.read_text()
    assert "not started" not in stderr and "unavailable" not in stderr, stderr
    return stderr


# what the wheel ships: these packages' files, and the shipped rulebases and grammars inside sentinel_mcp
SHIPPED_PACKAGES = ("sentinel_mcp", "device_tools", "examples")
SHIPPED_DATA = {"rulebases": "sentinel_mcp/rulebases", "grammars": "sentinel_mcp/grammars"}


def shipped_files() -> set[str]:
    """Every file of the checkout the wheel must carry, as its path in the wheel: the tracked ones (a local
    scratch file is nobody's to ship), else every file but build products."""
    places = [(p, p) for p in SHIPPED_PACKAGES] + list(SHIPPED_DATA.items())
    tracked = subprocess.run(["git", "ls-files", "-z", "--", *(top for top, _ in places)], cwd=ROOT,
                             capture_output=True, text=True)
    if tracked.returncode == 0 and tracked.stdout:
        files = [ROOT / f for f in tracked.stdout.split("\0") if f]
    else:
        files = [f for top, _ in places for f in (ROOT / top).rglob("*") if f.is_file()
                 and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".so")]
    found: set[str] = set()
    for top, inside in places:
        for f in files:
            if f.is_relative_to(ROOT / top):
                found.add(f"{inside}/{f.relative_to(ROOT / top).as_posix()}")
    return found


def test_the_wheel_carries_every_shipped_file(wheel: Path) -> None:
    """A file the code reads at run time that the package-data patterns miss is absent only from installs
    (examples/cluster's haproxy template, the retail data's licence): every file is checked, not a list."""
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(shipped_files() - names)
    assert not missing, missing


async def test_wheel_in_a_fresh_venv_outside_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    env = user_env(tmp_path)
    where = subprocess.run(
        [
            str(fresh_venv / "bin" / "python"),
            "-c",
            "import sentinel_mcp, sentinel_mcp.paths as p; "
            "print(sentinel_mcp.__file__); print(p.RULEBASES_DIR); print(p.GRAMMARS_DIR); "
            "from sentinel_mcp.policy.engine import shared_engine; shared_engine().start(); "
            "from sentinel_mcp.policy import prolog_call; print(prolog_call.native_in_use())",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    *where, native = where
    assert all(w.startswith(str(fresh_venv)) for w in where), where  # the installed copy, not the sources
    # built where a C compiler is (this machine): the guard calls Prolog through the wheel's C function
    assert native == str(shutil.which("cc") is not None), native
    assert len(list(Path(where[1]).glob("*.pl"))) >= 5 and len(list(Path(where[2]).glob("*.gbnf"))) >= 6
    assert not (
        fresh_venv / "lib" / "python3.11" / "site-packages" / "a2a"
    ).exists()  # the a2a-sdk's name is free
    await run_embedded_default([str(fresh_venv / "bin" / "sentinel-mcp")], env, tmp_path)


CORE_LOADS = """
import asyncio, hashlib, json
from pathlib import Path
from sentinel_mcp.policy import core_qlf, load_rehearsal, rulebase_includes
from sentinel_mcp.policy.engine import shared_engine

async def main():
    engine = shared_engine()
    how = await engine.json_query("core_files:core_loaded(H), sentinel_core:to_json_atom(json([h=H]), Out)")
    shipped = core_qlf.PROLOG_DIR.parents[1] / "rulebases" / "airline.pl"
    proc = await load_rehearsal._spawn([shipped], 60)
    out = await proc.stdout.read()
    proc.stdin.close()
    await proc.wait()
    print(core_qlf.PROLOG_DIR, how["h"], json.loads(out)["core"])

asyncio.run(main())
"""


def test_the_wheel_carries_its_core_precompiled_and_loads_it(
    wheel: Path, fresh_venv: Path, tmp_path: Path
) -> None:
    """setup.py's build compiles the core (policy/core_qlf.py): the wheel carries each module's .qlf and the
    manifest, and the installed engine and a rehearsal child load them (no .qlf written there at run time)."""
    from sentinel_mcp.policy.core_qlf import MANIFEST, MODULES

    names = set(zipfile.ZipFile(wheel).namelist())
    inside = "sentinel_mcp/policy/prolog"
    assert {f"{inside}/{m}.qlf" for m in MODULES} | {f"{inside}/{MANIFEST}"} <= names
    python = str(fresh_venv / "bin" / "python")
    where = subprocess.run([python, "-c", "import sentinel_mcp.policy.core_qlf as c; print(c.PROLOG_DIR)"],
                           env=user_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, check=True)
    prolog = Path(where.stdout.strip())
    before = {p.name: p.stat().st_mtime_ns for p in prolog.iterdir()}
    out = subprocess.run([python, "-c", CORE_LOADS], env=user_env(tmp_path), cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(prolog), "qlf", "qlf"]
    assert prolog.is_relative_to(fresh_venv)
    assert {p.name: p.stat().st_mtime_ns for p in prolog.iterdir()} == before


async def test_a_wheel_built_without_a_c_compiler_decides_through_ctypes(
    fresh_venv: Path, tmp_path: Path
) -> None:
    """The container's build stage (python:3.11-slim) has no C compiler: the guard's C function is optional,
    so the wheel builds without it, installs, and the guard calls Prolog through ctypes; the embedded default
    then allows and asks as the full install does. (Its dependencies come from the fresh venv's
    site-packages, after its own.)"""
    built = build_wheel(tmp_path / "built", env={**os.environ, "CC": "false"})  # every compile fails
    assert not [n for n in zipfile.ZipFile(built).namelist() if n.endswith(".so")]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = user_env(tmp_path)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(built)],
                   check=True, env=env, cwd=tmp_path, capture_output=True, timeout=300)
    site = "lib/python3.11/site-packages"
    (venv / site / "deps.pth").write_text(str(fresh_venv / site) + "\n")
    where, native = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sentinel_mcp; print(sentinel_mcp.__file__); "
         "from sentinel_mcp.policy.engine import shared_engine; shared_engine().start(); "
         "from sentinel_mcp.policy import prolog_call; print(prolog_call.native_in_use())"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert where.startswith(str(venv)) and native == "False", (where, native)
    await run_embedded_default([str(venv / "bin" / "sentinel-mcp")], env, tmp_path)


async def test_the_container_command_serves_https(fresh_venv: Path, tmp_path: Path) -> None:
    """The image's ENTRYPOINT + CMD, ENV and HEALTHCHECK, run from the same install (docker itself is not
    here).
    It binds beyond loopback, so it serves TLS: the local CA is made in the volume on first start."""
    steps = dockerfile()
    assert steps["FROM"][-1].startswith("python:3.11-slim-bookworm")  # Debian
    assert any("apt-get install" in r and "swi-prolog-nox" in r for r in steps["RUN"])
    assert steps["USER"] == ["sentinel"] and steps["EXPOSE"] == ["8765"]
    entry, cmd = json.loads(steps["ENTRYPOINT"][0]), json.loads(steps["CMD"][0])
    assert cmd == ["serve", "--http", "0.0.0.0:8765", "--tls-local"]
    port = str(free_port())
    here = [
        a.replace("0.0.0.0:8765", f"127.0.0.1:{port}") for a in cmd
    ]  # this machine: loopback, a free port
    env = user_env(tmp_path)
    volumes = {"/data": str(tmp_path / "data"), "/state": str(tmp_path / "state-volume")}  # its VOLUMEs, here
    assert steps["VOLUME"] == [" ".join(volumes)]
    for assignment in steps["ENV"][0].split():
        key, _, value = assignment.partition("=")
        env[key] = volumes.get(value, value)
    env["PATH"] = f"{fresh_venv / 'bin'}{os.pathsep}{env['PATH']}"
    proc = subprocess.Popen(
        [*entry, *here],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        ca_file = tmp_path / "data" / "tls" / "ca.pem"
        for _ in range(600):  # written before the server listens
            if ca_file.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert ca_file.exists(), proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "no CA"
        trust = ssl.create_default_context(cafile=str(ca_file))
        wait_http(f"https://127.0.0.1:{port}/healthz", proc=proc, timeout=90, context=trust)
        health = steps["HEALTHCHECK"][0].split(" CMD ", 1)[1].replace("8765", port)
        assert health.startswith("python -c ") and "https://" in health
        probe = subprocess.run(
            [str(fresh_venv / "bin" / "python"), "-c", shlex.split(health)[2]],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert probe.returncode == 0, probe.stderr
        # the owner's token, generated on this first start where the image keeps its state (the volume)
        token = (tmp_path / "data" / "http-token").read_text().strip()
        # the audit anchor's key in its own volume, not in /data
        assert list((tmp_path / "state-volume" / "sentinel-mcp" / "anchors").glob("*/key"))
        async with httpx2.AsyncClient(timeout=10, verify=trust) as anonymous:
            assert (await anonymous.post(f"https://127.0.0.1:{port}/mcp", json={})).status_code == 401
        async with httpx2.AsyncClient(timeout=10) as system_store:
            with pytest.raises(
                httpx2.HTTPError
            ):  # the local CA is nobody's by default: trusted only when given
                await system_store.get(f"https://127.0.0.1:{port}/healthz")
            assert (
                await system_store.get(f"http://127.0.0.1:{port}/healthz")
            ).status_code == 400  # no plaintext
        shown = subprocess.run(
            [str(fresh_venv / "bin" / "sentinel-mcp"), "config", "token"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shown.stdout.strip() == token, shown.stderr  # what `docker exec ... config token` prints
        http = httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {token}"}, verify=trust)
        async with Client(streamable_http_client(f"https://127.0.0.1:{port}/mcp", http_client=http)) as c:
            assert "airline__get_user_details" in {t.name for t in (await c.list_tools()).tools}
        # state where the image's volume is (the audit log in this gateway's own instance directory)
        assert list((tmp_path / "data" / "instances").glob("*/sentinel.db"))
    finally:
        stop_process(proc)


async def test_pipx_install_of_the_wheel(wheel: Path, tmp_path: Path) -> None:
    env = user_env(
        tmp_path,
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        PIPX_DEFAULT_PYTHON=sys._base_executable,
    )
    done = subprocess.run(
        [str(BIN / "pipx"), "install", str(wheel)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    await run_embedded_default([str(tmp_path / "bin" / "sentinel-mcp")], env, tmp_path)


async def test_uvx_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    env = user_env(
        tmp_path,
        UV_PYTHON=sys._base_executable,
        UV_PYTHON_DOWNLOADS="never",
        UV_TOOL_DIR=str(tmp_path / "uv-tools"),
        UV_CACHE_DIR=str(Path.home() / ".cache" / "uv"),
    )
    uvx = [str(BIN / "uvx"), "--from", str(wheel), "sentinel-mcp"]
    # the first run resolves and installs; time it apart from the MCP session's own start-up
    warm = subprocess.run(
        [*uvx, "--help"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400
    )
    assert warm.returncode == 0 and "serve" in warm.stdout, warm.stderr[-2000:]
    # the MCP registry's hint (server.json: runtimeHint uvx) runs the command named like the distribution
    alias = subprocess.run(
        [str(BIN / "uvx"), "--from", str(wheel), "sentinel-mcp-gateway", "--version"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert alias.returncode == 0 and alias.stdout.startswith("sentinel-mcp "), alias.stderr[-2000:]
    await run_embedded_default(uvx, env, tmp_path)


async def test_desktop_bundle_runs_with_uv(wheel: Path, tmp_path: Path) -> None:
    """The MCPB bundle (server.type uv): its manifest passes the official CLI's validation, it packs, and the
    unpacked bundle runs the way its manifest tells a host to (``uv run --directory <bundle>
    server/main.py``)."""
    from .ts_node import TS_DIR, require_node

    node = str(require_node())
    mcpb = str(TS_DIR / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "cli" / "cli.js")
    built = subprocess.run(
        [
            sys.executable,
            str(ROOT / "packaging" / "mcpb" / "build_bundle.py"),
            str(wheel),
            str(tmp_path / "out"),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    bundle = Path(built)
    valid = subprocess.run(
        [node, mcpb, "validate", str(bundle / "manifest.json")], capture_output=True, text=True
    )
    assert valid.returncode == 0 and "validation passes" in valid.stdout, valid.stdout + valid.stderr
    packed = subprocess.run(
        [node, mcpb, "pack", str(bundle), str(tmp_path / "sentinel.mcpb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert packed.returncode == 0, packed.stdout + packed.stderr
    import zipfile

    unpacked = tmp_path / "installed"
    with zipfile.ZipFile(tmp_path / "sentinel.mcpb") as z:
        z.extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text())
    config = manifest["server"]["mcp_config"]
    assert config["command"] == "uv" and config["args"][-1] == "serve"
    args = [
        a.replace("${__dirname}", str(unpacked)) for a in config["args"][:-1]
    ]  # run_embedded_default adds serve
    env = user_env(
        tmp_path,
        UV_PYTHON=sys._base_executable,
        UV_PYTHON_DOWNLOADS="never",
        UV_CACHE_DIR=str(Path.home() / ".cache" / "uv"),
        SENTINEL_CONFIG="",
    )  # the empty user_config
    await run_embedded_default([str(BIN / "uv"), *args], env, tmp_path)
