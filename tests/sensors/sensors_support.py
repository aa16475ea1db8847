"""Recorded command outputs for the sensors tests."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()
