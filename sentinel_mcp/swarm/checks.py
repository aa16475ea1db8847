"""Deterministic checks the critic and verifier run beside the model (no Gradle: out of scope)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.plan import is_gradle_build, is_gradle_settings

ANDROID_NS = "{http://schemas.android.com/apk/res/android}"
_PLACEHOLDER = re.compile(r"\bTODO\b|\bFIXME\b|your code here|implement (?:this|me)\b|\bplaceholder\b",
                          re.IGNORECASE)
_PAIRS = {")": "(", "]": "[", "}": "{"}
_KOTLIN_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_][\w.]*)", re.MULTILINE)
_KOTLIN_CLASS = re.compile(r"\b(?:class|object)\s+([A-Za-z_]\w*)")


def check_xml(text: str, path: str) -> list[Issue]:
    try:
        ET.fromstring(text)
    except ET.ParseError as e:
        return [Issue(severity="BLOCKER", message=f"XML is not well-formed: {e}", file=path)]
    return []


def unbalanced_delimiters(text: str) -> str | None:
    """Why the (), [], {} of Kotlin/Gradle source do not balance, skipping strings and comments; None if fine.
    """
    stack: list[tuple[str, int]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return f"unterminated block comment starting on line {line}"
            line += text.count("\n", i, j)
            i = j + 2
            continue
        if text.startswith('"""', i):
            j = text.find('"""', i + 3)
            if j < 0:
                return f"unterminated raw string starting on line {line}"
            line += text.count("\n", i, j)
            i = j + 3
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] != c:
                kind = "string" if c == '"' else "character"
                return f"unterminated {kind} literal on line {line}"
            i = j + 1
            continue
        if c in "([{":
            stack.append((c, line))
        elif c in ")]}":
            if not stack or stack[-1][0] != _PAIRS[c]:
                return f"unexpected '{c}' on line {line}"
            stack.pop()
        i += 1
    if stack:
        opener, at = stack[-1]
        return f"'{opener}' opened on line {at} is never closed"
    return None


def expected_kotlin_package(path: str) -> str | None:
    """The package a Kotlin file's path implies (after src/<set>/java|kotlin/), or None if not under one."""
    parts = path.split("/")
    for i, p in enumerate(parts[:-1]):
        if p in ("java", "kotlin") and i >= 2 and parts[i - 2] == "src":
            return ".".join(parts[i + 1 : -1]) or None
    return None


def check_kotlin(text: str, path: str) -> list[Issue]:
    issues: list[Issue] = []
    if path.endswith(".kt"):
        m = _KOTLIN_PACKAGE.search(text)
        expected = expected_kotlin_package(path)
        if not m:
            issues.append(Issue(severity="BLOCKER", message="no package declaration", file=path))
        elif expected and m.group(1) != expected:
            issues.append(
                Issue(
                    severity="BLOCKER",
                    file=path,
                    message=f"package {m.group(1)} does not match its path (expected {expected})",
                )
            )
    why = unbalanced_delimiters(text)
    if why:
        issues.append(Issue(severity="BLOCKER", message=f"delimiters do not balance: {why}", file=path))
    return issues


def check_placeholders(text: str, path: str) -> list[Issue]:
    m = _PLACEHOLDER.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        return [
            Issue(
                severity="BLOCKER",
                file=path,
                message=f"contains a placeholder ({m.group(0)!r} on line {line}); write complete code",
            )
        ]
    return []


def check_file(path: str, file_type: str, text: str) -> list[Issue]:
    """Checks for one generated file."""
    if not text.strip():
        return [Issue(severity="BLOCKER", message="file is empty", file=path)]
    issues = check_placeholders(text, path)
    if file_type == "xml" or path.endswith(".xml"):
        issues += check_xml(text, path)
    elif file_type in ("kotlin", "gradle") or path.endswith((".kt", ".kts", ".gradle")):
        issues += check_kotlin(text, path)
    return issues


def kotlin_classes(files: dict[str, str]) -> set[str]:
    """Fully qualified names of the classes and objects declared in the Kotlin sources."""
    names: set[str] = set()
    for path, text in files.items():
        if not path.endswith(".kt"):
            continue
        m = _KOTLIN_PACKAGE.search(text)
        pkg = m.group(1) if m else ""
        for cls in _KOTLIN_CLASS.findall(text):
            names.add(f"{pkg}.{cls}" if pkg else cls)
    return names


def _manifest_package(files: dict[str, str], root: ET.Element) -> str | None:
    pkg = root.get("package")
    if pkg:
        return pkg
    for path, text in files.items():  # AGP 7+: the package lives in build.gradle's namespace
        if is_gradle_build(path):
            m = re.search(r"namespace\s*=?\s*[\"']([\w.]+)[\"']", text)
            if m:
                return m.group(1)
    return None


def check_project(files: dict[str, str], package_name: str) -> list[Issue]:
    """Cross-file checks: manifest vs Kotlin sources, Gradle files present, every file's own checks."""
    issues: list[Issue] = []
    paths = list(files)
    if not any(is_gradle_settings(p) for p in paths):
        issues.append(Issue(severity="BLOCKER", message="settings.gradle(.kts) is missing"))
    if not any(is_gradle_build(p) for p in paths):
        issues.append(Issue(severity="BLOCKER", message="build.gradle(.kts) is missing"))
    manifests = [p for p in paths if p.rsplit("/", 1)[-1] == "AndroidManifest.xml"]
    if not manifests:
        issues.append(Issue(severity="BLOCKER", message="AndroidManifest.xml is missing"))
    classes = kotlin_classes(files)
    for mpath in manifests:
        try:
            root = ET.fromstring(files[mpath])
        except ET.ParseError as e:
            issues.append(Issue(severity="BLOCKER", message=f"XML is not well-formed: {e}", file=mpath))
            continue
        pkg = _manifest_package(files, root)
        if pkg is None:
            issues.append(
                Issue(
                    severity="MAJOR",
                    file=mpath,
                    message="no package in the manifest and no namespace in build.gradle",
                )
            )
            pkg = package_name
        elif pkg != package_name:
            issues.append(
                Issue(
                    severity="BLOCKER",
                    file=mpath,
                    message=f"manifest package {pkg} differs from the spec's {package_name}",
                )
            )
        for act in root.iter("activity"):
            name = act.get(f"{ANDROID_NS}name")
            if not name:
                issues.append(
                    Issue(severity="BLOCKER", message="an <activity> has no android:name", file=mpath)
                )
                continue
            fqn = pkg + name if name.startswith(".") else (name if "." in name else f"{pkg}.{name}")
            if fqn not in classes:
                issues.append(
                    Issue(
                        severity="BLOCKER",
                        file=mpath,
                        message=f"activity {name} ({fqn}) is not declared in any Kotlin source",
                    )
                )
    for path, text in files.items():
        ftype = (
            "xml"
            if path.endswith(".xml")
            else "kotlin"
            if path.endswith((".kt", ".kts", ".gradle"))
            else "text"
        )
        issues += check_file(path, ftype, text)
    return issues
