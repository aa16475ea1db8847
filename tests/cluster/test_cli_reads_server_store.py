"""``sentinel-mcp facts`` and ``sentinel-mcp query`` (real subprocesses) read the shared PostgreSQL store when
one
is configured: the facts replicas wrote, not a local file (which, on a replica, does not even exist)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sentinel_mcp.gateway.replica import SharedStore
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.fact_store import Fact, FactStore
from tests.records.rig import ROOT

SEAL_KEY = "cli-test seal key, the same on every replica"


def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_facts_and_query_read_the_server_store(tmp_path: Path, pg_url: str) -> None:
    # as a replica writes them: signed with the key the cluster's seal key gives for facts
    async with FactStore(pg_url, key=SharedStore(pg_url, "", "", SEAL_KEY.encode()).key("facts")) as store:
        await store.add(
            [
                Fact(
                    session="s1",
                    predicate="colour",
                    args=["car", "red"],
                    fact="colour(car,red)",
                    provenance="user",
                )
            ]
        )
    rules = tmp_path / "colour.pl"
    rules.write_text(
        'askable(colour(P, C), "Which colour for ~w?", choice([red, green, blue]), [from([user])]).\n'
    )
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {},
                "sentinel": {
                    "store": pg_url,
                    "cluster": {"seal_key": SEAL_KEY},
                    "data_dir": str(tmp_path / "data"),
                    "builtins": [],
                    "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
                },
            }
        )
    )

    listed = cli(config, "facts")
    assert listed.returncode == 0 and "s1\t1 fact(s)" in listed.stdout, listed.stdout + listed.stderr
    shown = cli(config, "facts", "--session", "s1", "--json")
    assert shown.returncode == 0, shown.stderr
    assert [f["fact"] for f in json.loads(shown.stdout)["facts"]] == ["colour(car,red)"]

    proved = cli(config, "query", "--session", "s1", "colour(car, C)")
    assert proved.returncode == 0, proved.stdout + proved.stderr
    assert "red" in proved.stdout
    other = cli(config, "query", "--session", "s2", "colour(car, C)")  # another session's facts are not seen
    assert other.returncode == 1 and "red" not in other.stdout, other.stdout + other.stderr
    assert not (tmp_path / "data" / "facts.db").exists()  # nothing read or made locally
