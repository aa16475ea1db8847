"""The coding profile every agent receives (the design embeds it as a constant)."""

CODING_PROFILE = """\
Kotlin/Android coding profile:
- Kotlin only for sources; one top-level class per file; package matches the directory under src/main/java.
- Architecture as the spec says (MVVM by default: Activity/Fragment -> ViewModel -> Repository).
- Null safety: no '!!'; handle nullable values explicitly.
- No placeholders, TODO or FIXME; every function has a real body.
- Resources in XML (strings, layouts); no hard-coded user-visible strings in Kotlin.
- Gradle: settings.gradle(.kts) + app/build.gradle(.kts) with namespace = the package, compileSdk/targetSdk/minSdk
  from the spec.
- Forbidden: reflection hacks, GlobalScope, blocking the main thread, deprecated AsyncTask.
- Rejection criteria: BLOCKER = syntax errors, missing functionality, API misuse; MAJOR = architecture
  violations, missing null checks; MINOR = verbose code, missing edge cases.
"""  # noqa: E501 (verbatim text)
