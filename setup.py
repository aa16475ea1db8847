"""Package layout beyond what pyproject.toml can say: the shipped policies and grammars live at the top of the
checkout (``rulebases/``, ``grammars/``) and install as package data inside ``sentinel_mcp`` (a wheel, pipx,
uvx).
``sentinel_mcp.paths`` finds them in either place."""

import importlib.util
import shutil
import sys
from pathlib import Path

from setuptools import Extension, find_namespace_packages, setup
from setuptools.command.build_py import build_py


class BuildWithCore(build_py):
    """The copy, then Sentinel's Prolog core compiled beside its sources in the build (a wheel carries the
    .qlf and their manifest: sentinel_mcp/policy/core_qlf.py). Optional like the C extension: without swipl
    the core loads from source."""

    def run(self) -> None:
        super().run()
        prolog = Path(self.build_lib) / "sentinel_mcp" / "policy" / "prolog"
        # a manifest copied from a built checkout vouches for nothing here (package data matches *.json)
        (prolog / "core_qlf.json").unlink(missing_ok=True)
        if not (prolog / "sentinel_core.pl").is_file() or shutil.which("swipl") is None:
            return
        # the file alone (standard library only): the package's own imports are not installed in a build
        spec = importlib.util.spec_from_file_location("core_qlf", prolog.parent / "core_qlf.py")
        assert spec is not None and spec.loader is not None
        core_qlf = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(core_qlf)
            core_qlf.build(prolog)
        except Exception as e:  # noqa: BLE001 - the install goes on; the core loads from source
            print(f"warning: Sentinel's Prolog core not precompiled: {e}", file=sys.stderr)

SHIPPED = {"sentinel_mcp.rulebases": "rulebases", "sentinel_mcp.grammars": "grammars"}

setup(
    cmdclass={"build_py": BuildWithCore},
    # namespace discovery: data-only directories (device_tools/screens, policy/prolog) ship too
    packages=find_namespace_packages(
        include=["sentinel_mcp*", "device_tools*", "examples*"], exclude=["*.__pycache__"]
    )
    + list(SHIPPED),
    package_dir=SHIPPED,
    # a guard decision's call into SWI-Prolog in one C function (not linked: it gets pyswip's addresses);
    # optional: without a C compiler the install goes on, and prolog_call.py calls through ctypes
    ext_modules=[
        Extension(
            "sentinel_mcp.policy.prolog_call_native",
            ["sentinel_mcp/policy/prolog_call_native.c"],
            # included by it (one translation unit): a change rebuilds the module, and an sdist carries it
            depends=["sentinel_mcp/policy/prolog_json_terms.c"],
            optional=True,
        )
    ],
)
