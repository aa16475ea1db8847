"""Checking rulebase files: what the loader finds (syntax with file and line, undefined predicates,
malformed declarations, askables without a question) plus, given a catalog, the tools they name:
bindings to tools that are not read-only, guards or effects for tools no upstream has, and guards that let a
destructive tool through on nothing (unconditional_guards.pl). Without a catalog too: guards whose decision
rests on a negation over the caller's text, a deny list another spelling gets past (negated_arguments.pl), and
guards that negate a fact read absent_on_error, which holds on any upstream error (absent_negations.pl), and
guards that read an established fact where an unknown outcome is not seen (unsure_blind_reads.pl).

And the words: citations that name no declared policy document or no sentence of it, requirements without a
citation (in a file that declares a policy document), confirmations that leave an argument of their call
unshown or (given the catalog's schemas) show a choice token or a JSON value as it is; ``coverage`` reports
the share of each declared document's paragraphs that some rule cites."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentinel_mcp.core.deployment_caps import cap
from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes
from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES
from sentinel_mcp.policy.catalog_tool import CatalogTool
from sentinel_mcp.policy.engine import GuardWalk, PrologEngine
from sentinel_mcp.policy.prolog_text import quote_atom
from sentinel_mcp.policy.policy_documents import PolicyDocuments
from sentinel_mcp.policy.rulebase_characters import hidden_character_problems
from sentinel_mcp.policy.untrusted_rules import UntrustedRules
from sentinel_mcp.policy.rulebase import Problem, Rulebase, RulebaseError, load_rulebase
from sentinel_mcp.policy.rulebase_includes import included_files


def _matches(pattern: str, names: list[str]) -> bool:
    if pattern.endswith("*"):
        return any(fnmatch.fnmatchcase(n, pattern) for n in names)
    return pattern in names


def unreadable_files(files: list[Path]) -> tuple[list[Problem], list[Path]]:
    """Problems for paths that are no readable file, and the files that can be checked."""
    problems, ok = [], []
    for f in files:
        if f.is_dir():
            why = "is a directory, not a rulebase file"
        elif not f.exists():
            why = "file not found"
        elif not f.is_file():  # a FIFO or a device: reading it would block, or never end
            why = "is not a regular file"
        else:
            try:
                with f.open("rb") as readable:  # a byte shows it can be read (never the whole: any size)
                    readable.read(1)
                ok.append(f)
                continue
            except OSError as e:
                why = f"cannot be read ({e.strerror or e})"
        problems.append(Problem(severity="error", file=str(f), line=0, message=why))
    return problems, ok


def problem_line(p: Problem) -> str:
    """``file:line: kind: message`` on one line (a multi-line message is folded)."""
    return f"{p.file}:{p.line}: {p.severity}: {' '.join(p.message.split())}"


async def check_paths(
    engine: PrologEngine, files: list[Path], catalog: Sequence[CatalogTool] | None = None,
    untrusted: UntrustedRules | None = None,
) -> list[Problem]:
    """check_files for paths given by a user: missing or unreadable ones are problems of their own, and
    the readable ones are still checked (together, as the gateway loads them), their text too for characters
    that make it read otherwise than it loads (rulebase_characters)."""
    problems, ok = unreadable_files(files)
    if ok:
        problems += await check_files(engine, ok, catalog, untrusted)
    # what an editor shows otherwise than Prolog reads it, in an included file too: told whether they load
    for f in included_files(ok):
        try:
            data = read_regular_bytes(f, MAX_FILE_BYTES)
        except (OSError, TooLarge):
            continue  # gone or grown since it was checked, or past the bound: the load's own problem says so
        problems += hidden_character_problems(str(f), data.decode("utf-8", errors="replace"))
    return sorted(problems, key=lambda p: (p.file, p.line))


async def check_files(
    engine: PrologEngine, files: list[Path], catalog: Sequence[CatalogTool] | None = None,
    untrusted: UntrustedRules | None = None,
) -> list[Problem]:
    """All problems (errors and warnings) of a set of files, in file/line order. ``catalog``: the tools named
    by identity (``<server>__<tool>``, what guards bind to; ``catalog_by_identity``). ``untrusted``: the
    files are a client's candidate, held to the bounds of the rulebase in force (the documents it may
    cite)."""
    try:
        rb = await load_rulebase(engine, files, own_documents=untrusted is None)
    except RulebaseError as e:
        return sorted(e.problems, key=lambda p: (p.file, p.line))
    problems = list(rb.warnings)
    try:
        # one budget for every walk of every guard (check_budget.pl): no rulebase, a draft's neither, holds
        # the engine longer; a walk it cuts says so (unfinished), never silence
        budget = f"{quote_atom(rb.module)}, {CHECK_INFERENCES}, {CHECK_SECONDS}"
        await engine.goal(f"sentinel_core:sn_check_budget({budget})")
        problems += await _word_problems(engine, rb, catalog, untrusted)
        problems += await _negated_arguments(engine, rb)
        problems += await _absent_negations(engine, rb)
        problems += await _unsure_blind_reads(engine, rb)
        problems += await _tautological(engine, rb)
        problems += await _unreached(engine, rb)
        if catalog is not None:
            tools = {t.name: t for t in catalog}
            names = list(tools)
            declared_ro = set(rb.info.read_only)
            for site in await engine.tool_sites(rb.module):
                tool = site["tool"]
                where: dict[str, Any] = dict(file=site["file"], line=site["line"], tool=tool)
                if site["kind"] == "binding":
                    t = tools.get(tool)
                    if t is None:
                        problems.append(
                            Problem(
                                severity="error", message=f"binding to {tool}, which no upstream has",
                                code="binding_unknown_tool", **where
                            )
                        )
                    elif not ((t.annotations and t.annotations.read_only_hint) or tool in declared_ro):
                        problems.append(
                            Problem(
                                severity="error",
                                message=f"binding to {tool}, which is not read-only "
                                "(no readOnlyHint annotation and no read_only/1 declaration)",
                                code="binding_to_write",
                                **where,
                            )
                        )
                    elif tool in declared_ro and t.annotations and t.annotations.destructive_hint:
                        problems.append(
                            Problem(
                                severity="warning",
                                message=f"{tool} is declared read_only but its upstream marks it destructive",
                                code="read_only_destructive",
                                **where,
                            )
                        )
                elif site["kind"] == "read_only":
                    problems += _read_only_problems(tools.get(tool), rb, where)
                elif not _matches(tool, names):
                    problems.append(
                        Problem(
                            severity="error",
                            message=f"{site['kind']} for {tool}, which no upstream has",
                            code="unknown_tool",
                            **where,
                        )
                    )
            problems += await _unconditional(engine, rb, catalog)
    finally:
        await engine.unload(rb.module)
    return sorted(problems, key=lambda p: (p.file, p.line))


READ_ONLY_UNASKED = "is declared read_only"


def _read_only_problems(tool: CatalogTool | None, rb: Rulebase, where: dict[str, Any]) -> list[Problem]:
    """A read_only/1 of a tool no guard governs lets every call of it through, unasked (guard.py): warned when
    it is the declaration alone that does, the upstream not marking the tool read-only (a tool of no upstream
    here, Sentinel's own among them, is not this catalog's to tell)."""
    ann = tool.annotations if tool is not None else None
    if tool is None or (ann and ann.read_only_hint) or rb.info.guards_tool(tool.name):
        return []
    marked = "marks it destructive" if ann and ann.destructive_hint else "does not mark it read-only"
    message = (
        f"{tool.name} {READ_ONLY_UNASKED} and no guard governs it, so every call of it is allowed with no "
        f"question, but its upstream {marked}: declare only tools that change nothing, or guard it"
    )
    return [Problem(severity="warning", message=message, code="read_only_unasked", **where)]


def _destructive(tool: CatalogTool) -> bool:
    """As MCP's defaults read: a tool not marked read-only is destructive unless marked otherwise."""
    ann = tool.annotations
    return not (ann and ann.read_only_hint) and not (ann and ann.destructive_hint is False)


