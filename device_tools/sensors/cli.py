"""``sentinel-mcp sensors ...``: manage sensor consent and read a sensor from the command line.

Works on the same store as the running built-in (``<data_dir>/sensors/sensors.db``, or the PostgreSQL database
``sentinel.store`` names, shared by every replica), so a grant made here is seen by the server at its next
request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from device_tools.sensors.consent_registry import ANY_REQUESTER
from device_tools.sensors.errors import SensorError
from sentinel_mcp.core.cli_numbers import count
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind, parse_scope, parse_sensor
from device_tools.sensors.settings import SensorSettings

if TYPE_CHECKING:
    from device_tools.sensors.bridge import SensorBridge

SENSORS = [k.value for k in SensorKind]
SCOPES = [s.value for s in Scope]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("sensors", help="device sensor consent, reads and audit")
    sub = p.add_subparsers(dest="sensors_command", metavar="ACTION", required=True)

    consent = sub.add_parser("consent", help="grant, revoke or list sensor consent")
    csub = consent.add_subparsers(dest="consent_action", metavar="grant|revoke|list", required=True)
    grant = csub.add_parser("grant", help="allow a requester to read a sensor up to a scope")
    grant.add_argument("sensor", choices=SENSORS)
    grant.add_argument("--requester", required=True, help=f"caller identity ('{ANY_REQUESTER}' = anyone)")
    grant.add_argument("--scope", choices=SCOPES, default="minimal")
    grant.add_argument(
        "--expires-in", type=float, default=None, metavar="SECONDS", help="default: until revoked"
    )
    grant.set_defaults(func=_grant)
    revoke = csub.add_parser("revoke", help="withdraw consent (one sensor, or all with no sensor)")
    revoke.add_argument("sensor", nargs="?", choices=SENSORS)
    revoke.add_argument("--requester", required=True)
    revoke.set_defaults(func=_revoke)
    lst = csub.add_parser("list", help="list live consents")
    lst.add_argument("--requester", default=None)
    lst.add_argument("--all", action="store_true", help="include expired ones")
    lst.set_defaults(func=_list)

    read = sub.add_parser("read", help="read a sensor through the same policy as the MCP tool")
    read.add_argument("sensor", help="|".join(SENSORS))
    read.add_argument("--scope", default="minimal", help="|".join(SCOPES))
    read.add_argument("--policy-tag", default="cli-read")
    read.add_argument("--requester", default="cli")
    read.add_argument("--retention", type=int, default=None, metavar="SECONDS")
    read.add_argument("--yes", action="store_true", help="consent to this one read without asking")
    read.set_defaults(func=_read)

    audit = sub.add_parser("audit", help="show the sensor audit trail")
    audit.add_argument("--requester", default=None)
    audit.add_argument("--limit", type=count, default=50)
    audit.set_defaults(func=_audit)


def _settings_and_dir(args: argparse.Namespace) -> tuple[SensorSettings, Path, str | None]:
    from sentinel_mcp.config import load_config

    config = load_config(getattr(args, "config", None))
    settings = SensorSettings.from_section(config.sentinel.builtin_settings("sensors"))
    return settings, config.data_dir / "sensors", config.store_url  # the replicas' shared database, if any


def _key(args: argparse.Namespace) -> bytes | None:
    """What the replicas sign the shared consents with (from the config's seal key); None: none set."""
    from sentinel_mcp.config import load_config
    from sentinel_mcp.storage.row_signature import configured_key

    config = load_config(getattr(args, "config", None))
    return configured_key(config.sentinel.cluster.seal_key, "sensor consent") if config.store_url else None


def _bridge(args: argparse.Namespace) -> SensorBridge:
    # imported here: the bridge loads the MCP SDK; registering the `sensors` sub-command on every start must
    # not (issue 21: `serve` launches its stdio upstreams before the SDK loads)
    from device_tools.sensors.bridge import SensorBridge
    from device_tools.sensors.database import SensorDatabase
    from device_tools.sensors.sources.factory import make_source  # the sources' parsers and back-ends

    settings, data_dir, store = _settings_and_dir(args)
    return SensorBridge(
        make_source(settings),
        SensorDatabase(data_dir, store, key=_key(args)),
        default_retention=settings.default_retention,
        max_retention=settings.max_retention,
    )


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


def _grant(args: argparse.Namespace) -> int:
    bridge = _bridge(args)
    try:
        consent = bridge.consents.grant(
            args.requester,
            parse_sensor(args.sensor),
            parse_scope(args.scope),
            args.expires_in,
            granted_by="cli",
        )
    except ValueError as e:
        print(f"sentinel-mcp sensors: {e}", file=sys.stderr)
        return 2
    _print({"granted": consent.model_dump(mode="json")})
    return 0


def _revoke(args: argparse.Namespace) -> int:
    bridge = _bridge(args)
    removed = bridge.consents.revoke(args.requester, parse_sensor(args.sensor) if args.sensor else None)
    _print({"revoked": removed, "requester": args.requester, "sensor": args.sensor})
    return 0


def _list(args: argparse.Namespace) -> int:
    bridge = _bridge(args)
    _print({"consents": [c.model_dump(mode="json") for c in bridge.consents.list(args.requester, args.all)]})
    return 0


def _audit(args: argparse.Namespace) -> int:
    _print({"audit": _bridge(args).audit.rows(args.requester, args.limit)})
    return 0


def _read(args: argparse.Namespace) -> int:
    bridge = _bridge(args)
    request = {
        "sensor": args.sensor,
        "scope": args.scope,
        "policy_tag": args.policy_tag,
        "retention": args.retention,
        "task_id": "cli",
    }
    from device_tools.sensors.bridge import UserConsent

    answer = UserConsent(allow=True) if args.yes else None
    if answer is None and sys.stdin.isatty():
        question = bridge.consent_question(args.requester, request)
        if question is not None:
            reply = input(f"{question} [y/N] ").strip().lower()
            answer = UserConsent(allow=reply in ("y", "yes"))
    try:
        response = asyncio.run(bridge.handle(request, args.requester, answer))
    except SensorError as e:
        print(f"sentinel-mcp sensors: {e.code}: {e.message}", file=sys.stderr)
        return 1
    _print(response.model_dump())
    return 0
