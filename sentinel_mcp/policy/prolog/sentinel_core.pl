/*  Sentinel's Prolog core: loads rulebases into their own module, proves guards and queries with a
    meta-interpreter that turns missing base facts into needs, extracts facts from tool results.

    Only the engine thread calls this. Per-query state lives in cur/2, need/1, unmet/1 and is reset
    at the start of every query. Python exchanges data with it as JSON atoms.
*/
:- module(sentinel_core, []).
:- use_module(library(http/json)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(sentinel_rt, []).

:- dynamic cur/2, need/1, unmet/1.
:- discontiguous post_load_problem/2.

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

% ---------------------------------------------------------------- loading

%  sn_load(+RB, +FilesJson, -OutJson): read every file into module RB; report problems with file+line.
sn_load(RB, FilesJson, Out) :-
    from_json_atom(FilesJson, Files),
    ( current_module(RB) -> sn_unload(RB) ; true ),
    add_import_module(RB, sentinel_rt, start),
    forall(decl_indicator(N/A), dynamic(RB:N/A)),
    dynamic(RB:'$src'/4),
    findall(E, (member(F, Files), load_file_terms(RB, F, E)), Es0),
    append(Es0, Errors0),
    findall(E, post_load_problem(RB, E), Es1),
    append(Errors0, Es1, Problems),
    partition([P]>>(P = json(L), memberchk(severity=error, L)), Problems, Errors, Warnings),
    to_json_atom(json([errors=Errors, warnings=Warnings]), Out).

sn_unload(RB) :-
    forall(( current_predicate(RB:N/A), functor(H, N, A), \+ predicate_property(RB:H, imported_from(_)) ),
           abolish(RB:N/A)).

problem(Sev, File, Line, Msg, json([severity=Sev, file=File, line=Line, message=Msg])).

load_file_terms(RB, File, Errors) :-
    catch(open(File, read, S), E, true),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M), problem(error, File, 0, M, P), Errors = [P]
    ;   call_cleanup(read_terms(RB, File, S, Errors), close(S))
    ).

read_terms(RB, File, S, Errors) :-
    catch(read_term(S, T, [term_position(Pos), syntax_errors(error)]), E, true),
    (   nonvar(E)
    ->  syntax_problem(File, E, P), Errors = [P|Rest], read_terms(RB, File, S, Rest)
    ;   T == end_of_file
    ->  Errors = []
    ;   stream_position_data(line_count, Pos, Line),
        ( add_term(RB, File, Line, T, Ps) -> true ; problem(error, File, Line, 'cannot load this clause', P0), Ps = [P0] ),
        append(Ps, Rest, Errors),
        read_terms(RB, File, S, Rest)
    ).

syntax_problem(File, error(syntax_error(What), stream(_, Line, Col, _)), P) :- !,
    format(atom(M), 'syntax error: ~w (column ~w)', [What, Col]), problem(error, File, Line, M, P).
syntax_problem(File, error(syntax_error(What), file(_, Line, Col, _)), P) :- !,
    format(atom(M), 'syntax error: ~w (column ~w)', [What, Col]), problem(error, File, Line, M, P).
syntax_problem(File, error(syntax_error(What), string(_, _)), P) :- !,
    format(atom(M), 'syntax error: ~w', [What]), problem(error, File, 0, M, P).
syntax_problem(File, E, P) :- message_to_codes_safe(E, M), problem(error, File, 0, M, P).

message_to_codes_safe(E, M) :-
    catch(( '$messages':translate_message(E, Lines, []),
            with_output_to(string(S), print_message_lines(current_output, '', Lines)) ), _, fail), !,
    split_string(S, "", " \n", [S1]), atom_string(M, S1).
message_to_codes_safe(E, M) :- format(atom(M), '~q', [E]).

add_term(_, File, Line, (:- D), Ps) :- !,
    ( ok_directive(D) -> Ps = []
    ; format(atom(M), 'directive not executed (only dynamic/discontiguous are accepted): ~q', [D]),
      problem(warning, File, Line, M, P), Ps = [P] ).
