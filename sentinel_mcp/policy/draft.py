"""A candidate rulebase drafted from a server's tool schemas and a policy document, for a person to finish.

Deterministic: the same tools and policy give the same text. What it derives:

* a **binding** for each fact a read-only tool's output schema offers, keyed by the tool's inputs: one per
scalar
  field (``order_status(OrderId, Status)``), one per nested object (its scalar fields together), one per array
  (an element's position or value, with an object element's scalar fields zipped) and one per map of objects
  (the key, with the value's scalar fields);
* a **guard stub** for every other tool, naming its arguments, listing the paragraphs of the policy that
mention
  it, and asking the user's confirmation of every argument (what a destructive tool gets by default), with
  TODO
  markers where the rules go;
* an **askable** for every argument of a write tool that only the user can give (not an identifier, not a
field
  any read tool returns);
* a **context** for every identifier that several tools take (the entities the tools revolve around);
* **effects** that invalidate, after a write, the facts read about the entity it wrote to.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcp_types import Tool

from sentinel_mcp.policy.draft_budget import DraftBudget, ToolTooLarge
from sentinel_mcp.policy.draft_check import catalog_tool
from sentinel_mcp.policy.draft_names import (
    Fresh, atom_text, choice_text, clause_vars, offered, pred_name, quote, quoted_words, var_name,
)
from sentinel_mcp.policy.policy_documents import SECTION_MARK, PolicyDocuments
from sentinel_mcp.search.paragraphs import Paragraph

GENERIC = {"get", "details", "of", "by", "to", "the", "and", "all", "list", "find"}
MAX_PARAGRAPHS = 6
SCALARS = {"string", "integer", "number", "boolean"}
RESOLVE_STEPS = 200


@dataclass
class Draft:
    text: str
    bindings: list[str] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    askables: list[str] = field(default_factory=list)
    facts: list[tuple[str, int]] = field(default_factory=list)  # the base predicates made (name, arity)


def entity_of(tool_name: str) -> str:
    """``get_order_details`` -> ``order``; ``find_user_id_by_email`` -> ``user_id_by_email``."""
    words = tool_name.split("_")
    while words and words[0] in ("get", "find", "list", "all"):
        words = words[1:]
    if words and words[-1] == "details":
        words = words[:-1]
    return "_".join(words) or tool_name


def _resolve(schema: Any, root: dict[str, Any], meter: DraftBudget, budget: list[int] | None = None
             ) -> dict[str, Any]:
    """A schema with its $ref followed and a nullable anyOf reduced to its non-null branch. ``budget``: the
    steps left for the whole resolution (a union whose branches refer to unions again, or to itself, once
    recursed without end or took 2^depth steps on a few lines of schema); past it the schema is unknown.
    ``meter``: the draft's steps, each of these one (a schema resolved from every property of another)."""
    budget = [RESOLVE_STEPS] if budget is None else budget
    while isinstance(schema, dict) and budget[0] > 0:
        budget[0] -= 1
        meter.spend()
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            schema = target
            continue
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(real) == 1:
                schema = real[0]
                continue
            merged: dict[str, Any] = {"type": "object", "properties": {}}  # a union of objects: every field,
            required: set[str] | None = None  # required when all require it
            for b in real:
                r = _resolve(b, root, meter, budget)
                if isinstance(r.get("properties"), dict):
                    meter.spend(len(r["properties"]))
                    merged["properties"].update(r["properties"])
                required = _names(r) if required is None else required & _names(r)
            merged["required"] = sorted(required or [])
            return merged
        return schema
    return {}


def _names(schema: dict[str, Any]) -> set[str]:
    """The schema's required names (a ``required`` that is not a list of names requires none)."""
    req = schema.get("required")
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def _kind(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):  # ["string", "null"]: a nullable type is its other one
        real = [x for x in t if x != "null"]
        t = real[0] if len(real) == 1 else None
    if not isinstance(t, str):
        t = None
    if t in SCALARS or "enum" in schema or "const" in schema:
        return "scalar"
    if t == "array":
        return "array"
    if t == "object" and schema.get("properties"):
        return "object"
    if t == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "map"
    return "other"


