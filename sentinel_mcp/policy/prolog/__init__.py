"""SWI-Prolog sources of the policy engine (shipped as package data)."""
