"""What a verification tool sees of /etc, and all it may write, open and allocate, are bounded.

Found by red team 'swarm' 8 (rt-swarm8): the tool's view held the machine's whole /etc, read-only (its hosts,
its accounts, TLS material and every service's configuration left world-readable: a gateway's or a
database's); its workspace, /tmp, /var/tmp and /dev/shm were four tmpfs of 512 MB and 65,536 inodes each (2 GB
of the machine's memory per tool where no cgroup holds it: a gateway not root); it could open as many files as
the gateway's own hard limit allowed, and allocate without a per-process bound where no cgroup was given. Now
its /etc is an allow list (``tool_files.ETC``) with a passwd, group and hosts of its own; all it writes is one
tmpfs of ``max_disk_mb`` (inodes in proportion); its open files, each process's data (its memory cap), its
files' size and cores are rlimits it cannot raise (``tool_supervisor.py``)."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm.tool_files import ETC, files_here
from sentinel_mcp.swarm.tool_supervisor import MAX_OPEN_FILES
from sentinel_mcp.swarm import toolchain
from sentinel_mcp.swarm.toolchain import DATA_HEADROOM_BYTES, Toolchain, VerifySettings

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("tools_reach_tmp_path")]
needs_view = pytest.mark.skipif(
    not files_here(), reason="no mount namespace for tools here (not root, or refused)"
)


async def _said(tmp_path: Path, body: str, **caps: int) -> tuple[str, str]:
    """What a stand-in tool running ``body`` (Python) printed (in a file: the build's note of a failed tool
    holds only the first 200 characters of its output), and the build's notes."""
    said = tmp_path / f"said-{uuid.uuid4().hex}.txt"
    script = (
        f"#!{TOOL_PYTHON}\nimport os, sys\nsys.stdout = open({str(said)!r}, 'w', buffering=1)\n{body}\n"
        "sys.exit(1)\n"
    )
    notes = " ".join((await script_tools(tmp_path, script, **caps).check_kotlin(KOTLIN)).notes)
    return (said.read_text() if said.exists() else ""), notes


@needs_view
async def test_a_tool_sees_only_an_allow_list_of_the_machines_etc(tmp_path) -> None:
    """A file the machine keeps in /etc (here one the test plants, world-readable, as a service's
    configuration is) is not in the tool's view, under any name it may try; what is there is the allow list
    and its own accounts."""
    planted = Path("/etc") / f"sentinel-test-{uuid.uuid4().hex}.conf"
    planted.write_text("password=hunter2\n")
    planted.chmod(0o644)
    try:
        script = (
            "print('LISTED', ' '.join(sorted(os.listdir('/etc'))))\n"
            f"for p in ({str(planted)!r}, '/etc/../etc/{planted.name}', '/proc/1/root/etc/{planted.name}',"
            f" '/etc/./{planted.name}', '/etc/hostname', '/etc/ssl/certs', '/etc/shadow',"
            " '/etc/resolv.conf'):\n"
            "    try:\n"
            "        print('READ', p, open(p).read() if not os.path.isdir(p) else os.listdir(p))\n"
            "    except OSError as e:\n"
            "        print('REFUSED', p, e.errno)\n"
            "print('PASSWD', open('/etc/passwd').read().replace(chr(10), ';'))\n"
            "print('HOSTS', open('/etc/hosts').read().split())\n"
            "import pwd\nprint('ME', pwd.getpwuid(os.getuid()).pw_name)"
        )
        ran, notes = await _said(tmp_path, script)
    finally:
        planted.unlink()
    assert "hunter2" not in ran and "READ" not in ran, ran
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[-1] for line in ran.splitlines()}
    listed = lines["LISTED"].split()
    own = {"passwd", "group", "hosts"}
    assert all(n in own or any(fnmatch.fnmatchcase(n, a) for a in ETC) for n in listed), listed
    assert own <= set(listed) and "ld.so.cache" in listed, listed
    accounts = {line.split(":")[0] for line in lines["PASSWD"].split(";") if line}
    assert accounts <= {"root", "tool", "nobody"}, accounts
    assert "ME tool" in ran or "ME nobody" in ran, ran
    assert "HOSTS ['127.0.0.1', 'localhost', '::1', 'localhost']" in ran, ran


