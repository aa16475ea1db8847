"""An activity: the screen wired to its view model, rendered from the accepted answers (Views or Compose)."""

from __future__ import annotations

from sentinel_mcp.swarm.feature_code import strings as res
from sentinel_mcp.swarm.feature_code.answers import Decisions
from sentinel_mcp.swarm.feature_code.data_render import callback_name, describe_lines
from sentinel_mcp.swarm.feature_code.screen_render import button_id, input_id
from sentinel_mcp.swarm.project_plan import layout_name

DESTRUCTIVE = ("clear", "remove")


def _var(field: str) -> str:
    return f"{field}Input"


def _call(d: Decisions, screen: str, action: str, arg: str = "") -> str:
    """The statement an action runs: a view model call (behind a confirmation when chosen) or navigation."""
    if action.startswith("open_"):
        return f"startActivity(Intent(this, {action.removeprefix('open_')}Activity::class.java))"
    fn = d.viewmodels[screen].function_for(action)
    if fn is None:
        raise ValueError(f"{screen}: no view model function for {action}")
    call = f"viewModel.{fn.name}({arg})"
    act = d.activities[screen]
    return f"confirm {{ {call} }}" if act.confirm and action in DESTRUCTIVE else call


def _common_tail(d: Decisions, screen: str) -> list[str]:
    lines = [
        "",
        "    override fun onResume() {",
        "        super.onResume()",
        "        viewModel.refresh()",
        "    }",
    ]
    if d.screens[screen].listing is not None:
        lines += [""] + describe_lines(d.blueprint, d.activities[screen].show_fields)
    if d.activities[screen].confirm:
        lines += [
            "",
            "    private fun confirm(action: () -> Unit) {",
            "        AlertDialog.Builder(this)",
            f"            .setMessage(R.string.{res.CONFIRM_MESSAGE})",
            "            .setPositiveButton(android.R.string.ok) { _, _ -> action() }",
            "            .setNegativeButton(android.R.string.cancel, null)",
            "            .show()",
            "    }",
        ]
    return lines + ["}", ""]


def _message_observer() -> list[str]:
    return [
        "        viewModel.message.observe(this) { message ->",
        "            if (message != null) {",
        "                Toast.makeText(this, message, Toast.LENGTH_SHORT).show()",
        "                viewModel.messageShown()",
        "            }",
        "        }",
    ]


def activity_kt(package: str, screen: str, d: Decisions) -> str:
    return (
        _compose_activity(package, screen, d)
        if d.spec.ui_system == "Compose"
        else _views_activity(package, screen, d)
    )


def _imports(package: str, screen: str, d: Decisions, extra: set[str]) -> list[str]:
    ui, act = d.screens[screen], d.activities[screen]
    imports = {
        "android.os.Bundle",
        "android.widget.Toast",
        "androidx.activity.ComponentActivity",
        "androidx.activity.viewModels",
        f"{package}.R",
    } | extra
    if any(b.action.startswith("open_") for b in ui.buttons):
        imports.add("android.content.Intent")
    if act.confirm:
        imports.add("android.app.AlertDialog")
    if ui.listing is not None:
        imports.add(f"{package}.data.{d.blueprint.entity}")
    return [f"import {i}" for i in sorted(imports)]


