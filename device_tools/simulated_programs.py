"""The few shell programs the simulated phone answers, so terminal_run has something real to run."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

PROPS = {
    "ro.product.model": "Sentinel Simulated Phone",
    "ro.build.version.release": "15",
    "ro.build.version.sdk": "35",
}


def shell_program(argv: list[str], *, packages: list[str]) -> str:
    """Output of ``argv`` as Android's toybox would print it; unknown programs are 'not found'."""
    prog = argv[0] if argv else ""
    if prog == "echo":
        return " ".join(argv[1:]) + "\n"
    if prog == "getprop":
        if len(argv) > 1:
            return PROPS.get(argv[1], "") + "\n"
        return "".join(f"[{k}]: [{v}]\n" for k, v in PROPS.items())
    if prog == "whoami":
        return "shell\n"
    if prog == "id":
        return "uid=2000(shell) gid=2000(shell)\n"
    if prog == "uptime":
        return " 02:00:00 up 1 day,  3:04,  0 users,  load average: 0.10, 0.20, 0.30\n"
    if prog == "date":
        return time.strftime("%a %b %d %H:%M:%S UTC %Y\n", time.gmtime())
    if prog == "ls":
        return "Alarms\nDCIM\nDownload\nMusic\nPictures\n"
    if argv == ["settings", "get", "secure", "sms_default_application"]:
        return "com.google.android.apps.messaging\n"
    if argv[:3] == ["pm", "list", "packages"]:
        return "".join(f"package:{p}\n" for p in packages)
    if prog == "cat" and argv[1:] == ["/proc/version"]:
        return "Linux version 6.1.0-sentinel-simulated (android15)\n"
    return f"/system/bin/sh: {prog}: inaccessible or not found\n"


def alarm_dump_text(alarms: list[dict[str, str]], now: float) -> str:
    """``dumpsys alarm`` as AOSP prints it (abridged), for the simulated phone (UTC): the alarm clocks the
    clock app set, the next one per user, and an ordinary sync alarm that is not an alarm clock."""
    now_dt = datetime.fromtimestamp(now, UTC).replace(microsecond=0)
    triggers = []
    for alarm in alarms:
        try:
            hour, minute = int(alarm.get("HOUR", "")), int(alarm.get("MINUTES", "0"))
        except ValueError:
            continue
        at = now_dt.replace(hour=hour % 24, minute=minute % 60, second=0)
        triggers.append(at if at > now_dt else at + timedelta(days=1))
    triggers.sort()
    fmt = "%Y-%m-%d %H:%M:%S"
    out = ["Current Alarm Manager state:",
           f"  nowRTC={int(now * 1000)} = {now_dt.strftime(fmt)}.000 nowELAPSED=98765432", "",
           "  Next alarm clock information: "]
    if triggers:
        ms = int(triggers[0].timestamp() * 1000)
        out.append(f"    user:0 pendingSend:false time:{ms} = {triggers[0].strftime(fmt)} = +1h0m0s0ms")
    out += ["", f"  Pending alarm batches: {len(triggers) + 1}"]
    for i, at in enumerate(triggers):
        ms = int(at.timestamp() * 1000)
        out += [
            f"Batch{{5f2a1b{i} num=1 start={ms} end={ms} flgs=0x3}}:",
            f"    RTC_WAKEUP #0: Alarm{{a1b2c3{i} type 0 origWhen {ms} window 0 "
            "exactAllowReason=policy_permission "
            "com.google.android.deskclock}",
            "      tag=*walarm*:com.android.deskclock.ALARM_ALERT",
            f"      type=RTC_WAKEUP origWhen={at.strftime(fmt)}.000 window=0 repeatInterval=0 count=0 "
            "flags=0x3",
            "      Alarm clock:",
            f"        triggerTime={at.strftime(fmt)}.000",
            "        showIntent=PendingIntent{9e8d7c6: PendingIntentRecord{1a2b3c "
            "com.google.android.deskclock "
            "startActivity}}",
            "      operation=PendingIntent{7d6c5b4: PendingIntentRecord{2b3c4d com.google.android.deskclock "
            "broadcastIntent}}",
        ]
    sync = int((now + 3600) * 1000)
    out += [
        f"Batch{{77aa11 num=1 start={sync} end={sync + 60000} flgs=0x0}}:",
        f"    RTC #0: Alarm{{c0ffee1 type 1 origWhen {sync} window 60000 exactAllowReason=N/A "
        f"com.google.android.gms}}",
        "      tag=*alarm*:com.google.android.gms.gcm.ACTION_CHECK_QUEUE",
        f"      type=RTC origWhen={datetime.fromtimestamp(sync / 1000, UTC).strftime(fmt)}.000 window=60000",
        "      operation=PendingIntent{1234abc: PendingIntentRecord{5678def com.google.android.gms "
        "broadcastIntent}}",
        "",
        "  Past-due non-wakeup alarms: (none)",
        "",
    ]
    return "\n".join(out) + "\n"


