"""``sentinel-mcp pins``: the owner reviews the tools held because their upstream changed them since they were
first seen, and accepts (or forgets) their new definitions (``gateway/tool_pins.py``). A running gateway sees
the change within seconds and tells its clients the tool list changed."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time

from sentinel_mcp.config import load_config
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.gateway.tool_pins import FILE_NAME, ToolPins, changed_fields


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pins", help="tools pinned as first seen; review and accept the ones held as changed")
    psub = p.add_subparsers(dest="action", metavar="ACTION")
    ls = psub.add_parser("list", help="every pinned tool (--held: only those held as changed)")
    ls.add_argument("--held", action="store_true")
    ls.set_defaults(func=cmd_list)
    sh = psub.add_parser("show", help="a tool's pinned definition and the changed one held against it")
    sh.add_argument("tool", help="<server>__<tool>")
    sh.set_defaults(func=cmd_show)
    ac = psub.add_parser("accept", help="pin the held definition (exactly the one `show` shows)")
    ac.add_argument("tools", nargs="*", metavar="TOOL", help="<server>__<tool>, or a glob such as 'files__*'")
    ac.add_argument("--all-held", action="store_true", help="every held tool")
    ac.add_argument("--digest", help="only if the held definition has this digest (as `show` printed it)")
    ac.set_defaults(func=cmd_accept)
    fg = psub.add_parser("forget", help="drop pins: the next listing pins what it then says")
    fg.add_argument("tools", nargs="+", metavar="TOOL")
    fg.set_defaults(func=cmd_forget)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _pins(args: argparse.Namespace) -> ToolPins:
    pins = ToolPins(load_config(args.config).data_dir / FILE_NAME)
    if pins.problem is not None:
        raise SystemExit(f"sentinel-mcp pins: {safe_text(pins.problem, 2_000)}")
    return pins


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stamp))


def cmd_list(args: argparse.Namespace) -> int:
    pins = _pins(args)
    rows = [e for e in pins.entries() if e["held"] or not args.held]
    for e in rows:
        state = f"HELD since {_when(e['seen_at'])} ({', '.join(e['changed']) or 'definition'} changed)" \
            if e["held"] else "pinned"
        print(f"{safe_text(e['tool'], 200)}  {state}  (pinned {_when(e['pinned_at'])})")
    if not rows:
        print("no held tools" if args.held else "no pinned tools")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    shown = _pins(args).shown(args.tool)
    if shown is None:
        print(f"sentinel-mcp pins: {safe_text(args.tool, 200)} is not pinned", file=sys.stderr)
        return 1
    pinned, held = shown["pinned"], shown["held"]
    print(f"{safe_text(args.tool, 200)}: pinned {_when(pinned['pinned_at'])}, digest {pinned['digest']}")
    if held is None:
        print("not held: its upstream lists it as pinned")
        print(json.dumps(pinned.get("definition"), indent=2, ensure_ascii=True))
        return 0
    print(f"HELD: listed differently since {_when(held['seen_at'])}, digest {held['digest']}")
    old, new = pinned.get("definition"), held.get("definition")
    if old is None or new is None:
        print("(a definition was too large to keep; compare the digests)")
        return 0
    for field in changed_fields(old, new):
        # ASCII-escaped: a description's hidden characters and terminal escapes are shown, never obeyed
        print(f"--- {field} (pinned)\n{json.dumps(old.get(field), indent=2, ensure_ascii=True)}")
        print(f"+++ {field} (held)\n{json.dumps(new.get(field), indent=2, ensure_ascii=True)}")
    return 0


def _matching(pins: ToolPins, patterns: list[str], among: list[str]) -> list[str]:
    return sorted({t for t in among for p in patterns if fnmatch.fnmatchcase(t, p)})


def cmd_accept(args: argparse.Namespace) -> int:
    pins = _pins(args)
    held = pins.held_identities
    chosen = held if args.all_held else _matching(pins, args.tools, held)
    if not args.tools and not args.all_held:
        print("sentinel-mcp pins accept: name the tools (or --all-held)", file=sys.stderr)
        return 2
    accepted = pins.accept(chosen, digest=args.digest)
    print(json.dumps({"accepted": accepted}))
    return 0 if accepted else 1


def cmd_forget(args: argparse.Namespace) -> int:
    pins = _pins(args)
    forgotten = pins.forget(_matching(pins, args.tools, [e["tool"] for e in pins.entries()]))
    print(json.dumps({"forgotten": forgotten}))
    return 0 if forgotten else 1
