"""``sentinel-mcp draft``'s command line, wired to the gateway's upstream transport: the tools of a remote
server are listed over the connection the gateway would make (its configured headers, its TLS: the CA, pins
and client certificate, its body bounds). The drafting itself is the policy area's (``policy/draft_cli.py``),
which may not import the gateway (pyproject's import contracts)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("draft", help="draft a rulebase from a server's tool schemas and a policy document")
    p.add_argument("--policy", required=True, help="the policy document (markdown) the rulebase formalises")
    p.add_argument(
        "--server",
        required=True,
        help="the server's name in mcpServers (its tools are listed; tool names get its prefix)",
    )
    p.add_argument(
        "--tools", help='a saved tools list (JSON: {"tools": [...]} or [...]) instead of connecting'
    )
    p.add_argument(
        "--document", help="the policy document's name in the rulebase (default: the server's name)"
    )
    p.add_argument(
        "-o", "--output", help="write the draft here (default: stdout); an existing file is not replaced"
    )
    p.set_defaults(func=cmd_draft)


def cmd_draft(args: argparse.Namespace) -> int:
    # imported when the command runs: --help builds every command's parser (cli.py)
    from sentinel_mcp.gateway.upstream_client import describe_error, remote_transport
    from sentinel_mcp.policy.draft_cli import cmd_draft as draft

    return draft(args, remote_transport, describe_error)
