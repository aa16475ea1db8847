"""``python core_copy_serve.py DIRECTORY sentinel-mcp-arguments...``: a real Sentinel whose Prolog core (the
engine's, the rulebase rehearsal's and the query worker's) is read from DIRECTORY, a copy of the package's
Prolog directory, instead of the package's own (tests/policy/test_core_qlf_metrics.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from sentinel_mcp.cli import main
from sentinel_mcp.policy import core_qlf, engine_thread, load_rehearsal, query_worker

directory = Path(sys.argv[1])
core_qlf.PROLOG_DIR = directory
engine_thread.CORE = directory / "sentinel_core.pl"
load_rehearsal.SCRIPT = directory / "load_rehearsal.pl"
query_worker.WORKER = directory / "query_worker.pl"
sys.argv = ["sentinel-mcp", *sys.argv[2:]]
raise SystemExit(main())
