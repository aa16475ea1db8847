"""Kotlin for the data layer and the view models, rendered from the blueprint and the accepted answers.

Names come from validated patterns and texts only ever as ``R.string`` references, so nothing a model
wrote is pasted into code as code.
"""

from __future__ import annotations

from sentinel_mcp.swarm.blueprint import Blueprint, EntityField
from sentinel_mcp.swarm.feature_code import strings as res
from sentinel_mcp.swarm.feature_code.answers import Decisions, FunctionAnswer, RepositoryAnswer, ScreenAnswer

DEFAULTS = {"String": '""', "Int": "0", "Boolean": "false"}


def _cap(name: str) -> str:
    return name[:1].upper() + name[1:]


def entity_kt(package: str, bp: Blueprint) -> str:
    fields = [f"    val {f.name}: {f.type}" + ("" if i == 0 else f" = {DEFAULTS[f.type]}") + ","
              for i, f in enumerate(bp.fields)]
    return "\n".join(
        [
            f"package {package}.data",
            "",
            f"/** One {bp.entity} of the app; ids are given by {bp.entity}Repository. */",
            f"data class {bp.entity}(",
            "    val id: Long,",
            *fields,
            ")",
            "",
        ]
    )


def _add_params(bp: Blueprint) -> str:
    first, rest = bp.fields[0], bp.fields[1:]
    return ", ".join(
        [f"{first.name}: {first.type}"] + [f"{f.name}: {f.type} = {DEFAULTS[f.type]}" for f in rest]
    )


def repository_kt(package: str, bp: Blueprint, a: RepositoryAnswer) -> str:
    e = bp.entity
    order = {
        "newest_first": "items.sortedByDescending { it.id }",
        "oldest_first": "items.sortedBy { it.id }",
        "alphabetical": f"items.sortedBy {{ it.{bp.fields[0].name}.lowercase() }}",
    }[a.order]
    args = ", ".join(f"{f.name} = {f.name}" for f in bp.fields)
    body = [
        f"package {package}.data",
        "",
        f"/** Keeps the {e} items of the app in memory, shared by every screen. */",
        f"class {e}Repository private constructor() {{",
        f"    private val items = mutableListOf<{e}>()",
        "    private var nextId = 1L",
        "",
        "    @Synchronized",
        f"    fun all(): List<{e}> = {order}",
        "",
        "    @Synchronized",
        f"    fun add({_add_params(bp)}): {e} {{",
        f"        val item = {e}(id = nextId++, {args})",
        "        items.add(item)",
        "        return item",
        "    }",
    ]
    if a.has("remove"):
        body += [
            "",
            "    @Synchronized",
            "    fun remove(id: Long): Boolean = items.removeAll { it.id == id }",
        ]
    if a.has("update"):
        body += [
            "",
            "    @Synchronized",
            f"    fun update(item: {e}): Boolean {{",
            "        val index = items.indexOfFirst { it.id == item.id }",
            "        if (index < 0) return false",
            "        items[index] = item",
            "        return true",
            "    }",
        ]
    if a.has("clear"):
        body += ["", "    @Synchronized", "    fun clear() {", "        items.clear()", "    }"]
    body += [
        "",
        "    companion object {",
        f"        val shared: {e}Repository by lazy {{ {e}Repository() }}",
        "    }",
        "}",
        "",
    ]
    return "\n".join(body)


def input_params(bp: Blueprint, ui: ScreenAnswer) -> list[EntityField]:
    """The entity fields a screen's add action takes from its inputs, in input order."""
    return [f for i in ui.inputs if (f := bp.field(i.field)) is not None]


def _function(screen: str, bp: Blueprint, ui: ScreenAnswer, f: FunctionAnswer) -> list[str]:
    e = bp.entity
    done = f"        _message.value = R.string.{res.done(screen, f.action)}"
    if f.action == "add":
        params = input_params(bp, ui)
        first = bp.fields[0].name
        values = [
            f"{p.name} = {p.name}.trim()"
            if p.type == "String"
            else f"{p.name} = {p.name}.trim().toIntOrNull() ?: 0"
            for p in params
        ]
        return [
            f"    fun {f.name}({', '.join(f'{p.name}: String' for p in params)}) {{",
            f"        if ({first}.isBlank()) {{",
            f"            _message.value = R.string.{res.blank(screen, f.action)}",
            "            return",
            "        }",
            f"        repository.add({', '.join(values)})",
            "        refresh()",
            done,
            "    }",
        ]
    if f.action == "clear":
        return [f"    fun {f.name}() {{", "        repository.clear()", "        refresh()", done, "    }"]
    if f.action == "remove":
        return [
            f"    fun {f.name}(item: {e}) {{",
            "        repository.remove(item.id)",
            "        refresh()",
            done,
            "    }",
        ]
    if f.action.startswith("toggle_"):
        flag = f.action.removeprefix("toggle_")
        return [
            f"    fun {f.name}(item: {e}) {{",
            f"        repository.update(item.copy({flag} = !item.{flag}))",
            "        refresh()",
            done,
            "    }",
        ]
    raise ValueError(f"no code for action {f.action!r}")


def viewmodel_kt(package: str, screen: str, d: Decisions) -> str:
    bp, ui, vm = d.blueprint, d.screens[screen], d.viewmodels[screen]
    e = bp.entity
    lines = [
        f"package {package}.ui",
        "",
        "import androidx.lifecycle.LiveData",
        "import androidx.lifecycle.MutableLiveData",
        "import androidx.lifecycle.ViewModel",
        f"import {package}.R",
        f"import {package}.data.{e}",
        f"import {package}.data.{e}Repository",
        "",
        f"/** State and actions of the {screen} screen. */",
        f"class {screen}ViewModel(private val repository: {e}Repository = {e}Repository.shared) : "
        f"ViewModel() {{",
        f"    private val _items = MutableLiveData<List<{e}>>(repository.all())",
        f"    val items: LiveData<List<{e}>> = _items",
        "    private val _message = MutableLiveData<Int?>()",
        "",
        "    /** A string resource to show once, then [messageShown]. */",
        "    val message: LiveData<Int?> = _message",
        "",
        "    fun refresh() {",
        "        _items.value = repository.all()",
        "    }",
        "",
        "    fun messageShown() {",
        "        _message.value = null",
        "    }",
    ]
    for f in vm.functions:
        lines += [""] + _function(screen, bp, ui, f)
    return "\n".join(lines + ["}", ""])


def describe_lines(bp: Blueprint, show: list[str]) -> list[str]:
    """``describe(item)``: the text a list row shows (the first field, then the fields the activity chose)."""
    e, first = bp.entity, bp.fields[0].name
    lines = [
        f"    private fun describe(item: {e}): String {{",
        f"        val parts = mutableListOf(item.{first})",
    ]
    for name in show:
        f = bp.field(name)
        if f is None:
            continue
        if f.type == "Boolean":
            lines.append(f'        if (item.{name}) parts.add(0, "\\u2713")')
        else:
            lines.append(f"        parts.add(item.{name}.toString())")
    return lines + ['        return parts.joinToString(" \\u00b7 ")', "    }"]


def callback_name(action: str) -> str:
    """``onAdd``, ``onClear``, ``onOpenNoteList``: the screen's parameter for a button."""
    if action.startswith("open_"):
        return "onOpen" + action.removeprefix("open_")
    return "on" + "".join(_cap(p) for p in action.split("_"))