async def _unconditional(engine: PrologEngine, rb: Rulebase, catalog: Sequence[CatalogTool]) -> list[Problem]:
    """A warning for each guard that lets a destructive catalog tool through on nothing: every guard matching
    the tool holds with no fact, answer or confirmation (guards add up: one that asks is enough) and none
    cites the policy sentence that says so. It turns off the confirmation the fail-safe default would ask.
    Where a guard's walk could not finish and none that finished asks, that is said (unfinished_walks.pl)."""
    walk = await engine.guard_walk("sn_unconditional_guards", rb.module)
    out = []
    for tool in (t for t in catalog if _destructive(t)):
        meeting = [g for g in walk.found if _matches(str(g["tool"]), [tool.name])]
        unfinished = [
            {**g, "tool": tool.name} for g in walk.unfinished if _matches(str(g["tool"]), [tool.name])
        ]
        if not all(g["nothing"] for g in meeting):
            continue  # guards add up: one that asks is enough
        if unfinished:
            out += _unfinished_warnings(
                GuardWalk(found=[], unfinished=unfinished),
                "it lets the tool through on nothing (no fact, answer or confirmation)",
            )
        elif meeting:
            g = meeting[0]
            out.append(
                Problem(
                    severity="warning",
                    file=g["file"],
                    line=g["line"],
                    tool=tool.name,
                    code="unconditional_guard",
                    message=f"this guard lets {tool.name} through on nothing (no fact, answer or "
                    "confirmation; the caller's arguments alone meet it), though the tool changes data and "
                    "the default would ask the user: require what the policy requires, or cite the sentence "
                    "that allows it (require(..., Reason, policy_ref(Document, Anchor)))",
                )
            )
    return out


