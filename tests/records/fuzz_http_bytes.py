"""Seeded hostile HTTP/1.1 for a raw socket (heads and bodies no client library would send) and hostile
console requests (paths, queries, form bodies). The same seed gives the same requests."""

from __future__ import annotations

import random
from urllib.parse import quote

VALID_HEAD = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n")
BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}'

# each ends where a client stops: a complete request, or one the server must give up on in bounded time
FIXED = [
    ("many headers", VALID_HEAD + b"".join(b"X-H%d: v\r\n" % i for i in range(3000)) + b"\r\n"),
    ("one long header", VALID_HEAD + b"X-Long: " + b"a" * 200_000 + b"\r\n\r\n"),
    ("a header past the socket buffers", VALID_HEAD + b"X-Long: " + b"a" * 4_000_000 + b"\r\n\r\n" + BODY),
    ("long request line", b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("chunked, stops mid-chunk", VALID_HEAD + b"Transfer-Encoding: chunked\r\n\r\n40\r\n{\"jsonrpc\""),
    ("chunked, stops before the last chunk", VALID_HEAD + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n"
     % (len(BODY), BODY)),
    ("content-length past the body", VALID_HEAD + b"Content-Length: 1000\r\n\r\n" + BODY),
    ("head never ends", b"POST /mcp HTTP/1.1\r\nHost: x\r\n"),
    ("only a method", b"POST"),
    ("bad chunk size", VALID_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + BODY + b"\r\n0\r\n\r\n"),
    ("huge chunk size", VALID_HEAD + b"Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nab"),
    ("negative length", VALID_HEAD + b"Content-Length: -5\r\n\r\n" + BODY),
    ("two lengths", VALID_HEAD + b"Content-Length: 5\r\nContent-Length: 52\r\n\r\n" + BODY),
    ("length and chunked", VALID_HEAD + b"Content-Length: 52\r\nTransfer-Encoding: chunked\r\n\r\n" + BODY),
    ("http/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ("NUL in the head", VALID_HEAD.replace(b"Host", b"Ho\x00st") + b"Content-Length: 52\r\n\r\n" + BODY),
    ("bare LF lines", VALID_HEAD.replace(b"\r\n", b"\n") + b"Content-Length: 52\n\n" + BODY),
    ("obs-fold", VALID_HEAD + b"X-A: a\r\n b\r\nContent-Length: 52\r\n\r\n" + BODY),
    ("absolute URI", VALID_HEAD.replace(b"/mcp", b"http://evil.example/mcp") + b"Content-Length: 52\r\n\r\n"
     + BODY),
    ("HTTP/0.9", b"GET /healthz\r\n"),
    ("HTTP/1.0 no host", b"GET /healthz HTTP/1.0\r\n\r\n"),
    ("upgrade to h2c", b"GET /mcp HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n"
     b"Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAA\r\n\r\n"),
    ("websocket without key", b"GET /a2a/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
     b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n"),
    ("pipelined past the bound", (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") * 40),
    ("expect 100-continue, no body", VALID_HEAD + b"Expect: 100-continue\r\nContent-Length: 52\r\n\r\n"),
    ("trailer after chunks", VALID_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
     b"%x\r\n%s\r\n0\r\nX-T: %s\r\n\r\n" % (len(BODY), BODY, b"t" * 70_000)),
]


def mutated_heads(seed: int, n: int) -> list[tuple[str, bytes]]:
    """A complete valid request, its bytes flipped, dropped, repeated or cut at seeded places."""
    rng = random.Random(seed)
    whole = VALID_HEAD + b"Authorization: Bearer x\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    out = []
    for _ in range(n):
        raw = bytearray(whole)
        label = []
        for _ in range(rng.choice((1, 2, 3))):
            at = rng.randrange(len(raw))
            op = rng.randrange(4)
            if op == 0:
                raw[at] = rng.choice(b"\x00\x7f\xff\r\n :\t\x80")
                label.append(f"flip {at}")
            elif op == 1:
                del raw[at]
                label.append(f"drop {at}")
            elif op == 2:
                end = raw.find(b"\r\n", at)
                line = raw[raw.rfind(b"\n", 0, at) + 1:end + 2] if end > 0 else b""
                raw[at:at] = line * rng.choice((2, 50))
                label.append(f"repeat line at {at}")
            else:
                raw = raw[:at]
                label.append(f"cut {at}")
        out.append((", ".join(label), bytes(raw)))
    return out


PATH_PIECES = ["%00", "%ff", "%2f", "%2e%2e", "..", "%c0%af", "%ed%a0%80", "\u202e", "a" * 3000, "%", "%zz",
               "//", ";x=1", "%0d%0aSet-Cookie:x=1", "\U0001f600", "0", "-1", "99999999999999999999999"]
QUERY_PIECES = ["a=1", "a=1&a=2", "page=-1", "page=99999999999999999999", "limit=1e9", "q=%00", "q=%ff",
                "&&&", "=", "x" * 9000 + "=1", "before=not-a-time", "session=%2e%2e%2f", "%=%", "a[]=1",
                "tool=" + "t" * 2000, "cursor=%00%01", "decision=" + quote("' OR 1=1 --")]


def console_paths(seed: int, n: int, templates: list[str]) -> list[str]:
    """Console paths with every ``{id}`` of ``templates`` filled with a hostile piece, and a hostile query."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        path = "/console" + rng.choice(templates)
        while "{" in path:
            start, end = path.index("{"), path.index("}")
            path = path[:start] + rng.choice(PATH_PIECES) + path[end + 1:]
        if rng.random() < 0.7:
            path += "?" + "&".join(rng.choice(QUERY_PIECES) for _ in range(rng.choice((1, 2, 4))))
        out.append(path)
    return out


def form_bodies(seed: int, n: int, csrf: str) -> list[tuple[str, bytes]]:
    """(content type, body) pairs for a console form: broken encodings, huge and repeated fields."""
    rng = random.Random(seed)
    fields = ["csrf", "secret", "answer", "everywhere", "tool", "arguments", "value", "choice", "reason", ""]
    values = [csrf, "", "1", "yes", "%ff", "%00", "\u202e", "x" * 70_000, "%", "a%zz", "[]", "{}", "1e999"]
    types = ["application/x-www-form-urlencoded", "multipart/form-data; boundary=xx", "multipart/form-data",
             "application/json", "text/plain", "", "application/x-www-form-urlencoded; charset=utf-16",
             "multipart/form-data; boundary=" + "b" * 300]
    out = []
    for _ in range(n):
        kind = rng.choice(types)
        pairs = [(rng.choice(fields), rng.choice(values)) for _ in range(rng.choice((1, 3, 12, 200)))]
        if kind.startswith("multipart"):
            body = b"".join(b"--xx\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                            % (k.encode(), v.encode("utf-8", "surrogatepass")) for k, v in pairs)
            body += rng.choice([b"--xx--\r\n", b"", b"--xx", b"--yy--\r\n"])
        else:
            body = "&".join(f"{k}={v}" for k, v in pairs).encode("utf-8", "surrogatepass")
        if rng.random() < 0.2:
            body += rng.choice([b"\xff\xfe", b"\x00", b"&" * 5000])
        out.append((kind, body))
    return out
