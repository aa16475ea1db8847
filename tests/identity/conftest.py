"""Make the identity rig importable (the suite uses --import-mode=importlib)."""

