"""Text built from marked pieces is itself marked (``display_text.Marked``, ``compose``): a plain ``str`` of
``f"... {safe_text(v)} ..."`` is a raw value again, and shown again (``safe_text``, ``shown``, a question, the
console's filter, the CLI) a real hidden character in ``v`` reads ``⟨U+27E8⟩U+202E⟨U+27E9⟩``, as if ``v``
had typed the mark out.

This reads Sentinel's sources: every f-string, ``+``, ``%``, ``.join`` or ``.format`` with a call of
``safe_text``/``shown``/``display_note``/``safe_question``/``error_text``/``echoed`` in it must be passed
straight to ``Marked`` or ``compose``, or printed straight (``print``, ``.write``, ``input``,
``SystemExit``: a terminal shows it once). The sites not yet traced are listed in ``UNTRACED`` by module and
function, counted exactly: a new site fails, and so does a fixed one left in the list (take it out)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests.support.source_ast import parsed

ROOT = Path(__file__).resolve().parents[2] / "sentinel_mcp"
MARKING = {"safe_text", "shown", "display_note", "safe_question", "error_text", "echoed"}
KEEPS = {"Marked", "compose", "print", "write", "input", "SystemExit"}  # last four: a terminal shows it once
# a module's own straight-to-the-terminal printer (``ChatTerminal.say`` prints its text, nothing more;
# ``StderrRelay._write`` writes Sentinel's stderr)
PRINTERS = {"sentinel_mcp/app/chat_terminal.py": {"say"},
            "sentinel_mcp/gateway/upstream_stderr.py": {"_write"}}

# (module, function): sites whose built str is not yet shown to be marked or never shown again. Each crosses a
# boundary where a str subclass is lost (where marked text crosses into data it goes raw, ``unmarked``, as
# peer_trust's verdict does for the a2a guard's question: tests/a2a/test_peer_question_marks.py, and an audit
# row does, marked again by each reader: tests/console/test_audit_error_marks.py). (An exception's Marked
# message is kept by ``display_text.said``/``error_text`` and ``user_message``.)
UNTRACED: dict[tuple[str, str], int] = {
}


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _marks(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _name(n.func) in MARKING for n in ast.walk(node))


def _builds_plain_str(node: ast.AST, parent: ast.AST | None, keeps: set[str] = KEEPS) -> bool:
    if isinstance(node, ast.JoinedStr):
        built = any(isinstance(v, ast.FormattedValue) and _marks(v.value) for v in node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        built = not isinstance(parent, ast.BinOp) and _marks(node)
    elif isinstance(node, ast.Call) and _name(node.func) in ("join", "format"):
        built = _marks(node)
    else:
        return False
    # a join inside an f-string's field is judged with the f-string it is part of
    return built and not isinstance(parent, ast.FormattedValue) \
        and not (isinstance(parent, ast.Call) and _name(parent.func) in keeps)


def plain_joins() -> Counter[tuple[str, str]]:
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "display_text.py":  # where marks are made: it builds Marked itself
            continue
        tree = parsed(path)
        module = str(path.relative_to(ROOT.parent))
        keeps = KEEPS | PRINTERS.get(module, set())

        def visit(node: ast.AST, parent: ast.AST | None, func: str) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                func = node.name
            if _builds_plain_str(node, parent, keeps):
                found[(module, func)] += 1
            for child in ast.iter_child_nodes(node):
                visit(child, node, func)

        visit(tree, None, "<module>")
    return found


def test_text_built_from_marked_pieces_is_marked() -> None:
    found = plain_joins()
    new = {k: n for k, n in found.items() if n > UNTRACED.get(k, 0)}
    assert not new, f"build these with compose(...)/Marked(...) (display_text): {new}"
    fixed = {k: n for k, n in UNTRACED.items() if found.get(k, 0) < n}
    assert not fixed, f"fewer untraced sites than listed: lower UNTRACED for {fixed}"


def test_the_check_sees_the_shapes_it_names() -> None:
    """The check is not blind: each shape of a plain str built from a marked piece is found, and each kept
    one is not."""
    source = (
        "def f(v):\n"
        "    a = f'x {safe_text(v)}'\n"
        "    b = 'x ' + shown(v).text\n"
        "    c = ', '.join(safe_text(x) for x in v)\n"
        "    d = '{}'.format(safe_question(v)[0])\n"
        "    e = '%s' % display_note(v)\n"
        "    ok = compose('x ', safe_text(v)), Marked(f'x {safe_text(v)!r}'), print(f'x {safe_text(v)}')\n"
    )
    tree = ast.parse(source)
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    hits = [n.lineno for n in ast.walk(tree) if _builds_plain_str(n, parents.get(n))]
    assert sorted(hits) == [2, 3, 4, 5, 6], hits
