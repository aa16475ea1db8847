"""The bundle's entry point: the host runs it with uv, which installs the bundled wheel first."""

import sys

from sentinel_mcp.cli import main

sys.exit(main(sys.argv[1:] or ["serve"]))
