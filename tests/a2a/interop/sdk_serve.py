"""Serves one a2a-sdk agent (its card and JSON-RPC at /a2a) on 127.0.0.1: what the interop agents share.
Run in the a2a-sdk venv; imported by the agent scripts beside it (their folder is on sys.path as scripts).
``SDK_CARD_KEY`` (a PEM private key's path) has the card signed with it (ES256, the SDK's own signer)."""

import os

import uvicorn
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


def serve_agent(executor: AgentExecutor, port: int, *, name: str, description: str, mode: str,
                skill: AgentSkill) -> None:
    """Blocks serving ``executor`` with a JSONRPC 1.0 card (no streaming, ``mode`` in and out)."""
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url + "/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=[mode],
        default_output_modes=[mode],
        skills=[skill],
    )
    if os.environ.get("SDK_CARD_KEY"):
        from a2a.utils.signing import create_agent_card_signer

        key = open(os.environ["SDK_CARD_KEY"], "rb").read()
        card = create_agent_card_signer(key, {"alg": "ES256", "kid": "sdk-key", "typ": "JOSE"})(card)
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/a2a")])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
