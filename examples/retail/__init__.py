"""The retail domain of tau2-bench as an MCP server (see README.md)."""
