"""The contracts every area shares: the call, decisions, the gateway port, the built-in contract, the guard
protocol, errors. ``core`` imports nothing of Sentinel's areas (an import-linter contract checks it)."""
