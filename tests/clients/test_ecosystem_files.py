"""The files the MCP ecosystem reads about Sentinel agree with the package they describe."""

from __future__ import annotations

import json
import tomllib

from sentinel_mcp import __version__

from ..conftest import ROOT


def test_registry_server_json_describes_the_published_package():
    server = json.loads((ROOT / "server.json").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    namespace, _, short = server["name"].partition("/")
    assert namespace.startswith("io.github.") and short and server["name"].count("/") == 1
    assert server["version"] == project["version"] == __version__
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert package["version"] == project["version"] and package["transport"] == {"type": "stdio"}
    # the registry verifies PyPI ownership by this marker in the package's README (its long description)
    assert f"mcp-name: {server['name']}" in (ROOT / project["readme"]).read_text()
    # uvx runs the command named like the package, with the package arguments
    assert package["runtimeHint"] == "uvx" and package["identifier"] in project["scripts"]
    assert [a["value"] for a in package["packageArguments"]] == ["serve"]
    # the container image names the same server (OCI label the registry checks)
    assert f'io.modelcontextprotocol.server.name="{server["name"]}"' in (ROOT / "Dockerfile").read_text()
