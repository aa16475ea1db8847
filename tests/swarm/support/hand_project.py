"""A small hand-written project (a plan and its five files): fixtures for the deterministic checks."""

from __future__ import annotations

PLAN = {
    "steps": [
        {
            "step_number": 1,
            "phase": "setup",
            "file_path": "settings.gradle.kts",
            "file_type": "gradle",
            "dependencies": [],
            "description": "Gradle settings including the app module",
        },
        {
            "step_number": 2,
            "phase": "setup",
            "file_path": "app/build.gradle.kts",
            "file_type": "gradle",
            "dependencies": [1],
            "description": "App module build file with namespace and SDK levels",
        },
        {
            "step_number": 3,
            "phase": "manifest",
            "file_path": "app/src/main/AndroidManifest.xml",
            "file_type": "xml",
            "dependencies": [2],
            "description": "Manifest declaring MainActivity as launcher",
        },
        {
            "step_number": 4,
            "phase": "ui",
            "file_path": "app/src/main/res/layout/activity_main.xml",
            "file_type": "xml",
            "dependencies": [],
            "description": "Layout with a list and an add button",
            "features": ["list notes"],
        },
        {
            "step_number": 5,
            "phase": "code",
            "file_path": "app/src/main/java/com/example/notes/MainActivity.kt",
            "file_type": "kotlin",
            "dependencies": [3, 4],
            "description": "Activity that lets the user add a note",
            "features": ["add a note"],
        },
    ]
}

FILES = {
    "settings.gradle.kts": 'rootProject.name = "Notes"\ninclude(":app")\n',
    "app/build.gradle.kts": (
        'plugins {\n    id("com.android.application")\n    kotlin("android")\n}\n\n'
        'android {\n    namespace = "com.example.notes"\n    compileSdk = 34\n'
        "    defaultConfig {\n        minSdk = 24\n        targetSdk = 34\n    }\n}\n"
    ),
    "app/src/main/AndroidManifest.xml": (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<manifest xmlns:android="http://schemas.android.com/apk/res/android">\n'
        '    <application android:label="Notes">\n'
        '        <activity android:name=".MainActivity" android:exported="true">\n'
        "            <intent-filter>\n"
        '                <action android:name="android.intent.action.MAIN" />\n'
        '                <category android:name="android.intent.category.LAUNCHER" />\n'
        "            </intent-filter>\n"
        "        </activity>\n"
        "    </application>\n"
        "</manifest>\n"
    ),
    "app/src/main/res/layout/activity_main.xml": (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<LinearLayout xmlns:android="http://schemas.android.com/apk/res/android"\n'
        '    android:layout_width="match_parent" android:layout_height="match_parent"\n'
        '    android:orientation="vertical">\n'
        '    <ListView android:id="@+id/notes" android:layout_width="match_parent"\n'
        '        android:layout_height="0dp" android:layout_weight="1" />\n'
        '    <Button android:id="@+id/add" android:layout_width="wrap_content"\n'
        '        android:layout_height="wrap_content" android:text="@android:string/ok" />\n'
        "</LinearLayout>\n"
    ),
    "app/src/main/java/com/example/notes/MainActivity.kt": (
        "package com.example.notes\n\n"
        "import android.os.Bundle\nimport android.widget.ArrayAdapter\nimport android.widget.Button\n"
        "import android.widget.ListView\nimport androidx.appcompat.app.AppCompatActivity\n\n"
        "class MainActivity : AppCompatActivity() {\n"
        "    private val notes = mutableListOf<String>()\n\n"
        "    override fun onCreate(savedInstanceState: Bundle?) {\n"
        "        super.onCreate(savedInstanceState)\n"
        "        setContentView(R.layout.activity_main)\n"
        "        val adapter = ArrayAdapter(this, android.R.layout.simple_list_item_1, notes)\n"
        "        findViewById<ListView>(R.id.notes).adapter = adapter\n"
        "        findViewById<Button>(R.id.add).setOnClickListener {\n"
        '            notes.add("Note ${notes.size + 1}")\n'
        "            adapter.notifyDataSetChanged()\n"
        "        }\n"
        "    }\n"
        "}\n"
    ),
}