# the budget every walk of one check shares (check_budget.pl): a shipped rulebase spends a small part of it; a
# deployment whose rulebases are larger raises it (SENTINEL_CAP_CHECK_INFERENCES); its time bound, whole
# seconds, is SENTINEL_CAP_CHECK_SECONDS (a test that waits a check out lowers it)
CHECK_INFERENCES = cap("CHECK_INFERENCES", 10_000_000)
CHECK_SECONDS = cap("CHECK_SECONDS", 10)

HOLDS_FOR_EVERY_CALL = "holds for every call"
UNFINISHED = "could not finish checking"
TOO_LARGE = "too large to analyse"
VACUOUS_TESTS = "cover every value it reads"
# the reasons unfinished_walks.pl gives (a word of a fixed list: never the text an error carried)
_ERROR_KINDS = frozenset({
    "type_error", "domain_error", "instantiation_error", "uninstantiation_error", "existence_error",
    "permission_error", "representation_error", "evaluation_error", "syntax_error",
})


# a draft is refused for what these walks find (draft_check.REFUSING_CODES): one that could not finish refuses
# it too, told by this code (fail closed: its silence would offer the draft as checked)
UNCHECKED_GUARD = "unchecked_guard"
UNCHECKED_DRAFT = "a draft is not offered unchecked"


def _unfinished_warnings(walk: GuardWalk, question: str, *, refusing: bool = False) -> list[Problem]:
    """A warning for each guard a walk could not finish (out of its budget, or stopped by an error or a goal
    it could not read): its silence would read as "checked, and found fine". Not a finding about the guard:
    what the walk would have told is not known. ``question``: what the walk tells, as "whether ...";
    ``refusing``: what it finds refuses a draft, and so does its not finishing (code ``unchecked_guard``)."""
    out = []
    for row in walk.unfinished:
        why = row.get("unfinished")
        if why == "budget":
            where = "within the check's budget"
            hint = ("a goal this costly to walk (rules that call many rules, deeply) is hard to read for a "
                    "person too")
        elif why == "too_large":
            where = f"(a case analysis in it is {TOO_LARGE} within its budget: not analysed)"
            hint = "split the rule or the list of values it tests into smaller ones, or read it yourself"
        else:
            kind = why if why in _ERROR_KINDS else "an error" if why == "error" else None
            where = (
                f"(its walk stopped on {kind})" if kind
                else "(its walk stopped at a goal it could not read)" if why == "failed"
                else "(its walk stopped on an exception)"
            )
            hint = "read it yourself, or write it in plainer steps"
        message = f"{UNFINISHED} this guard of {row['tool']} {where}: whether {question} is not known; {hint}"
        if refusing:
            message += f" ({UNCHECKED_DRAFT})"
        out.append(_guard_warning(row, message, UNCHECKED_GUARD if refusing else "unfinished_walk"))
    return out


