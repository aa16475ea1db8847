/*  Sentinel's Prolog core: loads rulebases into their own module, proves guards and queries with a
    meta-interpreter that turns missing base facts into needs, extracts facts from tool results.

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

:- dynamic cur/2, need/1, unmet/1.
:- discontiguous post_load_problem/2.

:- include(rulebase_loading).
:- include(fact_terms).
:- include(readable_terms).
:- include(goal_check).
:- include(rule_compiler).
:- include(json_text).
:- include(native_guards).
:- include(strict_arithmetic).
:- include(bounded_terms).
:- include(unconditional_guards).
:- include(tautological_guards).
:- include(negated_arguments).


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

% ---------------------------------------------------------------- per-query state

%  The query's rulebase, session, time and call (c(Tool, Digest, Version), or none outside a decision) are one
%  global term, read where a fact is looked up (some 40 times a decision); the rest of the state (cur/2,
%  need/1, unmet/1) is what a pass that is not a plain proof records, and is emptied only when a pass left
%  some: asserting and retracting the same facts on every decision cost more than the look-ups.
begin_query(RB, Session, Now) :- begin_query(RB, Session, Now, none).

begin_query(RB, Session, Now, Call) :-
    nb_setval(sn_query, q(RB, Session, Now, Call)), new_shown_room,  % bounded_terms.pl
    nb_setval(sn_negated, false),  % a proof starts outside any negation (negate/0)
    ( need(_) -> retractall(need(_)) ; true ),
    ( unmet(_) -> retractall(unmet(_)) ; true ),
    (   findall(K-V, cur(K, V), [req_depth-0, unmet_seq-0])
    ->  true
    ;   retractall(cur(_, _)), assertz(cur(req_depth, 0)), assertz(cur(unmet_seq, 0))
    ),
    ensure_session(Session).

query_rb(RB) :- nb_getval(sn_query, q(RB, _, _, _)).
query_now(Now) :- nb_getval(sn_query, q(_, _, Now, _)).

%  (The last session made ready is remembered per thread, with the count of sessions dropped then: the look-up
%  of a module's predicate was ~3 % of a decision. A drop destroys the session's module, on any thread, so the
%  count, a flag all threads share, tells a thread its memory may name a module that is gone. Two global
%  variables of atomic values, not one pair: a pair is a term nb_setval/2 copies, and keeping it so tripled
%  the decision, 125 -> 360 us, guard_ab.py.)
ensure_session(S) :-
    flag(sn_sessions_dropped, Dropped, Dropped),
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
    dynamic(S:'$fact'/5).

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

valid_fact(G, P) :-
    nb_getval(sn_query, q(_, S, Now, _)),
    (   negated
    ->  ( stored_fact(S, G, Exp, P), Exp > Now ; unsure_fact(S, G, Now, P) )
    ;   stored_fact(S, G, Exp, P), Exp > Now
    ).

%  valid_fact_of(+N, +G, -P): valid_fact/2 for G, a compound of predicate name N (its stored_fact/4 key known:
%  the compiled base goals, the fetch markers; about 40 look-ups an allowed call).
valid_fact_of(N, G, P) :-
    nb_getval(sn_query, q(_, S, Now, _)), arg(1, G, K),
    (   negated
    ->  ( S:'$fact'(N, K, G, Exp, P), Exp > Now ; unsure_fact(S, G, Now, P) )
    ;   S:'$fact'(N, K, G, Exp, P), Exp > Now
    ).

% ---------------------------------------------------------------- the meta-interpreter

prove(V, _) :- var(V), !, throw(error(instantiation_error, prove/2)).
prove(true, true) :- !.
prove((A, B), and(TA, TB)) :- !, prove(A, TA), prove(B, TB).
prove((C -> T ; E), Tr) :- !, ( prove(C, TC) -> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((C *-> T ; E), Tr) :- !, ( prove(C, TC) *-> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((A ; B), T) :- !, ( prove(A, T) ; prove(B, T) ).
prove((C -> T), if(TC, TT)) :- !, ( prove(C, TC) -> prove(T, TT) ).
prove(\+ G, not(G)) :- !, \+ ( negate, prove(G, _) ).
prove(once(G), T) :- !, once(prove(G, T)).
prove(ignore(G), T) :- !, ( prove(G, T) -> true ; T = true ).
prove(require(G, Why), T) :- !, prove(require(G, Why, none), T).
prove(require(G, Why, Ref), Tree) :- !,
    aggregate_all(count, need(_), N0), cur(unmet_seq, S0), cur(req_depth, D),
    (   D =:= 0
    ->  % at the top of a guard, a requirement that cannot be evaluated because an earlier one failed or a fact
        % is still unknown (an unbound value reaching arithmetic) is skipped: the pass cannot prove anyway
        catch(with_depth(D, G, T, Ok), E, skipped_on(E, Ok))
    ;   with_depth(D, G, T, Ok)
    ),
    (   Ok == true
    ->  forget_unmet_after(S0), Tree = required(Why, Ref, T)
    ;   Ok == skipped
    ->  Tree = unmet(Why, Ref)
    ;   % a requirement that failed only for want of a fact or an answer is pending, not unmet;
        % after an assumption it may fail only because of the assumed (unknown) values: tentative
        aggregate_all(count, need(_), N1),
        (   N1 =\= N0 -> taint_vars(G)  % what it would have established is unknown, as an assumed fact's values
        ;   cur(assumed, true) -> record_unmet(tentative(cited(Why, Ref)))
        ;   record_unmet(cited(Why, Ref)), ( D =:= 0 -> mark_denied ; true )
        ),
        % at the top of a guard, go on: the other requirements are checked too, so a denial lists every
        % rule the call breaks (a denied pass, or one with something pending, never proves the call)
        D =:= 0, Tree = unmet(Why, Ref)
    ).
prove(confirmed(F, A), T) :- !, prove(confirmed(F, A, [user]), T).
prove(confirmed(F, A, From), confirmed(Msg, P)) :- !,
    % the message reads as plain text: JSON values and lists rendered, pending answers named as such
    copy_term(A, A0), readable_args(A0, A1),
    confirmation_text(F, A1, Msg),
    ( cur(call, Tool, Digest, Version) -> true ; throw(error(domain_error(guard_context, confirmed/3), _)) ),
    % a yes counts only for the very text it was given to: what the user is shown is what will happen
    shown_digest(Msg, Shown),
    (   valid_fact('$confirmed'(Tool, Digest, Version, Shown, Ans), P), memberchk(P, From)
    ->  ( Ans == yes -> true ; record_unmet(declined(Msg)), fail )
    ;   ( cur(assumed, true) ; denied )
    ->  % a confirmation is asked only once everything it shows is established and nothing is refused:
        % never together with the questions whose answers it would state
        assume(Msg), P = assumed
    ;   % a yes of this call to another text (what it shows changed since): asked again, saying so
        (   valid_fact('$confirmed'(Tool, Digest, Version, Other, yes), OP), memberchk(OP, From), Other \== Shown
        ->  Changed = @(true)
        ;   Changed = @(false)
        ),
        record_need(confirm(Msg, Shown, Changed, From)), assume(Msg), P = assumed
    ).
prove(confirmed_items(H, Items), T) :- !, prove(confirmed_items(H, Items, [user]), T).
prove(confirmed_items(H, Items, From), T) :- !,
    items_text(H, Items, Text), prove(confirmed('~w', [Text], From), T).
prove(fact_provenance(G, P), fact(G, P)) :- !, fact_provenance(G, P).
prove(context_value(N, V), context(N, V)) :- !, context_value(N, V).
prove(call_tool_name(T), call_tool(T)) :- !, cur(call, T, _, _).
prove(G, T) :- query_rb(RB), prove_goal(RB, G, T).

%  A goal that is no control construct: the rulebase is looked up once for all the kinds it may be.
prove_goal(RB, G, fact(G, P)) :- base(RB, G), !, base_solve(RB, G, P).
prove_goal(RB, G, native(G)) :- functor(G, N, A), undefined_fails(RB:'$has_cut'(N/A)), !, call(RB:G).
prove_goal(RB, G, T) :- compiled_rule(RB, G, T, Call), !, call(Call).  % rule_compiler.pl
prove_goal(RB, G, rule(G, T)) :- user_pred(RB, G), !, clause(RB:G, Body), prove(Body, T).
prove_goal(RB, G, decl(G)) :- functor(G, N, A), decl_indicator(N/A), !, call(RB:G).
prove_goal(RB, G, builtin(G)) :-
    (   runtime_allowed(RB, G)
    ->  call(RB:G)
    ;   functor(G, N, A), throw(error(permission_error(call, builtin, N/A), _))
    ).

%  undefined_fails(:G): G, failing if its predicate is not defined (a module loaded without sn_finish_load/1);
%  a catch of that error only, so that a limit reached in a proof is never caught on the way.
undefined_fails(G) :- catch(G, error(existence_error(procedure, _), _), fail).

cur(call, T, D, V) :- nb_getval(sn_query, q(_, _, _, c(T, D, V))).

%  shown_digest(+Msg, -Hex): SHA-256 of a confirmation's text (UTF-8), in hex: what a '$confirmed' fact names
%  (questions.py keys the question by it, answer_facts.py stores it). Every decision of a confirmed call digests
%  its text again, and library(sha)'s hex conversion runs in Prolog (~35 us a text): the digests of the last
%  few thousand texts (atoms, at most 2,048 characters) are kept, found by the text itself (a pure function).
:- dynamic shown_memo/2.
shown_digest(Msg, Hex) :- atom(Msg), shown_memo(Msg, Hex0), !, Hex = Hex0.
shown_digest(Msg, Hex) :-
    sha_hash(Msg, H, [algorithm(sha256), encoding(utf8)]), hash_atom(H, Hex),
    ( atom(Msg), atom_length(Msg, L), L =< 2048 -> keep_memo(sn_shown_memo, shown_memo(Msg, Hex)) ; true ).

%  keep_memo(+Flag, +Entry): assert Entry into its memo (a dynamic predicate of this module), emptied when it
%  has held 4,096 entries since the last time (Flag counts them): q_memo/3, shown_memo/2, segments_memo/2.
keep_memo(Flag, Entry) :-
    flag(Flag, N, N + 1),
    (   N >= 4096
    ->  functor(Entry, Name, Arity), functor(Any, Name, Arity), retractall(Any), flag(Flag, _, 1)
    ;   true
    ),
    assertz(Entry).

%  The text a confirmation shows: format/3 of its template, which for '~w' and one text (confirmed_items/3:
%  readable/2 gives atoms) is that text itself, the same atom without format/3 (a cost on every allow).
confirmation_text(F, A, Msg) :- F == '~w', A = [T], atom(T), !, Msg = T.
confirmation_text(F, A, Msg) :-  % a template checked at load; never run unchecked (goal_check.pl)
    (   safe_format(F) -> formatted_numbers(F, A), bounded_format(atom(Msg), F, A)
    ;   throw(error(domain_error(safe_text_template, F), _))
    ).

%  An error in a requirement after the pass was denied or assumed something skips it; not in a capped pass
%  (sn_decide_capped/10), where an error may be one the cap caused: that pass is decided again with the whole
%  limit. A limit reached is never skipped: SWI-Prolog raises it once, and a pass that caught it would go on
%  with no limit at all (a later looping requirement then never ended, and the engine with it).
skipped_on(E, Ok) :-
    (   \+ limit_signal(E), ( denied ; cur(assumed, true) )
    ->  ( nb_current(sn_capped, true) -> throw(sn_over_cap) ; Ok = skipped )
    ;   throw(E)
    ).

limit_signal(E) :- atom(E), memberchk(E, [inference_limit_exceeded, time_limit_exceeded, sn_over_cap, sn_native_abort]).

%  Prove G one requirement deeper (nesting tells how specific a broken rule is); Ok is true or false.
with_depth(D, G, T, Ok) :-
    D1 is D + 1, set_depth(D1),
    catch(( prove(G, T) -> Ok = true ; Ok = false ), E, ( set_depth(D), throw(E) )),
    set_depth(D).
set_depth(D) :- retractall(cur(req_depth, _)), assertz(cur(req_depth, D)).

user_pred(RB, G) :- predicate_property(RB:G, dynamic), \+ predicate_property(RB:G, imported_from(_)),
    functor(G, N, A), \+ decl_indicator(N/A).

base_native(G) :- query_rb(RB), base_solve(RB, G, _).

%  base_solve(+RB, ?G, -Prov): a valid stored fact, else record what would establish it and fail.
base_solve(RB, G, P) :-
    (   ensure_fetched(RB, G)
    ->  (   askable_of(RB, G, Q)
        ->  askable_solve(RB, G, Q, P)
        ;   valid_fact(G, P)
        )
    ;   assume(G), P = assumed
    ).

%  A fact that is being fetched (or asked) is assumed for the rest of this pass (its unknown arguments
%  left unbound), so one pass collects the needs of every later goal too and they are fetched together;
%  a pass that assumed anything never proves.
assume(G) :- native_event, ( cur(assumed, true) -> true ; assertz(cur(assumed, true)) ), taint_vars(G).

%  What an assumed fact leaves unknown must not become the subject of a question in the same pass: its
%  variables are marked, and a value one of them is later bound to (e.g. by enumerating stored facts) is
%  noted as tainted. A question about a tainted value waits for the next round, when the value is known.
taint_vars(G) :- term_variables(G, Vs), maplist(taint_var, Vs).
taint_var(V) :- ( get_attr(V, sentinel_core, assumed) -> true ; put_attr(V, sentinel_core, assumed) ).
attr_unify_hook(assumed, Other) :- ( var(Other) -> taint_var(Other) ; note_tainted(Other) ).
note_tainted(T) :- forall(( sub_term(A, T), atomic(A) ), ( cur(tainted, A) -> true ; assertz(cur(tainted, A)) )).
tainted(T) :- sub_term(A, T), atomic(A), cur(tainted, A), !.

%  If a binding covers G, its inputs are ground, and it was not fetched (or expired): record a need.
ensure_fetched(RB, G) :-
    (   current_predicate(RB:'$binding'/5)
    ->  functor(G, N, A), fetched(RB, N, A, G)
    ;   \+ ( bindings_of(RB, G, G1, T, Args1), G1 = G, ground(Args1),
             \+ ( fetched_marker(G, T, Args1, M), valid_fact(M, _) ),
             record_need(fetch(T, Args1, G)) )
    ).

%  fetched(+RB, +N, +A, +G): ensure_fetched/2 for G of predicate N/A, by the bindings index (rule_compiler.pl).
fetched(RB, N, A, G) :-
    \+ ( RB:'$binding'(N, A, G1, T, Args1), G1 = G, ground(Args1),
         \+ valid_fact_of('$fetched', '$fetched'(N, A, T, json(Args1)), _),
         record_need(fetch(T, Args1, G)) ).

fetched_marker(G, T, Args, '$fetched'(N, A, T, json(Args))) :- functor(G, N, A).

askable_of(RB, G, a(H, Q, Ty, O)) :- askables_of(RB, G, H, Q, Ty, O), subsumes_term(H, G), !.

askable_solve(RB, G, a(H, Q, Ty, O), P) :-
    askable_from(O, From),
    askable_inputs(G, Ty, G0),
    G0 =.. [N|Ins0], ( Ty == yes_no -> Ins = Ins0 ; append(Ins, [_], Ins0) ),
    (   valid_fact(G0, P0), memberchk(P0, [seed|From])
    ->  valid_fact(G, P), memberchk(P, [seed|From]), answer_is_a_choice(G, a(H, Q, Ty, O))
    ;   Ty == yes_no, valid_fact('$answered_no'(N, Ins), P0), memberchk(P0, From)
    ->  fail
    ;   valid_fact('$dont_know'(N, Ins), P0), memberchk(P0, From)
    ->  dont_know(G, a(H, Q, Ty, O), P0, P)
    ;   ground_inputs(G, Ty), \+ denied, \+ tainted(Ins)
    ->  ask_need(RB, G0, a(H, Q, Ty, O), From), assume(G), P = assumed
    ;   assume(G), P = assumed
    ).

ask_need(_, G0, a(H, Q, Ty, _), From) :-
    (   Ty = choice_of(_, _, _)
    ->  copy_term(H-Ty, H1-choice_of(V, L, Goal)), H1 = G0, choices_of(V, L, Goal, Choices),
        (   Choices == []
        ->  record_unmet(no_choices(G0, Q)), fail
        ;   record_need(ask(G0, Q, choices(Choices), From))
        )
    ;   record_need(ask(G0, Q, Ty, From))
    ).

%  The choices of a question about an entity: every Value (with its Label) its goal proves, fetched like any
%  other fact (tools before questions: the round is asked only once nothing is left to fetch). At most 50.
choices_of(V, L, Goal, Choices) :-
    findall(V-L, limit(50, ( prove(Goal, _), atomic(V), V \== i_dont_know )), Ps0),
    findall(json([value=V1, label=LT]), ( member(V1-L1, Ps0), readable(L1, LT) ), Cs0),
    list_to_set(Cs0, Choices).

%  A stored answer to a question about an entity must still be one of its choices (an agent's answer, or
%  one given before the facts changed): otherwise the condition is unmet, in words.
answer_is_a_choice(G, a(H, Q, Ty, _)) :-
    (   Ty = choice_of(_, _, _)
    ->  copy_term(H-Ty, H1-choice_of(V, _, Goal)), H1 = G,
        (   once(prove(Goal, _)) -> true
        ;   record_unmet(not_a_choice(G, V, Q), 50), fail
        )
    ;   true
    ).

%  "I don't know": what the rulebase says it means (unknown(as(Value))), or a refusal that names the next step.
dont_know(G, a(_, Q, Ty, O), P0, P) :-
    (   memberchk(unknown(as(V)), O)
    ->  ( Ty == yes_no -> V == yes ; G =.. As, last(As, V) ), P = P0
    ;   ( memberchk(unknown(Next), O), Next \= as(_) -> true ; Next = '' ),
        askable_inputs(G, Ty, G0), G0 =.. [_|As0], ( Ty == yes_no -> Ins = As0 ; append(Ins, [_], As0) ),
        question_text(Q, Ins, QT), record_unmet(dont_know(QT, Next), 100), fail
    ).

%  A question with its inputs (a question may use fewer of them than it has: the first ones).
question_text(Q, Ins, Msg) :-
    text_to_atom(Q, QA), readable_args(Ins, T),
    (   safe_format(QA), append(Used, _, T), catch(( formatted_numbers(QA, Used), bounded_format(atom(Msg), QA, Used) ),
                                                   error(_, _), fail) -> true
    ;   Msg = QA
    ).

%  G0: G with the answer argument free (the whole G for yes_no).
askable_inputs(G, yes_no, G) :- !.
askable_inputs(G, _, G0) :- G =.. [N|As], append(Ins, [_], As), append(Ins, [_], As0), G0 =.. [N|As0].
ground_inputs(G, yes_no) :- !, ground(G).
ground_inputs(G, _) :- G =.. [_|As], append(Ins, [_], As), ground(Ins).
inputs_of_askable(_, H, Ins) :- H =.. [_|As], ( As == [] -> Ins = [] ; append(Ins, [_], As) ).

% ---------------------------------------------------------------- deciding a call

%  sn_decide(+RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Limit, -Out)
%
%  Within a wall-clock budget as well as the inference limit: one inference may be long work (msort/2 of a
%  list of a million, in a loop), and a decision on the caller's thread holds its event loop. A pass there
%  (sn_decide_capped/10) has decision_seconds/1's short budget, over which it errs and is decided again on
%  the engine's thread; there the budget is that of a guard (PolicySettings.guard_timeout's default): the
%  caller has given up by then, and every other decision waits for the engine.
sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    decision_seconds(S),
    catch(call_with_time_limit(S, decide_within(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out0)),
          time_limit_exceeded, timed_out_answer(Out0)),
    Out = Out0.

decision_seconds(S) :-
    guard_seconds(G),
    ( nb_current(sn_capped, true) -> S is min(0.5, G) ; S = G ).

%  The guard's budget (sentinel.policy.guard_timeout, set once by the gateway at start; 10 s until then).
:- dynamic sn_guard_seconds/1.
guard_seconds(S) :- ( sn_guard_seconds(S0) -> S = S0 ; S = 10.0 ).

%  sn_set_guard_seconds(+S): a positive number of seconds, or the call fails (nothing changed).
sn_set_guard_seconds(S) :-
    number(S), S > 0, S =< 3600,
    S1 is float(S),
    retractall(sn_guard_seconds(_)),
    assertz(sn_guard_seconds(S1)).

timed_out_answer('{"status":"error","message":"the guard ran longer than its time budget","needs":[],"unmet":[],"tentative":[],"violations":[]}').

decide_within(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    begin_query(RB, Session, Now, c(Tool, Digest, Version)),
    call_args(ArgsJson, CallArgs),
    (   native_decision(RB, Tool, CallArgs, Limit, Out0)  % native_guards.pl
    ->  true
    ;   full_pass(RB, Tool, CallArgs, Limit, Out0)
    ),
    answer_text(Out0, Out).

%  call_args(+Text, -Pairs): a call's arguments, from their JSON (an object), or from the form engine.py gives a
%  flat object of texts, integers, booleans and nulls: 0x1E, then each key and its tagged value (s Text,
%  i Integer, t, f, n) after a 0x1F, in the object's order (the characters 0x1E and 0x1F never in a key or value).
%  The same terms the JSON reader gives (texts are atoms), split in C instead of parsed.
call_args(Text, Pairs) :-
    (   sub_atom(Text, 0, 1, _, '\x1e\')
    ->  atomic_list_concat(['\x1e\'|Parts], '\x1f\', Text), tagged_pairs(Parts, Pairs)
    ;   from_json_atom(Text, json(Pairs))
    ).

tagged_pairs([], []).
tagged_pairs([K, TV|Parts], [K=V|Pairs]) :-
    sub_atom(TV, 0, 1, _, Tag), sub_atom(TV, 1, _, 0, VT), tagged_value(Tag, VT, V),
    tagged_pairs(Parts, Pairs).

tagged_value(s, T, T).
tagged_value(i, T, V) :- atom_number(T, V), integer(V).
tagged_value(t, '', true).
tagged_value(f, '', false).
tagged_value(n, '', null).

%  The answer's JSON; an allow whose proof is kept (nothing needed or unmet) is one fixed text around its id
%  (joined, not formatted: format/3 costs ~5 us here, the join ~0.5 us; Id is an integer, so no quoting).
answer_text(json([status=proved, tree=json([kept=Id])]), Out) :- integer(Id), \+ need(_), \+ unmet(_), !,
    atomic_list_concat(['{"status":"proved","tree":{"kept":', Id,
                        '},"needs":[],"unmet":[],"tentative":[],"violations":[]}'], Out).
answer_text(Out0, Out) :- add_needs(Out0, Out1), to_json_atom(Out1, Out).

%  The pass that decides every outcome (the meta-interpreter, with the compiled rules unless interpreted).
full_pass(RB, Tool, CallArgs, Limit, Out0) :-
    tool_guards(RB, Tool, Guards),
    (   Guards == []
    ->  Out0 = json([status=no_guard])
    ;   catch(limited(prove_guards(Guards, CallArgs, Trees), Limit, R), E, true),
        (   nb_current(sn_capped, true), ( R == inference_limit_exceeded ; E == sn_over_cap )
        ->  Out0 = json([status=over_limit])  % sn_decide_capped/10: decided again with the whole limit
        ;   query_outcome(E, R, Trees, Status, TreeJ),
            ( Status == error -> Out0 = json([status=Status, message=TreeJ]) ; Out0 = json([status=Status, tree=TreeJ]) ),
            ( Status == error -> ( shown_text(E, ET), print_message(warning, format('guard error: ~w', [ET])) ) ; true )
        )
    ).

%  sn_decide_capped(+Compact, +RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Cap, -Out): sn_decide/9
%  (sn_decide_compact/9 when Compact is true) under Cap inferences, fewer than the rulebase's limit, for a
%  caller that runs it on its own thread (engine.py): a pass that needs more answers {"status": "over_limit"}
%  instead of deciding, and is decided again on the engine's thread with the whole limit; so does a pass
%  that erred (the caller asks again), as an error may be one the cap caused.
sn_decide_capped(Compact, RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out) :-
    setup_call_cleanup(nb_setval(sn_capped, true),
                       (   Compact == true
                       ->  sn_decide_compact(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out)
                       ;   sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out)
                       ),
                       nb_setval(sn_capped, false)).

%  sn_decide_inline(+RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Cap, -Out): sn_decide_capped/10
%  with Compact true (a decision on the caller's thread, engine.py), its two flags set at once.
sn_decide_inline(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out) :-
    setup_call_cleanup(( nb_setval(sn_capped, true), nb_setval(sn_compact, true) ),
                       sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out),
                       ( nb_setval(sn_compact, false), nb_setval(sn_capped, false) )).

%  sn_decide_compact(...): sn_decide/9 (the fast path), but a proved call's tree is kept, not written: its
%  JSON is {"kept": Id}, and sn_render_kept_proof/2 writes it when it is asked for.
sn_decide_compact(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    setup_call_cleanup(nb_setval(sn_compact, true),
                       sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out),
                       nb_setval(sn_compact, false)).

%  sn_render_kept_proof(+Id, -Out): {"tree": ...} of a kept proof, which is then forgotten (an error if it
%  is not kept: already rendered, or dropped).
sn_render_kept_proof(Id, Out) :-
    kept_proof(Id, T, Ref), erase(Ref), new_shown_room, tree_json(T, TJ), to_json_atom(json([tree=TJ]), Out).

%  sn_kept_proof_term(+Id, -Out): the term json([tree=TJ]) of a kept proof, which stays kept: the caller reads
%  it as Python's value in C (prolog_call_native.c's call_json; no JSON text written and parsed, ~40 % of a
%  rendering), then forgets it with sn_forget_kept_proof/2, or, when it is not the C reader's common case
%  (a tree deeper than it reads), renders it with sn_render_kept_proof/2.
sn_kept_proof_term(Id, json([tree=TJ])) :-
    kept_proof(Id, T, _), new_shown_room, tree_json(T, TJ).

%  sn_forget_kept_proof(+Id, -Out): a kept proof read is forgotten, Out = ok (an error if it is not kept).
sn_forget_kept_proof(Id, ok) :-
    kept_proof(Id, _, Ref), erase(Ref).

kept_proof(Id, T, Ref) :-
    (   integer(Id), Key is Id mod 1024, recorded(Key, kept(Id, T), Ref)
    ->  true
    ;   throw(error(existence_error(kept_proof, Id), _))
    ).

%  tool_guards(+RB, +Tool, -Guards): the guards of Tool in clause order. Without a wildcard guard in the rulebase
%  (noted when it is loaded), the first-argument index finds them; otherwise every guard is matched in turn.
tool_guards(RB, Tool, Guards) :-
    (   catch(RB:'$guard_wildcards'(false), _, fail)
    ->  findall(g(Pat, Goal), RB:guard(Tool, Pat, Goal), Guards)
    ;   findall(g(Pat, Goal), ( RB:guard(T, Pat, Goal), tool_matches(T, Tool) ), Guards)
    ).

%  note_guard_wildcards(+RB): whether a guard of RB names its tools by a prefix ('server__*').
note_guard_wildcards(RB) :-
    dynamic(RB:'$guard_wildcards'/1),
    retractall(RB:'$guard_wildcards'(_)),
    (   decl(RB, guard(T, _, _)), atom(T), sub_atom(T, _, 1, 0, '*') -> W = true ; W = false ),
    assertz(RB:'$guard_wildcards'(W)).

tool_matches(T, T) :- !.
tool_matches(P, Tool) :- atom(P), sub_atom(P, B, 1, 0, '*'), sub_atom(P, 0, B, _, Prefix), sub_atom(Tool, 0, B, _, Prefix).

prove_guards([], _, []).
prove_guards([g(Pat, Goal)|Gs], CallArgs, [T|Ts]) :-
    match_args(Pat, CallArgs),
    once(prove(Goal, T)),
    prove_guards(Gs, CallArgs, Ts).

match_args([], _).
match_args([P|Ps], CallArgs) :-
    (   P = args(All) -> All = CallArgs
    ;   P = (Name = V) ->
        (   memberchk(Name = V0, CallArgs)
        ->  ( V = V0 -> true ; format(atom(W), 'argument ~w does not match ~q', [Name, V]), record_unmet(W), fail )
        ;   format(atom(W), 'missing argument ~w', [Name]), record_unmet(W), fail
        )
    ;   format(atom(W), 'bad guard argument pattern ~q', [P]), record_unmet(W), fail
    ),
    match_args(Ps, CallArgs).

% a pass that found a broken requirement fails, whatever later goals did with the values it left unknown
query_outcome(_, _, _, failed, @(null)) :- denied, !.
% a pass that assumed facts may err or run away on the unknown values: it only says "fetch first"
query_outcome(E, R, _, incomplete, @(null)) :- ( nonvar(E) ; R == inference_limit_exceeded ), cur(assumed, true), !.
query_outcome(E, _, _, error, Msg) :- nonvar(E), !, client_failure(E, json(L)), memberchk(message = Msg, L).
query_outcome(_, R, _, inference_limit, @(null)) :- R == inference_limit_exceeded, !.
query_outcome(_, R, Trees, St, TJ) :- R \== failed, !,
    (   cur(assumed, true) -> St = incomplete, tree_json(and_all(Trees), TJ)
    ;   St = proved, proved_tree(and_all(Trees), TJ)
    ).

query_outcome(_, _, _, failed, @(null)).

%  A proof's tree as JSON terms or, in sn_decide_compact/9, kept as it is (json([kept=Id])) until
%  sn_render_kept_proof/2 writes it: an allow does not pay for its proof's text, a third of a decision.
proved_tree(T, TJ) :-
    (   nb_current(sn_compact, true), catch(keep_proof(T, Id), _, fail) -> TJ = json([kept=Id])
    ;   tree_json(T, TJ)
    ).

%  At most 1024 proofs are kept (the oldest is dropped: its reader is told it is gone), each recorded under its
%  id modulo 1024, an integer (no atom made per decision, which atom garbage collection would then sweep; and
%  not the id itself: a key stays in the record table once used, ~160 bytes, one per decision for good): a
%  copy, without compiling a clause of the tree and decompiling it again; in the recorded database, which
%  every engine shares (a proof kept by a decision on a caller's thread, engine.py's try_now, is written by
%  whichever engine reads it), and which garbage collection does not walk. Nothing else in the engine records
%  under an integer.
keep_proof(T, Id) :-
    flag(sn_kept_proof, Id0, Id0 + 1), Id is Id0 + 1, Key is Id mod 1024,
    forall(recorded(Key, _, R), erase(R)),  % the proof kept 1024 decisions ago, if nobody read it
    recordz(Key, kept(Id, T)).

%  sn_drop_kept_proofs: forget every kept proof (unread ones: a benchmark's).
sn_drop_kept_proofs :-
    forall(( current_key(K), integer(K) ), forall(recorded(K, _, R), erase(R))).

limited(G, Limit, R) :- ( call_with_inference_limit(G, Limit, R) -> true ; R = failed ).

add_needs(json(L), json(L2)) :-  % nothing needed nor unmet (every allow): no findall over empty tables
    \+ need(_), \+ unmet(_), !,
    append(L, [needs=[], unmet=[], tentative=[], violations=[]], L2).
add_needs(json(L), json(L2)) :-
    findall(N, ( need(N0), need_json(N0, N) ), Needs),
    findall(k(D1, S)-U0, ( unmet(u(D, S, U0)), U0 \= tentative(_), D1 is -D ), Us0), keysort(Us0, Us),
    findall(U, ( member(_-U0, Us), unmet_text(U0, U) ), Unmet),
    findall(V, ( member(_-U0, Us), violation_json(U0, V) ), Violations),
    findall(U, ( unmet(tentative(U0)), unmet_text(U0, U) ), Tentative),
    append(L, [needs=Needs, unmet=Unmet, tentative=Tentative, violations=Violations], L2).

unmet_text(declined(M), U) :- !, format(atom(U), 'declined: ~w', [M]).
unmet_text(cited(W, _), U) :- !, unmet_text(W, U).
unmet_text(dont_know(Q, Next), U) :- !,
    ( Next == '' -> format(atom(U), 'You answered "I don\'t know" to: ~w', [Q]) ; text_to_atom(Next, U) ).
unmet_text(no_choices(_, Q), U) :- !, format(atom(U), 'There is nothing to choose from for the question: ~w', [Q]).
unmet_text(not_a_choice(_, V, Q), U) :- !,
    readable(V, VT), format(atom(U), '~w is not one of the choices for: ~w', [VT, Q]).
unmet_text(W, U) :- ( atom(W) -> U = W ; string(W) -> atom_string(U, W) ; format(atom(U), '~q', [W]) ).

%  A broken rule with its citation (the policy document and the anchor of the sentence it formalises).
violation_json(U0, json([reason=R, kind=K, policy=PJ])) :-
    unmet_text(U0, R),
    (   U0 = cited(_, policy_ref(Doc, Anchor)) -> text_to_atom(Anchor, AA), PJ = json([document=Doc, anchor=AA])
    ;   PJ = @(null)
    ),
    unmet_kind(U0, K).
unmet_kind(cited(_, _), rule) :- !.
unmet_kind(dont_know(_, _), dont_know) :- !.
unmet_kind(declined(_), declined) :- !.
unmet_kind(_, condition).

need_json(fetch(T, Args, G), json([kind=fetch, tool=T, arguments=json(JArgs), fact=GA])) :-
    maplist([N=V, N=J]>>pl_json(V, J), Args, JArgs), format(atom(GA), '~q', [G]).
need_json(ask(G0, Q, Ty, From), json([kind=ask, fact=GA, predicate=N, inputs=JIns, question=Msg, type=TyA, from=From])) :-
    \+ \+ ( numbervars(G0, 0, _), format(atom(GA0), '~W', [G0, [quoted(true), numbervars(true)]]), nb_setval(sn_tmp, GA0) ),
    nb_getval(sn_tmp, GA), functor(G0, N, _),
    G0 =.. [_|As], ( Ty == yes_no -> Ins = As ; append(Ins, [_], As) ),
    maplist(pl_json, Ins, JIns), text_to_atom(Q, QA),
    question_text(QA, Ins, Msg), type_json(Ty, TyA).
need_json(confirm(Msg, Shown, Changed, From),
          json([kind=confirm, question=Msg, shown=Shown, changed=Changed, from=From])).

type_json(choice(L), json([choice=Vs, labels=Ls])) :- !, maplist(choice_value_label, L, Vs, Ls).
type_json(choices(Cs), json([choice_of=Cs])) :- !.
type_json(choice_of(_, _, _), json([choice_of=[]])) :- !.
type_json(T, T).

choice_value_label(V - L, V, LA) :- !, readable(L, LA).
choice_value_label(V, V, @(null)).

% ---------------------------------------------------------------- JSON of terms

pl_json(V, null) :- var(V), !.
pl_json(json(KVs), json(J)) :- is_list(KVs), !, maplist(pl_json_pair, KVs, J).
pl_json(L, J) :- is_list(L), !, maplist(pl_json, L, J).
pl_json(true, @(true)) :- !.
pl_json(false, @(false)) :- !.
pl_json(null, @(null)) :- !.
%  a float JSON has no number for (1.0Inf, 1.5NaN: a client's goal may bind one) as its text, never written as
%  a number Python's JSON reader refuses
pl_json(F, A) :- float(F), \+ ( F =:= F, abs(F) =\= inf ), !, q_atom(F, A).
pl_json(A, A) :- atomic(A), \+ string(A), !.
pl_json(S, A) :- string(S), !, atom_string(A, S).
pl_json(T, A) :- q_atom(T, A).

pl_json_pair(K = V, K = J) :- pl_json(V, J).  % not a lambda: yall copies a lambda's term on every call

%  q_atom(+Term, -Atom): Term as writeq/1 writes it (as format's ~q: the same text), through a memory stream,
%  which costs SWI-Prolog about a third less than format/3 does; a proof tree writes some 30 goals, and the same
%  ones from call to call (the user, the reservation's facts): the texts of the last few thousand ground,
%  acyclic terms written short are kept, found by the term's hash (writeq's text is a function of the term:
%  no rulebase can change the operator table or the flags). A variable's name differs from write to write, so
%  a term with one is always written.
:- dynamic q_memo/3.
q_atom(T, A) :-
    (   ground(T), acyclic_term(T), term_hash(T, H)
    ->  (   q_memo(H, T0, A0), T0 == T
        ->  A = A0
        ;   shown_text(T, A),
            (   atom_length(A, L), L =< 512, \+ too_large_shown(A)  % (its term is no small one to keep)
            ->  keep_memo(sn_q_memo, q_memo(H, T, A))
            ;   true
            )
        )
    ;   shown_text(T, A)
    ).

tree_json(true, json([goal=true])) :- !.
tree_json(and_all(Ts), json([all=Js])) :- !, maplist(tree_json, Ts, Js).
tree_json(and(A, B), json([all=Js])) :- !, flatten_and(and(A, B), Ts), maplist(tree_json, Ts, Js).
tree_json(if(C, T), json([if=CJ, then=TJ])) :- !, tree_json(C, CJ), tree_json(T, TJ).
tree_json(not(G), json([not=GA])) :- !, q_atom(G, GA).
tree_json(required(W, Ref, T), json([require=WA, policy=PJ, by=TJ])) :- !, unmet_text(W, WA), ref_json(Ref, PJ),
    tree_json(T, TJ).
tree_json(unmet(W, Ref), json([unmet=WA, policy=PJ])) :- !, unmet_text(W, WA), ref_json(Ref, PJ).
tree_json(confirmed(M, P), json([confirmed=M, provenance=P])) :- !.
tree_json(fact(G, P), json([fact=GA, provenance=P])) :- !, q_atom(G, GA).
tree_json(context(N, V), json([context=N, value=VA])) :- !, q_atom(V, VA).
tree_json(call_tool(T), json([tool=T])) :- !.
tree_json(rule(G, T), json([goal=GA, by=TJ])) :- !, q_atom(G, GA), tree_json(T, TJ).
tree_json(builtin(G), json([builtin=GA])) :- !, q_atom(G, GA).
tree_json(native(G), json([goal=GA, by=native])) :- !, q_atom(G, GA).
tree_json(T, json([other=TA])) :- q_atom(T, TA).

ref_json(policy_ref(Doc, Anchor), json([document=Doc, anchor=AA])) :- !, text_to_atom(Anchor, AA).
ref_json(_, @(null)).

flatten_and(and(A, B), L) :- !, flatten_and(A, LA), flatten_and(B, LB), append(LA, LB, L).
flatten_and(true, []) :- !.
flatten_and(T, [T]).

% ---------------------------------------------------------------- symbolic queries

%  sn_client_query(+RB, +Session, +Now, +GoalText, +Max, +Limit, +Seconds, -Out): a goal typed by a client
%  (run only in the query worker process, never in the engine that decides calls). The text is read with
%  the standard operators, contexts are resolved, the whole goal is checked against the allow list, and it
%  runs under an inference limit and a wall-clock limit (the worker's stack limit bounds its memory).
sn_client_query(RB, Session, Now, GoalText, Max, Limit, Seconds, Out) :-
    begin_query(RB, Session, Now),
    catch(client_query_outcome(RB, GoalText, Max, Limit, Seconds, Out0), E, client_failure(E, Out0)),
    catch(( add_needs(Out0, Out1), to_json_atom(Out1, Out) ), E2,
          ( client_failure(E2, Out2), to_json_atom(Out2, Out) )).

client_query_outcome(RB, GoalText, Max, Limit, Seconds, Out) :-
    catch(term_string(Goal0, GoalText, [variable_names(Vs), syntax_errors(error)]), E, true),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M), Out = json([status=error, message=M])
    ;   resolve_contexts(RB, Goal0, Goal),
        catch(check_goal(client, RB, Goal), refused(Why), true),
        (   nonvar(Why)
        ->  format(atom(M), 'refused: ~w', [Why]), Out = json([status=refused, message=M])
        ;   call_with_time_limit(Seconds,
                call_with_inference_limit(findall(Vs-T, limit(Max, prove(Goal, T)), Sols), Limit, R)),
            (   R == inference_limit_exceeded
            ->  Out = json([status=inference_limit, message='the query exceeded its inference budget'])
            ;   maplist(solution_json, Sols, SJ), shown_text(Goal, GA),
                ( Sols == [] -> St = failed ; cur(assumed, true) -> St = incomplete ; St = proved ),
                Out = json([status=St, goal=GA, solutions=SJ])
            )
        )
    ).

%  What a client is told when its goal hit a limit or failed: no internal goals, only what happened.
client_failure(time_limit_exceeded, json([status=time_limit, message='the query ran longer than its time budget'])) :- !.
client_failure(error(resource_error(_), _), json([status=memory_limit, message='the query needed more memory than its budget'])) :- !.
client_failure(error(permission_error(call, builtin, N/A), _), json([status=refused, message=M])) :- !,
    format(atom(M), 'refused: ~w/~w is not allowed in a query', [N, A]).
client_failure(error(Formal, _), json([status=error, message=M])) :- !, client_error_words(Formal, M).
client_failure(_, json([status=error, message='the query could not be evaluated'])).

client_error_words(instantiation_error, 'the query is not instantiated enough (an argument is unbound where a value is needed)') :- !.
client_error_words(type_error(T, _), M) :- !, format(atom(M), 'a value has the wrong type (expected ~w)', [T]).
client_error_words(domain_error(D, _), M) :- !, format(atom(M), 'a value is outside its domain (expected ~w)', [D]).
client_error_words(evaluation_error(E), M) :- !, format(atom(M), 'arithmetic error: ~w', [E]).
client_error_words(existence_error(procedure, N/A), M) :- !, format(atom(M), 'unknown predicate ~w/~w', [N, A]).
client_error_words(representation_error(W), M) :- !, format(atom(M), 'a value cannot be represented (~w)', [W]).
client_error_words(_, 'the query could not be evaluated').

%  sn_dump_session(+Session, -Text): the session's facts as "Fact<TAB>Expires<TAB>Prov" lines (the format
%  of sn_assert_lines), written canonically so that they read back identically elsewhere.
sn_dump_session(Session, Text) :- sn_dump_session(Session, [], [], Text).

%  sn_dump_session(+Session, +HiddenPreds, +HiddenTools, -Text): without the facts of the predicates in
%  HiddenPreds and the fetch markers of the tools in HiddenTools (personal data a principal may not see).
sn_dump_session(Session, HiddenPreds, HiddenTools, Text) :-
    sn_dump_session(Session, HiddenPreds, HiddenTools, [], Text).

%  sn_dump_session(+Session, +HiddenPreds, +HiddenTools, +HiddenFacts, -Text): and without the facts whose text
%  (as writeq writes it: a fact's text in the store) is in HiddenFacts (reads the principal may not make).
sn_dump_session(Session, HiddenPreds, HiddenTools, HiddenFacts, Text) :-
    ensure_session(Session),
    sort(HiddenFacts, Unread),
    with_output_to(string(Text),
        forall(( stored_fact(Session, F, E, P), \+ hidden_fact(F, HiddenPreds, HiddenTools),
                 \+ unread_fact(F, Unread) ),
               format('~k\t~w\t~w~n', [F, E, P]))).

hidden_fact('$fetched'(_, _, T, _), _, HiddenTools) :- !, memberchk(T, HiddenTools).
hidden_fact(F, HiddenPreds, _) :- functor(F, N, _), memberchk(N, HiddenPreds).

unread_fact(_, []) :- !, fail.
unread_fact(F, Unread) :- format(atom(A), '~q', [F]), ord_memberchk(A, Unread).


solution_json(Vs-T, json([bindings=json(B), proof=TJ])) :-
    findall(N=J, ( member(N=V, Vs), pl_json(V, J) ), B), tree_json(T, TJ).

%  Replace every atom that names a bound context by the context's value.
resolve_contexts(RB, T, T2) :- var(T), !, T2 = T, RB == RB.
resolve_contexts(RB, A, V) :- atom(A), is_context(RB, A), valid_fact('$context'(A, V0), _), !, V = V0.
resolve_contexts(_, A, A) :- atomic(A), !.
resolve_contexts(RB, T, T2) :- T =.. [F|As], maplist(resolve_contexts(RB), As, As2), T2 =.. [F|As2].

is_context(RB, A) :- ( RB:context(A) ; RB:context(A, _, _) ), !.

%  sn_context_check(+RB, +Session, +Now, +Name, +ValueJson, +Limit, -Out): may Name be bound to Value? (the
%  context's checks are rules: within an engine pass's budget, as sn_decide/9)
sn_context_check(RB, Session, Now, Name, ValueJson, Limit, Out) :-
    guard_seconds(S),
    catch(call_with_time_limit(S, context_check(RB, Session, Now, Name, ValueJson, Limit, Out0)),
          time_limit_exceeded, timed_out_answer(Out0)),
    Out = Out0.

context_check(RB, Session, Now, Name, ValueJson, Limit, Out) :-
    begin_query(RB, Session, Now),
    from_json_atom(ValueJson, V),
    (   \+ is_context(RB, Name)
    ->  Out0 = json([status=error, message='no such context'])
    ;   findall(C, RB:context(Name, V, C), Checks),
        catch(limited(prove_all(Checks, Trees), Limit, R), E, true),
        query_outcome(E, R, Trees, St, TJ), Out0 = json([status=St, tree=TJ])
    ),
    add_needs(Out0, Out1), to_json_atom(Out1, Out).

prove_all([], []).
prove_all([G|Gs], [T|Ts]) :- once(prove(G, T)), prove_all(Gs, Ts).

% natively callable (sentinel_rt re-exports them to rulebases)
fact_provenance(G, P) :- query_rb(RB), ensure_fetched(RB, G), valid_fact(G, P).
context_value(N, V) :- valid_fact('$context'(N, V), _).
call_tool_name(T) :- cur(call, T, _, _).
