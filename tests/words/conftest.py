import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # words_rig (the suite uses --import-mode=importlib)