add_term(RB, File, Line, (H --> B), Ps) :- !,
    dcg_translate_rule((H --> B), Clause), add_term(RB, File, Line, Clause, Ps).
add_term(RB, File, Line, T, Ps) :-
    ( T = (H :- _) -> true ; H = T ),
    (   \+ callable(H)
    ->  format(atom(M), 'not a clause: ~q', [T]), problem(error, File, Line, M, P), Ps = [P]
    ;   functor(H, N, A), system_pred(N/A)
    ->  format(atom(M), 'cannot redefine the built-in ~w/~w', [N, A]), problem(error, File, Line, M, P), Ps = [P]
    ;   declaration(H), T \= (_ :- _)
    ->  check_declaration(T, File, Line, Ps),
        assertz(RB:T), assertz(RB:'$src'(decl, T, File, Line))
    ;   assertz(RB:T), assertz(RB:'$src'(rule, T, File, Line)), Ps = []
    ).

system_pred(N/A) :- functor(H, N, A), predicate_property(system:H, defined), \+ declaration(H).

ok_directive(dynamic(_)).
ok_directive(discontiguous(_)).

check_declaration(T, File, Line, Ps) :-
    findall(P, (decl_problem(T, Sev, M), problem(Sev, File, Line, M, P)), Ps).

decl_problem(binding(H, _, _, _), error, M) :- \+ callable(H), format(atom(M), 'binding head must be a predicate term: ~q', [H]).
decl_problem(binding(_, Tool, _, _), error, M) :- \+ Tool = tool(_, _),
    format(atom(M), 'binding tool must be tool(Name, [Arg = Value, ...]), got ~q', [Tool]).
decl_problem(binding(_, tool(N, Args), _, _), error, M) :- ( \+ atom(N) ; \+ is_list(Args) ),
    format(atom(M), 'binding tool must be tool(Name, [Arg = Value, ...]) with an atom name, got ~q', [tool(N, Args)]).
decl_problem(binding(_, _, X, _), error, M) :- \+ ( X = extract(L), is_list(L) ),
    format(atom(M), 'binding extraction must be extract([Var = Pointer, ...]), got ~q', [X]).
decl_problem(binding(H, _, extract(L), _), error, M) :- is_list(L), member(E, L),
    \+ ( E = (V = Ptr), var(V), valid_pointer(Ptr), term_variables(H, HV), member(V1, HV), V1 == V ),
    format(atom(M), 'extraction ~q must be Var = Pointer (or key(Pointer)) with Var a variable of the head', [E]).
decl_problem(binding(_, _, _, O), error, M) :- \+ is_list(O), format(atom(M), 'binding options must be a list, got ~q', [O]).
decl_problem(askable(_, Q, _, _), error, M) :- \+ ( (string(Q) ; atom(Q)), Q \== '', Q \== "" ),
    format(atom(M), 'askable without a question (a non-empty string is needed), got ~q', [Q]).
decl_problem(askable(_, _, T, _), error, M) :- \+ valid_type(T),
    format(atom(M), 'askable type must be yes_no, choice([...]), text or number, got ~q', [T]).
decl_problem(askable(H, _, T, _), error, M) :- T \== yes_no, callable(H), functor(H, _, 0),
    format(atom(M), 'askable ~q of type ~q needs an answer argument (its last argument)', [H, T]).
