"""The small model package's file assembled into the user's cache (llm/model_package.py): processes asking at
once each get the whole, checked file (CI: the two real-model test files' first calls together, one read the
other's half-written file: "already exists with an unexpected sha256"); a file left broken is made again."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.llm.errors import ModelUnavailable
from sentinel_mcp.llm.model_source import MODEL_PACKAGE, resolve_model_path

package = __import__(MODEL_PACKAGE)  # installed by `make model` (a test of it never skips)

RESOLVE = "from sentinel_mcp.llm.model_source import resolve_model_path; print(resolve_model_path(None))"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _target(home: Path) -> Path:
    return home / ".cache" / MODEL_PACKAGE / package.MODEL_NAME


def test_processes_asking_at_once_each_get_the_whole_file(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "SENTINEL_MODEL": ""}
    procs = [subprocess.Popen([sys.executable, "-c", RESOLVE], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == str(_target(tmp_path))
    assert _sha(_target(tmp_path)) == package.EXPECTED_SHA256
    # nothing half-made is left beside it
    assert sorted(p.name for p in _target(tmp_path).parent.iterdir()) == [
        package.MODEL_NAME, package.MODEL_NAME + ".lock"]


@pytest.mark.parametrize("broken", [b"", b"GGUF", b"not a model at all" * 1000])
def test_a_file_left_broken_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          broken: bytes) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    target = _target(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_bytes(broken)  # a write cut off, or a disk's error
    assert resolve_model_path(None) == target
    assert _sha(target) == package.EXPECTED_SHA256


def test_a_lock_planted_as_a_link_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    target = _target(tmp_path)
    target.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    (target.parent / (target.name + ".lock")).symlink_to(elsewhere)
    with pytest.raises(ModelUnavailable, match="could not assemble"):
        resolve_model_path(None)
    assert not elsewhere.exists() and not target.exists()