@needs_view
async def test_a_tools_etc_cannot_be_written_or_mounted_over(tmp_path) -> None:
    script = (
        "for p in ('/etc/passwd', '/etc/hosts', '/etc/new', '/etc/ld.so.cache'):\n"
        "    try:\n"
        "        open(p, 'a').write('x')\n"
        "        print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('REFUSED', p, e.errno)"
    )
    ran, notes = await _said(tmp_path, script)
    assert "WROTE" not in ran and ran.count("REFUSED") == 4, ran


@needs_view
async def test_all_a_tool_writes_is_bounded_together(tmp_path) -> None:
    """Each place it may write had a tmpfs of its own of 512 MB: four times its bound (and the machine's
    memory where no cgroup holds it). Now all of them are one tmpfs of ``max_disk_mb``: past it, ENOSPC,
    said in what the tool says (what the build reports), and nothing of the machine's."""
    script = (
        "total = 0\n"
        "for place in ('/tmp', '/var/tmp', '/dev/shm', '.'):\n"
        "    try:\n"
        "        with open(f'{place}/big', 'wb') as f:\n"
        "            for _ in range(10):\n"
        "                f.write(b'x' * (1 << 20))\n"
        "                f.flush()\n"
        "                total += 1\n"
        "    except OSError as e:\n"
        "        print('ERROR', place, e.strerror)\n"
        "        print('ERROR', place, e.strerror, file=sys.stderr)\n"
        "print('WROTE', total)"
    )
    ran, notes = await _said(tmp_path, script, max_disk_mb=16)
    wrote = int(ran.split("WROTE ")[1].split()[0])
    assert wrote <= 16 and "No space left on device" in ran, ran
    assert "ktlint failed (exit 1): ERROR" in notes and "No space left on device" in notes, notes


@needs_view
async def test_a_tool_making_empty_files_without_end_is_stopped_at_its_inodes(tmp_path) -> None:
    """Empty files take no bytes: each takes an inode, bounded in proportion to its bytes (16 MB: 2,048)."""
    script = (
        "n = 0\n"
        "try:\n"
        "    for n in range(5000):\n"
        "        place = ('/tmp', '/var/tmp', '/dev/shm', '.')[n % 4]\n"
        "        open(f'{place}/e{n}', 'w').close()\n"
        "    n = 5000\n"
        "except OSError as e:\n"
        "    print('ERROR', e.strerror)\n"
        "print('MADE', n)"
    )
    ran, notes = await _said(tmp_path, script, max_disk_mb=16)
    assert "MADE 5000" not in ran and "No space left on device" in ran, ran


async def test_a_tool_opening_files_without_end_is_stopped_and_cannot_raise_its_limits(tmp_path) -> None:
    """It opened files up to the gateway's own hard limit (raised to it first: a soft limit is the tool's to
    raise). Now its hard limits are the caps: open files, each file's size, no core; raising one is
    refused."""
    script = (
        "import resource\n"
        "for name in ('NOFILE', 'FSIZE', 'CORE', 'DATA'):\n"
        "    kind = getattr(resource, 'RLIMIT_' + name)\n"
        "    soft, hard = resource.getrlimit(kind)\n"
        "    try:\n"
        "        resource.setrlimit(kind, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
        "        print('RAISED', name)\n"
        "    except (ValueError, OSError):\n"
        "        resource.setrlimit(kind, (hard, hard))\n"
        "    print('LIMIT', name, resource.getrlimit(kind)[1])\n"
        "held = []\n"
        "try:\n"
        "    for _ in range(100_000):\n"
        "        held.append(os.open('/dev/null', os.O_RDONLY))\n"
        "except OSError as e:\n"
        "    print('ERROR', e.strerror)\n"
        "    print('ERROR', e.strerror, file=sys.stderr)\n"
        "print('OPENED', len(held))"
    )
    ran, notes = await _said(tmp_path, script)
    assert "RAISED" not in ran, ran
    assert f"LIMIT NOFILE {MAX_OPEN_FILES}" in ran and "LIMIT CORE 0" in ran, ran
    assert f"LIMIT DATA {2048 * 1024 * 1024 + DATA_HEADROOM_BYTES}" in ran, ran
    assert int(ran.split("OPENED ")[1].split()[0]) < MAX_OPEN_FILES, ran
    assert "Too many open files" in ran and "Too many open files" in notes, (ran, notes)