async def _tautological(engine: PrologEngine, rb: Rulebase) -> list[Problem]:
    """A warning for each guard that reads as a condition but holds whatever the facts, answers, contexts and
    arguments are (``\\+ fail``, ``(X = X)``, ``(blocked(x) ; true)``, ``U == U`` of an argument): it lets
    every call through while it looks like it tests something. ``true`` as the whole goal says that openly,
    and is not told. A guard whose walk could not finish is told too: its silence would read as "tests
    something"."""
    walk = await engine.guard_walk("sn_tautological_guards", rb.module)
    out = []
    for g in walk.found:
        if g.get("kind") == "vacuous":
            out.append(_guard_warning(g, (
                f"this guard of {g['tool']} tests a value it reads (a fact, an answer, a context) with tests "
                f"that {VACUOUS_TESTS}, split across clauses or reads of the same fact or not: it holds "
                "wherever the value is there, whatever it is; test what the policy requires of the value, "
                "or read it without the tests if only its presence matters"
            ), "vacuous_case_analysis"))
            continue
        message = (
            f"this guard of {g['tool']} {HOLDS_FOR_EVERY_CALL}: its goal is proved whatever the facts, "
            "answers, contexts and arguments are, so it tests nothing; require what the policy requires, "
            "or write the goal as true if the tool is meant to be open (and cite the sentence that says "
            "so: require(true, Reason, policy_ref(Document, Anchor)))"
        )
        out.append(_guard_warning(g, message, "tautological_guard"))
    return out + _unfinished_warnings(
        walk, "its goal is proved whatever the call is (and so tests nothing)", refusing=True
    )


UNREACHED = "no guard, context/3 or askable reaches it"
UNDEFINED_PUBLIC = "declared public but"


async def _unreached(engine: PrologEngine, rb: Rulebase) -> list[Problem]:
    """A warning for each predicate the rulebase defines that no guard, context/3 or askable reaches (nor a
    ``:- public`` declaration, for one symbolic queries call): its clauses decide nothing, and a guard meant
    to call it calls another name. And for each ``:- public`` of a predicate it does not define: queries of
    it find nothing (a typo of the name or the arity). The walk is on the check's budget: one it cuts is said
    at the rulebase's first file, never an empty list that reads as "every predicate is reached"."""
    out = []
    answer = await engine.unreached_rules(rb.module)
    for row in answer["unreached"]:
        pi = row["predicate"]
        message = (
            f"{pi} is defined here but {UNREACHED}: its clauses decide nothing (is a guard meant to call it "
            f"calling another name?); call it, remove it, or declare :- public {pi}. if symbolic queries are "
            "to call it"
        )
        out.append(Problem(severity="warning", file=row["file"], line=row["line"], message=message,
                           code="unreached_predicate"))
    for row in answer["undefined_public"]:
        pi = row["predicate"]
        message = (
            f"{pi} is {UNDEFINED_PUBLIC} the rulebase defines no such predicate (no rule, fact or "
            "declaration of that name and arity): a query of it finds nothing; define it, or correct or "
            "remove the declaration"
        )
        out.append(Problem(severity="warning", file=row["file"], line=row["line"], message=message,
                           code="undefined_public"))
    why = answer["unfinished"]
    if why:
        where = "within the check's budget" if why == "budget" else "(its walk stopped on an error)"
        message = (
            f"{UNFINISHED} which predicates no guard, context/3 or askable reaches {where}: a predicate "
            "that decides nothing, or a :- public of an undefined one, may be here untold"
        )
        out.append(Problem(severity="warning", file=rb.files[0] if rb.files else "", line=0, message=message,
                           code="unfinished_walk"))
    return out


def _guard_warning(row: dict[str, Any], message: str, code: str) -> Problem:
    """A warning at the guard a Prolog walk's row names (its file, line and tool)."""
    return Problem(severity="warning", message=message, file=row["file"], line=row["line"], tool=row["tool"],
                   code=code)