decl_problem(askable(_, _, _, O), error, M) :- \+ is_list(O), format(atom(M), 'askable options must be a list, got ~q', [O]).
decl_problem(guard(T, _, _), error, M) :- \+ atom(T), format(atom(M), 'guard tool name must be an atom, got ~q', [T]).
decl_problem(guard(_, A, _), error, M) :- \+ is_list(A), format(atom(M), 'guard argument pattern must be a list of Name = Term, got ~q', [A]).
decl_problem(seed(F), error, M) :- \+ ( callable(F), ground(F) ), format(atom(M), 'seed must be a ground fact, got ~q', [F]).
decl_problem(context(N), error, M) :- \+ atom(N), format(atom(M), 'context name must be an atom, got ~q', [N]).
decl_problem(context(N, _, _), error, M) :- \+ atom(N), format(atom(M), 'context name must be an atom, got ~q', [N]).
decl_problem(effect(_, _, A), error, M) :- \+ is_list(A), format(atom(M), 'effect actions must be a list, got ~q', [A]).
decl_problem(effect(_, _, A), error, M) :- is_list(A), member(X, A), \+ X = invalidate(_),
    format(atom(M), 'unknown effect action ~q (expected invalidate(Head))', [X]).
decl_problem(fact(X), error, M) :- \+ X = _/_, format(atom(M), 'fact declaration must be Name/Arity, got ~q', [X]).

valid_pointer(key(P)) :- !, atom(P).
valid_pointer(P) :- atom(P).
valid_type(yes_no). valid_type(text). valid_type(number).
valid_type(choice(L)) :- is_list(L), L \== [], maplist(atomic, L).

% ---------------------------------------------------------------- base predicates and checks

base(RB, G) :- functor(G, N, A), base_indicator(RB, N/A), !.
base_indicator(RB, N/A) :- RB:binding(H, _, _, _), functor(H, N, A).
base_indicator(RB, N/A) :- RB:askable(H, _, _, _), functor(H, N, A).
base_indicator(RB, N/A) :- RB:seed(H), functor(H, N, A).
base_indicator(RB, N/A) :- RB:fact(N/A).

post_load_problem(RB, P) :-
    RB:'$src'(rule, T, File, Line), ( T = (H :- _) -> true ; H = T ), base(RB, H), functor(H, N, A),
    format(atom(M), '~w/~w is a base predicate (binding, askable, seed or fact); it cannot also have clauses', [N, A]),
    problem(error, File, Line, M, P).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    called_goal(Body, G), \+ known_pred(RB, G), functor(G, N, A),
    format(atom(M), 'call to undefined predicate ~w/~w', [N, A]), problem(error, File, Line, M, P).
post_load_problem(RB, P) :-
    RB:'$src'(decl, askable(H, Q, Ty, _), File, Line), ( atom(Q) ; string(Q) ), callable(H), valid_type(Ty),
    askable_input_count(H, Ty, NI), length(Args, NI), maplist(=(x), Args),
    \+ catch(format(atom(_), Q, Args), _, fail),
    format(atom(M), 'askable question ~q does not fit the ~w input argument(s) of ~q', [Q, NI, H]),
    problem(warning, File, Line, M, P).

askable_input_count(H, yes_no, N) :- !, functor(H, _, N).
askable_input_count(H, _, N) :- functor(H, _, A), N is max(0, A - 1).

post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    called_goal(Body, G), callable(G), functor(G, N, A), forbidden(N/A),
    format(atom(M), '~w/~w is not allowed in a rulebase (it could block, stop or change the engine)', [N, A]),
    problem(error, File, Line, M, P).

%  Builtins a proof must never run: no time limit can interrupt a blocked engine thread here, and
%  the engine's state belongs to Sentinel (facts change only through the fact store).
forbidden(halt/0). forbidden(halt/1). forbidden(sleep/1). forbidden(shell/0). forbidden(shell/1).
forbidden(shell/2). forbidden(read/1). forbidden(read/2). forbidden(read_term/2). forbidden(read_term/3).
forbidden(get_char/1). forbidden(get_char/2). forbidden(get_code/1). forbidden(get_code/2).
forbidden(peek_char/1). forbidden(peek_code/1). forbidden(wait_for_input/3). forbidden(thread_get_message/1).
forbidden(thread_get_message/2). forbidden(thread_join/1). forbidden(thread_join/2). forbidden(assert/1).
forbidden(asserta/1). forbidden(assertz/1). forbidden(retract/1). forbidden(retractall/1). forbidden(abolish/1).
forbidden(consult/1). forbidden(load_files/2). forbidden(ensure_loaded/1). forbidden(use_module/1).
forbidden(use_module/2). forbidden(open/3). forbidden(open/4). forbidden(process_create/3). forbidden(nb_setval/2).
forbidden(b_setval/2). forbidden(set_prolog_flag/2). forbidden(prompt/2). forbidden(tab/2).

