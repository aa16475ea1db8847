"""``call`` and ``chat``: an endpoint that is not an http(s) URL, or tool arguments that are not a JSON
object, get one plain line and exit 2 before anything connects (they were a pydantic ValidationError's
dump, an httpx exception's class name, or "ExceptionGroup: unhandled errors in a TaskGroup")."""

from __future__ import annotations

import pytest

from sentinel_mcp.cli import main


@pytest.mark.parametrize("arguments", ["[1, 2]", "3", '"text"', "null", "true"])
def test_call_arguments_must_be_an_object(monkeypatch, tmp_path, capsys, arguments):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    assert main(["call", "airline__x", arguments, "--url", "http://127.0.0.1:9/mcp", "--token", "t"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sentinel-mcp: ") and "JSON object" in err and "\n" not in err, err


@pytest.mark.parametrize("url", ["ftp://x/mcp", "127.0.0.1:8765/mcp", "http://", "http://[::1/mcp",
                                 "file:///etc/passwd", "http://h:99999/mcp"])
@pytest.mark.parametrize("command", [["call", "airline__x", "{}"], ["chat"]])
def test_an_endpoint_that_is_not_an_http_url_is_one_line(monkeypatch, tmp_path, capsys, command, url):
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    assert main([*command, "--url", url, "--token", "t"]) == 2
    out = capsys.readouterr()
    err = (out.err + out.out).strip()
    assert "--url" in err and "\n" not in err and "Error" not in err, err