async def _negated_arguments(engine: PrologEngine, rb: Rulebase) -> list[Problem]:
    """A warning for each argument of a guard that a negation tests (``\\+ frozen_account(A)``, ``\\+
    member(A, Blocked)``, ``A \\== admin``): the client spells the same value another way the upstream reads
    as equal and the negation holds. A few per guard (negated_arguments.pl), and one for a guard whose walk
    could not finish (it cannot be called free of such a test)."""
    walk = await engine.guard_walk("sn_negated_arguments", rb.module)
    out = []
    for n in walk.found:
        message = (
            f"this guard of {n['tool']} decides on a negation over the argument {n['argument']}: "
            f"{n['goal']} is a deny list, and the client can spell the same value another way the "
            "upstream reads as equal (case, padding, a Unicode form) so that the negation holds; "
            "require a positive fact about the argument instead (an allow list, or a status the "
            "policy reads: account_status(A, active)), or first require(...) a fact the policy fetches "
            "that pins the argument to the id the upstream writes (reservation_id_of(R, R))"
        )
        out.append(_guard_warning(n, message, "negated_argument"))
    return out + _unfinished_warnings(
        walk, "its decision rests on a negation over the caller's arguments (a deny list)"
    )


async def _absent_negations(engine: PrologEngine, rb: Rulebase) -> list[Problem]:
    """A warning for each fact read ``absent_on_error`` that a guard's proof negates (``\\+ user_by_email(E,
    _)``): the upstream's error reads as "nothing there", so the negation holds on any error it sends. The
    guard of a look-up a binding reads is not walked: there the negation chooses the next source."""
    walk = await engine.guard_walk("sn_absent_negations", rb.module)
    out = []
    for n in walk.found:
        message = (
            f"this guard of {n['tool']} negates {n['predicate']}, a fact read absent_on_error: "
            f"{n['goal']} holds on any error the upstream sends (its error reads as \"nothing there\"), "
            "so the permission is granted by a failing or hostile upstream; require a positive fact "
            "instead (a status the upstream writes), or let the absence lead only to another source or a "
            "denial"
        )
        out.append(_guard_warning(n, message, "absent_negation"))
    return out + _unfinished_warnings(walk, "the guard negates a fact read absent_on_error")


UNSURE_UNSEEN = "which an effect establishes"


async def _unsure_blind_reads(engine: PrologEngine, rb: Rulebase) -> list[Problem]:
    """A warning for each fact an effect establishes that a guard reads where an unsure one (a write whose
    outcome is unknown) is not seen: a "not yet" written there lets a second write through."""
    walk = await engine.guard_walk("sn_unsure_blind_reads", rb.module)
    out = []
    for n in walk.found:
        message = (
            f"this guard of {n['tool']} reads {n['predicate']}, {UNSURE_UNSEEN}, in "
            f"{n['where']}, where a write whose outcome is unknown is not seen; if this tests that the write "
            "has not happened yet, write it as \\+ G (or forall/2, findall(_, G, []), aggregate_all(count, "
            "G, 0)), where an unknown outcome counts as a possible one"
        )
        out.append(_guard_warning(n, message, "unsure_blind_read"))
    return out + _unfinished_warnings(
        walk, "it reads a fact an effect establishes where a write whose outcome is unknown is not seen",
        refusing=True,
    )


