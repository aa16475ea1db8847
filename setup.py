"""Package layout beyond what pyproject.toml can say: the shipped policies and grammars live at the top of the
checkout (``rulebases/``, ``grammars/``) and install as package data inside ``sentinel_mcp`` (a wheel, pipx,
uvx).
``sentinel_mcp.paths`` finds them in either place."""

from setuptools import find_namespace_packages, setup

SHIPPED = {"sentinel_mcp.rulebases": "rulebases", "sentinel_mcp.grammars": "grammars"}

setup(
    # namespace discovery: data-only directories (device_tools/screens, policy/prolog) ship too
    packages=find_namespace_packages(
        include=["sentinel_mcp*", "device_tools*", "examples*"], exclude=["*.__pycache__"]
    )
    + list(SHIPPED),
    package_dir=SHIPPED,
)
