"""``sentinel-mcp call``: one tool call through Sentinel with the real MCP client; questions asked on the
terminal.

Everything printed comes from elsewhere (questions, labels, choices, results): it is shown safely, so an
escape sequence cannot rewrite the terminal and a direction override cannot disguise a value. Answers are
typed as the question's schema asks (a yes/no is JSON true or false, never a string).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, TextContent

from sentinel_mcp.config import Config
from sentinel_mcp.core.display_text import Marked, compose, safe_question, safe_text


def _ask(prop: str, spec: dict[str, Any], assume_yes: bool) -> Any:
    kind = spec.get("type")
    label = safe_text(spec.get("title") or spec.get("description") or prop, 200)
    if kind == "boolean":
        if assume_yes:
            print(f"  {label}? [y/N] y (--yes)", file=sys.stderr)
            return True
        return input(f"  {label}? [y/N] ").strip().lower() in ("y", "yes")
    if "enum" in spec:
        choices = spec["enum"]
        raw = input(f"  {label} [{', '.join(safe_text(c, 80) for c in choices)}]: ").strip()
        if raw not in choices:
            raise ValueError("not one of the choices")  # no guessing: an unknown choice declines
        return raw
    raw = input(f"  {label}: ").strip()
    if kind in ("number", "integer"):
        return float(raw) if kind == "number" else int(raw)
    return raw


async def call_once(
    tool: str,
    arguments: Any,
    *,
    config: Config | None,
    url: str | None,
    token: str | None,
    assume_yes: bool = False,
    verify: Any = True,
) -> int:
    """``verify``: for an https ``url``, the SSL context (CA, client certificate) or True (the system's
    store)."""

    async def on_elicit(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        # Sentinel's front marked the question where it was asked (its own, or an upstream's relayed): shown
        # with those marks kept, as ``chat`` does; a hidden character that still reaches here is marked
        print(compose("\n", safe_question(Marked(params.message))[0]), file=sys.stderr)
        schema = getattr(params, "requested_schema", {}) or {}
        try:
            content = {k: _ask(k, v, assume_yes) for k, v in (schema.get("properties") or {}).items()}
        except (EOFError, KeyboardInterrupt, ValueError):
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=content)

    async def run(client: Client) -> int:
        result = await client.call_tool(tool, arguments)
        for c in result.content:
            if isinstance(c, TextContent):
                print(safe_text(c.text, 200_000, keep_newlines=True))
            else:
                print(f"[{safe_text(c.type, 40)} content]")
        if result.structured_content and not result.content:
            print(
                safe_text(
                    json.dumps(result.structured_content, indent=2, ensure_ascii=False),
                    200_000,
                    keep_newlines=True,
                )
            )
        return 1 if result.is_error else 0

    run.on_elicit = on_elicit  # type: ignore[attr-defined]

    try:
        return await _connect_and_run(run, config=config, url=url, token=token, verify=verify)
    except Exception as error:  # noqa: BLE001 - the SDK wraps failures in nested groups; show the first cause
        first: BaseException = error
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        # the message is the server's text (a hostile server's escapes included): shown cleaned like results
        print(f"sentinel-mcp call: {type(first).__name__}: {safe_text(str(first))}", file=sys.stderr)
        return 2


async def _connect_and_run(
    run: Any, *, config: Config | None, url: str | None, token: str | None, verify: Any = True
) -> int:
    if url:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=600), verify=verify)
        async with Client(
            streamable_http_client(url, http_client=http), elicitation_callback=run.on_elicit
        ) as c:
            return await run(c)
    from sentinel_mcp.app.runtime import running_gateway

    assert config is not None
    async with running_gateway(config, default_session="cli") as rt:
        for p in rt.problems:
            print(f"warning: {p}", file=sys.stderr)
        if rt.policy_problem:
            print(f"error: {rt.policy_problem}", file=sys.stderr)
        async with Client(rt.front.server, elicitation_callback=run.on_elicit) as c:
            code = await run(c)
        await rt.audit.flush()
        return code