body_of(rule, (_ :- B), B).
body_of(decl, guard(_, _, G), G).
body_of(decl, context(_, _, G), G).

%  called_goal(+Body, -Goal): every goal called by Body, through control constructs and meta-calls.
called_goal(V, _) :- var(V), !, fail.
called_goal((A, B), G) :- !, ( called_goal(A, G) ; called_goal(B, G) ).
called_goal((A ; B), G) :- !, ( called_goal(A, G) ; called_goal(B, G) ).
called_goal((A -> B), G) :- !, ( called_goal(A, G) ; called_goal(B, G) ).
called_goal((A *-> B), G) :- !, ( called_goal(A, G) ; called_goal(B, G) ).
called_goal(\+ A, G) :- !, called_goal(A, G).
called_goal(require(A, _), G) :- !, called_goal(A, G).
called_goal(findall(_, A, _), G) :- !, called_goal(A, G).
called_goal(findall(_, A, _, _), G) :- !, called_goal(A, G).
called_goal(forall(A, B), G) :- !, ( called_goal(A, G) ; called_goal(B, G) ).
called_goal(aggregate_all(_, A, _), G) :- !, called_goal(A, G).
called_goal(once(A), G) :- !, called_goal(A, G).
called_goal(ignore(A), G) :- !, called_goal(A, G).
called_goal(_^A, G) :- !, called_goal(A, G).
called_goal(G, G) :- callable(G).

known_pred(RB, G) :- base(RB, G), !.
known_pred(_, G) :- sentinel_builtin(G), !.
known_pred(RB, G) :- functor(G, N, A), functor(G1, N, A), predicate_property(RB:G1, number_of_clauses(C)), C > 0, !.
known_pred(_, G) :- predicate_property(system:G, defined), !.
known_pred(_, G) :- functor(G, N, A), '$find_library'(_, N, A, _, _), !.
known_pred(RB, G) :- functor(G, N, A), decl_indicator(N/A), RB == RB.

sentinel_builtin(G) :- functor(G, N, A), sentinel_rt_export(N/A).
sentinel_builtin(confirmed(_, _)).
sentinel_builtin(confirmed(_, _, _)).
sentinel_builtin(require(_, _)).
sentinel_rt_export(PI) :- module_property(sentinel_rt, exports(L)), memberchk(PI, L).

% Make base predicates callable natively (inside findall/forall/...): each looks itself up in the store.
install_base_wrappers(RB) :-
    forall(( base_indicator(RB, N/A), \+ wrapped(RB, N/A) ),
           ( functor(H, N, A), assertz(RB:(H :- sentinel_core:base_native(H))), assertz(RB:'$wrapped'(N/A)) )).
wrapped(RB, PI) :- catch(RB:'$wrapped'(PI), _, fail).

sn_finish_load(RB) :- dynamic(RB:'$wrapped'/1), install_base_wrappers(RB), mark_cuts(RB).

% Clauses with a cut run natively (the meta-interpreter does not model cut); their base facts are still
% looked up (and needs recorded) through the base wrappers.
mark_cuts(RB) :-
    dynamic(RB:'$has_cut'/1),
    forall(( RB:'$src'(rule, (H :- B), _, _), body_has_cut(B), functor(H, N, A), \+ RB:'$has_cut'(N/A) ),
           assertz(RB:'$has_cut'(N/A))).

body_has_cut(B) :- called_goal(B, G), G == !, !.

% ---------------------------------------------------------------- info for Python

