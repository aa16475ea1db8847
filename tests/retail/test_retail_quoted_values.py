"""What the store's tools wrote reads as quoted values in the retail confirmations (readable_terms.pl,
rulebases/retail.pl's text(Template, Args)): an order whose item names, option names and values spell a
price line, a closing quote, a line or paragraph separator, a bidi override or a very long text cannot make
"Cancel this order?" read as if it said something else. Real gateway, real retail example over stdio (its
database a copy with hostile values), real SWI-Prolog, real MCP client; both eras."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from tests.retail.retail_rig import OLIVIA, AnsweringUser, conversation, text_of
from tests.support.forged_values import ATTACKS, CUT, QUOTED, outside, unescaped

pytestmark = pytest.mark.timeout(240)
ORDER = "#W5442520"  # Olivia's pending order: three items
SHORT = [a for a in ATTACKS if len(a) < 300]
LONG = [a for a in ATTACKS if len(a) >= 300]
# the question with the store's values as V: the rulebase's words, numbers and the reason's label as written
SHAPE = re.compile(
    r"Cancel this order\? Order: #W5442520 \(pending\): V, V, V\. "
    r"Items: V \(color V\) at \$137\.32; V \(color V\) at \$285\.66; V \(color V\) at \$240\.87\. "
    r"Reason: I no longer need it\. "
    r"Refund: \$663\.85 to Visa card ending 9182, within 5 to 7 business days\.")


def hostile_db(tmp: Path, names: list[str], values: list[str]) -> Path:
    db = json.loads((PROJECT_ROOT / "examples" / "retail" / "data" / "db.json").read_text())
    items = db["orders"][ORDER]["items"]
    for item, name, value in zip(items, names, values, strict=True):
        item["name"] = name
        item["options"] = {"color": value}
    path = tmp / "db.json"
    path.write_text(json.dumps(db))
    return path


def config(tmp: Path, db: Path) -> Any:
    upstream = {"command": sys.executable, "args": ["-m", "examples.retail", "--permissive"],
                "cwd": str(PROJECT_ROOT), "env": {"RETAIL_DB": str(db)}}
    return parse_config({"mcpServers": {"retail": upstream}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "retail.pl")],
        "builtins": ["sentinel"], "data_dir": str(tmp)}}, base_dir=str(tmp))


async def cancel_question(tmp: Path, names: list[str], values: list[str], mode: str) -> str:
    """The question the user is shown to cancel the order; they say no: nothing is cancelled."""
    user = AnsweringUser([OLIVIA, ("Why do you want to cancel", "no longer needed"),
                          ("Cancel this order?", False)])
    async with running_gateway(config(tmp, hostile_db(tmp, names, values))) as rt:
        async with conversation(rt, user, mode=mode) as c:
            r = await c.call_tool("retail__cancel_pending_order",
                                  {"order_id": ORDER, "reason": "no longer needed"})
            assert r.is_error, text_of(r)
            order = await c.call_tool("retail__get_order_details", {"order_id": ORDER})
            assert json.loads(text_of(order))["status"] == "pending"
    [question] = [m for m in user.messages() if m.startswith("Cancel this order?")]
    return question


def batches() -> list[tuple[list[str], list[str]]]:
    short = SHORT + SHORT[:(-len(SHORT)) % 6]  # whole batches of six: three names, three option values
    return [(short[i:i + 3], short[i + 3:i + 6]) for i in range(0, len(short), 6)]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("batch", range(len(batches())))
async def test_the_stores_values_cannot_forge_the_cancel_question(tmp_path: Path, mode: str,
                                                                 batch: int) -> None:
    names, values = batches()[batch]
    question = await cancel_question(tmp_path, names, values, mode)
    assert not any(is_hidden(ch) for ch in question), ascii(question)
    assert SHAPE.fullmatch(outside(question)), ascii(question)
    shown = [unescaped(v) for v in QUOTED.findall(question)]
    for value in names + values:
        assert value in shown, (ascii(value), ascii(question))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_very_long_value_is_cut_inside_its_quote(tmp_path: Path, mode: str) -> None:
    names, values = LONG[:3] + ["Mouse"] * (3 - len(LONG[:3])), ["red", "blue", "green"]
    question = await cancel_question(tmp_path, names, values, mode)
    assert not any(is_hidden(ch) for ch in question), ascii(question)
    quoted = QUOTED.findall(question)
    assert quoted, ascii(question)
    for v in quoted:
        assert any(name.startswith(unescaped(CUT.sub("", v))) for name in names), ascii(v)
