"""``python -m sentinel_mcp.llm [--model PATH]``: the llm built-in alone, over stdio."""

from __future__ import annotations

import argparse
import sys

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.standalone_entry import parsed, serve_alone
from sentinel_mcp.llm.errors import LlmError
from sentinel_mcp.paths import default_data_dir


def main(argv: list[str] | None = None) -> int:
    return serve_alone("sentinel llm", lambda: _serve(argv))  # the command line's edge (standalone_entry)


def _serve(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentinel_mcp.llm", description=__doc__)
    parser.add_argument("--model", help="GGUF model path (default: $SENTINEL_MODEL, then the model package)")
    parser.add_argument("--n-ctx", type=int, help="context window in tokens")
    parser.add_argument("--threads", type=int, help="CPU threads for inference")
    args = parsed(parser, argv)
    settings = {k: v for k, v in {"model": args.model, "n_ctx": args.n_ctx, "n_threads": args.threads}.items()
                if v is not None}
    from sentinel_mcp.llm.server import create_server

    try:
        server = create_server(
            BuiltinContext(name="llm", data_dir=default_data_dir() / "llm", settings=settings)
        )
    except LlmError as exc:
        print(f"sentinel llm: {exc}", file=sys.stderr)
        return 2
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
