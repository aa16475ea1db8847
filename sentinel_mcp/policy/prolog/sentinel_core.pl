/*  Sentinel's Prolog core: loads rulebases into their own module, proves guards and queries with a
    meta-interpreter that turns missing base facts into needs, extracts facts from tool results.

    This file holds the module, its declarations and the per-query state; each included file is one part
    (the meta-interpreter is proof_interpreter.pl, deciding a call call_decisions.pl, ...).

    Only the engine thread calls this. Per-query state lives in cur/2, need/1, unmet/1 and is reset
    at the start of every query. Python exchanges data with it as JSON atoms.
*/
:- module(sentinel_core, []).
:- use_module(library(http/json)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(time)).
:- use_module(library(solution_sequences)).
:- use_module(library(occurs)).
:- use_module(library(sha)).  % the digest of a confirmation's text (shown_digest/2)
:- use_module(library(aggregate)).  % loaded here, never autoloaded during a decision (sn_decide_capped/10)
:- use_module(library(ordsets)).  % the facts a principal may not read (sn_dump_session/5)
:- use_module(sentinel_rt, []).

%  The arithmetic of this file's clauses (and of the files it includes) compiled in line: a fact's expiry
%  compared, a room counted, ~80 calls of a decision, each a call and an inference otherwise (the same
%  evaluation). The flag holds for this file only (SWI-Prolog restores it after the load), so what is asserted
%  at run time - a rulebase's compiled rules, its strict twins of the arithmetic builtins (strict_arithmetic.pl)
%  - is compiled as before.
:- set_prolog_flag(optimise, true).

:- dynamic cur/2, need/1, unmet/1.
:- discontiguous post_load_problem/2.

:- include(rulebase_loading).
:- include(rulebase_includes).
:- include(declaration_checks).
:- include(rulebase_info).
:- include(confirmation_flows).
:- include(clause_shapes).
:- include(syntax_words).
:- include(reserved_heads).
:- include(own_heads).
:- include(effect_lookups).
:- include(unreachable_rules).
:- include(own_texts).
:- include(own_text_goals).
:- include(secret_flows).
:- include(secret_flow_kinds).
:- include(secret_bindings).
:- include(secret_named_arguments).
:- include(secret_choices).
:- include(guard_reads).
:- include(fact_terms).
:- include(readable_terms).
:- include(goal_check).
:- include(rule_compiler).
:- include(rule_index).
:- include(json_text).
:- include(native_guards).
:- include(strict_arithmetic).
:- include(plain_formats).
:- include(bounded_terms).
:- include(unconditional_guards).
:- include(tautological_guards).
:- include(unknown_values).
:- include(probed_cases).
:- include(hoisted_reads).
:- include(negated_arguments).
:- include(absent_negations).
:- include(unsure_blind_reads).
:- include(unknown_outcomes).
:- include(unfinished_walks).
:- include(check_budget).
:- include(proof_interpreter).
:- include(guard_steps).
:- include(bound_contexts).
:- include(base_facts).
:- include(answered_askables).
:- include(call_decisions).
:- include(decision_watch).
:- include(answer_json).
:- include(proof_json).
:- include(client_queries).


declaration(binding(_, _, _, _)).
declaration(guard(_, _, _)).
declaration(askable(_, _, _, _)).
declaration(context(_)).
declaration(context(_, _, _)).
declaration(seed(_)).
declaration(effect(_, _, _)).
declaration(option(_)).
declaration(read_only(_)).
declaration(symbolic_exempt(_, _)).
declaration(fact(_)).
declaration(policy_document(_, _)).
declaration(cites(_, _)).

decl_indicator(binding/4). decl_indicator(guard/3). decl_indicator(askable/4).
decl_indicator(context/1). decl_indicator(context/3). decl_indicator(seed/1).
decl_indicator(effect/3). decl_indicator(option/1). decl_indicator(read_only/1).
decl_indicator(symbolic_exempt/2). decl_indicator(fact/1).
decl_indicator(policy_document/2). decl_indicator(cites/2).

json_opts([true(true), false(false), null(null)]).

to_json_atom(Term, Atom) :- json_text(Term, Atom).  % json_text.pl
from_json_atom(Atom, Term) :- json_opts(O), atom_json_term(Atom, Term, O).

