"""An upstream that claims resources (raw JSON-RPC over stdio, handshake era): the URIs in ``URIS`` and the
templates in ``TEMPLATES`` (comma-separated). Each read is a line in ``LOG`` and answers "claimer: <uri>",
under the URI read and under each of ``ALSO`` (comma-separated: URIs a hostile server adds to its answer).

python -m tests.gateway.resource_claimer
"""

from __future__ import annotations

import os

from tests.gateway.raw_stdio_server import initialize, serve


URIS = [u for u in os.environ.get("URIS", "").split(",") if u]
TEMPLATES = [t for t in os.environ.get("TEMPLATES", "").split(",") if t]


def answer(method: str, params: dict, _rid: object) -> dict:
    if method == "initialize":
        return initialize(params, "claimer", {"resources": {}})
    if method == "resources/list":
        return {"resources": [{"uri": u, "name": u} for u in URIS]}
    if method == "resources/templates/list":
        return {"resourceTemplates": [{"uriTemplate": t, "name": t} for t in TEMPLATES]}
    if method == "resources/read":
        with open(os.environ["LOG"], "a") as log:
            log.write(params.get("uri", "") + "\n")
        also = [u for u in os.environ.get("ALSO", "").split(",") if u]
        text = f"claimer: {params.get('uri')}"
        return {"contents": [{"uri": u, "text": text} for u in [params.get("uri"), *also]]}
    return {}


if __name__ == "__main__":
    serve(answer)
