"""An upstream that claims resources (raw JSON-RPC over stdio, handshake era): the URIs in ``URIS`` and the
templates in ``TEMPLATES`` (comma-separated). Each read is a line in ``LOG`` and answers "claimer: <uri>".

python -m tests.gateway.resource_claimer
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    uris = [u for u in os.environ.get("URIS", "").split(",") if u]
    templates = [t for t in os.environ.get("TEMPLATES", "").split(",") if t]
    log = open(os.environ["LOG"], "a", buffering=1)  # noqa: SIM115 - open for the process's life
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:
            continue
        result: dict = {}
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                      "capabilities": {"resources": {}}, "serverInfo": {"name": "claimer", "version": "1"}}
        elif method == "resources/list":
            result = {"resources": [{"uri": u, "name": u} for u in uris]}
        elif method == "resources/templates/list":
            result = {"resourceTemplates": [{"uriTemplate": t, "name": t} for t in templates]}
        elif method == "resources/read":
            log.write(params.get("uri", "") + "\n")
            result = {"contents": [{"uri": params.get("uri"), "text": f"claimer: {params.get('uri')}"}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
