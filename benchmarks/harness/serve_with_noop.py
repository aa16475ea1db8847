"""``sentinel-mcp`` with one more built-in, ``bench`` (a no-op tool), for the capacity benchmark: the
product's
built-in table is left as shipped; this launcher adds the entry in its own process, then runs the normal CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sentinel_mcp.core import builtin  # noqa: E402

builtin.BUILTINS["bench"] = "noop_builtin:create_server"

from sentinel_mcp.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
