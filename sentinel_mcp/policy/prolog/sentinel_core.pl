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
:- use_module(sentinel_rt, []).

:- dynamic cur/2, need/1, unmet/1.
:- discontiguous post_load_problem/2.

:- include(rulebase_loading).
:- include(fact_terms).
:- include(readable_terms).
:- include(goal_check).


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

decl_indicator(binding/4). decl_indicator(guard/3). decl_indicator(askable/4).
decl_indicator(context/1). decl_indicator(context/3). decl_indicator(seed/1).
decl_indicator(effect/3). decl_indicator(option/1). decl_indicator(read_only/1).
decl_indicator(symbolic_exempt/2). decl_indicator(fact/1).

json_opts([true(true), false(false), null(null)]).

to_json_atom(Term, Atom) :- atom_json_term(Atom, Term, [as(atom), width(0)]).
from_json_atom(Atom, Term) :- json_opts(O), atom_json_term(Atom, Term, O).

% ---------------------------------------------------------------- per-query state

begin_query(RB, Session, Now) :-
    retractall(cur(_, _)), retractall(need(_)), retractall(unmet(_)),
    assertz(cur(rb, RB)), assertz(cur(session, Session)), assertz(cur(now, Now)),
    ensure_session(Session).

ensure_session(S) :- ( current_predicate(S:'$fact'/3) -> true ; dynamic(S:'$fact'/3) ).

record_need(N) :- ( need(N0), N0 =@= N -> true ; assertz(need(N)) ).
record_unmet(W) :- ( unmet(W) -> true ; assertz(unmet(W)) ).

valid_fact(G, P) :- cur(session, S), cur(now, Now), S:'$fact'(G, Exp, P), Exp > Now.

% ---------------------------------------------------------------- the meta-interpreter

