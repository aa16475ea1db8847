"""``sentinel-mcp a2a discover``: list A2A agents on the local network whose cards check out."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
from typing import Any

from sentinel_mcp.a2a.settings import A2ASettings


MAX_BROWSE_SECONDS = 300.0  # a browse longer than this is a mistake (1e9 s never ended)


def _browse_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < seconds <= MAX_BROWSE_SECONDS:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds above 0 and at most {MAX_BROWSE_SECONDS:g}")
    return seconds


def _address(text: str) -> str:
    """An interface is named by its address (the mDNS library takes nothing else)."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address (name an interface by its address)"
                                         ) from None


def _settings(args: argparse.Namespace) -> A2ASettings:
    from sentinel_mcp.config import load_config

    config = load_config(args.config) if getattr(args, "config", None) else None
    section: dict[str, Any] = {}
    if config is not None:
        section = config.sentinel.builtin_settings("a2a")
    return A2ASettings.from_section(section)


def _discover(args: argparse.Namespace) -> int:
    settings = _settings(args)
    interfaces = args.interface or settings.interfaces
    # imported here: zeroconf and the A2A client are only for this command, not for every start (issue 21)
    from sentinel_mcp.a2a.peer_browser import discover_peers

    loopback_plaintext = settings.allow_loopback_plaintext or args.allow_loopback_plaintext
    registry = asyncio.run(discover_peers(interfaces, args.timeout, tls=settings.peer_client_tls,
                                          allow_loopback_plaintext=loopback_plaintext,
                                          networks=settings.model_copy(update={"interfaces": interfaces})
                                          .card_networks, keys=settings.card_keys,
                                          listed=settings.listed_peers))
    peers = registry.summaries()
    if args.json:
        print(json.dumps({"peers": peers, "rejected": registry.rejections(owner=True)}, indent=2))
        return 0
    if not peers:
        print(f"no verified A2A peers on {', '.join(interfaces)} (browsed {args.timeout:g} s)")
    for p in peers:
        alike = f"\treads like: {', '.join(p['reads_like'])} (look-alike names)" if p["reads_like"] else ""
        print(f"{p['name']}\t{p['rpc_url']}\tv{p['version']}\tskills: {', '.join(p['skills'])}"
              f"\t{p['card_signature']}{alike}")
    for name, why in registry.rejections(owner=True).items():  # (peers' texts are shown safely: summary())
        print(f"rejected {name}: {why}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("a2a", help="A2A participant: discovery of other agents")
    sub = parser.add_subparsers(dest="a2a_command", metavar="ACTION")
    disc = sub.add_parser("discover", help="browse mDNS for _a2a._tcp agents and verify their cards")
    disc.add_argument("--timeout", type=_browse_seconds, default=3.0,
                      help=f"seconds to browse (default 3, at most {MAX_BROWSE_SECONDS:g})")
    disc.add_argument("--interface", action="append", type=_address,
                      help="interface address to browse on (repeatable)")
    disc.add_argument("--json", action="store_true", help="print JSON")
    disc.add_argument("--allow-loopback-plaintext", action="store_true",
                      help="accept plaintext peers on loopback (as sentinel.a2a.allow_loopback_plaintext)")
    disc.set_defaults(func=_discover)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
