"""Any OpenAI-compatible chat-completions endpoint over HTTP (httpx2).

30 s timeout per attempt; timeouts, 429 and 5xx are retried with exponential backoff; other 4xx are
not retried. Token usage comes from the response's ``usage``. An answer is read uncompressed and within
``MAX_ANSWER_BYTES``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx2
from pydantic import BaseModel, ConfigDict, Field

from sentinel_mcp.core.model_json import loads_model_json
from sentinel_mcp.swarm.backends.base import (
    ErrorSink,
    ModelError,
    ModelReply,
    ModelRequest,
    claimed_tokens,
    estimate_tokens,
)

# a chat completion of at most 8,000 tokens is tens of KB: anything this large is not an answer
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class OpenAISettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url_env: str = "SWARM_OPENAI_BASE_URL"
    api_key_env: str = "SWARM_OPENAI_API_KEY"
    model_env: str = "SWARM_OPENAI_MODEL"  # when set, names the model (else ``model``)
    model: str = "gpt-4o-mini"
    timeout: float = Field(30.0, gt=0, le=30.0)  # seconds per attempt; may only be lowered
    max_attempts: int = Field(4, ge=1, le=6)
    backoff_base: float = Field(1.0, ge=0, le=30)  # first wait; doubles each retry
    json_mode: bool = True  # ask for response_format=json_object when a structured reply is wanted
    temperature: float = Field(0.2, ge=0, le=2)


class OpenAIBackend:
    name = "openai"

    def __init__(self, settings: OpenAISettings, base_url: str, api_key: str | None) -> None:
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(settings.timeout))

    @classmethod
    def from_env(cls, settings: OpenAISettings) -> OpenAIBackend:
        base = os.environ.get(settings.base_url_env)
        if not base:
            raise ModelError(f"the openai backend needs the endpoint's base URL in ${settings.base_url_env}")
        model = os.environ.get(settings.model_env)
        if model:
            settings = settings.model_copy(update={"model": model})
        return cls(settings, base, os.environ.get(settings.api_key_env))

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": "system", "content": request.system},
                         {"role": "user", "content": request.unconstrained_prompt()}],
            "max_tokens": request.max_tokens,
            "temperature": self.settings.temperature,
        }
        if request.wants_json and self.settings.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    async def complete(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply:
        url = f"{self.base_url}/chat/completions"
        body = self._body(request)
        last = "no attempt made"
        for attempt in range(1, self.settings.max_attempts + 1):
            transient = True
            try:
                # read within a bound, uncompressed: the endpoint's answer is as untrusted as its words; and
                # within the attempt's time as a whole (the client's timeout bounds each read only: an answer
                # sent a byte at a time held the attempt as long as the endpoint liked)
                async with asyncio.timeout(self.settings.timeout), self._http.stream(
                    "POST", url, json=body, headers={"Accept-Encoding": "identity"}
                ) as resp:
                    raw = await _bounded(resp)
            except _TooLarge as e:
                on_error(str(e))
                raise ModelError(f"model endpoint answer refused: {e}") from None
            except (httpx2.TimeoutException, TimeoutError):
                last = f"timeout after {self.settings.timeout:g} s"
            except httpx2.TransportError as e:
                last = f"connection error: {type(e).__name__}: {e}"
            else:
                if resp.status_code == 200:
                    return self._reply(raw, attempt, request.system + request.full_prompt)
                last = f"HTTP {resp.status_code}: {raw[:200].decode('utf-8', 'replace')}"
                transient = resp.status_code == 429 or resp.status_code >= 500
                if not transient:
                    on_error(last)
                    raise ModelError(f"model endpoint refused the request: {last}", status=resp.status_code)
            on_error(last)
            if attempt < self.settings.max_attempts:
                await asyncio.sleep(self.settings.backoff_base * (2 ** (attempt - 1)))
        raise ModelError(f"model endpoint failed {self.settings.max_attempts} times: {last}", transient=True)

    def _reply(self, raw: bytes, attempt: int, prompt: str) -> ModelReply:
        try:
            # strict, as the model's text is: a key twice (two ``choices``, two ``content``) is two answers,
            # the first read by one reader (a proxy, a log), the last acted on by Python's json
            data = loads_model_json(raw.decode("utf-8"))
            text = data["choices"][0]["message"]["content"] or ""
        # RecursionError: nested deeper than the parser recurses; the endpoint's answer is as hostile as text
        except (ValueError, KeyError, IndexError, TypeError, RecursionError) as e:
            raise ModelError(f"malformed chat-completions response: {type(e).__name__}: {e}") from None
        if not isinstance(text, str):  # type-strict: a number, a list or an object is no model's words
            raise ModelError(f"malformed chat-completions response: content is a {type(text).__name__}")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return ModelReply(
            text=text,
            # at least what the text estimates: the endpoint's own count (missing, zero, one, negative) is
            # its word, and the token cap must hold whatever it says
            prompt_tokens=max(claimed_tokens(usage.get("prompt_tokens")), estimate_tokens(prompt)),
            completion_tokens=max(claimed_tokens(usage.get("completion_tokens")), estimate_tokens(text)),
            model=str(data.get("model") or self.settings.model),
            attempts=attempt,
        )

    async def aclose(self) -> None:
        await self._http.aclose()


class _TooLarge(ModelError):
    pass


async def _bounded(resp: httpx2.Response) -> bytes:
    """The body as sent (no encoding but identity is read), at most ``MAX_ANSWER_BYTES``."""
    encoding = resp.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise _TooLarge(f"it is compressed ({encoding[:40]!r}); only identity is read")
    declared = resp.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
        raise _TooLarge(f"it is larger than {MAX_ANSWER_BYTES:,} bytes ({int(declared):,} declared)")
    chunks, size = [], 0
    async for chunk in resp.aiter_raw():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise _TooLarge(f"it is larger than {MAX_ANSWER_BYTES:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
