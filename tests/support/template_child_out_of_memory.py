"""A template child ending as one out of memory outside a render does (tests/llm/test_template_bombs.py)."""

import os

from sentinel_mcp.llm.template_child import MEMORY_EXIT

os._exit(MEMORY_EXIT)
