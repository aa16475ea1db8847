"""The terminal never reads what the sensors built-in guards: the kernel's sensor and radio state under
``/sys`` (the battery's temperature and voltage, iio motion and light sensors, the radios), the network
neighbours under ``/proc/net`` (the router's hardware address in the ARP table places the phone to the
metre in public Wi-Fi maps; ``/proc/<pid>/net`` is the same table) and the input and sensor device nodes
under ``/dev`` (every touch and key the user makes). Read around the sensors' consent, scope and redaction,
they gave a caller with no consent, or a city-level one, the street and the battery's health."""

from __future__ import annotations

import random

import pytest

from device_tools.device_paths import normal_path, physical_path, private_path, sensor_state_path
from device_tools.modules.terminal import DEFAULT_ALLOW, build_argv
from sentinel_mcp.core.decision import Allow, Deny
from tests.device.device_helpers import Answers, adb_server, connect
from tests.device.test_private_paths import _spell
from tests.device.test_rulebase import guarded_device

pytestmark = pytest.mark.timeout(120)

TARGETS = [
    "/sys/class/power_supply/battery/temp",
    "/sys/class/power_supply/battery/uevent",
    "/sys/bus/iio/devices/iio:device0/in_accel_x_raw",
    "/sys/class/net/wlan0/address",
    "/proc/net/arp",
    "/proc/net/wireless",
    "/proc/self/net/arp",  # each process's view of the same tables
    "/proc/1/task/1/net/arp",
    "/proc/thread-self/net/wireless",
    "/dev/input/event2",
    "/d/battery",  # /d: Android's link to /sys/kernel/debug
    "/sys",
    "/proc/cmdline",  # the boot's identifiers: androidboot.serialno, the board's serial-number
    "/proc/bootconfig",
    "/proc/device-tree/serial-number",
    # /proc is read by an allow list: what is not a process's status or the kernel's version, memory and
    # load is refused, whatever its name (cpuinfo's Serial line, the boot's random id, the mounts' storage
    # UUIDs, a process's environment, the kernel's tunables)
    "/proc/cpuinfo",
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/hostname",
    "/proc/mounts",
    "/proc/self/mountinfo",
    "/proc/self/environ",
    "/proc/1/task/1/environ",
    "/proc/tty/driver/serial",
    "/proc/self/attr/current",
]
# near misses that stay readable: system files, a process's own status, the kernel's version
FINE = ["/system/build.prop", "/proc/version", "/proc/meminfo", "/proc/self/status", "/sdcard/Download/sys",
        "/sdcard/dev/notes.txt", "/sysfile", "/devices", "/procx", "/dx", "/data.txt",
        "/sdcard/d/x", "/proc/self/cmdline", "/sdcard/proc/cpuinfo", "/proc", "/proc/uptime", "/proc/loadavg",
        "/proc/self", "/proc/1/stat", "/proc/thread-self/comm", "/proc/12/task", "/proc/12/task/13/status"]


def spellings(n_per_target: int) -> list[str]:
    rng = random.Random(7)
    out = ["//sys/class/power_supply/battery/temp", "sys/class/power_supply/battery/temp", "/SYS/class/x",
           "/sdcard/../sys/class/x", "/proc/self/root/proc/net/arp", "--file=/proc/net/arp",
           "\\proc\\net\\arp"]
    for target in TARGETS:
        out.extend(_spell(target, rng) for _ in range(n_per_target))
    return out


def test_every_spelling_is_sensor_state_and_the_near_misses_are_not():
    for s in spellings(25):
        operand = s.split("=", 1)[-1]
        assert sensor_state_path(operand), (s, normal_path(operand))
    for s in FINE:
        assert not sensor_state_path(s) and not private_path(s), (s, normal_path(s))


def test_the_terminal_tool_refuses_them_itself():
    for s in spellings(4):
        with pytest.raises(ValueError, match="sensors"):
            build_argv("cat", [s], DEFAULT_ALLOW)
    for s in FINE:
        assert build_argv("cat", [s], DEFAULT_ALLOW)[0] == ["cat", s]


async def test_the_phone_is_never_asked_for_its_battery_or_its_neighbours(fake_adb, tmp_path):
    """On main the battery's temperature and the router's address came back as terminal output, with no
    sensor consent at all (the battery's temperature is the detailed scope's)."""
    answers = {
        "cat /sys/class/power_supply/battery/temp": b"293\n",
        "cat /proc/net/arp": b"IP address HW type Flags HW address Mask Device\n"
                             b"192.168.1.1 0x1 0x2 a4:2b:b0:11:22:33 * wlan0\n",
        "cat /proc/self/net/arp": b"192.168.1.1 0x1 0x2 a4:2b:b0:11:22:33 * wlan0\n",
    }
    for command, out in answers.items():
        fake_adb.script[command].append(out)
    async with connect(adb_server(fake_adb, tmp_path), answers=Answers("yes", "yes", "yes")) as client:
        for command in answers:
            r = await client.call_tool("terminal_run", {"command": "cat", "args": command.split()[1:]})
            assert r.is_error and "sensors" in r.content[0].text, r.content[0].text
    assert not [c for c in fake_adb.device_commands() if c.startswith("cat ")]


async def test_the_rulebase_refuses_them_before_the_call_reaches_the_device(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        for s in spellings(6):
            d = await guard.decide(port.call_of("device__terminal_run", {"command": "ls", "args": [s]}))
            assert isinstance(d, Deny) and "sensors" in d.unmet[0], (s, d)
        for s in FINE:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": "cat", "args": [s]}))
            assert isinstance(d, Allow), (s, d)


PROC_WORDS = ["self", "thread-self", "1", "12", "٣", "1a", "task", "status", "stat", "cmdline", "environ",
              "cpuinfo", "version", "uptime", "net", "arp", "sys", "kernel", "random", "boot_id", "mounts",
              "root", "..", ".", "", "STATUS", "Self", "comm", "wchan", "maps", "proc"]


def proc_paths(n: int) -> list[str]:
    rng = random.Random(11)
    return ["/proc/" + "/".join(rng.choice(PROC_WORDS) for _ in range(rng.randint(0, 5))) for _ in range(n)]


async def test_the_rulebase_and_the_terminal_read_proc_alike(tmp_path):
    """device.pl and device_paths.py hold the same /proc allow list: 300 seeded paths under /proc (process
    numbers, threads, links, '..', letter case, a non-ASCII digit) are refused by both or by neither."""
    paths = [p for p in proc_paths(300) if not private_path(p)]
    readable = [p for p in paths if not sensor_state_path(p)]
    assert len(readable) > 20 and len(paths) - len(readable) > 100  # both sides are exercised
    async with guarded_device(tmp_path) as (_, port, guard):
        for p in paths:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": "cat", "args": [p]}))
            refused = isinstance(d, Deny) and "sensors" in d.unmet[0]
            assert refused == sensor_state_path(p), (p, normal_path(p), physical_path(p), d)