sn_info(RB, Out) :-
    findall(json([tool=T]), RB:guard(T, _, _), Guards),
    findall(json([predicate=PN, arity=PA, tool=T, ttl=TTL]),
            ( RB:binding(H, tool(T, _), _, O), functor(H, PN, PA), ttl_opt(O, TTL) ), Bindings),
    findall(json([predicate=PN, arity=PA, question=QA, type=TyA, from=From]),
            ( RB:askable(H, Q, Ty, O), functor(H, PN, PA), text_to_atom(Q, QA), term_to_atom(Ty, TyA), askable_from(O, From) ),
            Askables),
    findall(C, ( RB:context(C) ; RB:context(C, _, _) ), Cs0), sort(Cs0, Contexts),
    findall(FA, ( RB:seed(F), term_to_atom(F, FA) ), Seeds),
    findall(OA, ( RB:option(O), term_to_atom(O, OA) ), Options),
    findall(T, RB:read_only(T), ReadOnly),
    findall(json([tool=T, args=As]), RB:symbolic_exempt(T, As), Exempt),
    findall(T, RB:effect(T, _, _), Effects),
    to_json_atom(json([guards=Guards, bindings=Bindings, askables=Askables, contexts=Contexts, seeds=Seeds,
                       options=Options, read_only=ReadOnly, symbolic_exempt=Exempt, effects=Effects]), Out).

text_to_atom(Q, A) :- string(Q), !, atom_string(A, Q).
text_to_atom(Q, Q).

ttl_opt(O, TTL) :- ( memberchk(ttl(T), O) -> ( T == session -> TTL = null ; TTL = T ) ; TTL = 60 ).
askable_from(O, From) :- ( memberchk(from(F), O) -> From = F ; From = [user, agent] ).

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
    % values still being asked for (in the same round) read as "(your answer)"
    copy_term(A, A1), term_variables(A1, Vs), maplist(=('(your answer)'), Vs),
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
prove(G, builtin(G)) :- cur(rb, RB),
    ( functor(G, N, A), forbidden(N/A) -> throw(error(permission_error(call, builtin, N/A), _)) ; true ),
    call(RB:G).

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
query_outcome(E, _, _, error, Msg) :- nonvar(E), !, message_to_codes_safe(E, Msg).
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
    catch(format(atom(Msg), QA, Ins), _, Msg = QA), type_json(Ty, TyA).
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

%  sn_query(+RB, +Session, +Now, +GoalAtom, +MaxSolutions, +Limit, -Out)
sn_query(RB, Session, Now, GoalAtom, Max, Limit, Out) :-
    begin_query(RB, Session, Now),
    catch(term_to_atom_vars(GoalAtom, Goal0, Vs), E, true),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M), Out0 = json([status=error, message=M])
    ;   \+ callable(Goal0)
    ->  Out0 = json([status=error, message='the query must be a goal, e.g. booking_status(booking_of_interest, S)'])
    ;   resolve_contexts(RB, Goal0, Goal),
        catch(call_with_inference_limit(findall(Vs-T, limit(Max, prove(Goal, T)), Sols), Limit, R), E2, true),
        (   nonvar(E2) -> message_to_codes_safe(E2, M), Out0 = json([status=error, message=M])
        ;   R == inference_limit_exceeded -> Out0 = json([status=inference_limit])
        ;   maplist(solution_json, Sols, SJ), format(atom(GA), '~q', [Goal]),
            ( Sols == [] -> St = failed ; cur(assumed, true) -> St = incomplete ; St = proved ),
            Out0 = json([status=St, goal=GA, solutions=SJ])
        )
    ),
    add_needs(Out0, Out1), to_json_atom(Out1, Out).

term_to_atom_vars(A, T, Vs) :- term_string(T, A, [variable_names(Vs)]).

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

% ---------------------------------------------------------------- facts from tool results

