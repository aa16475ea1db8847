"""Contacts: search the ContactsContract phone rows; create through the INSERT intent."""

from __future__ import annotations

import re
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from .. import commands as C
from ..actions import ProposedAction
from ..arg_shapes import MAX_LABEL, label_text
from ..content_rows import read_rows
from ..device_words import quoted
from ..errors import DeviceError
from ..gate import Approval, CommandGate
from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import ACT, READ, SELF_CONFIRMS, Result, finish
from sentinel_mcp.core.phone_numbers import is_phone_number

PHONES = "content://com.android.contacts/data/phones"
PROJECTION = ["_id", "display_name", "data1"]


async def search(gate: CommandGate, query: str) -> list[dict[str, Any]]:
    # Filtered here, not with --where: user text never reaches the provider's SQL.
    rows = await read_rows(gate.read, PHONES, PROJECTION)  # a contact's name must not spell another contact
    needle = query.strip().lower()
    digits = re.sub(r"\D", "", query)
    out = []
    for r in rows:
        name, number = r.get("display_name") or "", r.get("data1") or ""
        if needle in name.lower() or (digits and digits in re.sub(r"\D", "", number)):
            out.append({"id": r["_id"], "name": name, "phone": number})
    return out


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    @mcp.tool(annotations=READ, meta={"sentinel/personal": "contacts"})  # the gateway asks the user's consent
    async def contacts_search(query: str) -> CallToolResult:
        """Find contacts whose name or phone number contains `query`."""
        if not query.strip():
            return error_result("query must not be empty")
        try:
            found = await search(rt.gate, query)
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc))
        text = "\n".join(f"{c['name']}: {c['phone']}" for c in found)
        return read_result(text or f"no contact matches {query!r}", {"contacts": found}, untrusted="contacts")

    @mcp.tool(annotations=ACT, meta=SELF_CONFIRMS)
    async def contact_create(name: str, phone: str, ctx: Context) -> Result:
        """Add a contact. Opens the phone's contact editor with the fields filled in (the INSERT intent)."""
        if not name.strip() or not label_text(name):  # arg_shapes.py, mirrored by device.pl
            return error_result(f"name: 1..{MAX_LABEL} characters on one line, no control character")
        if not is_phone_number(phone):
            return error_result(f"not a phone number: {phone!r}")
        argv = C.am_start(
            "android.intent.action.INSERT",
            mime_type="vnd.android.cursor.dir/contact",
            extras=[("--es", "name", name.strip()), ("--es", "phone", phone.strip())],
        )
        action = ProposedAction(
            kind="contact_create", tool="contact_create", text=name, details={"phone": phone.strip()}
        )

        async def run(approval: Approval) -> dict[str, Any]:
            output = await rt.gate.run(argv, approval)
            if "Error" in output:
                raise DeviceError(f"no contacts app accepted the intent: {quoted(output, 300)}")
            return {"message": f"contact editor opened for {name!r} ({phone.strip()})"}

        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)
