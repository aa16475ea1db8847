"""Bundled tau2-bench airline data (MIT): db.json, policy.md, tasks.json, split_tasks.json."""
