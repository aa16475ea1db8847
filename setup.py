"""Package layout beyond what pyproject.toml can say: the shipped policies and grammars live at the top of the
checkout (``rulebases/``, ``grammars/``) and install as package data inside ``sentinel_mcp`` (a wheel, pipx,
uvx).
``sentinel_mcp.paths`` finds them in either place."""

from setuptools import Extension, find_namespace_packages, setup

SHIPPED = {"sentinel_mcp.rulebases": "rulebases", "sentinel_mcp.grammars": "grammars"}

setup(
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
