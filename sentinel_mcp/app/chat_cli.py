"""The ``chat`` sub-command: an interactive session with the phone agent (``chat_terminal.py``)."""

from __future__ import annotations

import argparse
import os

from sentinel_mcp.config import load_config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chat", help="an interactive session: type goals for the phone agent, answer its questions"
    )
    p.add_argument("--url", help="a running Sentinel's MCP endpoint (default: start one in this process)")
    p.add_argument("--token", help="bearer token for --url (default: $SENTINEL_TOKEN)")
    p.add_argument("--plaintext", action="store_true",
                   help="accept an http:// --url beyond loopback (the token travels in the clear)")
    p.add_argument("--agent", default="agent", help="the agent built-in's catalog prefix (default: agent)")
    p.set_defaults(func=cmd_chat)


def cmd_chat(args: argparse.Namespace) -> int:
    from sentinel_mcp.app.chat_link import ChatLink
    from sentinel_mcp.app.chat_terminal import ChatTerminal

    from sentinel_mcp.app.endpoint_url import checked_endpoint

    if args.url is not None:
        checked_endpoint(args.url, plaintext=args.plaintext)
    config = load_config(args.config)
    link = ChatLink(
        config=None if args.url else config,
        url=args.url,
        token=args.token or os.environ.get("SENTINEL_TOKEN"),
        agent=args.agent,
    )
    try:  # other agents' help requests, kept by the A2A service (its data dir, or the replicas' store)
        from sentinel_mcp.a2a.assist_inbox import PURPOSE, AssistInbox, inbox_location
        from sentinel_mcp.gateway.replica import row_key

        # a reply given here goes back to the agent from the replica whose task waits: signed as theirs are
        inbox = AssistInbox(inbox_location(config.data_dir, config.store_url), key=row_key(config, PURPOSE))
    except Exception:  # noqa: BLE001 - no a2a area, or a data dir it cannot write: the chat works without it
        inbox = None
    return ChatTerminal(link, history=config.data_dir / "chat_history", inbox=inbox).run()
