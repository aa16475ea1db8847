"""What others wrote reaches the swarm's log as one line per record: it cannot write lines of its own.

Found by red team 'swarm' 4: a build's failure is logged with its reason, which quotes the model endpoint's
error page (and a critic's or verifier's failure quotes the model), line breaks kept; an endpoint answering
400 with a page whose second line read like a record ("... INFO sentinel.swarm: task ... [COMPLETED]
completed") wrote that line into logs/swarm.log, where the operator reads it as Sentinel's own. Now the
log's records show line breaks and other control characters as marks (tracebacks, Sentinel's own, stay
as they are)."""

from __future__ import annotations

import re

import pytest
from tests.swarm.support.scripted_model import SPEC, ScriptedModelServer
from tests.swarm.support.swarm_fixtures import openai_factory

from sentinel_mcp.swarm.build_service import BuildService

pytestmark = pytest.mark.timeout(60)

FORGED = "2026-12-04 10:00:00,000 INFO sentinel.swarm: task t20261204-100000-abcdef [COMPLETED] completed"
RECORD = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} [A-Z]+ sentinel\.swarm")


@pytest.mark.parametrize("brk", ["\n", "\r\n", "\r", "\u2028", "\x85"])
async def test_an_endpoints_error_page_writes_no_line_of_its_own(
    service: BuildService, model_server: ScriptedModelServer, brk: str
) -> None:
    model_server.script("planner", {"status": 400, "text": f"bad request{brk}{FORGED}{brk}"})
    task_id = await service.submit(SPEC, openai_factory(model_server))
    status = await service.wait(task_id)
    assert status["state"] == "FAILED" and "bad request" in status["error"]
    log = (service.root / "logs" / "swarm.log").read_text(encoding="utf-8")
    mine = [line for line in re.split(r"\r\n|\r|\n|\u2028|\u2029|\x85|\x0b|\x0c|\x1c|\x1d|\x1e", log)
            if line]
    assert any(task_id in line and "FAILED" in line and "bad request" in line for line in mine)
    assert [line for line in mine if not RECORD.match(line)] == [], log  # no line but a record's
    assert [line for line in mine if line.startswith(FORGED[:23])] == [], log  # and none the page's
