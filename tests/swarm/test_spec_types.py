"""A client's app spec is read type-strict: JSON types as they are. ``"24"``, ``24.0`` or ``true`` is no SDK
level, ``5`` no app name, a list no package. Before, the spec coerced text and integral floats to numbers
(what the client sent was not what was validated, audited and built from)."""

from __future__ import annotations

import pytest

from sentinel_mcp.swarm.spec import SpecError, parse_spec

SPEC = {"app_name": "Notes", "package_name": "com.example.notes", "features": ["add a note"]}


@pytest.mark.parametrize("field,value", [
    ("min_sdk", "24"), ("min_sdk", 24.0), ("min_sdk", True), ("target_sdk", "34"), ("target_sdk", 34.0),
    ("app_name", 5), ("package_name", ["com.example.notes"]), ("features", "add a note"),
    ("features", [1]), ("description", 7), ("ui_system", ["Views"]),
])
def test_a_field_of_another_json_type_is_refused(field, value):
    with pytest.raises(SpecError, match=field):
        parse_spec(SPEC | {field: value})


def test_a_spec_of_json_types_still_reads():
    spec = parse_spec(SPEC | {"min_sdk": 26, "target_sdk": 34, "ui_system": "Compose", "architecture": "MVI"})
    assert (spec.min_sdk, spec.target_sdk, spec.ui_system) == (26, 34, "Compose")
    text = '{"app_name": " Notes ", "package_name": "com.example.notes", "features": ["a"]}'
    assert parse_spec(text).app_name == "Notes"
