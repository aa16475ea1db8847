"""A JSON boolean or null and the text that spells it are different values to the guard.

Texts reach a rule as atoms, and SWI-Prolog's JSON reading makes ``true``, ``false`` and ``null`` atoms too:
the text ``"true"`` and the boolean ``true`` were one term. A tool whose input schema does not type a flag
takes either; a guard written as strictly as it can be (``D == true``: only a real dry run; ``F == false``:
never forced) let the text through, and the upstream read the text its own way: ``"true"`` is no ``true`` to
a strict reader (the purge ran for real), ``"false"`` is truthy to a loose one (the reset was forced). Over
real HTTP, through the real gateway, a real rulebase and a real upstream.

Now a call's argument that is the text ``"true"``, ``"false"`` or ``"null"`` reaches a rule as a string
(``"true"``), never as the atom the JSON literal is: the guard above refuses it. Every other text is an atom
as before, and the literals are the atoms ``true``/``false``/``null`` as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.test_lean_calls import TOKEN, call, headers_for, post

pytestmark = pytest.mark.timeout(120)

FLAGS = str(Path(__file__).with_name("untyped_flags_server.py"))
RULES = """
guard('fl__purge', [dry_run = D], require(D == true, 'only dry runs')).
guard('fl__reset', [force = F], require(F == false, 'never forced')).
guard('fl__tag', [label = L], require(( L == null ; atom(L) ; string(L) ), 'a label')).
"""


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp: Path = tmp_path_factory.mktemp("literals")
    rules = tmp / "flags.pl"
    rules.write_text(RULES)
    cfg = tmp / "sentinel.json"
    # ``x`` below is no declared argument: passed on (as a server whose schema is incomplete has it), so a
    # nested value still sends the arguments as JSON text (the other reading)
    server = {"command": sys.executable, "args": [FLAGS], "undeclared_arguments": "pass"}
    cfg.write_text(json.dumps({"mcpServers": {"fl": server},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN},
                                            "rulebases": [str(rules)]}}))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield port
    finally:
        stop_process(proc)


def answer(port: int, name: str, arguments: dict[str, Any], via_sdk: bool) -> tuple[bool, str]:
    """(whether the guard let it through, the text answered)."""
    status, _, body = post(port, json.dumps(call(name, arguments, via_sdk=via_sdk)), headers_for(name))
    assert status == 200, body
    result = body["result"]
    text = result["content"][0]["text"]
    return not result.get("isError"), text


@pytest.mark.parametrize("via_sdk", [False, True])
@pytest.mark.parametrize("name,arguments", [
    ("fl__purge", {"path": "/data", "dry_run": "true"}), ("fl__purge", {"path": "/data", "dry_run": "TRUE"}),
    ("fl__reset", {"name": "db", "force": "false"}), ("fl__reset", {"name": "db", "force": "null"}),
    # a nested value sends the arguments as JSON text (the other reading)
    ("fl__purge", {"path": "/data", "dry_run": "true", "x": [1]}),
    ("fl__reset", {"name": "db", "force": "false", "x": {"y": 1.5}}),
])
def test_a_text_spelling_a_literal_is_not_the_literal(
        gateway: int, name: str, arguments: dict[str, Any], via_sdk: bool) -> None:
    allowed, text = answer(gateway, name, arguments, via_sdk)
    assert not allowed and "PURGED" not in text and "FORCED" not in text, (arguments, text)


@pytest.mark.parametrize("via_sdk", [False, True])
@pytest.mark.parametrize("name,arguments,expected", [
    ("fl__purge", {"path": "/data", "dry_run": True}, "dry run of /data"),
    ("fl__purge", {"path": "/data", "dry_run": True, "x": [1]}, "dry run of /data"),
    ("fl__reset", {"name": "db", "force": False}, "reset of db"),
    ("fl__reset", {"name": "db", "force": False, "x": {"y": 1.5}}, "reset of db"),
    ("fl__tag", {"name": "a", "label": None}, "tagged a None"),
    ("fl__tag", {"name": "a", "label": "true"}, "tagged a 'true'"),
    ("fl__tag", {"name": "a", "label": "plain"}, "tagged a 'plain'"),
])
def test_the_literals_and_other_texts_read_as_before(
        gateway: int, name: str, arguments: dict[str, Any], expected: str, via_sdk: bool) -> None:
    allowed, text = answer(gateway, name, arguments, via_sdk)
    assert allowed and text == expected, (arguments, text)


@pytest.mark.parametrize("via_sdk", [False, True])
def test_text_spelling_null_is_not_passed_for_the_upstream_to_read_as_none(
        gateway: int, via_sdk: bool) -> None:
    """The upstream's SDK reads a text argument of an untyped parameter as JSON when it can (its
    pre_parse_json): the text "null" reached its tool as None while the guard judged the text. Refused now,
    as text holding an array or object is (test_guard_json_in_text.py)."""
    allowed, text = answer(gateway, "fl__tag", {"name": "a", "label": "null"}, via_sdk)
    assert not allowed and "JSON text" in text, text
