"""Bundled tau2-bench retail data (MIT, see LICENSE): db.json and policy.md."""