%  from_call_json(+Atom, -Term): a call's arguments, as a guard reads them: from_json_atom/2's terms (texts are
%  atoms, true/false/null the atoms true/false/null), except that a text spelling a literal ("true", "false",
%  "null") is a string. Read as atoms, the text "false" and the boolean false were one term: a guard as strict
%  as F == false let the text through to an upstream that reads any text as truthy. Keys stay atoms.
from_call_json(Atom, Term) :-
    atom_json_term(Atom, T0, [true(@(true)), false(@(false)), null(@(null))]),
    literal_texts(null, T0, Term).

%  from_result_json(+Atom, -Term): a tool's result, as a binding reads it: texts are atoms, true and false the
%  atoms true and false, null @(null) (a field that is null yields no fact), and a text spelling a literal a
%  string, as in a call's arguments: an upstream's text "true" is never the boolean to a guard (A == true).
%  prolog_call_native.c builds the same term from the parsed value. Keys stay atoms.
from_result_json(Atom, Term) :-
    atom_json_term(Atom, T0, [true(@(true)), false(@(false)), null(@(null))]),
    literal_texts(@(null), T0, Term).

%  literal_texts(+Null, +T0, -T): T0 read with every literal as @(L), as T: true and false the atoms, null the
%  term Null, and a text spelling a literal a string.
literal_texts(N, @(L), V) :- !, ( L == null -> V = N ; V = L ).
literal_texts(N, json(Ps0), json(Ps)) :- !, literal_pairs(Ps0, N, Ps).
literal_texts(N, [H0|T0], [H|T]) :- !, literal_texts(N, H0, H), literal_texts(N, T0, T).
literal_texts(_, A, S) :- literal_text(A), !, atom_string(A, S).
literal_texts(_, X, X).

literal_pairs([], _, []).
literal_pairs([K=V0|Ps0], N, [K=V|Ps]) :- literal_texts(N, V0, V), literal_pairs(Ps0, N, Ps).

literal_text(true).
literal_text(false).
literal_text(null).

% ---------------------------------------------------------------- per-query state

%  The query's rulebase, session, time and call (c(Tool, Digest, Version), or none outside a decision) are one
%  global term, read where a fact is looked up (some 40 times a decision); the rest of the state (cur/2,
%  need/1, unmet/1) is what a pass that is not a plain proof records, and is emptied only when a pass left
%  some: asserting and retracting the same facts on every decision cost more than the look-ups.
begin_query(RB, Session, Now) :- begin_query(RB, Session, Now, none).

