"""Private device paths stay private however they are spelled: the device's own terminal tool and the rule in
rulebases/device.pl both compare normal forms (many generated spellings per target, and the near misses that
must still pass)."""

from __future__ import annotations

import random

import pytest
from tests.device.device_helpers import sim_server
from mcp import Client
from tests.device.test_rulebase import guarded_device

from device_tools.device_paths import normal_path, private_path
from device_tools.modules.terminal import DEFAULT_ALLOW, build_argv
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = pytest.mark.timeout(120)

TARGETS = [
    "/data/data/com.example.bank/shared_prefs/session.xml",
    "/data/user/0/com.example.bank/databases/accounts",
    "/data/system/users/0/settings_secure.xml",
    "/data",
    "/sdcard/Android/data/com.example.bank/files/token",
    "/cache/recovery/log",
    "/storage/emulated/0/Download/leak.db",
    "/proc/self/cwd/notes.txt",
    "/data_mirror/data_ce/null/0/com.example.bank/files/token.json",  # /data again, under another name
    "/mnt/expand/1234-abcd/user/0/com.example.bank/files/token",
    "/mnt/androidwritable/0/emulated/0/Android/data/com.example.bank",
    "/proc/self/task/1234/root/data/data/com.example.bank/files/token",  # a thread's root, one level down
    "/proc/1/task/1/cwd/notes.txt",
    "/proc/thread-self/root/data_mirror/data_ce/null/0/com.example.bank",
]


def _spell(path: str, rng: random.Random) -> str:
    """One random respelling of an absolute path (1-3 tricks stacked)."""
    segs = path.strip("/").split("/")
    tricks = rng.sample(range(8), k=rng.randint(1, 3))
    for t in tricks:
        if t == 0:  # doubled separators
            i = rng.randrange(len(segs) + 1)
            segs = segs[:i] + [""] + segs[i:]
        elif t == 1:  # a '.' segment
            segs.insert(rng.randrange(len(segs) + 1), ".")
        elif t == 2:  # a detour that '..' undoes
            i = rng.randrange(len(segs) + 1)
            segs = segs[:i] + [rng.choice(["sdcard", "system", "x", "Download"]), ".."] + segs[i:]
        elif t == 3:  # case (Android's shared storage ignores it; lower-casing only refuses more)
            i = rng.randrange(len(segs))
            segs[i] = segs[i].upper() if rng.random() < 0.5 else segs[i].title()
        elif t == 4:  # climbing above the root stays at the root
            segs = [".."] * rng.randint(1, 3) + segs
        elif t == 5:  # a process's root is the root
            segs = ["proc", rng.choice(["self", "1", "thread-self"]), "root"] + segs
        elif t == 6:  # trailing separator or '.'
            segs = segs + [rng.choice(["", "."])]
    spelled = "/".join(segs)
    return spelled if rng.random() < 0.3 else "/" + spelled  # the shell starts in '/': relative works too


def spellings(n_per_target: int = 25) -> list[str]:
    rng = random.Random(12)
    out = ["//data/data/x", "/./data/data/x", "/sdcard/../data/data/x", "data/data/x", "/DATA/data/x",
           "/proc/self/root/data/data/x", "--path=/data/data/x", "/mnt/sdcard/Android/DATA/x",
           "/storage/self/primary/Android/data/x", "\\data\\data\\x", "/data/./../data/data/x"]
    for target in TARGETS:
        out.extend(_spell(target, rng) for _ in range(n_per_target))
    return out


FINE = ["/sdcard/Download/report.txt", "/system/build.prop", "ro.product.model", "/storage/emulated/0/DCIM",
        "-l", "/database", "/data.txt", "/sdcard/Android", "/sdcard/data/x", "datafile", "/proc/self/status"]


def test_every_spelling_is_private_in_its_normal_form():
    for s in spellings():
        assert private_path(s) or private_path(s.split("=", 1)[-1]), (s, normal_path(s))
    for s in FINE:
        assert not private_path(s), (s, normal_path(s))
    assert normal_path("/sdcard/../data/data/x") == "/data/data/x"
    assert normal_path("data//DATA/./x/..") == "/data/data"


def test_the_terminal_tool_refuses_them_itself():
    for s in spellings(6):
        with pytest.raises(ValueError, match="private app data"):
            build_argv("cat", [s], DEFAULT_ALLOW)
    for s in ("/sdcard/Download/report.txt", "/system/build.prop"):
        assert build_argv("cat", [s], DEFAULT_ALLOW)[0] == ["cat", s]


async def test_the_device_server_refuses_before_the_phone_sees_anything(tmp_path):
    async with Client(sim_server(tmp_path), mode="auto") as c:
        for s in ("//data/data/com.example.bank/databases/x", "data/data/x", "/sdcard/../data/system"):
            r = await c.call_tool("terminal_run", {"command": "ls", "args": ["-l", s]})
            assert r.is_error and "private app data" in r.content[0].text


async def test_the_rulebase_rule_sees_the_normal_form(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        for s in spellings(12):
            d = await guard.decide(port.call_of("device__terminal_run", {"command": "ls", "args": ["-l", s]}))
            assert isinstance(d, Deny) and "private app data" in d.unmet[0], (s, d)
        for s in FINE:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": "ls", "args": [s]}))
            assert isinstance(d, Allow), (s, d)


RECURSIVE = ["-R", "-laR", "-Rl", "-alR", "--recursive", "--recursive=yes"]


@pytest.mark.parametrize("flag", RECURSIVE)
async def test_a_recursive_listing_is_refused_it_walks_into_app_data(tmp_path, flag):
    """``ls -R /sdcard`` lists /sdcard/Android/data: refused by the device's own tool and by the rulebase,
    whatever directory it starts from; one directory at a time, and other options, still list."""
    for start in (["/sdcard"], ["/storage/emulated"], ["/"], []):
        with pytest.raises(ValueError, match="recursive listing"):
            build_argv("ls", [flag, *start], DEFAULT_ALLOW)
    assert build_argv("ls", ["-la", "/sdcard/DCIM"], DEFAULT_ALLOW)[0] == ["ls", "-la", "/sdcard/DCIM"]
    async with guarded_device(tmp_path) as (_, port, guard):
        d = await guard.decide(
            port.call_of("device__terminal_run", {"command": "ls", "args": [flag, "/sdcard"]}))
        assert isinstance(d, Deny) and "recursive listing" in d.unmet[0], d
        ok = await guard.decide(
            port.call_of("device__terminal_run", {"command": "ls", "args": ["-la", "/sdcard"]}))
        assert isinstance(ok, Allow), ok
