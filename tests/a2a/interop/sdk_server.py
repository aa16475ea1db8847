"""An A2A agent built with the official ``a2a-sdk`` (run it in a venv that has a2a-sdk and uvicorn).

Not a pytest module: ``test_sdk_interop.py`` starts it so that Sentinel's discovery check and peer
client talk to a reference server. It echoes the data parts it gets as an artifact and completes.
Usage: python sdk_server.py PORT [CERT.pem KEY.pem [CLIENT_CA.pem]]   (HTTPS; with a CA, client certificates
required). Environment: ``SDK_AGENT_NAME`` names the agent; ``SDK_BARE_CARD=1`` gives it the least card the
SDK writes (no skills, modes, description, version or capabilities set: proto3 JSON leaves each out).
"""

import os
import ssl
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        parts = MessageToDict(context.message).get("parts", [])
        await updater.add_artifact([new_text_part(f"sdk agent got {len(parts)} part(s)")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def main(port: int, cert: str | None = None, key: str | None = None, client_ca: str | None = None) -> None:
    url = f"{'https' if cert else 'http'}://127.0.0.1:{port}"
    name = os.environ.get("SDK_AGENT_NAME", "sdk-reference-agent")
    interface = AgentInterface(url=url + "/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
    card = AgentCard(name=name, supported_interfaces=[interface])
    if not os.environ.get("SDK_BARE_CARD"):
        card = AgentCard(
        name=name,
        description="a2a-sdk reference agent",
        version="1.0.0",
        supported_interfaces=[interface],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
        )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/a2a")])
    tls = {"ssl_certfile": cert, "ssl_keyfile": key} if cert else {}
    if client_ca:
        tls.update(ssl_ca_certs=client_ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", **tls)


if __name__ == "__main__":
    import gc  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.freeze()
    main(int(sys.argv[1]), *sys.argv[2:5])
