"""A build's id is ASCII only: ``\\d`` in a ``str`` pattern matches every script's digits (Arabic-Indic,
Devanagari, fullwidth), so ids written in them passed as build ids (``workspace_of``, the console's pages, the
retention sweep), naming directories under the swarm's root no build ever made (red team 'swarm' 4)."""

from __future__ import annotations

import pytest

from sentinel_mcp.swarm.build_service import TASK_ID, UnknownTaskError, new_task_id
from sentinel_mcp.swarm.retention import TASK_DIR

LOOK_ALIKES = [
    # Arabic-Indic
    "t\u0662\u0660\u0662\u0666\u0660\u0661\u0660\u0661-\u0660\u0660\u0660\u0660\u0660\u0660-abcdef",
    "t\uff12\uff10\uff12\uff16\uff10\uff11\uff10\uff11-000000-abcdef",  # fullwidth
    "t2026\u0966\u0967\u0966\u0967-000000-abcdef",  # Devanagari
    "t20260101-000000-abcdef\n",
    "t20260101-000000-ABCDEF",
]


@pytest.mark.parametrize("task_id", LOOK_ALIKES)
def test_an_id_in_other_digits_is_no_build_id(task_id: str, service) -> None:
    assert not TASK_ID.fullmatch(task_id) and not TASK_DIR.fullmatch(task_id)
    with pytest.raises(UnknownTaskError):
        service.workspace_of(task_id)


def test_a_new_id_is_one() -> None:
    tid = new_task_id()
    assert TASK_ID.fullmatch(tid) and TASK_DIR.fullmatch(tid)