%  sn_extract(+RB, +Tool, +ArgsJson, +ResultJson, -Out): facts (and fetched markers) the bindings of
%  Tool yield for this call and result.
sn_extract(RB, Tool, ArgsJson, ResultJson, Out) :-
    from_json_atom(ArgsJson, json(CallArgs)),
    from_json_atom(ResultJson, Result),
    findall(json([fact=FA, predicate=N, args=JArgs, ttl=TTL]),
            ( RB:binding(H, tool(Tool, BArgs), extract(Ex), O), same_args(BArgs, CallArgs),
              ttl_opt(O, TTL),
              ( fetched_marker(H, Tool, BArgs, F) ; extract_fact(H, Ex, Result, F) ),
              ground(F), F =.. [N|As], maplist(pl_json, As, JArgs), format(atom(FA), '~q', [F]) ),
            Facts0),
    list_to_set(Facts0, Facts),
    to_json_atom(json([facts=Facts]), Out).

same_args(BArgs, CallArgs) :-
    length(BArgs, N), length(CallArgs, N),
    forall(member(K = _, CallArgs), memberchk(K = _, BArgs)),
    maplist([K = V]>>memberchk(K = V, CallArgs), BArgs).

extract_fact(H, Ex, Result, H) :- foldl(extract_one(Result), Ex, [], _).

extract_one(Result, V = key(Ptr), Env0, Env) :- !,
    pointer_segments(Ptr, Segs), walk(Segs, '', Result, Env0, Env, _, LastKey), V = LastKey.
extract_one(Result, V = Ptr, Env0, Env) :-
    pointer_segments(Ptr, Segs), walk(Segs, '', Result, Env0, Env, V, _).

pointer_segments(Ptr, Segs) :- atomic_list_concat(Parts, '/', Ptr), exclude(==(''), Parts, Segs).

%  walk(+Segs, +Prefix, +Json, +Env0, -Env, -Value, -LastStarKey); Env maps star prefixes to keys (zip).
walk([], _, V, Env, Env, V, none).
walk(['*'|Segs], Prefix, J, Env0, Env, V, Key) :- !,
    atom_concat(Prefix, '/*', P2),
    (   memberchk(P2 - K0, Env0)
    ->  element(J, K0, E), Env1 = Env0
    ;   element(J, K0, E), Env1 = [P2 - K0|Env0]
    ),
    walk(Segs, P2, E, Env1, Env, V, Key1),
    ( Key1 == none -> Key = K0 ; Key = Key1 ).
walk([S|Segs], Prefix, J, Env0, Env, V, Key) :-
    child(J, S, E), atomic_list_concat([Prefix, '/', S], P2),
    walk(Segs, P2, E, Env0, Env, V, Key).

element(L, I, E) :- is_list(L), !, nth0(I, L, E).
element(json(KVs), K, V) :- member(K = V, KVs).

child(json(KVs), S, V) :- !, memberchk(S = V, KVs).
child(L, S, V) :- is_list(L), atom_number(S, I), integer(I), nth0(I, L, V).

% ---------------------------------------------------------------- effects, facts, matching

%  sn_effects(+RB, +Tool, +ArgsJson, -Out): patterns (as text) to invalidate after a completed call.
sn_effects(RB, Tool, ArgsJson, Out) :-
    from_json_atom(ArgsJson, json(CallArgs)),
    findall(PA, ( RB:effect(T, Pat, Acts), tool_matches(T, Tool), match_args_quiet(Pat, CallArgs),
                  member(invalidate(P), Acts), format(atom(PA), '~q', [P]) ), L),
    to_json_atom(json([invalidate=L]), Out).

match_args_quiet(Pat, CallArgs) :- catch(( retractall(unmet(_)), match_args(Pat, CallArgs) ), _, fail).

%  sn_assert(+Session, +FactAtom, +Expires, +Prov)
sn_assert(Session, FactAtom, Exp, Prov) :-
    ensure_session(Session), term_to_atom(F, FactAtom),
    retractall(Session:'$fact'(F, _, _)), assertz(Session:'$fact'(F, Exp, Prov)).

