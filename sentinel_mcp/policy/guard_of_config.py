"""The gateway's policy guard as a config makes it: its rulebases, fact store (next to the audit store, or the
replicas' shared server store), settings and seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from sentinel_mcp.config import Config
from sentinel_mcp.core.decision import Guard
from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.withheld_facts import WithheldFn
from sentinel_mcp.search.settings import SearchSettings


def facts_db_path(config: Config) -> Path:
    """Facts live next to the audit store (``sentinel.store``), in their own file."""
    return config.store_path.parent / "facts.db"


def create_guard(config: Config, port: GatewayPort, withheld: WithheldFn | None = None,
                 default: Guard | None = None, private: Callable[[str], bool] | None = None,
                 fact_key: bytes | None = None, passage_key: bytes | None = None) -> PolicyGuard:
    """The gateway's guard for a config; the caller awaits ``start()`` and, at shutdown, ``close()``.
    ``default``: the gateway's fail-safe guard, which decides the tools no rulebase governs; ``private``:
    whether a session is one no other process writes facts for (``PolicyGuard.private``); ``fact_key``: what
    a server store's facts are signed with (``SharedStore.key("facts")``; None: this process's own key);
    ``passage_key``: its policy passages and memories alike (``SharedStore.key("passages")``)."""
    extra = config.sentinel.model_extra or {}
    guard = PolicyGuard(
        config.rulebase_paths(),
        port,
        store_path=config.store_url or facts_db_path(config),
        local_dir=config.store_path.parent,
        settings=config.sentinel.policy,
        seeds=config.sentinel.seeds,
        search=SearchSettings.from_section(extra.get("search")),
        withheld=withheld,
        keep_history=True,
        default=default,
        private=private,
        # the allow's proof kept and rendered for the decision row (its tree read as a term in C): 0.26 ms
        # a decision against 0.30 with the proof written in the pass (benchmarks/hot_path.py's guard rows)
        lazy_proofs=True,
    )
    guard.store.key = fact_key or guard.store.key  # before the store is opened: every row it writes is signed
    guard.search.key = passage_key  # likewise the passages (None: this process's own key)
    return guard
