"""``ls`` takes allow-listed arguments only: bundles of short options without R, and paths. Both the rule in
rulebases/device.pl (real SWI-Prolog, over the simulated device server) and the device's own terminal tool.
Before, both refused the spellings of a recursive listing they knew (-R in a bundle, --recursive), and let
through the ones they did not: --rec (GNU getopt, Termux's coreutils ls, takes any unambiguous prefix of a
long option), args as one string instead of a list (the rule's member/2 found nothing in it)."""

from __future__ import annotations

import pytest
from tests.device.test_rulebase import guarded_device

from device_tools.modules.terminal import DEFAULT_ALLOW, build_argv
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = pytest.mark.timeout(120)

RECURSIVE = [["-R"], ["-lR"], ["-Rl"], ["-laR", "/sdcard"], ["--recursive"], ["--recursive=always"],
             ["--rec"], ["--recur", "/sdcard"], ["--", "-R"], ["-\u0052"], ["－Ｒ"], ["-l", "－Ｒ"],
             ["-l\u200bR"], ["-ｌR"], ["--color=always", "-R"], ["-"], ["--"], ["-l", "-R", "/sdcard"],
             ["-a=R"]]
NOT_A_LIST = ["-R", "-lR /sdcard", 7, {"0": "-R"}]
PRIVATE = ["/data/data/../data/x", "//data//data", "/sdcard/../data/data", "/data/data/com.example.bank"]
FINE = [[], ["/sdcard"], ["-la", "/sdcard"], ["-lh", "/sdcard/DCIM"], ["-1"], ["Download"],
        ["-l", "-a", "/system"], ["-ltr", "/sdcard/Download"], ["-d", "/sdcard/Android"], [".", "_x", "0"]]


async def test_the_rule_takes_only_allow_listed_ls_arguments(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        async def decide(command, args):
            call = port.call_of("device__terminal_run", {"command": command, "args": args})
            return await guard.decide(call)

        for args in RECURSIVE:
            d = await decide("ls", args)
            assert isinstance(d, Deny) and "recursive listing" in d.unmet[0], (args, d)
        for args in NOT_A_LIST:
            d = await decide("ls", args)
            assert isinstance(d, Deny), (args, d)
        for path in PRIVATE:
            for command, args in (("ls", [path]), ("ls", ["-l", path]), ("cat", [path])):
                d = await decide(command, args)
                assert isinstance(d, Deny) and "private app data" in d.unmet[0], (command, args, d)
        for args in FINE:
            d = await decide("ls", args)
            assert isinstance(d, Allow), (args, d)
        # other commands' arguments are not ls options (echo -R prints it)
        assert isinstance(await decide("echo", ["-R", "--rec"]), Allow)


def test_the_terminal_tool_takes_only_allow_listed_ls_arguments():
    for args in RECURSIVE:
        with pytest.raises(ValueError, match="recursive listing"):
            build_argv("ls", args, DEFAULT_ALLOW)
    for path in PRIVATE:
        with pytest.raises(ValueError, match="private app data"):
            build_argv("ls", ["-l", path], DEFAULT_ALLOW)
    for args in FINE:
        assert build_argv("ls", args, DEFAULT_ALLOW)[0] == ["ls", *args]
    assert build_argv("echo", ["-R", "--rec"], DEFAULT_ALLOW)[0] == ["echo", "-R", "--rec"]
