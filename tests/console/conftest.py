"""Make the console rig (and the identity rig it builds on) importable (the suite uses --import-mode=importlib)."""

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "identity"))
