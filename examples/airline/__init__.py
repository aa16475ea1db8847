"""tau2-bench airline domain as an MCP server: `python -m examples.airline [--http PORT]`."""
