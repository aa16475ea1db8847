"""Gateway sub-commands: ``serve``, ``config claude``, ``audit``, ``call``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from sentinel_mcp.config_secrets import ARGUMENTS, masked_arguments, secret_key
from sentinel_mcp.core.cli_numbers import count
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.url_credentials import masked_credentials

if TYPE_CHECKING:
    from sentinel_mcp.config import Config


def load_config(path: str | None) -> Config:
    """``config.load_config``, its models imported on first use: the stdio ``serve`` of the embedded default
    launches its upstream before they load (``app/early_start.py``)."""
    from sentinel_mcp.config import load_config as load

    return load(path)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the gateway (stdio by default; --http for streamable HTTP + SSE)")
    p.add_argument("--http", metavar="[HOST:]PORT", help="serve HTTP instead of stdio (127.0.0.1 by default)")
    p.add_argument(
        "--tls-local",
        action="store_true",
        help="with --http: serve HTTPS with this data dir's local CA (made on first use, as `sentinel-mcp "
        "tls init` makes it; clients trust <data dir>/tls/ca.pem)",
    )
    p.add_argument(
        "--tls-name",
        action="append",
        metavar="NAME",
        help="with --tls-local: another DNS name for a new server certificate (repeatable)",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("config", help="print configuration snippets")
    csub = p.add_subparsers(dest="what", metavar="WHAT")
    c = csub.add_parser(
        "claude", help="the mcpServers snippet for Claude Desktop's claude_desktop_config.json"
    )
    c.set_defaults(func=cmd_config_claude)
    c = csub.add_parser("show", help="the effective configuration as JSON (tokens masked)")
    c.set_defaults(func=cmd_config_show)
    c = csub.add_parser("token", help="the owner's HTTP/A2A bearer token (generated on first use)")
    c.set_defaults(func=cmd_config_token)
    rotate = "replace it with a new one (a running Sentinel takes it within a second; the old one stops)"
    c.add_argument("--rotate", action="store_true", help=rotate)
    c = csub.add_parser(
        "console-secret", help="the owner's web console sign-in secret (generated on first use; not a token)"
    )
    c.set_defaults(func=cmd_config_console_secret)
    c.add_argument("--rotate", action="store_true", help=rotate + "; its console sessions end")
    c = csub.add_parser(
        "console-link", help="a one-time web console sign-in link for the owner (good for 10 minutes; taken "
        "even while the sign-in form is closed to too many wrong secrets)"
    )
    c.add_argument("--url", default="http://127.0.0.1:8765",
                   help="the address the console is served at (default http://127.0.0.1:8765)")
    c.set_defaults(func=cmd_config_console_link)
    config_parser = p  # `p` names the next parsers below: the help printed is this one's
    p.set_defaults(func=lambda args: (config_parser.print_help(), 2)[1])

    p = sub.add_parser("audit", help="show the audit log; `audit verify` checks its hash chain")
    p.add_argument(
        "what",
        nargs="?",
        choices=["verify"],
        help="verify: check that no row was changed, removed or inserted, and every chain against the anchor "
        "kept outside the data dir (exit 1 at the first problem; --json for one JSON object)",
    )
    p.add_argument("--tail", type=count, default=20, metavar="N", help="the newest N entries (default 20)")
    p.add_argument("--session", help="only this session")
    p.add_argument("--principal", help="only this principal's calls (what that principal may be shown)")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.add_argument(
        "--decision",
        metavar="ID",
        help="only this decision (the id a result names in "
        '_meta["sentinel/decision_id"]), with what the built-ins recorded inside it',
    )
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser(
        "call", help="call one tool through Sentinel as an MCP client would (asks you on the terminal)"
    )
    p.add_argument("tool", help="catalog name, e.g. airline__get_user_details")
    p.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    p.add_argument("--url", help="a running Sentinel's streamable HTTP URL (default: start one in-process)")
    p.add_argument(
        "--token",
        help="bearer token for --url (default: $SENTINEL_TOKEN, else the owner's token of "
        "this config's data dir)",
    )
    p.add_argument(
        "--ca",
        help="https: the CA the server's certificate must chain to (default: this data dir's local "
        "CA from `sentinel-mcp tls init` if there is one, else the system's store)",
    )
    p.add_argument("--plaintext", action="store_true",
                   help="accept an http:// --url beyond loopback (the token travels in the clear)")
    p.add_argument("--cert", help="https: a client certificate to present (mutual TLS)")
    p.add_argument("--key", help="https: the client certificate's key")
    p.add_argument("--yes", action="store_true", help="answer every confirmation with yes")
    p.set_defaults(func=cmd_call)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.tls_local and not args.http:
        raise ConfigError("--tls-local is for the HTTP front: add --http [HOST:]PORT")
    if not args.http:
        # the config is read inside: the embedded default's upstream is launched before its models load
        from sentinel_mcp.app.early_start import run_stdio_of

        run_stdio_of(args.config)
        return 0
    config = load_config(args.config)
    # not app.serve: the stdio upstreams are launched before the SDK and the engine are imported
    from sentinel_mcp.app.early_start import run_http
    from sentinel_mcp.app.listen_address import parse_listen

    try:
        host, port = parse_listen(args.http, config.sentinel.http.host)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if args.tls_local:
        from sentinel_mcp.tls.front import local_ca_tls

        config.sentinel.http.tls = local_ca_tls(config, args.tls_name)
    run_http(config, host, port)
    return 0


def cmd_config_claude(args: argparse.Namespace) -> int:
    exe = shutil.which("sentinel-mcp") or str(Path(sys.executable).with_name("sentinel-mcp"))
    server_args = ["serve"]
    if args.config:
        # a missing or invalid file is said now, not later as a server that will not start in Claude's log
        load_config(args.config)
        server_args = ["--config", str(Path(args.config).resolve()), *server_args]
    entry: dict[str, object] = {"command": exe, "args": server_args}
    # Claude Desktop does not pass on this shell's environment: without these, its Sentinel would keep its
    # state (tokens, consents, the audit log) where this shell's `audit`, `consent`, `config token` do not
    # look
    state = {k: str(Path(os.environ[k]).expanduser().resolve())
             for k in ("SENTINEL_DATA_DIR", "XDG_STATE_HOME") if os.environ.get(k)}
    same = f"\n(env: {', '.join(state)} as this shell has them, so both keep the same state)" if state else ""
    if state:
        entry["env"] = state
    print(json.dumps({"mcpServers": {"sentinel": entry}}, indent=2))
    print(
        "\nPaste this into claude_desktop_config.json (Claude menu > Settings > Developer > Edit Config),\n"
        "replacing the servers Sentinel now fronts: list those under mcpServers in Sentinel's own config."
        + same,
        file=sys.stderr,
    )
    return 0


def cmd_config_show(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    data = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    store = str(config.store_path)
    if config.store_url:  # a server URL may carry a password (expanded from ${VAR}): shown redacted
        from sentinel_mcp.storage.location import server_location

        store = data["sentinel"]["store"] = server_location(config.store_url).redacted
    data = _as_written(data, config.as_written)
    # what /healthz names as problems (a file others could change kept by SENTINEL_SHARED_FILES=trust,
    # secrets in a readable config): in the output and on stderr, never only in a log
    problems = {"problems": list(config.warnings)} if config.warnings else {}
    print(json.dumps({"source": config.source, "store": store, **problems, **_masked(data)}, indent=2))
    for w in config.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def _as_written(value: Any, written: dict[str, str], where: str = "") -> Any:
    """Every string a variable was expanded in, shown as written (``Bearer ${TOKEN}``): the value may be a
    secret from the environment in any key (an argument, a URL's query), whatever its name."""
    if isinstance(value, dict):
        return {k: _as_written(v, written, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_written(v, written, f"{where}[{i}]") for i, v in enumerate(value)]
    return written.get(where, value)


def _masked(value: Any, secret: bool = False) -> Any:
    """Secrets shown as ``***`` (a config printed to a terminal or a bug report must not leak them)."""
    if isinstance(value, dict):
        return {k: _masked(masked_arguments(v) if k == ARGUMENTS and isinstance(v, list) else v,
                           secret or secret_key(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, secret) for v in value]
    if secret and value not in (None, ""):
        return "***"
    return masked_credentials(value) if isinstance(value, str) else value  # a URL's password, query values


def cmd_config_token(args: argparse.Namespace) -> int:
    from sentinel_mcp.identity import owner_token

    return _print_owner_secret(
        args, "token", 'HTTP callers need no token', owner_token.load_or_create, owner_token.token_path,
        "send it as 'Authorization: Bearer <token>'", owner_token.replace,
    )


def cmd_config_console_secret(args: argparse.Namespace) -> int:
    """The owner's console secret: typed into the console's sign-in form by the person, given to no client."""
    from sentinel_mcp.identity import console_secret

    return _print_owner_secret(
        args, "console_secret", "", console_secret.load_or_create,
        console_secret.secret_path,
        "type it into the web console's sign-in form; give it to no MCP or A2A client",
        console_secret.replace,
    )


def cmd_config_console_link(args: argparse.Namespace) -> int:
    """A one-time sign-in link for the owner (``identity/console_link.py``): this machine's user only."""
    from sentinel_mcp.identity import console_link

    config = load_config(args.config)
    try:
        token = console_link.create(config.data_dir)
    except OSError as e:
        print(f"sentinel-mcp: no sign-in link: {e}", file=sys.stderr)
        return 1
    print(args.url.rstrip("/") + console_link.LINK_PATH + token)
    print(f"(one use, within {console_link.LINK_SECONDS / 60:g} minutes, for the owner; open it in the "
          "browser you sign in with and press its button (opening it spends nothing), and give it to no "
          "client)", file=sys.stderr)
    return 0


def _print_owner_secret(
    args: argparse.Namespace, key: str, without_auth: str, load_or_create: Callable[[Path], tuple[str, bool]],
    path_of: Callable[[Path], Path], use: str, replace: Callable[[Path], str],
) -> int:
    """The owner's secret ``key`` of ``sentinel.http``: the config's, else the one kept in the data dir (made
    now if there is none; a new one with ``--rotate``), on stdout; where it comes from and how to use it on
    stderr."""
    config = load_config(args.config)
    http = config.sentinel.http
    if http.auth == "none" and key == "token":  # the console secret signs the person in there too
        print(f'sentinel-mcp: this config says "auth": "none": {without_auth}', file=sys.stderr)
        return 1
    configured = getattr(http, key)
    if configured is not None:
        if args.rotate:
            print(f"sentinel-mcp: sentinel.http.{key} is set in the config: change it there and restart",
                  file=sys.stderr)
            return 1
        print(configured)
        print(f"(sentinel.http.{key} from the config)", file=sys.stderr)
        return 0
    if args.rotate:
        secret, said = replace(config.data_dir), "replaced now (a running Sentinel takes it in a second), "
    else:
        secret, created = load_or_create(config.data_dir)
        said = "generated now, " if created else ""
    print(secret)
    print(f"({said}kept in {path_of(config.data_dir)}, mode 0600; {use})", file=sys.stderr)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from sentinel_mcp.gateway.audit_reader import read_record
    from sentinel_mcp.gateway.replica import audit_key

    config = load_config(args.config)
    unreadable: list[str] = []  # logs that could not be read: the others are shown, then these are said
    if args.what == "verify":
        if config.store_url:  # replicas on one PostgreSQL: every replica's chain, the anchors, the seals
            return _verify_cluster(config.store_url, audit_key(config))
        # an embedded store's seals checked when a seal key is set, as a server store's always are
        return _verify(config.store_path, config.audit_anchor_dir, args.json, audit_key(config),
                       config.sentinel.audit.sync)
    key = audit_key(config)  # each row's seal checked: one that fails is listed as nobody's
    # the cluster's one audit log (every replica's chain) on a server store, else every instance's file
    rows = asyncio.run(read_record(config.store_url, config.store_path, tail=args.tail, session=args.session,
                                   principal=args.principal, key=key, unreadable=unreadable))
    if args.decision is not None:
        return max(_show_decision(config, args, rows), _unreadable_said(unreadable))
    if args.json:
        for r in rows:  # ASCII: a stored control or bidi character never reaches the terminal raw
            print(json.dumps(r, ensure_ascii=True, default=str))
        return _unreadable_said(unreadable)
    if not rows:
        where = str(config.store_path)
        if config.store_url:  # the server store read (its URL redacted), not the data dir's files
            from sentinel_mcp.storage.location import server_location

            where = server_location(config.store_url).redacted
        print(f"no audit entries in {where}" + (" that could be read" if unreadable else ""))
        return _unreadable_said(unreadable)
    print(
        f"{'time':19}  {'principal':10} {'session':22} {'tool':32} {'decision':8} {'outcome':14} {'ms':>7}  "
        "reason"
    )
    for r in rows:
        ts = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["ts"]))
        ms = f"{r['latency_ms']:.1f}" if r.get("latency_ms") is not None else ""
        # every stored value is a client's or an upstream's words: shown, never interpreted by the terminal
        reason = _shown(r.get("reason") or r.get("error"), 70)
        print(
            f"{ts}  {_shown(_whose(r), 10):10} {_shown(r['session'], 22, ends=True):22} "
            f"{_shown(r['tool'], 32):32} {_shown(r['decision'], 8):8} {_shown(r['outcome'], 14):14} "
            f"{ms:>7}  {reason}"
        )
    return _unreadable_said(unreadable)


def _whose(row: dict[str, Any]) -> str | None:
    """The row's principal, or what its seal says when it is nobody's (``gateway/audit_seal.py``)."""
    seal = row.get("seal")
    return row.get("principal") if seal in (None, "signed") else f"({seal})"


def _unreadable_said(unreadable: list[str]) -> int:
    """The logs that could not be read, on stderr after the rows that could (exit 1): a damaged instance's
    log is never left out of what looks like the whole record."""
    for problem in unreadable:
        print(f"sentinel-mcp: {problem} (its rows are not shown; sentinel-mcp audit verify says more)",
              file=sys.stderr)
    return 1 if unreadable else 0


def _show_decision(config: Any, args: argparse.Namespace, rows: list[Any]) -> int:
    """One decision as one log: the gateway's rows of it (among the newest ``--tail``), then the device's and
    the
    sensors' records that point to it."""
    from sentinel_mcp.app.decision_links import builtin_records

    mine = [r for r in rows if r.get("decision_id") == args.decision]
    records, problems = builtin_records(config, args.decision)
    for problem in problems:
        print(f"note: {problem}", file=sys.stderr)
    if args.json:
        for r in [*mine, *records]:
            print(json.dumps(r, ensure_ascii=True, default=str))
        return 0 if mine or records else 1
    if not mine and not records:
        print(
            f"no decision {args.decision} among the newest {args.tail} calls (raise --tail) nor in the "
            "built-ins' "
            "records"
        )
        return 1
    for r in mine:
        print(f"gateway  {_shown(r['tool'], 200)}  {_shown(r['decision'], 20)} -> "
              f"{_shown(r['outcome'], 40)}  {_shown(r.get('reason'), 90)}")
        if r.get("error"):  # what went wrong (an upstream's words, stored raw): shown as any stored value
            print(f"         error: {_shown(r['error'], 300)}")
    for r in records:
        what = r.get("outcome") or r.get("decision") or ""
        detail = r.get("reason") or r.get("answer") or r.get("sensor") or ""
        print(f"{_shown(r['area'], 8):8} {_shown(what, 40)}  {_shown(detail, 100)}")
    return 0


def _verify_cluster(url: str, key: bytes | None = None) -> int:
    from sentinel_mcp.gateway.audit_cluster import verify_server
    from sentinel_mcp.storage import StorageError
    from sentinel_mcp.storage.location import server_location

    where = server_location(url).redacted
    try:
        report = verify_server(url, key)
    except StorageError as e:
        print(f"audit log {where}: cannot be read: {e}")
        return 2
    if report.ok:
        print(
            f"audit log {where}: {report.rows} rows in {report.chains} replica chain(s), {report.anchored} "
            "anchor(s) intact, chain intact"
            + (f", every row's seal checked ({report.unsealed} from before the seal)" if key is not None
               else "")
        )
        return 0
    print(
        f"audit log {where}: BROKEN: {report.problem}"
        + (f" (first broken row: {report.broken_row})" if report.broken_row is not None else "")
    )
    return 1


def _verify(path: Path, anchor_dir: Path | None, as_json: bool = False, key: bytes | None = None,
            sync: str = "full") -> int:
    """Every chain of the store at ``path``, and, with an anchor, every chain against it
    (``gateway/audit_anchor_check.py``); with ``key`` (``sentinel.cluster.seal_key`` set), every row's seal:
    a row relabelled and re-chained after its chain's last anchor (or with the anchor off) is BROKEN, as on a
    server store. BROKEN with its reason, never a traceback; exit 1 unless intact. ``sync``
    (``sentinel.audit.sync``) is said with either: under "process" a power cut may have cut a chain short."""
    from sentinel_mcp.gateway.audit_anchor import AnchorError, AnchorLog
    from sentinel_mcp.gateway.audit_anchor_check import verify_anchored
    from sentinel_mcp.gateway.audit_chain import ChainReport, verify_store

    try:
        if anchor_dir is None:
            report = verify_store(path, key)
        else:
            report = verify_anchored(path, AnchorLog(anchor_dir, path.parent), key)
    except AnchorError as e:
        report = ChainReport(problem=str(e), files=0)
    except Exception as e:  # noqa: BLE001 - whatever is on disk, the answer is a reason, not a traceback
        report = ChainReport(problem=f"cannot verify: {type(e).__name__}: {e}", files=0)
    if as_json:
        print(json.dumps({
            "ok": report.ok, "store": str(path), "rows": report.rows, "chains": report.chains,
            "files": report.files, "problem": report.problem,
            "file": str(report.file) if report.file else None, "broken_row": report.broken_row,
            "anchor": str(anchor_dir) if anchor_dir else None, "anchor_records": report.anchored,
            "sealed_checked": key is not None, "unsealed": report.unsealed, "sync": sync,
        }, ensure_ascii=True))
        return 0 if report.ok else 1
    from sentinel_mcp.config_audit import SYNC_MEANING  # (its module loads pydantic: not at `serve`'s start)

    durability = f'durability: sentinel.audit.sync = "{sync}" ({SYNC_MEANING[sync]})'
    if report.ok:
        anchored = (
            f"; anchored: {report.anchored} anchor records verified with the key in {anchor_dir} (rows after "
            "each chain's last anchor are not covered)"
            if anchor_dir is not None
            else "; not anchored (sentinel.audit_anchor is false): a rewound or removed chain is not detected"
        )
        seals = (
            f"; every row's seal checked ({report.unsealed} from before the seal)" if key is not None
            else "; seals not checked (no sentinel.cluster.seal_key: rows are not sealed)"
        )
        print(
            f"audit log {path}: {report.rows} rows in {report.chains} chain(s) across {report.files} file(s) "
            f"(every gateway instance), chain intact{anchored}{seals}; {durability}"
        )
        return 0
    print(
        f"audit log {report.file or path}: BROKEN: {_shown(report.problem, 2000)}"
        + (f" (first broken row: {report.broken_row})" if report.broken_row is not None else "")
        + f"; {durability}"
    )
    return 1


def cmd_call(args: argparse.Namespace) -> int:
    from sentinel_mcp.app.terminal_client import call_once

    try:
        arguments: Any = json.loads(args.arguments)
    except json.JSONDecodeError as e:
        print(f"sentinel-mcp: arguments are not valid JSON: {e.msg} (column {e.colno})", file=sys.stderr)
        return 2
    except RecursionError:  # the parser's depth bound: deeper than any tool's arguments
        print("sentinel-mcp: arguments are not valid JSON: nested too deep", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):  # MCP: a tool's arguments are one object of name -> value
        given = "an array" if isinstance(arguments, list) else json.dumps(arguments)[:40]
        print(f"sentinel-mcp: arguments must be a JSON object ({{\"name\": value, ...}}), not {given}",
              file=sys.stderr)
        return 2
    if args.url is not None:
        from sentinel_mcp.app.endpoint_url import checked_endpoint

        checked_endpoint(args.url, plaintext=args.plaintext)
    config = None if args.url else load_config(args.config)
    token = args.token or os.environ.get("SENTINEL_TOKEN")
    if token is None and args.url and not args.cert:  # a client certificate is the caller: no owner's token
        token = _owner_token(args)
    verify = _call_tls(args) if args.url and args.url.startswith("https://") else True
    return asyncio.run(
        call_once(
            args.tool, arguments, config=config, url=args.url, token=token, assume_yes=args.yes, verify=verify
        )
    )


def _call_tls(args: argparse.Namespace) -> Any:
    from sentinel_mcp.tls.authority import tls_dir
    from sentinel_mcp.tls.client_context import client_context
    from sentinel_mcp.tls.settings import ClientTLS
    from sentinel_mcp.tls.setup_error import TLSSetupError

    ca = args.ca
    if ca is None:
        local = tls_dir(load_config(args.config).data_dir) / "ca.pem"
        ca = str(local) if local.is_file() else None
    try:
        return client_context(ClientTLS(ca=ca, cert=args.cert, key=args.key))
    except (TLSSetupError, ValueError) as e:
        raise ConfigError(str(e)) from None


def _owner_token(args: argparse.Namespace) -> str | None:
    """The token a local Sentinel on this config's data dir uses (None when it has none yet)."""
    from sentinel_mcp.identity.owner_token import read, token_path

    config = load_config(args.config)
    if config.sentinel.http.token is not None:
        return config.sentinel.http.token
    try:  # the same checks as the server's (no symbolic link, this user's file, nobody else writes it)
        return read(token_path(config.data_dir))
    except (OSError, ValueError):
        return None


def _shown(value: Any, width: int, *, ends: bool = False) -> str:
    """A stored value for the terminal: control, escape and direction characters shown as ⟨U+…⟩, one line,
    cut to ``width`` characters; with ``ends``, its start and its end around an ellipsis (a session id: who
    and what kind first, the time it was made in the middle, the random part that tells it apart last)."""
    from sentinel_mcp.core.display_text import safe_text

    text = safe_text("" if value is None else str(value), 10_000)
    if len(text) <= width:
        return text
    if not ends:
        return _head(text, width)
    head = (width - 1) // 2
    return f"{_head(text, head)}…{_tail(text, width - 1 - head)}"


# In marked text every ⟨ starts one of Sentinel's marks (a value's own is marked itself): a cut never splits
# one, or "⟨U+20" would be left, a half mark a person reads as something else
def _head(text: str, n: int) -> str:
    cut = text[:n]
    start = cut.rfind("⟨")
    return cut[:start] if start >= 0 and "⟩" not in cut[start:] else cut


def _tail(text: str, n: int) -> str:
    cut = text[len(text) - n:] if n > 0 else ""
    end = cut.find("⟩")
    return cut[end + 1:] if end >= 0 and "⟨" not in cut[:end] else cut
