"""``sentinel-mcp draft``: a candidate rulebase from a server's tools (or a saved tools list) and a policy
document."""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import anyio

from sentinel_mcp.config import ConfigError, RemoteServer, StdioServer, load_config
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.core.outside_file import NotUtf8, TooLarge, read_regular_text
from sentinel_mcp.policy.draft_budget import MAX_TOOLS, DraftTooLarge


# a remote server's transport as the gateway builds it (its headers, TLS and body bounds): given by the
# command's wiring (app/draft_cli.py), as this floor may not import the gateway
RemoteTransport = Callable[[RemoteServer], Any]


# a listing's pages, as the gateway bounds an upstream's (gateway/upstream_listing.py); its cursors' bytes
# as a saved tool list's
MAX_PAGES = 100


class ListingRefused(PolicyError):
    """A server's listing passed a bound (pages, tools, cursor bytes, a cursor given twice, its time)."""


async def list_tools(spec: StdioServer | RemoteServer, remote: RemoteTransport) -> list[dict[str, Any]]:
    """The server's tools as JSON (its tools/list answer, every page: the first alone once drafted a server
    of many pages as if it were whole), within the server's connect and call timeouts (one that never
    answered held the command for ever). Past a bound, ListingRefused naming it."""
    limit = spec.connect_timeout + spec.timeout
    try:
        with anyio.fail_after(limit):
            return await _listed(spec, remote)
    except TimeoutError:
        raise ListingRefused(f"the server did not list its tools within {limit:g} s") from None


async def _listed(spec: StdioServer | RemoteServer, remote: RemoteTransport) -> list[dict[str, Any]]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    if isinstance(spec, StdioServer):
        params = StdioServerParameters(
            command=spec.command, args=spec.args, env=spec.env or None, cwd=spec.cwd,
            encoding_error_handler="replace",  # as the gateway reads an upstream (upstream_client.py)
        )
        # the server's stderr goes to ours (fd 2): the SDK's default is whatever sys.stderr was when it was
        # imported, which under a test's captured output has no file descriptor to give a child
        target: Any = stdio_client(params, errlog=sys.__stderr__ or sys.stderr)
    else:
        target = remote(spec)
    async with Client(target) as client:
        tools: list[Any] = []
        cursor: str | None = None
        cursors: set[str] = set()
        cursor_bytes = 0
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            if len(tools) > MAX_TOOLS:
                raise ListingRefused(f"the server lists more than {MAX_TOOLS:,} tools")
            cursor = page.next_cursor
            if cursor is None:
                return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
            cursor_bytes += len(cursor)
            if cursor in cursors:
                raise ListingRefused("the server's listing gave the same page cursor twice")
            if cursor_bytes > MAX_DRAFT_INPUT_BYTES:
                raise ListingRefused(f"the server's listing cursors passed {MAX_DRAFT_INPUT_BYTES:,} bytes")
            cursors.add(cursor)
    raise ListingRefused(f"the server's listing has more than {MAX_PAGES} pages")


# the policy document and a saved tool list: far above any real one (a long policy is ~100 KB)
MAX_DRAFT_INPUT_BYTES = 8 * 1024 * 1024


def _input_text(path: str) -> str:
    """A file the person named, read bounded: /dev/zero, a FIFO, a huge file or bytes that are not UTF-8
    end as a ValueError naming the problem (never a read that does not end)."""
    try:
        return read_regular_text(path, MAX_DRAFT_INPUT_BYTES)
    except TooLarge:
        raise ValueError(f"{path} is too large (more than {MAX_DRAFT_INPUT_BYTES} bytes)") from None
    except NotUtf8 as e:
        raise ValueError(f"{path}, {e}") from None
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ValueError(f"{path}: {why}") from None


def _saved_tools(path: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(_input_text(path))
    except RecursionError:  # past the parser's depth: a list no server sends, never a traceback
        raise ValueError("the tools list is nested too deeply") from None
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
    ):
        raise ValueError('expected a list of tools (objects with a name), or {"tools": [...]}')
    if len(tools) > MAX_TOOLS:
        raise ValueError(f"{path} lists {len(tools):,} tools, more than any server's ({MAX_TOOLS:,})")
    return tools