def _scalar_fields(schema: dict[str, Any], root: dict[str, Any], meter: DraftBudget
                   ) -> tuple[list[str], list[str]]:
    """(required, optional) scalar fields: a zipped extraction yields nothing for an element that lacks one of
    its fields, so only the fields every element has go together; each optional one gets its own fact."""
    scalars = [k for k, v in (schema.get("properties") or {}).items()
               if _kind(_resolve(v, root, meter)) == "scalar"]
    required = _names(schema)
    return [k for k in scalars if k in required], [k for k in scalars if k not in required]


@dataclass
class _Binding:
    head: str
    tool: str
    args: str
    extract: list[str]
    pointers: list[str]


def bindings_of(server: str, tool: dict[str, Any], meter: DraftBudget) -> list[_Binding]:
    """``meter``: every step taken, every variable named and every argument written is one (a binding's
    head names every input again: 10^4 inputs and 10^4 output fields made 10^8)."""
    name = tool["name"]
    full = f"{server}__{name}"
    inputs = list((tool.get("inputSchema") or {}).get("properties", {}))
    meter.spend(len(inputs))
    in_vars, echoed = clause_vars(inputs), set(inputs)
    args = "[" + ", ".join(f"{atom_text(i)} = {v}" for i, v in zip(inputs, in_vars)) + "]"
    root = tool.get("outputSchema") or {}
    schema = _resolve(root, root, meter)
    entity = entity_of(name)
    out: list[_Binding] = []
    fresh = Fresh(in_vars)

    def add(pred: str, pairs: list[tuple[str, str]]) -> None:
        meter.spend(len(in_vars) + len(pairs))
        head = f"{pred}({', '.join(in_vars + [v for v, _ in pairs])})"
        out.append(_Binding(head, full, args, [f"{v} = {p}" for v, p in pairs], [p for _, p in pairs]))

    def grouped(
        pred: str, lead: list[tuple[str, str]], base: str, fields: tuple[list[str], list[str]]
    ) -> None:
        nonlocal fresh
        required, optional = fields
        if required or not optional:
            add(pred, lead + [(fresh(var_name(f)), quote(f"{base}/{f}")) for f in required])
        for f in optional:
            meter.spend(len(in_vars) + len(lead))
            fresh = Fresh(in_vars + [v for v, _ in lead])
            add(pred_name(pred, f), lead + [(fresh(var_name(f)), quote(f"{base}/{f}"))])

    for key, sub in (schema.get("properties") or {}).items():
        sub = _resolve(sub, root, meter)
        kind = _kind(sub)
        each = f"/{key}/*"  # every element's (or value's) pointer
        pred = pred_name(entity, key) if key != "result" else pred_name(entity)
        meter.spend(len(in_vars))
        fresh = Fresh(in_vars)
        if kind == "scalar":
            if key not in echoed:  # a field that only echoes an input says nothing
                add(pred, [(fresh(var_name(key)), quote(f"/{key}"))])
        elif kind == "object":
            grouped(pred, [], f"/{key}", _scalar_fields(sub, root, meter))
        elif kind == "array":
            item = _resolve(sub.get("items") or {}, root, meter)
            if _kind(item) == "scalar":
                add(pred, [(fresh(var_name(key[:-1] if key.endswith("s") else key)), quote(each))])
            elif _kind(item) == "object":
                grouped(pred, [(fresh("K"), f"key({quote(each)})")], each, _scalar_fields(item, root, meter))
        elif kind == "map":
            value = _resolve(sub["additionalProperties"], root, meter)
            if _kind(value) == "scalar":
                add(pred, [(fresh("Key"), f"key({quote(each)})"), (fresh("Value"), quote(each))])
            else:
                fields = _scalar_fields(value, root, meter)
                grouped(pred, [(fresh("Id"), f"key({quote(each)})")], each, fields)
    if not out and _kind(schema) == "map":  # the whole result is a mapping
        add(pred_name(entity), [(fresh("Key"), "key('/*')"), (fresh("Value"), "'/*'")])
    return out


def _annotations(tool: dict[str, Any]) -> dict[str, Any]:
    ann = tool.get("annotations")
    return ann if isinstance(ann, dict) else {}


