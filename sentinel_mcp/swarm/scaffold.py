"""The files that follow from the spec (and the blueprint): written without a model, checked like any file.

Gradle settings and build files, properties, the theme, the entity, the string resources (every text
the accepted answers hold) and the manifest (every planned activity; the first screen launches).
Versions are pinned to a set that builds together (AGP 8.5, Kotlin 1.9, Compose compiler 1.5.14).
The theme's parent is a platform theme, so the activities (``ComponentActivity``) need no AppCompat and
the resources can be linked against the platform's own resources by ``aapt``.
"""

from __future__ import annotations

import re

from sentinel_mcp.swarm.feature_code.answers import Decisions
from sentinel_mcp.swarm.feature_code.data_render import entity_kt
from sentinel_mcp.swarm.feature_code.strings import all_strings, label, strings_xml
from sentinel_mcp.swarm.plan import PlanStep
from sentinel_mcp.swarm.spec import TaskSpec

AGP_VERSION = "8.5.2"
KOTLIN_VERSION = "1.9.24"
COMPOSE_COMPILER = "1.5.14"
COMPOSE_BOM = "2024.06.00"
LIFECYCLE = "2.8.3"


def theme_name(spec: TaskSpec) -> str:
    return "Theme." + (re.sub(r"[^A-Za-z0-9]", "", spec.app_name) or "App")


def settings_gradle(spec: TaskSpec) -> str:
    return f"""pluginManagement {{
    repositories {{
        google()
        mavenCentral()
        gradlePluginPortal()
    }}
}}

dependencyResolutionManagement {{
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {{
        google()
        mavenCentral()
    }}
}}

rootProject.name = "{spec.app_name}"
include(":app")
"""


def root_build_gradle() -> str:
    return f"""plugins {{
    id("com.android.application") version "{AGP_VERSION}" apply false
    id("org.jetbrains.kotlin.android") version "{KOTLIN_VERSION}" apply false
}}
"""


def gradle_properties() -> str:
    return ("org.gradle.jvmargs=-Xmx2048m -Dfile.encoding=UTF-8\nandroid.useAndroidX=true\n"
            "android.nonTransitiveRClass=true\nkotlin.code.style=official\n")


def app_build_gradle(spec: TaskSpec) -> str:
    compose = spec.ui_system == "Compose"
    features = (f"""
    buildFeatures {{
        compose = true
    }}
    composeOptions {{
        kotlinCompilerExtensionVersion = "{COMPOSE_COMPILER}"
    }}
""" if compose else "")
    deps = [
        'implementation("androidx.core:core-ktx:1.13.1")',
        'implementation("androidx.activity:activity-ktx:1.9.0")',
        f'implementation("androidx.lifecycle:lifecycle-viewmodel-ktx:{LIFECYCLE}")',
        f'implementation("androidx.lifecycle:lifecycle-livedata-ktx:{LIFECYCLE}")',
    ]
    if compose:
        deps += [
            f'implementation(platform("androidx.compose:compose-bom:{COMPOSE_BOM}"))',
            'implementation("androidx.activity:activity-compose:1.9.0")',
            'implementation("androidx.compose.material3:material3")',
            'implementation("androidx.compose.runtime:runtime-livedata")',
        ]
    dep_lines = "\n".join(f"    {d}" for d in deps)
    return f"""plugins {{
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}}

android {{
    namespace = "{spec.package_name}"
    compileSdk = {spec.target_sdk}

    defaultConfig {{
        applicationId = "{spec.package_name}"
        minSdk = {spec.min_sdk}
        targetSdk = {spec.target_sdk}
        versionCode = 1
        versionName = "1.0"
    }}

    compileOptions {{
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }}
    kotlinOptions {{
        jvmTarget = "17"
    }}{features}
}}

dependencies {{
{dep_lines}
}}
"""


def themes_xml(spec: TaskSpec) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<resources>\n'
        f'    <style name="{theme_name(spec)}" parent="android:Theme.Material.Light.DarkActionBar" />\n'
        "</resources>\n"
    )


def manifest_xml(d: Decisions) -> str:
    screens = d.blueprint.screen_names()
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<manifest xmlns:android="http://schemas.android.com/apk/res/android">',
        "",
        "    <application",
        '        android:allowBackup="true"',
        '        android:label="@string/app_name"',
        '        android:supportsRtl="true"',
        f'        android:theme="@style/{theme_name(d.spec)}">',
    ]
    for i, screen in enumerate(screens):
        attrs = f'android:name=".ui.{screen}Activity" android:exported="{"true" if i == 0 else "false"}"'
        if screen in d.activities:
            attrs += f' android:label="@string/{label(screen)}"'
        if i == 0:
            lines += [
                f"        <activity {attrs}>",
                "            <intent-filter>",
                '                <action android:name="android.intent.action.MAIN" />',
                '                <category android:name="android.intent.category.LAUNCHER" />',
                "            </intent-filter>",
                "        </activity>",
            ]
        else:
            lines.append(f"        <activity {attrs} />")
    return "\n".join(lines + ["    </application>", "</manifest>", ""])


def scaffold_file(step: PlanStep, d: Decisions) -> str:
    """The content of a scaffold step (its inputs are all decided by the time the step runs)."""
    spec = d.spec
    makers = {
        "settings": lambda: settings_gradle(spec),
        "root_build": root_build_gradle,
        "properties": gradle_properties,
        "app_build": lambda: app_build_gradle(spec),
        "themes": lambda: themes_xml(spec),
        "entity": lambda: entity_kt(spec.package_name, d.blueprint),
        "strings": lambda: strings_xml(all_strings(d)),
        "manifest": lambda: manifest_xml(d),
    }
    try:
        return makers[step.kind or ""]()
    except KeyError:
        raise ValueError(f"step {step.step_number} ({step.kind}) is not a scaffold step") from None