def cmd_draft(
    args: argparse.Namespace, remote: RemoteTransport, describe: Callable[[BaseException], str]
) -> int:
    """``describe``: an error while listing as one safe line (the gateway's words for an upstream's error)."""
    from sentinel_mcp.core.display_text import safe_text
    from sentinel_mcp.policy.checker import problem_line
    from sentinel_mcp.policy.draft import draft_rulebase
    from sentinel_mcp.policy.draft_check import draft_problems, reserved_of
    from sentinel_mcp.search.paragraphs import split_markdown

    try:
        policy_text = _input_text(args.policy)
    except ValueError as e:
        print(f"sentinel-mcp draft: cannot read the policy {e}", file=sys.stderr)
        return 2
    if args.output and os.path.lexists(args.output):  # a dangling link too: exists() follows it
        print(f"sentinel-mcp draft: {args.output} exists; a draft never replaces a rulebase", file=sys.stderr)
        return 2
    try:
        if args.tools:
            tools = _saved_tools(args.tools)
        else:
            config = load_config(args.config)
            spec = config.mcp_servers.get(args.server)
            if spec is None:
                raise ConfigError(
                    f"no server {args.server!r} in mcpServers (have: {', '.join(config.mcp_servers)})"
                )
            tools = asyncio.run(list_tools(spec, remote))
    except (OSError, ValueError) as e:
        print(f"sentinel-mcp draft: cannot read the tools: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a server that does not start or answer: say so, no traceback
        if isinstance(e, ConfigError):
            raise
        print(f"sentinel-mcp draft: cannot list the tools of {args.server}: {describe(e)}", file=sys.stderr)
        return 1
    name = args.document or args.server
    # a rulebase's documents lie in its own directory (document_places.py): a policy outside the draft's is
    # copied beside it, under its own name
    beside = _relative(Path(args.policy), Path(args.output).parent) if args.output else None
    copy_to = Path(args.output).parent / Path(args.policy).name if args.output and beside is None else None
    document_path = args.policy if not args.output else beside or Path(args.policy).name
    paragraphs = split_markdown(policy_text, name)
    policy = Path(args.policy).resolve()
    try:
        # a fact named like a builtin is named again (member_2), and that name asked about in turn; a name
        # still reserved after a few rounds (none real) is the check's to refuse
        reserved: frozenset[str] = frozenset()
        for _ in range(3):
            draft = draft_rulebase(args.server, tools, name, document_path, paragraphs, reserved)
            found = asyncio.run(reserved_of(draft.facts))
            if found <= reserved:
                break
            reserved |= found
        # checked as it will be loaded, before it is offered (draft_check.py); the policy beside it
        checked = draft_rulebase(args.server, tools, name, policy.name, paragraphs, reserved)
    except DraftTooLarge as e:
        print(f"sentinel-mcp draft: {e}", file=sys.stderr)
        return 2
    problems = asyncio.run(draft_problems(args.server, tools, checked.text, policy))
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        print("sentinel-mcp draft: the draft fails its check, so it is not offered (its tools or policy hold "
              "text it could not write safely):", file=sys.stderr)
        for p in errors[:20]:
            print(f"  {safe_text(problem_line(p), 500)}", file=sys.stderr)
        return 1
    for p in problems[:20]:  # warnings: a person finishing the draft reads them
        print(f"  {safe_text(problem_line(p), 500)}", file=sys.stderr)
    if args.output:
        try:
            _write_new(args.output, draft.text)
        except FileExistsError:  # made while the tools were listed and the draft checked
            print(f"sentinel-mcp draft: {args.output} exists; a draft never replaces a rulebase",
                  file=sys.stderr)
            return 2
        if copy_to is not None and not _copied(copy_to, policy_text):
            print(f"sentinel-mcp draft: {copy_to} exists and is not the policy; the draft names its policy "
                  "beside it: put it there", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(draft.text)
    print(
        f"draft: {len(draft.bindings)} binding(s), {len(draft.guards)} guard stub(s), {len(draft.askables)} "
        f"askable(s) from {len(tools)} tools, checked: {len(problems)} warning(s); finish every TODO, then "
        "`sentinel-mcp check --coverage`",
        file=sys.stderr,
    )
    return 0


def _write_new(path: str, text: str) -> None:
    """``text`` into a file made here: O_EXCL refuses any name that exists, a link (even a dangling one) too,
    in the one call that makes the file (a check before it leaves a moment to put one there)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _copied(path: Path, text: str) -> bool:
    """The policy's text beside the draft: written there, or there already; False when another file holds the
    name."""
    try:
        _write_new(str(path), text)
        return True
    except FileExistsError:
        try:
            return path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            return False


def _relative(target: Path, base: Path) -> str | None:
    """The policy's path as the rulebase will find it, relative to the rulebase file; None when it is not in
    the rulebase file's directory (a rulebase may name only documents there)."""
    try:
        rel = os.path.relpath(target.resolve(), base.resolve())
    except ValueError:
        return None
    return None if rel == ".." or rel.startswith(".." + os.sep) else rel