def network_dump(argv: list[str], network: dict[str, Any] | None) -> str:
    """``cmd wifi status``, ``cmd wifi list-networks``, ``cmd wifi list-scan-results`` and ``dumpsys
    bluetooth_manager`` as Android 13 prints them (AOSP ``WifiShellCommand``, ``AdapterService.dump``), for
    ``network``'s connected Wi-Fi, saved networks, networks in range, own Bluetooth name and paired
    devices; None: a phone whose services do not answer."""
    if network is None:
        return f"cmd: Can't find service: {argv[1]}\n"
    if argv == ["cmd", "wifi", "status"]:
        out = ["Wifi is enabled", "Wifi scanning is always available",
               "==== Primary ClientModeManager instance ===="]
        ssid = network.get("connected")
        if ssid:
            out += [f'Wifi is connected to "{ssid}"',
                    f'WifiInfo: SSID: "{ssid}", BSSID: 02:00:00:00:00:00, MAC: 02:00:00:00:00:00, '
                    "IP: /192.168.1.23, "
                    "Security type: 2, Supplicant state: COMPLETED, RSSI: -52, Link speed: 433Mbps"]
        else:
            out.append("Wifi is not connected")
        return "\n".join(out) + "\n"
    if argv == ["cmd", "wifi", "list-networks"]:
        saved = network.get("saved", [])
        if not saved:
            return "No networks\n"
        rows = [f"{'Network Id':<12} {'SSID':<32} {'Security type':<4}"]
        rows += [f"{i:<12d} {ssid:<32} {'wpa2-psk':<4}" for i, ssid in enumerate(saved)]
        return "\n".join(rows) + "\n"
    if argv == ["cmd", "wifi", "list-scan-results"]:  # AOSP ScanResultUtil.dumpScanResults
        in_range = network.get("in_range", [])
        if not in_range:
            return "No scan results\n"
        rows = ["    BSSID              Frequency      RSSI           Age(sec)     SSID"
                "                                 Flags"]
        rows += [f"  02:00:00:00:{i // 256:02x}:{i % 256:02x}  {2412:9d}  {-60 - i % 30:>15}   {'4.210':>8}"
                 f"    {ssid[:32]:<32}  [WPA2-PSK-CCMP][RSN-PSK-CCMP][ESS]"
                 for i, ssid in enumerate(in_range)]
        return "\n".join(rows) + "\n"
    out = ["Bluetooth Status", "  enabled: true", "  state: ON", "  address: XX:XX:XX:XX:6C:2A",
           f"  name: {network.get('name', '')}", "  time since enabled: 01:02:03.456", "",
           "Bluetooth crashed 0 times", "", "Bonded devices:"]
    out += [f"  XX:XX:XX:XX:{i:02X}:3A [ DUAL ] {name}" for i, name in enumerate(network.get("bonded", []))]
    return "\n".join(out) + "\n"