def _views_activity(package: str, screen: str, d: Decisions) -> str:
    ui = d.screens[screen]
    extra = set()
    if ui.inputs:
        extra.add("android.widget.EditText")
    if ui.buttons:
        extra.add("android.widget.Button")
    if ui.listing is not None:
        extra |= {"android.widget.ArrayAdapter", "android.widget.ListView", "android.widget.TextView"}
    e = d.blueprint.entity
    lines = [f"package {package}.ui", ""] + _imports(package, screen, d, extra) + [""]
    lines += [
        f"class {screen}Activity : ComponentActivity() {{",
        f"    private val viewModel: {screen}ViewModel by viewModels()",
    ]
    if ui.listing is not None:
        lines.append(f"    private var shown: List<{e}> = emptyList()")
    lines += [
        "",
        "    override fun onCreate(savedInstanceState: Bundle?) {",
        "        super.onCreate(savedInstanceState)",
        f"        setContentView(R.layout.{layout_name(screen)})",
        f"        setTitle(R.string.{res.label(screen)})",
    ]
    lines += [
        f"        val {_var(i.field)} = findViewById<EditText>(R.id.{input_id(i.field)})" for i in ui.inputs
    ]
    for b in ui.buttons:
        lines.append(f"        findViewById<Button>(R.id.{button_id(b.action)}).setOnClickListener {{")
        if b.action == "add":
            args = ", ".join(f"{_var(i.field)}.text.toString()" for i in ui.inputs)
            lines.append(f"            {_call(d, screen, b.action, args)}")
            lines += [f"            {_var(i.field)}.text.clear()" for i in ui.inputs]
        else:
            lines.append(f"            {_call(d, screen, b.action)}")
        lines.append("        }")
    if ui.listing is not None:
        lines += [
            "        val list = findViewById<ListView>(R.id.items)",
            "        list.emptyView = findViewById<TextView>(R.id.empty)",
            "        val adapter = ArrayAdapter<String>(this, android.R.layout.simple_list_item_1, "
            "mutableListOf())",
            "        list.adapter = adapter",
        ]
        if ui.listing.on_click != "none":
            lines += [
                "        list.setOnItemClickListener { _, _, position, _ ->",
                f"            shown.getOrNull(position)?.let {{ item -> "
                f"{_call(d, screen, ui.listing.on_click, 'item')} }}",
                "        }",
            ]
        lines += [
            "        viewModel.items.observe(this) { items ->",
            "            shown = items",
            "            adapter.clear()",
            "            adapter.addAll(items.map { describe(it) })",
            "        }",
        ]
    lines += _message_observer() + ["    }"]
    return "\n".join(lines + _common_tail(d, screen))


def _compose_activity(package: str, screen: str, d: Decisions) -> str:
    ui = d.screens[screen]
    extra = {"androidx.activity.compose.setContent", "androidx.compose.material3.MaterialTheme"}
    if ui.listing is not None:
        extra |= {"androidx.compose.runtime.getValue", "androidx.compose.runtime.livedata.observeAsState"}
    lines = [f"package {package}.ui", ""] + _imports(package, screen, d, extra) + [""]
    lines += [
        f"class {screen}Activity : ComponentActivity() {{",
        f"    private val viewModel: {screen}ViewModel by viewModels()",
        "",
        "    override fun onCreate(savedInstanceState: Bundle?) {",
        "        super.onCreate(savedInstanceState)",
        f"        setTitle(R.string.{res.label(screen)})",
        "        setContent {",
        "            MaterialTheme {",
    ]
    if ui.listing is not None:
        lines.append("                val items by viewModel.items.observeAsState(emptyList())")
    lines.append(f"                {screen}Screen(")
    if ui.listing is not None:
        lines += ["                    items = items,", "                    describe = ::describe,"]
        click = ui.listing.on_click
        handler = "{ }" if click == "none" else f"{{ item -> {_call(d, screen, click, 'item')} }}"
        lines.append(f"                    onItemClick = {handler},")
    for b in ui.buttons:
        if b.action == "add":
            names = ", ".join(i.field for i in ui.inputs)
            lines.append(
                f"                    {callback_name(b.action)} = {{ {names} -> "
                f"{_call(d, screen, b.action, names)} }},"
            )
        else:
            lines.append(
                f"                    {callback_name(b.action)} = {{ {_call(d, screen, b.action)} }},"
            )
    lines += ["                )", "            }", "        }"] + _message_observer() + ["    }"]
    return "\n".join(lines + _common_tail(d, screen))