begin_query(RB, Session, Now, Call) :-
    new_shown_room,  % bounded_terms.pl
    ( need(_) -> retractall(need(_)) ; true ),
    ( unmet(_) -> retractall(unmet(_)) ; true ),
    (   findall(K-V, cur(K, V), [req_depth-0, unmet_seq-0])
    ->  true
    ;   retractall(cur(_, _)), assertz(cur(req_depth, 0)), assertz(cur(unmet_seq, 0))
    ),
    ensure_session(Session),
    %  a proof starts outside any negation (negate/0); in a session that holds no unsure fact (most) the
    %  polarity is not followed at all (off): nothing it would decide is there. The query term holds it too
    %  (U), so that a look-up skips the unsure facts without a call when it is off. (Its mark, not the facts:
    %  fact_terms.pl's unsure_held_after/2.)
    ( Session:'$unsure_held' -> U = false ; U = off ),
    nb_linkval(sn_negated, U),  % an atom: nothing to copy (call_decisions.pl's sn_decide_capped/10)
    nb_setval(sn_query, q(RB, Session, Now, Call, U)).

query_rb(RB) :- nb_getval(sn_query, q(RB, _, _, _, _)).
query_now(Now) :- nb_getval(sn_query, q(_, _, Now, _, _)).

%  (The last session made ready is remembered per thread, with the count of sessions dropped then: the look-up
%  of a module's predicate was ~3 % of a decision. A drop destroys the session's module, on any thread, so the
%  count, a flag all threads share, tells a thread its memory may name a module that is gone. Two global
%  variables of atomic values, not one pair: a pair is a term nb_setval/2 copies, and keeping it so tripled
%  the decision, 125 -> 360 us, guard_ab.py.)
ensure_session(S) :-
    get_flag(sn_sessions_dropped, Dropped),  % a read: flag/3 runs under a mutex
    (   nb_current(sn_ready_session, S0), S0 == S, nb_current(sn_ready_drops, D0), D0 == Dropped
    ->  true
    ;   ( current_predicate(S:'$fact'/5) -> true ; new_session_module(S) ),
        nb_setval(sn_ready_session, S), nb_setval(sn_ready_drops, Dropped)
    ).  % fact_terms.pl

%  A session's module is temporary, so sn_drop_session/1 can destroy it: a module only emptied stayed behind,
%  about 1.2 KB each, one for every conversation the engine ever mirrored (a client that carries no session
%  back opens one a call). A module that already holds something (never one of Sentinel's) stays ordinary.
new_session_module(S) :-
    catch(set_module(S:class(temporary)), error(permission_error(_, _, _), _), true),
    dynamic(S:'$fact'/5), dynamic(S:'$fact_table'/2), dynamic(S:'$unsure_held'/0).

record_need(N) :- native_event, ( need(N0), N0 =@= N -> true ; term_fits(N), assertz(need(N)) ).  % bounded_terms.pl

%  Unmet conditions are kept as u(Depth, Seq, What): a requirement met deep inside another one's goal is
%  more specific than the one around it, and is listed first (then in the order they were found).
record_unmet(W) :- cur(req_depth, D), record_unmet(W, D).
record_unmet(W, D) :-
    native_event,
    (   unmet(u(_, _, W0)), W0 =@= W -> true
    ;   term_fits(W), retract(cur(unmet_seq, S)), S1 is S + 1, assertz(cur(unmet_seq, S1)), assertz(unmet(u(D, S1, W)))
    ).

%  After a requirement held, what its goal's failed alternatives noted is no longer true: forget it.
forget_unmet_after(S0) :- forall(( unmet(u(D, S, W)), S > S0 ), retract(unmet(u(D, S, W)))).

denied :- cur(denied, true).
mark_denied :- native_event, ( denied -> true ; assertz(cur(denied, true)) ).

%  A stored fact first; an unsure one (fact_terms.pl) only after it, and its polarity asked only when there is
%  one: most sessions hold none, and asking on every look-up was ~2 inferences of ~40 look-ups a decision. In a
%  session without one (U off, begin_query/4) they are not looked up at all (~10 inferences a decision), and
%  the look-up is no disjunction: SWI-Prolog counts a call when it backtracks into a disjunction's second
%  branch, so a failing look-up cost one more even when that branch only found U off (10 a cancel decision).
%  (stored_fact/4's key, fact_terms.pl's fact_key/3, is made here in line: two calls fewer a look-up, ~12 a
%  decision.)
valid_fact(G, P) :-
    nb_getval(sn_query, q(_, S, Now, _, U)),
    (   compound(G) -> compound_name_arity(G, N, _), arg(1, G, K)
    ;   var(G) -> true
    ;   N = G, K = []
    ),
    (   U == off
    ->  S:'$fact'(N, K, G, Exp, P), Exp > Now
    ;   S:'$fact'(N, K, G, Exp, P), Exp > Now
    ;   S:'$fact'('$unsure', G, '$unsure'(G), Exp, P), Exp > Now, negated
    ).

%  valid_fact_of(+N, +G, -P): valid_fact/2 for G, a compound of predicate name N (its stored_fact/4 key known:
%  the compiled base goals, the fetch markers; about 40 look-ups an allowed call).
valid_fact_of(N, G, P) :-
    nb_getval(sn_query, q(_, S, Now, _, U)), arg(1, G, K),
    (   U == off
    ->  S:'$fact'(N, K, G, Exp, P), Exp > Now
    ;   S:'$fact'(N, K, G, Exp, P), Exp > Now
    ;   S:'$fact'('$unsure', G, '$unsure'(G), Exp, P), Exp > Now, negated
    ).

% natively callable (sentinel_rt re-exports them to rulebases)
%  (it reads an answer as stored, not as the askable asks it: a conjunct that reads one is never clean,
%  guard_steps.pl)
fact_provenance(G, P) :- bump_assume_seq, query_rb(RB), ensure_fetched(RB, G), valid_fact(G, P).
context_value(N, V) :- valid_fact('$context'(N, V), _).
call_tool_name(T) :- cur(call, T, _, _).
