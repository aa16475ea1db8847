"""``python -m sentinel_mcp.swarm [-c CONFIG]``: serve the swarm alone over stdio.

Settings come from the config's ``sentinel.swarm`` section (the embedded default without ``-c``);
``SENTINEL_SWARM_BACKEND`` overrides the backend (``sampling`` suits a client that offers sampling).
Standalone, the ``local`` backend loads the model itself (``sentinel.swarm.local.model_path``).
"""

from __future__ import annotations

import argparse
import os

from sentinel_mcp.config import load_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.standalone_entry import parsed, serve_alone


def main(argv: list[str] | None = None) -> int:
    # the command line's edge (standalone_entry): a config error is said in one line, exit 2
    return serve_alone("python -m sentinel_mcp.swarm", lambda: _serve(argv))


def _serve(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentinel_mcp.swarm", description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--config", help="config file (JSON)")
    args = parsed(parser, argv)
    cfg = load_config(args.config)
    settings = dict(cfg.sentinel.builtin_settings("swarm"))
    if os.environ.get("SENTINEL_SWARM_BACKEND"):
        settings["backend"] = os.environ["SENTINEL_SWARM_BACKEND"]
    from sentinel_mcp.swarm.server import create_server
    server = create_server(
        BuiltinContext(name="swarm", data_dir=cfg.data_dir / "swarm", settings=settings)
    )
    server.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
