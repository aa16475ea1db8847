"""The text format of Android's ``content query``: ``Row: 0 _id=1, title=Dentist, ...``.

Values may themselves contain ", ", so rows are split on the projection's own keys, in order
(we always pass ``--projection``, so the keys and their order are known).
"""

from __future__ import annotations

from collections.abc import Sequence

NO_RESULT = "No result found."


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
