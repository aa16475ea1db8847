"""The requests an upstream sends on a lean call's own stream (``lean_upstream``: elicitation, sampling,
roots, ping; handshake era only), answered as the SDK session answers them (``ClientSession._on_request``:
its parsing, callback table, result checks) in the calling task, so they reach exactly the client whose call
it is; the answer is POSTed back on the session. A mixin of ``LeanCaller``."""

from __future__ import annotations

import logging
from typing import Any

from mcp import Client
from mcp.client.session import ClientRequestContext, ClientResponse
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, ErrorData, PingRequest
from mcp_types import methods as sdk_methods
from pydantic import ValidationError

from sentinel_mcp.gateway.undeclared_requests import screened

log = logging.getLogger("sentinel_mcp.gateway.lean_upstream")  # its lines, as they were


class StreamRequests:
    client: Client
    era: str

    async def _post_quietly(self, message: dict[str, Any], what: str) -> None:  # LeanCaller's
        raise NotImplementedError

    async def _answer_request(self, msg: dict[str, Any]) -> None:
        """A request the upstream sent on this call's stream, answered as the SDK session answers it
        (``ClientSession._on_request``: its parsing, callback table, result checks), in the calling task."""
        server_id = msg.get("id")
        if not isinstance(server_id, (int, str)) or isinstance(server_id, bool):
            log.info("lean upstream call: upstream request with a malformed id dropped")
            return
        method, params = msg.get("method"), msg.get("params")
        try:
            result = await self._callback(method, params, server_id)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": server_id, "result": result}
        except Exception as e:  # noqa: BLE001 - whatever failed, the upstream gets an answer, the call goes on
            error = handler_exception_to_error_data(e)
            if error is None:  # no text of ours on the wire (the SDK's dispatcher would send str(e))
                log.exception("lean upstream call: answering %r failed", str(method)[:60])
                error = ErrorData(code=INTERNAL_ERROR, message="Internal error")
            answer = {"jsonrpc": "2.0", "id": server_id,
                      "error": error.model_dump(by_alias=True, mode="json", exclude_none=True)}
        await self._post_quietly(answer, f"the answer to {str(method)[:60]!r}")

    async def _callback(self, method: Any, params: Any, server_id: int | str) -> dict[str, Any]:
        if not isinstance(method, str) or not (params is None or isinstance(params, dict)):
            raise MCPError(INVALID_REQUEST, "Invalid request")
        refused = await screened(self.client, method)  # as on the SDK's path (undeclared_requests.py)
        if refused is not None:
            raise MCPError.from_error_data(refused)
        try:
            request: Any = sdk_methods.parse_server_request(method, self.era, params)
        except KeyError:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method) from None
        if isinstance(request, PingRequest):
            return {}  # answered without a context, as the SDK does
        ctx = ClientRequestContext(session=self.client.session, request_id=server_id,
                                   meta=request.params.meta if request.params else None)
        answered = await self.client.session.dispatch_input_request(ctx, request)
        response = ClientResponse.validate_python(answered)
        if isinstance(response, ErrorData):
            raise MCPError.from_error_data(response)
        result: dict[str, Any] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            sdk_methods.validate_client_result(method, self.era, result)
        except ValidationError:
            log.exception("lean upstream call: a callback for %r returned an invalid result", method)
            raise MCPError(INTERNAL_ERROR, "Client callback returned an invalid result") from None
        return result
