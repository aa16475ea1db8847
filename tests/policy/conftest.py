"""Make the policy test rig importable (the suite uses --import-mode=importlib)."""