async def test_a_tools_process_allocating_past_its_memory_cap_is_refused_the_memory(tmp_path) -> None:
    """Each of its processes' data is bounded to its memory cap and a JVM's own headroom (``RLIMIT_DATA``):
    where no cgroup holds it (a gateway not root) too; an allocation past it is refused at once (not the
    cgroup's kill once its pages are touched), and the tool says so."""
    script = (
        "try:\n    b = bytearray(1024 * 1024 * 1024)\n    print('ALLOCATED')\n"
        "except MemoryError:\n    print('REFUSED MemoryError')"
    )
    ran, notes = await _said(tmp_path, script, max_memory_mb=64)
    assert "ALLOCATED" not in ran and "REFUSED MemoryError" in ran, ran


@needs_view
@pytest.mark.skipif(not (shutil.which("java") and shutil.which("javac")), reason="no JDK here")
async def test_a_real_jvm_runs_in_the_bounded_view(tmp_path) -> None:
    """The real JVM (as ktlint is run: ``java -jar``, its heap capped) starts and works with the allow list
    of /etc, the rlimits and the one small tmpfs: it reads its JDK's configuration (``conf`` links into
    /etc/java-N-openjdk), writes its hsperfdata in /tmp, and sees none of the machine's /etc but that."""
    out = tmp_path / "seen.txt"
    (tmp_path / "Seen.java").write_text(
        "import java.nio.file.*; import java.util.*;\n"
        "public class Seen { public static void main(String[] a) throws Exception {\n"
        "  String[] etc = new java.io.File(\"/etc\").list(); Arrays.sort(etc);\n"
        "  String sec = java.security.Security.getProperty(\"securerandom.source\");\n"
        "  String tmp = String.join(\",\", new java.io.File(\"/tmp\").list());\n"
        f"  Files.writeString(Path.of({json.dumps(str(out))}),\n"
        "    String.join(\" \", etc) + \"|\" + sec + \"|\" + tmp + \"|\"\n"
        "    + System.getProperty(\"user.name\"));\n"
        '  System.out.println("[]"); } }\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OPTIONS")}
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(tmp_path / "Seen.java")], check=True, env=env)
    jar = tmp_path / "seen.jar"
    subprocess.run(
        ["jar", "--create", "--file", str(jar), "--main-class", "Seen", "-C", str(classes), "."],
        check=True,
        env=env,
    )
    settings = VerifySettings(
        kotlin=True,
        resources=False,
        java=shutil.which("java"),
        ktlint=str(jar),
        max_memory_mb=256,
        max_disk_mb=16,
    )
    report = await Toolchain(settings).check_kotlin(KOTLIN, within=600.0)
    assert report.notes == [], report.notes
    etc, source, tmp, name = out.read_text().split("|")
    assert "passwd" in etc.split() and "hostname" not in etc.split() and "ssl" not in etc.split(), etc
    assert source.startswith("file:/dev/"), source  # read from /etc/java-N-openjdk/security/java.security
    assert "hsperfdata_" in tmp, tmp
    assert name in ("tool", "nobody"), name


@pytest.mark.skipif(os.geteuid() != 0, reason="a root gateway's tool runs as a uid of its own")
async def test_a_fork_bomb_is_capped_where_no_cgroup_is_given(tmp_path, monkeypatch) -> None:
    """A root gateway on a machine that gives it no cgroup: its tool's processes were not capped at all (the
    report said so). Now its user's processes are (``RLIMIT_NPROC``: the uid is leased to this run alone)."""
    monkeypatch.setattr(toolchain, "tool_cgroup", lambda *_: None)
    script = (
        "import time\nforked = 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "    except OSError as e:\n"
        "        print('ERROR', e.strerror)\n"
        "        break\n"
        "print('FORKED', forked)"
    )
    ran, notes = await _said(tmp_path, script, max_processes=16)
    assert "ERROR Resource temporarily unavailable" in ran, (ran, notes)
    assert int(ran.split("FORKED ")[1].split()[0]) < 16, ran
