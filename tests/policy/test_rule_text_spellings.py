"""Rule text that would call out of the sandbox, in spellings test_rulebase_allow_list's bodies do not use:
DCG rules (a nonterminal named like a builtin, call//N, {}//1, pushback, \\+//1), a context's check, a
choice_of's goal, an effect's actions, a binding's tool and extraction, a require/confirmed text, hook-named
heads (portray, message//1, attr_unify_hook, exception/3, term_expansion), {}/1 and '$VAR' heads, a neck
inside a body, arithmetic over a goal, and include/document paths out of the rulebase's directory. Each file
is refused at load with an error naming it, and nothing in it runs (the marker file never appears), both as
a rulebase of the configuration and as a console client's candidate (``UntrustedRules``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.untrusted_rules import UntrustedRules

pytestmark = pytest.mark.timeout(120)


def refused_texts(marker: Path) -> dict[str, str]:
    t = f"shell('touch {marker}')"
    return {
        "dcg_nonterminal_named_shell": "r --> shell.\nguard('t__w', [args(A)], (ok(A), r(A, _))).\n",
        "dcg_call": f"r --> call(shell, 'touch {marker}').\n",
        "dcg_braces": f"r --> {{{t}}}.\n",
        "dcg_pushback": f"r, [x] --> {{{t}}}.\n",
        "dcg_negation": "r --> \\+ shell.\n",
        "dcg_literal_then_shell": "r --> \"abc\", shell.\n",
        "context_check": f"context(c).\ncontext(c, X, (ok(X), {t})).\n",
        "choice_of_goal":
            f"askable(pick(X), \"pick\", choice_of(X, L, (ok(X), L = X, {t})), [from([user])]).\n",
        "effect_establishes_a_clause": f"effect('t__w', [a = A], [establish((ok(A) :- {t}))]).\n",
        "effect_invalidates_a_goal": f"effect('t__w', [a = _], [invalidate({t})]).\n",
        "effect_unknown_action": f"effect('t__w', [a = _], [when({t})]).\n",
        "binding_extraction_not_a_list": f"binding(ok2(X), tool('t__r', [x = X]), '/a', [where({t})]).\n",
        "binding_tool_a_variable": "binding(ok2(X), tool(X, []), extract([X = '/a']), []).\n",
        "askable_template_calls": "askable(q(_), \"~@\", yes_no, [from([user])]).\n",
        "askable_template_counted_call": "askable(q(_), '~1@', yes_no, [from([user])]).\n",
        "confirmed_template_calls": "guard('t__w', [args(A)], (ok(A), confirmed('~@', [x]))).\n",
        "guard_condition_from_arguments": "guard('t__w', [args(json([g=G]))], (ok(1), G)).\n",
        "guard_condition_is_the_arguments": "guard('t__w', [args(G)], G).\n",
        "setof_caret_variable": "r(L, G) :- setof(X, X^G, L).\n",
        "bagof_caret_module": f"r(L) :- bagof(X, X^user:{t}, L).\n",
        "ignore_module_variable": "r(M, G) :- ignore(M:G).\n",
        "aggregate_spec_variable": "r(S) :- aggregate_all(S, ok(_), _).\n",
        "cut_then_call": "r(G) :- !, call(G).\n",
        "soft_cut_variable": "r(G) :- ( true *-> G ; true ).\n",
        "format_codes_template": "r(A) :- format(atom(A), [0'~, 0'@], [x]).\n",
        "format_colon_directive": "r(A) :- format(atom(A), '~:d', [1]).\n",
        "format_repeat_count": "r(A) :- format(atom(A), '~*d', [999999999, 1]).\n",
        "head_term_expansion": f"term_expansion(_, _) :- {t}.\n",
        "head_goal_expansion": f"goal_expansion(_, _) :- {t}.\n",
        "head_portray": f"portray(_) :- {t}.\n",
        "head_message_dcg": f"message(_) --> {{{t}}}.\n",
        "head_attr_unify_hook": f"attr_unify_hook(_, _) :- {t}.\n",
        "head_exception": f"exception(_, _, _) :- {t}.\n",
        "head_curly": f"{{x}} :- {t}.\n",
        "head_var_functor": "'$VAR'(1) :- true.\n",
        "head_list": "[a] :- true.\n",
        "neck_inside_body": f"r :- (a :- {t}).\n",
        "arithmetic_over_a_goal": f"r(X) :- X is eval({t}).\n",
        "arithmetic_atom": "r(X) :- X is shell.\n",
        "quasi_quotation": f"r(X) :- X = {{|shell||touch {marker}|}}.\n",
        "include_absolute": ":- include_rules('/etc/passwd').\n",
        "include_up": ":- include_rules('../../../etc/passwd').\n",
        "document_absolute": "policy_document(d, '/etc/passwd').\n",
    }


@pytest.mark.parametrize("candidate", [False, True], ids=["configured", "candidate"])
@pytest.mark.parametrize("name", sorted(refused_texts(Path("m"))))
async def test_rule_text_spelling_is_refused_and_runs_nothing(
    tmp_path: Path, name: str, candidate: bool
) -> None:
    marker = tmp_path / "pwned"
    f = tmp_path / f"{name}.pl"
    f.write_text("fact(ok/1).\n" + refused_texts(marker)[name])
    untrusted = UntrustedRules(frozenset(), 2_000_000) if candidate else None
    problems = await check_files(shared_engine(), [f], untrusted=untrusted)
    errors = [p for p in problems if p.severity == "error"]
    assert errors, [p.message for p in problems]
    assert all(p.file == str(f) for p in errors)
    assert not marker.exists()
