"""Cold start (issue 21): the stdio ``serve`` of the embedded default launches its airline upstream from the
default's plain data before the config models (pydantic) load, exactly as the parsed config will ask for it
(so the SDK adopts it); a config that cannot be read is still reported at start, and what was launched is
killed. SWI-Prolog's start begins before the SDK's import and reports its failure to the guard's start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

# a fresh interpreter: what is imported at the launch is this process's start, not the test session's
_AT_LAUNCH = textwrap.dedent(
    """
    import json, sys, anyio
    from sentinel_mcp.app import early_start
    from sentinel_mcp.gateway import early_spawn

    seen = []

    async def noted(command, args, env, cwd, name=None):
        seen.append({"key": [command, list(args), env, cwd], "name": name,
                     "loaded": [m for m in ("pydantic", "sentinel_mcp.config", "mcp") if m in sys.modules]})
        return False  # not launched: nothing to discard

    early_spawn.launch = noted

    class Stop(Exception):
        pass

    async def stop(config):
        raise Stop

    early_start.serve_stdio_early = stop
    try:
        anyio.run(early_start.serve_stdio_of, None)
    except Stop:
        pass
    from sentinel_mcp.config import embedded_default
    early = list(seen)
    seen.clear()
    anyio.run(early_start.launch_stdio_upstreams, embedded_default())
    print(json.dumps({"early": early, "parsed": seen}))
    """
)


def test_the_default_upstream_is_launched_before_the_config_models_as_the_parse_asks(data_dir: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _AT_LAUNCH], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert [e["name"] for e in got["early"]] == ["airline"]
    assert got["early"][0]["loaded"] == [], "launched after the config models (or the SDK) loaded"
    # the same spawn as the parsed default asks for: the SDK adopts it (early_spawn's exact match)
    assert [e["key"] for e in got["early"]] == [e["key"] for e in got["parsed"]]


async def test_a_config_that_cannot_be_read_kills_the_launched_upstream(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sentinel_mcp.config as config_module
    from sentinel_mcp.app import early_start
    from sentinel_mcp.core.errors import ConfigError
    from sentinel_mcp.gateway import early_spawn

    launched: list[int] = []

    def refused(path: object) -> None:
        launched.extend(early_spawn.launched_pids())
        raise ConfigError("bad config, line 3: no such key")

    monkeypatch.setattr(config_module, "load_config", refused)
    with pytest.raises(ConfigError, match="line 3"):
        await early_start.serve_stdio_of(None)
    assert len(launched) == 1, "the default upstream was not launched before the config was read"
    assert early_spawn.pending() == 0
    with pytest.raises(ProcessLookupError):  # killed and reaped with its process group
        os.kill(launched[0], 0)


def test_serve_still_reports_a_bad_config_file_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {}\n,,}\n')
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(bad), "serve"], capture_output=True,
                         text=True, timeout=120, stdin=subprocess.DEVNULL,
                         env={**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "d")})
    assert out.returncode == 2
    assert str(bad) in out.stderr and "line 2" in out.stderr, out.stderr


_BEGUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from sentinel_mcp.policy import engine_thread
    from sentinel_mcp.policy.engine_thread import EngineError, EngineThread

    if sys.argv[1] == "failing":
        engine_thread.CORE = Path("/nonexistent/sentinel_core.pl")  # its load fails: the start fails
    thread = EngineThread()
    thread.begin()  # returns at once; SWI-Prolog starts on the engine thread
    try:
        thread.start()
        print("answered", thread.run_sync(lambda prolog: len(list(prolog.query("X = 1")))))
    except EngineError as e:
        print("refused" if "cannot start SWI-Prolog" in str(e) else repr(e))
    """
)


@pytest.mark.parametrize(("mode", "said"), [("working", "answered 1"), ("failing", "refused")])
def test_an_engine_begun_early_serves_and_its_failed_start_is_reported_to_its_start(mode: str,
                                                                                     said: str) -> None:
    out = subprocess.run([sys.executable, "-c", _BEGUN, mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == said, out.stdout + out.stderr[-2000:]


_THROUGH_CLI = _AT_LAUNCH.replace(
    "anyio.run(early_start.serve_stdio_of, None)",
    "import sentinel_mcp.cli\n    sentinel_mcp.cli.main(['serve'])")


def test_serve_from_the_command_line_launches_before_the_config_models(data_dir: Path) -> None:
    """The same launch through ``sentinel-mcp serve`` itself: the command's module (gateway_cli) and what the
    command line imports to run it load no pydantic before the upstream is launched."""
    assert "sentinel_mcp.cli.main" in _THROUGH_CLI
    out = subprocess.run([sys.executable, "-c", _THROUGH_CLI], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert [e["name"] for e in got["early"]] == ["airline"]
    assert got["early"][0]["loaded"] == [], "launched after the config models (or the SDK) loaded"