async def _word_problems(engine: PrologEngine, rb: Rulebase, catalog: Sequence[CatalogTool] | None,
                         untrusted: UntrustedRules | None = None) -> list[Problem]:
    """Citations, requirements without one, and confirmations that do not inform."""
    out: list[Problem] = []
    docs = PolicyDocuments.of_rulebase(rb, untrusted)
    declared_in = {d.name: d.file for d in rb.info.documents}
    for name, why in docs.problems:
        out.append(Problem(severity="error", file=declared_in.get(name, ""), line=0, message=why))
    cites = await engine.citations(rb.module)
    for c in cites["citations"]:
        where = dict(file=c["file"], line=c["line"])
        if c["document"] not in declared_in:
            out.append(
                Problem(
                    severity="error",
                    message=f"a citation names the policy document {c['document']!r}, "
                    "which no policy_document/2 declares",
                    code="undeclared_document",
                    **where,
                )
            )
        elif c["document"] in docs.paragraphs and docs.cite(c["document"], c["anchor"]) is None:
            out.append(
                Problem(
                    severity="error",
                    message=f"the anchor {c['anchor']!r} is in no sentence of "
                    f"{c['document']} ({docs.paths[c['document']]})",
                    code="anchor_not_found",
                    **where,
                )
            )
        elif c["document"] in docs.paragraphs and not docs.names_one_sentence(c["document"], c["anchor"]):
            out.append(
                Problem(
                    severity="warning",
                    message=f"the anchor {c['anchor']!r} names no one sentence of {c['document']}: it is not "
                    "whole words, or occurs more than once (a denial would quote the first sentence holding "
                    "it); quote more of the sentence, or name its section ('Section \u203a fragment')",
                    code="anchor_ambiguous",
                    **where,
                )
            )
    citing_files = set(declared_in.values())
    for u in cites["uncited"]:
        if u["file"] in citing_files:
            out.append(
                Problem(
                    severity="warning",
                    file=u["file"],
                    line=u["line"],
                    message=f"requirement without a citation: {u['reason']!r} (give it "
                    "policy_ref(Document, Anchor) as its third argument)",
                    code="uncited_requirement",
                )
            )
    tools = {t.name: t for t in catalog} if catalog is not None else {}
    for c in await engine.confirmations(rb.module):
        tool = tools.get(c["tool"])
        if catalog is not None and (
            tool is None or (tool.annotations and tool.annotations.destructive_hint is False)
        ):
            # only destructive tools' confirmations must inform (all of them when there is no catalog)
            continue
        where = dict(file=c["file"], line=c["line"], tool=c["tool"])
        if "unfinished" in c:  # its walk failed: said, never read as a confirmation that shows everything
            out.append(Problem(
                severity="warning", code="unfinished_walk", message=f"{UNFINISHED} the confirmation of "
                f"{c['tool']} (its walk stopped at a goal it could not read): whether it shows what each "
                "argument will do is not known; read it yourself, or write it in plainer steps", **where,
            ))
            continue
        unshown = [a for a in c["arguments"] if a not in c["shown"] and "all" not in c["shown"]]
        if unshown:
            out.append(
                Problem(
                    severity="warning",
                    message=f"the confirmation of {c['tool']} does not show what "
                    f"{', '.join(unshown)} will do (show each argument, or a value computed from it)",
                    code="confirmation_unshown",
                    **where,
                )
            )
        props = (tool.input_schema or {}).get("properties", {}) if tool is not None else {}
        props = props if isinstance(props, dict) else {}  # an upstream's schema: any JSON at all
        for a in c["raw"]:
            spec = props.get(a)
            spec = spec if isinstance(spec, dict) else {}
            kind = spec.get("type")
            if "enum" in spec or kind in ("array", "object") or "$ref" in spec or "anyOf" in spec:
                what = "a choice token" if "enum" in spec else "JSON data"
                out.append(
                    Problem(
                        severity="warning",
                        message=f"the confirmation of {c['tool']} shows {a} as it is "
                        f"({what}); show a text a person reads (a label, or a sentence computed from it)",
                        code="confirmation_raw",
                        **where,
                    )
                )
    return out


async def coverage(engine: PrologEngine, files: list[Path]) -> dict[str, dict]:
    """Per declared policy document: its paragraphs, how many some citation resolves to, which ones none does.
    """
    rb = await load_rulebase(engine, files)
    try:
        docs = PolicyDocuments.of_rulebase(rb)
        cites = await engine.citations(rb.module)
        report = docs.coverage(cites["citations"])
        for name, r in report.items():
            r["path"] = str(docs.paths[name])
            r["uncited_rules"] = len(
                [u for u in cites["uncited"] if u["file"] in {d.file for d in rb.info.documents}]
            )
        return report
    finally:
        await engine.unload(rb.module)
