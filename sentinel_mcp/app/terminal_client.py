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


def _options(spec: dict[str, Any]) -> list[tuple[Any, str]] | None:
    """A choice's (value, label) pairs: JSON Schema's ``oneOf`` of ``const``/``title`` (Sentinel's own
    questions) or a plain ``enum``; None for a field that is no choice."""
    one_of = spec.get("oneOf")
    if isinstance(one_of, list) and one_of and all(isinstance(o, dict) and "const" in o for o in one_of):
        return [(o["const"], str(o.get("title") or o["const"])) for o in one_of]
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        return [(c, str(c)) for c in spec["enum"]]
    return None


def _choose(label: str, options: list[tuple[Any, str]]) -> Any:
    """One of ``options``, typed as its number, its value or its label exactly; anything else declines."""
    print(f"  {label}:", file=sys.stderr)
    for i, (value, title) in enumerate(options, 1):
        shown = safe_text(title, 200) if title == str(value) else compose(safe_text(title, 200), " (",
                                                                         safe_text(str(value), 80), ")")
        print(f"    {i}. {shown}", file=sys.stderr)
    raw = input(f"  number, 1 to {len(options)}: ").strip()
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= len(options):
        return options[int(raw) - 1][0]
    for value, title in options:
        if raw in (str(value), title):
            return value
    raise ValueError("not one of the choices")  # no guessing: an unknown choice declines


_UNSAID = object()  # an optional text field left empty: not given at all (an empty string is an answer)


def _ask(prop: str, spec: dict[str, Any], assume_yes: bool, required: bool = True) -> Any:
    kind = spec.get("type")
    label = safe_text(spec.get("title") or spec.get("description") or prop, 200)
    if kind == "boolean":
        if assume_yes:
            print(f"  {label}? [y/N] y (--yes)", file=sys.stderr)
            return True
        return input(f"  {label}? [y/N] ").strip().lower() in ("y", "yes")
    options = _options(spec)
    if options is not None:
        return _choose(label, options)
    raw = input(f"  {label}{'' if required else ' (Enter to skip)'}: ").strip()
    if not raw and not required:
        return _UNSAID
    if kind in ("number", "integer"):
        return float(raw) if kind == "number" else int(raw)
    return raw


def ask_schema(schema: dict[str, Any], assume_yes: bool) -> dict[str, Any]:
    """The answers to a form's fields, each asked on the terminal; optional ones left empty are left out.
    Raises ValueError, EOFError or KeyboardInterrupt when the form is not answered (the caller declines)."""
    required = schema.get("required")
    # a schema that names no required field (Sentinel's "an answer, or I don't know") makes each optional
    required = set(required) if isinstance(required, list) else set()
    content: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        value = _ask(name, spec if isinstance(spec, dict) else {}, assume_yes, name in required)
        if value is not _UNSAID:
            content[name] = value
    return content


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
        print(file=sys.stderr)  # a blank line before the question (a "\n" composed in would be marked)
        print(safe_question(Marked(params.message))[0], file=sys.stderr)
        schema = getattr(params, "requested_schema", {}) or {}
        try:
            content = ask_schema(schema, assume_yes)
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
