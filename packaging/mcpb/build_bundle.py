"""Build the desktop bundle (MCPB, ``server.type: uv``): manifest, a uv project that depends on the wheel
carried inside, and the entry point. Usage: python packaging/mcpb/build_bundle.py WHEEL OUT_DIR
Prints the bundle directory; pack it with ``mcpb pack OUT_DIR`` (npm @anthropic-ai/mcpb)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(wheel: Path, out: Path) -> Path:
    bundle = out / "sentinel-mcp-gateway"
    shutil.rmtree(bundle, ignore_errors=True)
    (bundle / "server").mkdir(parents=True)
    manifest = json.loads((HERE / "manifest.json").read_text())
    version = wheel.name.split("-")[1]
    if manifest["version"] != version:
        raise SystemExit(f"manifest.json says {manifest['version']}, the wheel is {version}")
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.copy(HERE / "main.py", bundle / "server" / "main.py")
    shutil.copy(wheel, bundle / "server" / wheel.name)
    (bundle / "pyproject.toml").write_text(
        "[project]\n"
        'name = "sentinel-mcp-gateway-bundle"\n'
        f'version = "{version}"\n'
        'requires-python = ">=3.11"\n'
        'dependencies = ["sentinel-mcp-gateway"]\n\n'
        "[tool.uv]\n"
        "package = false\n\n"
        "[tool.uv.sources]\n"
        f'sentinel-mcp-gateway = {{ path = "server/{wheel.name}" }}\n')
    return bundle


if __name__ == "__main__":
    print(build(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