def _read_only(tool: dict[str, Any]) -> bool:
    return bool(_annotations(tool).get("readOnlyHint"))


def _destructive(tool: dict[str, Any]) -> bool:
    ann = _annotations(tool)
    return not ann.get("readOnlyHint") and ann.get("destructiveHint", True) is not False


def _stems(words: list[str]) -> list[str]:
    return [w[:5].lower() for w in words if w not in GENERIC and len(w) > 2]


def mentions(tool_name: str, paragraphs: list[Paragraph], lowered: list[tuple[str, str]] | None = None,
             meter: DraftBudget | None = None) -> list[Paragraph]:
    """The paragraphs that mention a tool: its verb (first word) and the most of its other words, in the text
    or in the heading above (at most MAX_PARAGRAPHS, best first, then in document order). ``lowered``: each
    paragraph's text and heading in lower case, made once for all of a server's tools (a long tool list over
    a long policy lowered every paragraph again for each tool)."""
    words = tool_name.split("_")
    verb, others = (_stems(words[:1]) or [""])[0], _stems(words[1:])
    if not verb:
        return []
    lowered = lowered if lowered is not None else lower_paragraphs(paragraphs)
    if meter is not None:  # a paragraph tested is a step (µs: 300 tools over 20,000 paragraphs took 37 s)
        meter.spend(1 + len(paragraphs))
    scored = []
    for i, (p, (text, heading)) in enumerate(zip(paragraphs, lowered)):
        if verb not in text and verb not in heading:
            continue
        score = sum(2 for o in others if o in text) + sum(1 for o in others + [verb] if o in heading)
        if score:
            scored.append((-score, i, p))
    return [p for _, _, p in heapq.nsmallest(MAX_PARAGRAPHS, scored, key=lambda x: x[:2])]


def lower_paragraphs(paragraphs: list[Paragraph]) -> list[tuple[str, str]]:
    return [(p.text.lower(), p.heading_text.lower()) for p in paragraphs]


def anchor_of(p: Paragraph, docs: PolicyDocuments) -> str:
    """An anchor that names ``p`` alone, by the look-up ``check`` and every denial use (PolicyDocuments): the
    first words of its first sentence as the policy has them (markup as the look-up reads it: a ``user_id``
    stays one), as many as are found once, else under its section's name; "" when none is (the draft then
    cites nothing: a guessed anchor would quote another sentence, or one the policy does not hold)."""
    sentence = (p.sentences[0] if p.sentences else p.text).split(SECTION_MARK)[0]  # the mark splits an anchor
    words = sentence.split()
    for section in ("", p.heading_text):
        for n in sorted({min(k, len(words)) for k in (10, 16, 24, 40)}):
            anchor = " ".join(words[:n]).rstrip(".,:;")
            if section:
                anchor = f"{section} {SECTION_MARK} {anchor}"
            cited = docs.cite(p.document, anchor)
            if anchor and cited is not None and cited.line_start == p.line_start and docs.names_one_sentence(
                p.document, anchor
            ):
                return anchor
    return ""


# the names a draft writes into Prolog text (tool names, schema property names): an upstream's schemas are
# hostile too, and a property named "a], true).\nguard('shop__wipe', [], true).\n%" once closed the clause
# being written and added allow-all guards that `check` found clean. A tool with any other name is left out.
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}\Z")


def _plain(tool: dict[str, Any], meter: DraftBudget) -> bool:
    """Whether every name the draft would write is plain: the tool's, and every property name its schemas
    reach, through a ``$ref`` too (one into a ``default`` value, which is not walked as a schema, once brought
    hostile names into the extraction pointers). A schema or ``properties`` that is not an object is not.
    Each node walked is a step of ``meter``."""
    if not isinstance(tool.get("name"), str) or not PLAIN_NAME.match(tool["name"]):
        return False
    for root in (tool.get("inputSchema"), tool.get("outputSchema")):
        if root is None:
            continue
        if not isinstance(root, dict):
            return False
        stack: list[Any] = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            meter.spend()
            if isinstance(node, dict):
                meter.spend(len(node))
                for key, value in node.items():
                    if key == "properties":
                        if not isinstance(value, dict) or not all(
                            isinstance(k, str) and PLAIN_NAME.match(k) for k in value
                        ):
                            return False
                        stack.extend(value.values())
                    elif key == "$ref" and isinstance(value, str) and value.startswith("#/"):
                        target: Any = root
                        for part in value[2:].split("/"):
                            meter.spend()
                            target = target.get(part, {}) if isinstance(target, dict) else {}
                        stack.append(target)
                    elif key not in ("enum", "const", "default", "examples", "description", "title"):
                        stack.append(value)
            elif isinstance(node, list):
                meter.spend(len(node))
                stack.extend(node)
    return True