prove(V, _) :- var(V), !, throw(error(instantiation_error, prove/2)).
prove(true, true) :- !.
prove((A, B), and(TA, TB)) :- !, prove(A, TA), prove(B, TB).
prove((C -> T ; E), Tr) :- !, ( prove(C, TC) -> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((C *-> T ; E), Tr) :- !, ( prove(C, TC) *-> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((A ; B), T) :- !, ( prove(A, T) ; prove(B, T) ).
prove((C -> T), if(TC, TT)) :- !, ( prove(C, TC) -> prove(T, TT) ).
prove(\+ G, not(G)) :- !, \+ prove(G, _).
prove(once(G), T) :- !, once(prove(G, T)).
prove(ignore(G), T) :- !, ( prove(G, T) -> true ; T = true ).
prove(require(G, Why), required(Why, T)) :- !,
    aggregate_all(count, need(_), N0),
    (   prove(G, T)
    ->  true
    ;   % a requirement that failed only for want of a fact or an answer is pending, not unmet
        % after an assumption it may fail only because of the assumed (unknown) values: tentative
        aggregate_all(count, need(_), N1),
        (   N1 =\= N0 -> true
        ;   cur(assumed, true) -> record_unmet(tentative(Why))
        ;   record_unmet(Why)
        ), fail
    ).
prove(confirmed(F, A), T) :- !, prove(confirmed(F, A, [user]), T).
prove(confirmed(F, A, From), confirmed(Msg, P)) :- !,
    % the message reads as plain text: JSON values and lists rendered, pending answers named as such
    copy_term(A, A0), readable_args(A0, A1),
    format(atom(Msg), F, A1),
    ( cur(call, Tool, Digest, Version) -> true ; throw(error(domain_error(guard_context, confirmed/3), _)) ),
    (   valid_fact('$confirmed'(Tool, Digest, Version, Ans), P), memberchk(P, From)
    ->  ( Ans == yes -> true ; record_unmet(declined(Msg)), fail )
    ;   record_need(confirm(Msg, From)), assume(Msg), P = assumed
    ).
prove(fact_provenance(G, P), fact(G, P)) :- !, fact_provenance(G, P).
prove(context_value(N, V), context(N, V)) :- !, context_value(N, V).
prove(call_tool_name(T), call_tool(T)) :- !, cur(call, T, _, _).
prove(G, fact(G, P)) :- cur(rb, RB), base(RB, G), !, base_solve(RB, G, P).
prove(G, native(G)) :- cur(rb, RB), functor(G, N, A), catch(RB:'$has_cut'(N/A), _, fail), !, call(RB:G).
prove(G, rule(G, T)) :- cur(rb, RB), user_pred(RB, G), !, clause(RB:G, Body), prove(Body, T).
prove(G, decl(G)) :- functor(G, N, A), decl_indicator(N/A), !, cur(rb, RB), call(RB:G).
prove(G, builtin(G)) :- cur(rb, RB),
    (   runtime_allowed(RB, G)
    ->  call(RB:G)
    ;   functor(G, N, A), throw(error(permission_error(call, builtin, N/A), _))
    ).

cur(call, T, D, V) :- cur(call, c(T, D, V)).

user_pred(RB, G) :- predicate_property(RB:G, dynamic), \+ predicate_property(RB:G, imported_from(_)),
    functor(G, N, A), \+ decl_indicator(N/A).

base_native(G) :- cur(rb, RB), base_solve(RB, G, _).

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
assume(_) :- ( cur(assumed, true) -> true ; assertz(cur(assumed, true)) ).

%  If a binding covers G, its inputs are ground, and it was not fetched (or expired): record a need.
ensure_fetched(RB, G) :-
    \+ ( RB:binding(B, tool(T, Args), _, _), copy_term(B-Args, G1-Args1), G1 = G, ground(Args1),
         \+ ( fetched_marker(G, T, Args1, M), valid_fact(M, _) ),
         record_need(fetch(T, Args1, G)) ).

fetched_marker(G, T, Args, '$fetched'(N, A, T, json(Args))) :- functor(G, N, A).

askable_of(RB, G, a(Q, Ty, O)) :- RB:askable(H, Q, Ty, O), subsumes_term(H, G), !.

askable_solve(_, G, a(Q, Ty, O), P) :-
    askable_from(O, From),
    askable_inputs(G, Ty, G0),
    (   valid_fact(G0, P0), memberchk(P0, [seed|From])
    ->  valid_fact(G, P), memberchk(P, [seed|From])
    ;   Ty == yes_no, G0 =.. [N|Ins], valid_fact('$answered_no'(N, Ins), P0), memberchk(P0, From)
    ->  fail
    ;   ground_inputs(G, Ty)
    ->  record_need(ask(G0, Q, Ty, From)), assume(G), P = assumed
    ;   fail
    ).

%  G0: G with the answer argument free (the whole G for yes_no).
askable_inputs(G, yes_no, G) :- !.
askable_inputs(G, _, G0) :- G =.. [N|As], append(Ins, [_], As), append(Ins, [_], As0), G0 =.. [N|As0].
ground_inputs(G, yes_no) :- !, ground(G).
ground_inputs(G, _) :- G =.. [_|As], append(Ins, [_], As), ground(Ins).
inputs_of_askable(_, H, Ins) :- H =.. [_|As], ( As == [] -> Ins = [] ; append(Ins, [_], As) ).

% ---------------------------------------------------------------- deciding a call

%  sn_decide(+RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Limit, -Out)
sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    begin_query(RB, Session, Now),
    assertz(cur(call, c(Tool, Digest, Version))),
    from_json_atom(ArgsJson, json(CallArgs)),
    findall(g(Pat, Goal), ( RB:guard(T, Pat, Goal), tool_matches(T, Tool) ), Guards),
    (   Guards == []
    ->  Out0 = json([status=no_guard])
    ;   catch(limited(prove_guards(Guards, CallArgs, Trees), Limit, R), E, true),
        query_outcome(E, R, Trees, Status, TreeJ),
        Out0 = json([status=Status, tree=TreeJ])
    ),
    add_needs(Out0, Out1), to_json_atom(Out1, Out).

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

% a pass that assumed facts may err or run away on the unknown values: it only says "fetch first"
query_outcome(E, R, _, incomplete, @(null)) :- ( nonvar(E) ; R == inference_limit_exceeded ), cur(assumed, true), !.
query_outcome(E, _, _, error, Msg) :- nonvar(E), !, client_failure(E, json(L)), memberchk(message = Msg, L).
query_outcome(_, R, _, inference_limit, @(null)) :- R == inference_limit_exceeded, !.
query_outcome(_, R, Trees, St, TJ) :- R \== failed, !, tree_json(and_all(Trees), TJ),
    ( cur(assumed, true) -> St = incomplete ; St = proved ).
query_outcome(_, _, _, failed, @(null)).

limited(G, Limit, R) :- ( call_with_inference_limit(G, Limit, R) -> true ; R = failed ).

add_needs(json(L), json(L2)) :-
    findall(N, ( need(N0), need_json(N0, N) ), Needs),
    findall(U, ( unmet(U0), U0 \= tentative(_), unmet_text(U0, U) ), Unmet),
    findall(U, ( unmet(tentative(U0)), unmet_text(U0, U) ), Tentative),
    append(L, [needs=Needs, unmet=Unmet, tentative=Tentative], L2).

unmet_text(declined(M), U) :- !, format(atom(U), 'declined: ~w', [M]).
unmet_text(W, U) :- ( atom(W) -> U = W ; string(W) -> atom_string(U, W) ; format(atom(U), '~q', [W]) ).

need_json(fetch(T, Args, G), json([kind=fetch, tool=T, arguments=json(JArgs), fact=GA])) :-
    maplist([N=V, N=J]>>pl_json(V, J), Args, JArgs), format(atom(GA), '~q', [G]).
need_json(ask(G0, Q, Ty, From), json([kind=ask, fact=GA, predicate=N, inputs=JIns, question=Msg, type=TyA, from=From])) :-
    \+ \+ ( numbervars(G0, 0, _), format(atom(GA0), '~W', [G0, [quoted(true), numbervars(true)]]), nb_setval(sn_tmp, GA0) ),
    nb_getval(sn_tmp, GA), functor(G0, N, _),
    G0 =.. [_|As], ( Ty == yes_no -> Ins = As ; append(Ins, [_], As) ),
    maplist(pl_json, Ins, JIns), text_to_atom(Q, QA),
    readable_args(Ins, InsText), catch(format(atom(Msg), QA, InsText), _, Msg = QA), type_json(Ty, TyA).
need_json(confirm(Msg, From), json([kind=confirm, question=Msg, from=From])).

type_json(choice(L), json([choice=L])) :- !.
type_json(T, T).

% ---------------------------------------------------------------- JSON of terms

pl_json(V, null) :- var(V), !.
pl_json(json(KVs), json(J)) :- is_list(KVs), !, maplist([K=V, K=JV]>>pl_json(V, JV), KVs, J).
pl_json(L, J) :- is_list(L), !, maplist(pl_json, L, J).
pl_json(true, @(true)) :- !.
pl_json(false, @(false)) :- !.
pl_json(null, @(null)) :- !.
pl_json(A, A) :- atomic(A), \+ string(A), !.
pl_json(S, A) :- string(S), !, atom_string(A, S).
pl_json(T, A) :- format(atom(A), '~q', [T]).

tree_json(true, json([goal=true])) :- !.
tree_json(and_all(Ts), json([all=Js])) :- !, maplist(tree_json, Ts, Js).
tree_json(and(A, B), json([all=Js])) :- !, flatten_and(and(A, B), Ts), maplist(tree_json, Ts, Js).
tree_json(if(C, T), json([if=CJ, then=TJ])) :- !, tree_json(C, CJ), tree_json(T, TJ).
tree_json(not(G), json([not=GA])) :- !, format(atom(GA), '~q', [G]).
tree_json(required(W, T), json([require=WA, by=TJ])) :- !, unmet_text(W, WA), tree_json(T, TJ).
tree_json(confirmed(M, P), json([confirmed=M, provenance=P])) :- !.
tree_json(fact(G, P), json([fact=GA, provenance=P])) :- !, format(atom(GA), '~q', [G]).
tree_json(context(N, V), json([context=N, value=VA])) :- !, format(atom(VA), '~q', [V]).
tree_json(call_tool(T), json([tool=T])) :- !.
tree_json(rule(G, T), json([goal=GA, by=TJ])) :- !, format(atom(GA), '~q', [G]), tree_json(T, TJ).
tree_json(builtin(G), json([builtin=GA])) :- !, format(atom(GA), '~q', [G]).
tree_json(native(G), json([goal=GA, by=native])) :- !, format(atom(GA), '~q', [G]).
tree_json(T, json([other=TA])) :- format(atom(TA), '~q', [T]).

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
            ;   maplist(solution_json, Sols, SJ), format(atom(GA), '~q', [Goal]),
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
    ensure_session(Session),
    with_output_to(string(Text),
        forall(( Session:'$fact'(F, E, P), \+ hidden_fact(F, HiddenPreds, HiddenTools) ),
               format('~k\t~w\t~w~n', [F, E, P]))).

hidden_fact('$fetched'(_, _, T, _), _, HiddenTools) :- !, memberchk(T, HiddenTools).
hidden_fact(F, HiddenPreds, _) :- functor(F, N, _), memberchk(N, HiddenPreds).


solution_json(Vs-T, json([bindings=json(B), proof=TJ])) :-
    findall(N=J, ( member(N=V, Vs), pl_json(V, J) ), B), tree_json(T, TJ).

%  Replace every atom that names a bound context by the context's value.
resolve_contexts(RB, T, T2) :- var(T), !, T2 = T, RB == RB.
resolve_contexts(RB, A, V) :- atom(A), is_context(RB, A), valid_fact('$context'(A, V0), _), !, V = V0.
resolve_contexts(_, A, A) :- atomic(A), !.
resolve_contexts(RB, T, T2) :- T =.. [F|As], maplist(resolve_contexts(RB), As, As2), T2 =.. [F|As2].

is_context(RB, A) :- ( RB:context(A) ; RB:context(A, _, _) ), !.

%  sn_context_check(+RB, +Session, +Now, +Name, +ValueJson, +Limit, -Out): may Name be bound to Value?
sn_context_check(RB, Session, Now, Name, ValueJson, Limit, Out) :-
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
fact_provenance(G, P) :- cur(rb, RB), ensure_fetched(RB, G), valid_fact(G, P).
context_value(N, V) :- valid_fact('$context'(N, V), _).
call_tool_name(T) :- cur(call, T, _, _).
