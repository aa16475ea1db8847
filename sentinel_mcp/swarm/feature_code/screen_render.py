"""What a screen shows: an XML layout (Views) or a composable (Compose), rendered from its answer.

View ids and callbacks are derived from the answer's fields and actions (``input_<field>``,
``button_<action>``, ``items``, ``empty``); every text is a string resource of the screen.
"""

from __future__ import annotations

from sentinel_mcp.swarm.blueprint import Blueprint
from sentinel_mcp.swarm.feature_code import strings as res
from sentinel_mcp.swarm.feature_code.answers import ScreenAnswer
from sentinel_mcp.swarm.feature_code.data_render import callback_name
from sentinel_mcp.swarm.project_plan import snake

ANDROID_NS = "http://schemas.android.com/apk/res/android"


def input_id(field: str) -> str:
    return f"input_{snake(field)}"


def button_id(action: str) -> str:
    return f"button_{snake(action)}"


def _view(tag: str, attrs: list[tuple[str, str]]) -> list[str]:
    lines = [f"    <{tag}"]
    lines += [f'        android:{k}="{v}"' for k, v in attrs]
    lines[-1] += " />"
    return lines + [""]


def layout_xml(screen: str, bp: Blueprint, ui: ScreenAnswer) -> str:
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<LinearLayout xmlns:android="{ANDROID_NS}"',
             '    android:layout_width="match_parent"', '    android:layout_height="match_parent"',
             '    android:orientation="vertical"', '    android:padding="16dp">', ""]
    lines += _view("TextView", [("id", "@+id/title"), ("layout_width", "match_parent"),
                                ("layout_height", "wrap_content"), ("text", f"@string/{res.title(screen)}"),
                                ("textAppearance", "?android:attr/textAppearanceLarge")])
    for i in ui.inputs:
        kind = "number" if (f := bp.field(i.field)) is not None and f.type == "Int" else "text"
        lines += _view(
            "EditText",
            [
                ("id", f"@+id/{input_id(i.field)}"),
                ("layout_width", "match_parent"),
                ("layout_height", "wrap_content"),
                ("hint", f"@string/{res.hint(screen, i.field)}"),
                ("importantForAutofill", "no"),
                ("inputType", kind),
            ],
        )
    for b in ui.buttons:
        lines += _view(
            "Button",
            [
                ("id", f"@+id/{button_id(b.action)}"),
                ("layout_width", "wrap_content"),
                ("layout_height", "wrap_content"),
                ("text", f"@string/{res.button(screen, b.action)}"),
            ],
        )
    if ui.listing is not None:
        lines += _view(
            "ListView",
            [
                ("id", "@+id/items"),
                ("layout_width", "match_parent"),
                ("layout_height", "0dp"),
                ("layout_weight", "1"),
            ],
        )
        lines += _view(
            "TextView",
            [
                ("id", "@+id/empty"),
                ("layout_width", "match_parent"),
                ("layout_height", "wrap_content"),
                ("text", f"@string/{res.empty(screen)}"),
            ],
        )
    if lines[-1] == "":
        lines.pop()
    return "\n".join(lines + ["</LinearLayout>", ""])


COMPOSE_IMPORTS = [
    "androidx.compose.foundation.layout.Arrangement",
    "androidx.compose.foundation.layout.Column",
    "androidx.compose.foundation.layout.fillMaxSize",
    "androidx.compose.foundation.layout.fillMaxWidth",
    "androidx.compose.foundation.layout.padding",
    "androidx.compose.material3.MaterialTheme",
    "androidx.compose.material3.Text",
    "androidx.compose.runtime.Composable",
    "androidx.compose.ui.Modifier",
    "androidx.compose.ui.res.stringResource",
    "androidx.compose.ui.unit.dp",
]


def compose_screen_kt(package: str, screen: str, bp: Blueprint, ui: ScreenAnswer) -> str:
    e = bp.entity
    imports = set(COMPOSE_IMPORTS) | {f"{package}.R"}
    params: list[str] = []
    if ui.listing is not None:
        imports |= {
            f"{package}.data.{e}",
            "androidx.compose.foundation.clickable",
            "androidx.compose.foundation.lazy.LazyColumn",
            "androidx.compose.foundation.lazy.items",
        }
        params += [f"items: List<{e}>", f"describe: ({e}) -> String", f"onItemClick: ({e}) -> Unit"]
    if ui.inputs:
        imports |= {
            "androidx.compose.material3.OutlinedTextField",
            "androidx.compose.runtime.getValue",
            "androidx.compose.runtime.mutableStateOf",
            "androidx.compose.runtime.remember",
            "androidx.compose.runtime.setValue",
        }
    if ui.buttons:
        imports.add("androidx.compose.material3.Button")
    for b in ui.buttons:
        args = ", ".join(f"{i.field}: String" for i in ui.inputs) if b.action == "add" else ""
        params.append(f"{callback_name(b.action)}: ({args}) -> Unit")
    body = [f"package {package}.ui", ""] + [f"import {i}" for i in sorted(imports)] + [""]
    body += ["@Composable", f"fun {screen}Screen("] + [f"    {p}," for p in params] + [") {"]
    body += [f'    var {i.field} by remember {{ mutableStateOf("") }}' for i in ui.inputs]
    body += [
        "    Column(",
        "        modifier = Modifier.fillMaxSize().padding(16.dp),",
        "        verticalArrangement = Arrangement.spacedBy(8.dp),",
        "    ) {",
        f"        Text(text = stringResource(R.string.{res.title(screen)}), "
        "style = MaterialTheme.typography.titleLarge)",
    ]
    for i in ui.inputs:
        body += [
            "        OutlinedTextField(",
            f"            value = {i.field},",
            f"            onValueChange = {{ {i.field} = it }},",
            f"            label = {{ Text(stringResource(R.string.{res.hint(screen, i.field)})) }},",
            "            modifier = Modifier.fillMaxWidth(),",
            "        )",
        ]
    for b in ui.buttons:
        call = callback_name(b.action)
        body.append("        Button(onClick = {")
        if b.action == "add":
            body.append(f"            {call}({', '.join(i.field for i in ui.inputs)})")
            body += [f'            {i.field} = ""' for i in ui.inputs]
        else:
            body.append(f"            {call}()")
        body += [
            "        }) {",
            f"            Text(stringResource(R.string.{res.button(screen, b.action)}))",
            "        }",
        ]
    if ui.listing is not None:
        body += [
            "        if (items.isEmpty()) {",
            f"            Text(text = stringResource(R.string.{res.empty(screen)}))",
            "        } else {",
            "            LazyColumn(modifier = Modifier.fillMaxWidth()) {",
            "                items(items) { item ->",
            "                    Text(",
            "                        text = describe(item),",
            "                        modifier = Modifier.fillMaxWidth().clickable { onItemClick(item) }"
            ".padding(8.dp),",
            "                    )",
            "                }",
            "            }",
            "        }",
        ]
    body += ["    }", "}", ""]
    return "\n".join(body)
