"""Both example domains start through one shared command line (``examples/domain_cli.py``): the same options,
the same refusal of a database they cannot load (named, on stderr, exit 2), each under its own name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from examples import domain_cli
from examples.airline.__main__ import DOMAIN as AIRLINE
from examples.retail.__main__ import DOMAIN as RETAIL

PROJECT_ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


def test_each_domain_is_a_description_for_the_shared_command_line() -> None:
    for domain, name, env in ((AIRLINE, "airline", "AIRLINE_DB"), (RETAIL, "retail", "RETAIL_DB")):
        assert isinstance(domain, domain_cli.Domain) and domain.name == name and domain.db_env_var == env
        args = domain_cli.parse_args(domain, ["--http", "8000", "--permissive", "--db", "x.json"])
        assert (args.http, args.host, args.permissive, args.db) == (8000, "127.0.0.1", True, "x.json")


@pytest.mark.parametrize("domain", [AIRLINE, RETAIL], ids=["airline", "retail"])
def test_a_bad_database_is_named_on_stderr_with_exit_2(tmp_path: Path, domain: domain_cli.Domain,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for db in (tmp_path / "nope.json", broken):
        assert domain_cli.main(domain, ["--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{domain.name}: ") and db.name in err, err
    with pytest.raises(SystemExit):
        domain_cli.main(domain, ["--help"])
    shown = capsys.readouterr().out
    assert f"python -m examples.{domain.name}" in shown and f"${domain.db_env_var}" in shown


def test_the_module_entry_point_runs_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.retail", "--db", "/nonexistent/db.json"],
        check=False,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("retail: ") and "db.json" in done.stderr, (
        done.stderr
    )
