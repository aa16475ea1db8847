"""Every text the engine writes as JSON is JSON: an infinite or NaN number is written as its text (as a
fact's argument is, pl_json/2), never SWI-Prolog's ``inf``/``nan``, which no JSON reader takes (one in a
rulebase's declaration failed the whole check with JSONDecodeError)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "sentinel_mcp" / "policy" / "prolog" / "sentinel_core.pl"


@pytest.mark.parametrize("term", [
    "json([a=1.0Inf, b= -1.0Inf, c=1.5NaN, d=[1.0Inf], e=1.5])",  # the fast path
    "json([a=1.0Inf, q='say \"x\"', d=[1.5NaN]])",  # a text that needs an escape: the library's path
])
def test_a_non_finite_number_is_written_as_json(term: str) -> None:
    swipl = shutil.which("swipl")
    assert swipl is not None
    goal = f"use_module('{CORE}'), sentinel_core:to_json_atom({term}, A), write(A), nl"
    out = subprocess.run([swipl, "-q", "-g", goal, "-t", "halt"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    value = json.loads(out.stdout)
    assert value["a"] == "1.0Inf" and value["d"] in (["1.0Inf"], ["1.5NaN"]), value
    assert value.get("e", 1.5) == 1.5