def _arguments(tool: dict[str, Any], meter: DraftBudget) -> dict[str, dict[str, Any]]:
    """A destructive tool's arguments, each resolved (an askable's type and choices): each choice a step."""
    root = tool.get("inputSchema") or {}
    out = {}
    for name, spec in (root.get("properties") or {}).items():
        out[name] = _resolve(spec, root, meter)
        if isinstance(out[name].get("enum"), list):
            meter.spend(len(out[name]["enum"]))
    return out


def draft_rulebase(
    server: str, tools: list[dict[str, Any]], document: str, document_path: str, paragraphs: list[Paragraph],
    reserved: frozenset[str] = frozenset(),
) -> Draft:
    """Raises DraftTooLarge when the tools take more steps to draft than any real server's (draft_budget).
    ``reserved``: names no fact may take (the engine's builtins and Sentinel's own, draft_check.reserved_of:
    a tool get_member made a binding member/2, and the whole draft failed its check); such a fact is named
    with the next number free (member_2)."""
    meter = DraftBudget()
    left_out: list[tuple[Any, str]] = []
    bound: dict[int, list[_Binding]] = {}  # a read tool's bindings, by id(tool): made once, used thrice
    specs: dict[int, dict[str, dict[str, Any]]] = {}  # a destructive tool's arguments, resolved
    kept = []
    listed = Counter(t.get("name") for t in tools if isinstance(t.get("name"), str))
    told: set[Any] = set()
    for t in tools:
        twice = listed[t.get("name")]
        if twice > 1:  # the server's word against itself: which is the tool, a read or a write?
            if t.get("name") not in told:
                told.add(t.get("name"))
                left_out.append((t.get("name"), f"the server lists it {twice} times"))
            continue
        listed_as = catalog_tool(server, t) if isinstance(t.get("name"), str) else "it has no name"
        if not isinstance(listed_as, Tool):  # its guard would name a tool no upstream has: no draft at all
            left_out.append((t.get("name"), listed_as))
            continue
        # its hints as the catalog reads them ("readOnlyHint": "false" is false, not Python's truth of a text)
        hints = listed_as.annotations
        t = {**t, "annotations": hints.model_dump(by_alias=True, exclude_none=True) if hints else {}}
        try:
            with meter.tool():
                if not _plain(t, meter):
                    left_out.append((t.get("name"), "a name in its schemas is not a plain name (letters, "
                                                    "digits, _ . -)"))
                    continue
                bound[id(t)] = bindings_of(server, t, meter) if _read_only(t) else []
                if _destructive(t):
                    specs[id(t)] = _arguments(t, meter)
        except ToolTooLarge as e:
            left_out.append((t.get("name"), str(e)))
            continue
        kept.append(t)
    tools = sorted(kept, key=lambda t: t["name"])
    reads = [t for t in tools if _read_only(t)]
    writes = [t for t in tools if not _read_only(t)]
    draft = Draft(text="")
    doc = atom_text(document)  # the server's name or --document: "my-shop" reads as a term, "Shop" a variable
    lines = [
        f"% DRAFT rulebase for the server {server!r}, from its tool schemas and "
        f"{quoted_words(document_path, 200)}.",
        "% Written by `sentinel-mcp draft`: a candidate for a person to finish (every TODO), check with",
        "% `sentinel-mcp check --coverage`, and only then load. Language: docs/rulebase-language.md.",
        *(f"% TODO: tool {ascii(name)[:80]} left out: {why}; write its rules by hand"
          for name, why in left_out),
        "",
        f"policy_document({doc}, {quote(document_path)}).",
        "",
        "% ---------------------------------------------------------------- bindings (read-only tools)",
    ]
    preds = Fresh(reserved, between="_")  # the fact names made: a binding's, an askable's
    # citations are looked up as check and denials look them up; a paragraph's anchor once for all its tools
    docs = PolicyDocuments.of_paragraphs(document, document_path, paragraphs)
    anchored: dict[int, str] = {}
    lowered = lower_paragraphs(paragraphs)
    for t in reads:
        bs = bound[id(t)]
        if bs:
            described = (str(t.get("description") or "").splitlines() or [""])[0]
            lines.append(f"% {t['name']}, as its server describes it: {quoted_words(described, 100)}")
        for b in bs:
            pred = b.head.split("(")[0]
            if pred in reserved:
                renamed = preds(pred)
                b.head = renamed + b.head[len(pred):]
                pred = renamed
            elif pred in preds.taken:  # two tools offering the same fact name: keep the first, mark the other
                lines.append(f"% TODO: {pred} is also offered by {b.tool}; rename one if both are wanted")
                continue
            preds.taken.add(pred)
            decl = (
                f"binding({b.head}, tool({quote(b.tool)}, {b.args}),\n"
                f"        extract([{', '.join(b.extract)}]), [ttl(60)])."
            )
            lines.append(decl)
            draft.bindings.append(decl)
            draft.facts.append((pred, b.head.count(",") + 1))  # a head's arguments are variables: no comma
    # facts any read tool returns (by field name): a write argument among them is not only the user's to give
    returned = {
        seg
        for t in reads
        for b in bound[id(t)]
        for p in b.pointers
        for seg in re.findall(r"/([A-Za-z0-9_]+)", p)
    }
    identifiers: dict[str, int] = {}
    for t in tools:
        for a in (t.get("inputSchema") or {}).get("properties", {}):
            if a.endswith("_id"):
                identifiers[a] = identifiers.get(a, 0) + 1
    lines += [
        "",
        "% ---------------------------------------------------------------- contexts (entities in focus)",
    ]
    for ident, n in sorted(identifiers.items()):
        if n >= 2:
            lines.append(
                f"context({pred_name(ident[:-3], 'of_interest')}).   % "
                + f"{ident}: taken by {n} tools"  # a plain name (_plain)
            )
    lines += [
        "",
        "% ---------------------------------------------------------------- askables (only the user can say)",
    ]
    asked: dict[str, list[tuple[str, list[str], str]]] = {}
    for t in [w for w in writes if _destructive(w)]:
        resolved = specs[id(t)]
        keys = [a for a in resolved if a.endswith("_id")]
        vmap = dict(zip(resolved, clause_vars(list(resolved))))  # the guard's variables (below)
        for a, spec in resolved.items():
            if a.endswith("_id") or a.endswith("_ids") or a in returned or _kind(spec) != "scalar":
                continue
            # a name of its own: "Amount" and "amount" (or a read tool's fact) made one predicate, and an
            # answer the user gave for one argument, or an upstream's result, held for another
            typ = "number" if spec.get("type") in ("integer", "number") else "text"
            if isinstance(spec.get("enum"), list):
                by_text: dict[str, str] = {}  # the first choice of each text offered: 1 and 1.0 are one
                for v in spec["enum"]:
                    c = choice_text(v)
                    if c is not None:
                        by_text.setdefault(offered(v), c)
                choices = list(dict.fromkeys(by_text.values()))
                unchosen = len(spec["enum"]) - len(choices)
                if unchosen:  # a call with one of them is denied (the user cannot choose it)
                    lines.append(f"% TODO: {t['name']}'s {a}: {unchosen} of its values can be no choice (an "
                                 "object, a list, a text spelling true, false, null, \"i_dont_know\" or "
                                 "another choice, a number JSON has not): write their rules")
                if not choices:
                    continue
                typ = "choice([" + ", ".join(choices) + "])"
            pred = preds(pred_name(t["name"], a))
            meter.spend(1 + len(keys))  # each askable names every key again
            ins = [vmap[k] for k in keys]
            head = f"{pred}({', '.join(ins + [vmap[a]])})"
            about = " of ~w" if ins else ""
            decl = (
                f'askable({head}, "What is the {a.replace("_", " ")}{about}?", {typ},\n'
                f"        [from([user])]).   % TODO: the question in the user's words; the choices' labels"
            )
            lines.append(decl)
            draft.askables.append(decl)
            draft.facts.append((pred, len(ins) + 1))
            asked.setdefault(t["name"], []).append((pred, ins, vmap[a]))
    lines += [
        "",
        "% ---------------------------------------------------------------- guards (TODO: the rules)",
    ]
    for t in writes:
        full = f"{server}__{t['name']}"
        if not _destructive(t):
            lines.append(
                f"% TODO: {t['name']} changes no data (not destructive): without a guard the configured "
                "default "
                "decides it; write guard(" + quote(full) + ", [], true) to let it through"
            )
            continue
        props = list((t.get("inputSchema") or {}).get("properties", {}))
        vmap = dict(zip(props, clause_vars(props)))
        meter.spend(1 + len(props))
        pattern = "[" + ", ".join(f"{atom_text(a)} = {vmap[a]}" for a in props) + "]"
        found = mentions(t["name"], paragraphs, lowered, meter)
        lines.append(
            f"% {t['name']} ({'destructive' if _destructive(t) else 'changes no data'}): "
            f"{len(found)} paragraph(s) of {quoted_words(document, 100)} mention it"
        )
        for p in found:
            heading, said = quoted_words(p.heading_text, 60), quoted_words(p.text, 110)
            lines.append(f"%   line {p.line_start} under {heading}: {said}")
        body = ["      ( % TODO: the requirements, each require(Goal, Reason, policy_ref(...)), e.g.:"]
        for p in found[:3]:
            if p.line_start not in anchored:
                anchored[p.line_start] = anchor_of(p, docs)
        anchors = [a for a in (anchored[p.line_start] for p in found[:3]) if a]
        for a in anchors:
            body.append(
                f"        % require(Goal, 'TODO: the rule in words', policy_ref({doc}, {quote(a)})),"
            )
        # the user's answer in a variable of its own: an argument named amount_given is AmountGiven already,
        # and the askable then asked of the caller's argument, the requirement compared two of them
        given = Fresh(vmap.values())
        for pred, ins, arg in asked.get(t["name"], []):
            cite = anchors[0] if anchors else ""
            ref = f", policy_ref({doc}, {quote(cite)})" if cite else ""
            answer = given(arg + "Given")
            body.append(
                f"        {pred}({', '.join(ins + [answer])}), "
                f"require({arg} == {answer}, 'TODO: the value must be the one the user gave'{ref}),"
            )
        items = ", ".join(f"{quote(a.replace('_', ' ').capitalize())} = {vmap[a]}" for a in props)
        verb = t["name"].replace("_", " ").capitalize()
        body.append(
            f"        confirmed_items({quote(verb + '?')}, [{items}]) )).   % TODO: show values a person "
            "reads"
        )
        decl = f"guard({quote(full)}, {pattern},\n" + "\n".join(body)
        lines.append(decl)
        draft.guards.append(decl)
    lines += [
        "",
        "% ---------------------------------------------------------------- effects (facts a write makes "
        "stale)",
    ]
    by_key: dict[str, list[str]] = {}
    for t in reads:
        ins = list((t.get("inputSchema") or {}).get("properties", {}))
        if len(ins) == 1:
            for b in bound[id(t)]:
                by_key.setdefault(ins[0], []).append(b.head)
    for t in writes:
        props = list((t.get("inputSchema") or {}).get("properties", {}))
        keys = [a for a in props if a in by_key]
        for k in keys[:1]:
            meter.spend(len(by_key[k]))  # every read keyed alike, again for each write: reads x writes
            stale = []
            for head in by_key[k]:
                pred, rest = head.split("(", 1)
                n = rest.count(",") + 1
                stale.append(f"invalidate({pred}({', '.join([var_name(k)] + ['_'] * (n - 1))}))")
            lines.append(
                f"effect({quote(server + '__' + t['name'])}, [{atom_text(k)} = {var_name(k)}],\n       "
                f"[{', '.join(stale)}])."
            )
    draft.text = "\n".join(lines) + "\n"
    return draft
