"""A test upstream with one model tool, ``generate``, shaped as the llm built-in's ``llm_generate``: it asks
the scripted model (``SWARM_OPENAI_BASE_URL``) and answers its words. The swarm's ``local`` backend pointed
at it (``local.tool``) makes a build's model calls guarded calls through the gateway."""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("model", version="1.0")
MARKER = "matches this JSON Schema exactly:\n"


@mcp.tool()
def generate(prompt: str, system: str = "", max_tokens: int = 1024, json_schema: Any = None,
             grammar: Any = None, context: Any = None) -> dict[str, Any]:
    if json_schema is not None and MARKER not in prompt:  # the scripted model reads the schema off the prompt
        prompt += "\nAnswer with JSON that " + MARKER + json.dumps(json_schema)
    body = {"model": "scripted-1", "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
    request = urllib.request.Request(
        os.environ["SWARM_OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer test-key", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        answer = json.loads(r.read())
    return {"text": answer["choices"][0]["message"]["content"], "model": "scripted-1"}


if __name__ == "__main__":
    mcp.run()
