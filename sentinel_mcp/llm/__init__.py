"""The Cortex: local llama.cpp inference with sanitized input and grammar-constrained, validated output.

``cortex.Cortex`` is the in-process API, ``engine.LlamaEngine`` the model, ``server.create_server`` the
built-in ``llm`` MCP server (``python -m sentinel_mcp.llm`` runs it alone over stdio).
"""