%  sn_retract(+Session, +PatternAtom, -Out): remove matching facts, return them (as text).
sn_retract(Session, PatternAtom, Out) :-
    ensure_session(Session), term_to_atom(P, PatternAtom),
    findall(FA, ( Session:'$fact'(P, _, _), format(atom(FA), '~q', [P]) ), L0), list_to_set(L0, L),
    retractall(Session:'$fact'(P, _, _)),
    to_json_atom(json([removed=L]), Out).

sn_drop_session(Session) :- ( current_predicate(Session:'$fact'/3) -> retractall(Session:'$fact'(_, _, _)) ; true ).

%  sn_fact_json(+FactAtom, -Out): predicate name and JSON args of a fact text (for the store).
sn_fact_json(FactAtom, Out) :-
    term_to_atom(F, FactAtom), callable(F), ground(F), F =.. [N|As], maplist(pl_json, As, J),
    format(atom(C), '~q', [F]), to_json_atom(json([fact=C, predicate=N, args=J]), Out).

%  sn_purge(+Session, +Now): drop expired facts from the mirror.
sn_purge(Session, Now) :- ensure_session(Session),
    forall(( Session:'$fact'(F, Exp, P), Exp =< Now ), retract(Session:'$fact'(F, Exp, P))).

%  sn_fact_from_json(+N, +ArgsJson, -FactAtom): rebuild a fact text from predicate + JSON args.
sn_fact_from_json(N, ArgsJson, FactAtom) :-
    from_json_atom(ArgsJson, As), F =.. [N|As], format(atom(FactAtom), '~q', [F]).

% natively callable (sentinel_rt re-exports them to rulebases)
fact_provenance(G, P) :- cur(rb, RB), ensure_fetched(RB, G), valid_fact(G, P).
context_value(N, V) :- valid_fact('$context'(N, V), _).
call_tool_name(T) :- cur(call, T, _, _).

%  sn_assert_lines(+Session, +Text): one fact per line, "FactText<TAB>Expires<TAB>Prov" (bulk loading).
sn_assert_lines(Session, Text) :-
    ensure_session(Session),
    split_string(Text, "\n", "", Lines),
    forall(( member(L, Lines), L \== "" ),
           ( split_string(L, "\t", "", [FS, ES, PS]), term_string(F, FS), number_string(E, ES), atom_string(P, PS),
             retractall(Session:'$fact'(F, _, _)), assertz(Session:'$fact'(F, E, P)) )).

%  sn_invalidate(+RB, +Session, +PatternAtom, -Out): remove matching facts and the fetch markers of the
%  bindings that establish them, so the next proof fetches them again.
sn_invalidate(RB, Session, PatternAtom, Out) :-
    ensure_session(Session), term_to_atom(P, PatternAtom),
    findall(M, ( RB:binding(B, tool(T, Args), _, _), copy_term(B-Args, P1-Args1), P1 = P,
                 fetched_marker(P, T, Args1, M) ), Markers),
    findall(FA, ( ( F = P ; member(F, Markers) ), Session:'$fact'(F, _, _), format(atom(FA), '~q', [F]) ), L0),
    list_to_set(L0, L),
    retractall(Session:'$fact'(P, _, _)),
    forall(member(M, Markers), retractall(Session:'$fact'(M, _, _))),
    to_json_atom(json([removed=L]), Out).

%  sn_tool_sites(+RB, -Out): where each binding and guard names a tool (for catalog checks).
sn_tool_sites(RB, Out) :-
    findall(json([kind=binding, tool=T, file=F, line=L]), RB:'$src'(decl, binding(_, tool(T, _), _, _), F, L), Bs),
    findall(json([kind=guard, tool=T, file=F, line=L]), RB:'$src'(decl, guard(T, _, _), F, L), Gs),
    findall(json([kind=effect, tool=T, file=F, line=L]), RB:'$src'(decl, effect(T, _, _), F, L), Es),
    append([Bs, Gs, Es], All), to_json_atom(json([sites=All]), Out).
