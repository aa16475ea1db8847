"""Where SWI-Prolog's shared library and home are, told to pyswip so that importing it starts no ``swipl``.

pyswip looks for SWI-Prolog when ``pyswip.core`` is imported: unless ``LIBSWIPL_PATH`` and ``SWI_HOME_DIR``
are both set, it runs ``swipl --dump-runtime-variables`` (~0.1 s, on the gateway's cold start before its first
guard decision; issue 21). What it found is kept here (``$XDG_CACHE_HOME/sentinel-mcp/swipl-location.json``)
with the identity of the ``swipl`` it asked and of the library it named, and the next start hands both values
to pyswip for the length of the import only (the environment is put back: an upstream or a child started later
sees the environment it saw before).

The kept file names a library loaded into this process, so it is believed only when it cannot have been
planted: a regular file owned by this user and writable by no one else, in a directory of the same kind; the
``swipl`` on PATH the same file (device, inode, size, modification time) as when it was asked; the library
the same file as then. Anything else (no ``swipl`` on PATH, another platform, a value pyswip found by another
way, a kept file that does not check out) leaves the search to pyswip, as before.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

from sentinel_mcp.core.trusted_code import ProgramRefused, find_program, trusted_search_path

log = logging.getLogger(__name__)

_LIB, _HOME = "LIBSWIPL_PATH", "SWI_HOME_DIR"  # what pyswip.core reads (both, or it searches)
_FILE = "swipl-location.json"
_MAX_BYTES = 4096


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sentinel-mcp"


def _identity(path: str) -> list[int] | None:
    """Which file ``path`` is now (following links), or None when it is not a regular file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _swipl_identity() -> list[Any] | None:
    """The ``swipl`` pyswip would run (the first trusted one on PATH): its real path and identity."""
    try:
        exe = find_program("swipl")
    except ProgramRefused as e:
        log.error("%s", e)
        return None
    if exe is None:
        return None
    real = os.path.realpath(exe)
    ident = _identity(real)
    return None if ident is None else [real, *ident]


def _owned(st: os.stat_result) -> bool:
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _kept(swipl: list[Any]) -> tuple[str, str] | None:
    """The library and home kept for this ``swipl``, when the kept file checks out."""
    folder = cache_dir()
    try:
        dst = os.stat(folder)
        fd = os.open(folder / _FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISDIR(dst.st_mode) and _owned(dst) and stat.S_ISREG(st.st_mode) and _owned(st)):
            return None
        raw = os.read(fd, _MAX_BYTES + 1)
        if len(raw) > _MAX_BYTES:
            return None
        data = json.loads(raw or b"null")
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if type(data) is not dict or data.get("swipl") != swipl:
        return None
    lib, home, lib_id = data.get("lib"), data.get("home"), data.get("lib_identity")
    if type(lib) is not str or type(home) is not str or not (os.path.isabs(lib) and os.path.isabs(home)):
        return None
    if lib_id is None or _identity(lib) != lib_id or not os.path.isdir(home):
        return None
    return lib, home


def _keep(swipl: list[Any], lib: Any, home: Any) -> None:
    """Keep what pyswip found, when it is a library file and a home directory named in full."""
    if type(lib) is not str or type(home) is not str or not (os.path.isabs(lib) and os.path.isabs(home)):
        return
    lib_id = _identity(lib)
    if lib_id is None or not os.path.isdir(home):
        return
    folder = cache_dir()
    body = json.dumps({"swipl": swipl, "lib": lib, "home": home, "lib_identity": lib_id}).encode()
    if len(body) > _MAX_BYTES:
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder)
        if not (stat.S_ISDIR(st.st_mode) and _owned(st)):
            return  # what is written there would not be believed (``_kept``): nothing is left there
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".swipl-location-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, folder / _FILE)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        log.debug("could not keep where SWI-Prolog is", exc_info=True)


def import_pyswip_core() -> None:
    """Import ``pyswip.core`` (it loads and finds SWI-Prolog), with the kept location when there is one, and
    SWI-Prolog started without the user's init file (``_initialised_without_init_file``)."""
    if "pyswip.core" in sys.modules:
        return
    pyswip = _package_alone()
    _import_core()
    _initialised_without_init_file(sys.modules["pyswip.core"], pyswip)


def _package_alone() -> Any:
    """The ``pyswip`` package registered with its ``__init__`` not run yet: that imports ``pyswip.prolog``,
    which starts SWI-Prolog at once, before anything could change how."""
    spec = importlib.util.find_spec("pyswip")
    if spec is None or spec.loader is None:
        raise ImportError("pyswip is not installed")
    package = importlib.util.module_from_spec(spec)
    sys.modules["pyswip"] = package
    return package


def _initialised_without_init_file(core: Any, package: Any) -> None:
    """pyswip starts SWI-Prolog (``PL_initialise``, when ``pyswip.prolog`` is imported) with no ``-f``: the
    user's ``init.pl`` (``$XDG_CONFIG_HOME/swi-prolog``, ``~/.config/swi-prolog``) ran in the gateway's
    engine, which could then load a rulebase otherwise than the rehearsal that checked it (``swipl -f
    none``). ``-f none`` is added to what pyswip passes, then the package's ``__init__`` runs (it starts
    SWI-Prolog)."""
    start = core.PL_initialise

    def initialise(argc: int, argv: list[str]) -> Any:
        args = [*argv, "-f", "none"]
        return start(len(args), args)

    core.PL_initialise = initialise
    try:
        package.__spec__.loader.exec_module(package)
    except BaseException:
        for name in [n for n in sys.modules if n == "pyswip" or n.startswith("pyswip.")]:
            del sys.modules[name]  # a later try imports it afresh, not half
        raise


def _import_core() -> None:
    # pyswip's own search runs ``swipl`` by name and loads the library it names into this process: only
    # on PATH entries no other account could change (``core/trusted_code.py``), for the import only
    with _environment(PATH=trusted_search_path()):
        if not sys.platform.startswith("linux") or (os.environ.get(_LIB) and os.environ.get(_HOME)):
            import pyswip.core  # noqa: F401 - its own search (or the caller's environment)

            return
        swipl = _swipl_identity()
        found = None if swipl is None else _kept(swipl)
        if found is None:
            import pyswip.core as core

            if swipl is not None:
                _keep(swipl, getattr(core, "_path", None), getattr(core, "SWI_HOME_DIR", None))
            return
        with _environment(**dict(zip((_LIB, _HOME), found))):
            import pyswip.core  # noqa: F401,F811 - reads both from the environment: no search


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """``values`` in the environment for the ``with`` only (an upstream or a child started later sees the
    environment it saw before)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
