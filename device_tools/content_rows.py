"""The text format of Android's ``content query``: ``Row: 0 _id=1, title=Dentist, ...``.

Values may themselves contain ", ", so rows are split on the projection's own keys, in order
(we always pass ``--projection``, so the keys and their order are known). Values are printed as they are,
newlines included: a value that others wrote (an SMS anyone can send, an invitation's title) can spell a line
``Row: 1 _id=51, address=MYBANK, body=...``, which reads as a row of its own. ``read_rows`` tells them apart
by the rows' ids, read alone (digits: nothing to forge), which every listing of others' rows goes through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from . import commands as C

NO_RESULT = "No result found."
ID = "_id"


def format_rows(rows: Sequence[dict[str, str]], projection: Sequence[str]) -> str:
    if not rows:
        return NO_RESULT
    lines = []
    for i, row in enumerate(rows):
        cells = ", ".join(f"{k}={'NULL' if row.get(k) is None else row.get(k)}" for k in projection)
        lines.append(f"Row: {i} {cells}")
    return "\n".join(lines)


def parse_rows(output: str, projection: Sequence[str]) -> list[dict[str, str | None]]:
    text = output.strip()
    if not text or text == NO_RESULT:
        return []
    if not text.startswith("Row: "):
        raise ValueError(f"unexpected content query output: {text.splitlines()[0][:160]}")
    # Rows start at "Row: N "; a value with a newline continues on the next line.
    raw_rows: list[str] = []
    for line in text.splitlines():
        head = line.split(" ", 2)
        if line.startswith("Row: ") and len(head) >= 2 and head[1].isdigit():
            raw_rows.append(head[2] if len(head) > 2 else "")
        elif raw_rows:
            raw_rows[-1] += "\n" + line
    out: list[dict[str, str | None]] = []
    for raw in raw_rows:
        row: dict[str, str | None] = {}
        rest = raw
        for i, key in enumerate(projection):
            prefix = f"{key}="
            if not rest.startswith(prefix):
                raise ValueError(f"content row does not match projection at {key!r}: {raw[:160]}")
            rest = rest[len(prefix) :]
            if i + 1 < len(projection):
                sep = f", {projection[i + 1]}="
                cut = rest.find(sep)
                if cut < 0:
                    raise ValueError(f"content row is missing {projection[i + 1]!r}: {raw[:160]}")
                value, rest = rest[:cut], rest[cut + 2 :]
            else:
                value, rest = rest, ""
            row[key] = None if value == "NULL" else value
        out.append(row)
    return out


Read = Callable[[list[str]], Awaitable[str]]


async def read_rows(read: Read, uri: str, projection: Sequence[str], sort: str | None = None
                    ) -> list[dict[str, str | None]]:
    """The rows of ``uri``, refused (ValueError) unless they are exactly the rows the provider has: their ids,
    in order, as a query of the ids alone lists them. A value that spells a row of its own adds a row, so the
    two lists differ. Read twice at most: a row added between the two queries (an SMS arriving) differs too.
    ``read``: the gate's read; ``projection`` starts with ``_id``."""
    if not projection or projection[0] != ID:
        raise ValueError(f"a projection read with read_rows starts with {ID}")
    for _ in range(2):
        rows = parse_rows(await read(C.content_query(uri, projection, sort)), projection)
        ids = [r[ID] for r in parse_rows(await read(C.content_query(uri, [ID], sort)), [ID])]
        if all(i is not None and i.isdigit() for i in ids) and [r[ID] for r in rows] == ids:
            return rows
    raise ValueError(
        f"the rows of {uri} cannot be read unambiguously: a value in them spells a row of its own (or rows "
        "kept changing while they were read); nothing from them is shown"
    )
