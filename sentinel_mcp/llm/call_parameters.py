"""A Cortex call's sampling parameters, taken as what they are: never coerced, always within their range.

The MCP tools declare them strict (pydantic's lax mode read ``true`` as one token and ``"7"`` as seven); the
in-process API (other built-ins, tests, benchmarks) is checked here the same way, so a NaN temperature or a
seed past llama.cpp's 32 bits (cut to its low bits without a word) never reaches the sampler.
"""

from __future__ import annotations

import math

from sentinel_mcp.llm.errors import InputRejected

MAX_TEMPERATURE = 2.0
MAX_SEED = 2**32 - 1  # llama.cpp's seed is 32 bits


def checked_max_tokens(value: object, cap: int) -> int:
    if type(value) is not int:  # bool, float and str are not a count of tokens
        raise InputRejected(f"max_tokens must be an integer, not {type(value).__name__}")
    if value < 1:
        raise InputRejected("max_tokens must be at least 1")
    if value > cap:
        raise InputRejected(
            f"max_tokens={value} exceeds the configured cap of {cap} (sentinel.llm.max_tokens)"
        )
    return value


def checked_temperature(value: object) -> float | None:
    if value is None:
        return None
    if type(value) not in (int, float):
        raise InputRejected(f"temperature must be a number, not {type(value).__name__}")
    number = float(value)  # type: ignore[arg-type]  # int or float, checked above
    if not (math.isfinite(number) and 0.0 <= number <= MAX_TEMPERATURE):
        raise InputRejected(f"temperature must be from 0 to {MAX_TEMPERATURE}, not {number!r}")
    return number


def checked_seed(value: object) -> int | None:
    if value is None:
        return None
    if type(value) is not int:
        raise InputRejected(f"seed must be an integer, not {type(value).__name__}")
    if not 0 <= value <= MAX_SEED:
        raise InputRejected(f"seed must be from 0 to {MAX_SEED} (llama.cpp's seed is 32 bits)")
    return value
