"""Make the console rig (and the identity rig it builds on) importable (the suite uses
--import-mode=importlib)."""

from pathlib import Path

HERE = Path(__file__).parent
