"""``sentinel-mcp pins``: the owner reviews the tools held because their upstream changed them since they were
first seen, and accepts (or forgets) their new definitions (``gateway/tool_pins.py``). A running gateway sees
the change within seconds and tells its clients the tool list changed."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import sys
import termios
import time
from typing import Any

from sentinel_mcp.config import load_config
from sentinel_mcp.core.display_text import Marked, safe_text
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
    ac.add_argument("--digest", help="only the held definition of this digest (as `show` printed it); "
                    "without it, at a terminal, each is shown and asked about")
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


def _escaped(value: object) -> str:
    """``value`` as ASCII-escaped JSON: a description's (or a key's) hidden characters, bidi overrides
    and terminal escapes are shown as ``\\uXXXX``, never obeyed by the owner's terminal; shown whole."""
    return json.dumps(value, indent=2, ensure_ascii=True).replace("\x7f", "\\u007f")  # DEL is ASCII


def cmd_list(args: argparse.Namespace) -> int:
    pins = _pins(args)
    rows = [e for e in pins.entries() if e["held"] or not args.held]
    for e in rows:
        # the changed fields are named by the listing: marked if hidden characters are in a name
        changed = Marked(", ".join(safe_text(f, 200) for f in e["changed"])) if e["held"] else ""
        state = (f"HELD since {_when(e['seen_at'])} ({changed or 'definition'} changed)" if e["held"]
                 else "pinned")
        print(f"{safe_text(e['tool'], 200)}  {state}  (pinned {_when(e['pinned_at'])})")
    if not rows:
        print("no held tools" if args.held else "no pinned tools")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    shown = _pins(args).shown(args.tool)
    if shown is None:
        print(f"sentinel-mcp pins: {safe_text(args.tool, 200)} is not pinned", file=sys.stderr)
        return 1
    _review(args.tool, shown)
    return 0


def _review(identity: str, shown: dict[str, Any]) -> None:
    """Print a tool's pinned definition and the one held against it (what ``accept`` would pin)."""
    pinned, held = shown["pinned"], shown["held"]
    print(f"{safe_text(identity, 200)}: pinned {_when(pinned['pinned_at'])}, digest {pinned['digest']}")
    if held is None:
        print("not held: its upstream lists it as pinned")
        kept = pinned.get("definition")
        print(_escaped(kept) if kept is not None else "(the pinned definition was too large to keep)")
        return
    print(f"HELD: listed differently since {_when(held['seen_at'])}, digest {held['digest']}")
    old, new = pinned.get("definition"), held.get("definition")
    if new is None:
        print(f"{TOO_LARGE}: it cannot be accepted unseen; {UNSEEN}")
        return
    if old is None:  # nothing to compare with: the held one whole
        print(f"(the pinned definition was too large to keep)\n+++ held definition\n{_escaped(new)}")
        return
    for field in changed_fields(old, new):
        print(f"--- {safe_text(field, 200)} (pinned)\n{_escaped(old.get(field))}")
        print(f"+++ {safe_text(field, 200)} (held)\n{_escaped(new.get(field))}")


TOO_LARGE = "(the held definition is larger than Sentinel keeps to show: only its digest is kept)"
UNSEEN = ("review the upstream itself, then `sentinel-mcp pins forget TOOL` (its next listing is pinned as "
          "first seen)")


def _matching(pins: ToolPins, patterns: list[str], among: list[str]) -> list[str]:
    return sorted({t for t in among for p in patterns if fnmatch.fnmatchcase(t, p)})


def _at_terminal() -> bool:
    """Whether a person reads what is printed and types the answer (both ends a terminal)."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (OSError, ValueError):  # closed, or a stand-in that says nothing
        return False


def _forget_typed_ahead() -> None:
    """Drop what was typed (or pasted) before the question was on the screen: a "y" sent ahead answered a
    definition the owner had not yet seen."""
    with contextlib.suppress(OSError, ValueError, termios.error):
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)


def cmd_accept(args: argparse.Namespace) -> int:
    """Pin only a held definition the owner was shown: the one of the digest ``pins show`` printed
    (``--digest``), or, at a terminal, the one shown here just before the owner says yes. A definition the
    upstream changed since is another digest, and is not accepted; one too large to show is never accepted."""
    if not args.tools and not args.all_held:
        print("sentinel-mcp pins accept: name the tools (or --all-held)", file=sys.stderr)
        return 2
    if args.digest is None and not _at_terminal():
        print("sentinel-mcp pins accept: accept what you reviewed: pass --digest as `sentinel-mcp pins show "
              "TOOL` printed it (or run this at a terminal: each definition is shown, then asked about)",
              file=sys.stderr)
        return 2
    pins = _pins(args)
    held = pins.held_identities
    chosen = held if args.all_held else _matching(pins, args.tools, held)
    accepted: dict[str, str] = {}
    for identity in chosen:
        shown = pins.shown(identity)
        if shown is None or shown["held"] is None:
            continue
        entry = shown["held"]
        if entry.get("definition") is None:
            print(f"sentinel-mcp pins accept: {safe_text(identity, 200)} not accepted: {TOO_LARGE}; {UNSEEN}",
                  file=sys.stderr)
            continue
        if args.digest is not None:
            if entry["digest"] != args.digest:
                continue
        else:
            _review(identity, shown)
            _forget_typed_ahead()
            try:
                answer = input(f"accept this definition of {safe_text(identity, 200)} (digest "
                               f"{entry['digest']})? [y/N] ")
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                continue
        # the digest shown: if the upstream changed the tool again meanwhile, nothing is accepted
        accepted |= pins.accept([identity], entry["digest"])
    print(json.dumps({"accepted": accepted}))
    return 0 if accepted else 1


def cmd_forget(args: argparse.Namespace) -> int:
    pins = _pins(args)
    forgotten = pins.forget(_matching(pins, args.tools, [e["tool"] for e in pins.entries()]))
    print(json.dumps({"forgotten": forgotten}))
    return 0 if forgotten else 1
