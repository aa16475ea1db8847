"""A template child that ends at once with an exit code of its own (tests/llm/test_template_bombs.py)."""

import sys

sys.exit(3)
