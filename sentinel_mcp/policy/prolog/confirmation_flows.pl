/*  Part of sentinel_core (included): which of a guarded call's arguments its confirmation shows, followed
    through the goals of the guard (for the checker). */

%  sn_confirmations(+RB, -Out): for each guard that asks a confirmation, which of the call's arguments the
%  confirmation shows (its values, or values computed from them earlier in the guard) and which it shows as
%  they are (raw). A variable computed by a goal depends on the variables that goal already knew.
%  A guard that asks one and whose walk fails or throws (a goal it does not know, a bug) has a row too, saying
%  so (unfinished: failed or error): dropped, it read as a confirmation that shows every argument.
sn_confirmations(RB, Out) :-
    findall(J, ( RB:'$src'(decl, guard(Tool, Pat, Goal), F, L), asks_confirmation(Goal),
                 confirmation_row(Tool, Pat, Goal, F, L, J) ), Cs),
    to_json_atom(json([confirmations=Cs]), Out).

%  whether a guard asks a confirmation, told apart from the walk (a term of that shape anywhere in it)
asks_confirmation(Goal) :-
    sub_term(S, Goal), compound(S), compound_name_arity(S, N, A),
    memberchk(N/A, [confirmed/2, confirmed/3, confirmed_items/2, confirmed_items/3]), !.

confirmation_row(Tool, Pat, Goal, F, L, J) :-
    (   catch(confirmation_flow(Tool, Pat, Goal, F, L, J0), error(E0, C0), E = error(E0, C0))  % (a limit ends it)
    ->  ( var(E) -> J = J0 ; J = json([tool=Tool, file=F, line=L, unfinished=error]) )
    ;   J = json([tool=Tool, file=F, line=L, unfinished=failed])
    ).

% (no findall inside: the walk must keep the guard's own variables to follow them)
confirmation_flow(Tool, Pat, Goal, F, L, json([tool=Tool, file=F, line=L, arguments=Names, shown=Shown, raw=Raw])) :-
    flow_leaves(Goal, Leaves, []),
    first_confirmation(Leaves, CArgs),
    pattern_sources(Pat, Known0),
    foldl(flow, Leaves, Known0, Known),
    term_variables(CArgs, CVs),
    findall(N, ( member(V, CVs), sources_of(V, Known, S), member(N, S) ), Ns0), sort(Ns0, Shown),
    findall(N, ( member(N = V, Pat), var(V), member(X, CVs), X == V ), Raw0), sort(Raw0, Raw),
    findall(N, member(N = _, Pat), Names).

first_confirmation([C|Cs], A) :- ( confirmation_args(C, A0) -> A = A0 ; first_confirmation(Cs, A) ).

confirmation_args(confirmed(_, A), A).
confirmation_args(confirmed(_, A, _), A).
confirmation_args(confirmed_items(H, I), [H|I]).
confirmation_args(confirmed_items(H, I, _), [H|I]).

%  The goals of a body in textual order, through control constructs and requirements (a meta-call such as
%  findall/3 is one goal: its result depends on everything in it).
flow_leaves(G, [G|T], T) :- var(G), !.
flow_leaves((A, B), L, T) :- !, flow_leaves(A, L, M), flow_leaves(B, M, T).
flow_leaves((C -> A ; B), [(C -> A ; B)|L], T) :- !,  % what a branch computes depends on the condition too
    flow_leaves(C, L, M1), flow_leaves(A, M1, M2), flow_leaves(B, M2, T).
flow_leaves((A ; B), L, T) :- !, flow_leaves(A, L, M), flow_leaves(B, M, T).
flow_leaves((A -> B), L, T) :- !, flow_leaves(A, L, M), flow_leaves(B, M, T).
flow_leaves((A *-> B), L, T) :- !, flow_leaves(A, L, M), flow_leaves(B, M, T).
flow_leaves(\+ A, L, T) :- !, flow_leaves(A, L, T).
flow_leaves(once(A), L, T) :- !, flow_leaves(A, L, T).
flow_leaves(ignore(A), L, T) :- !, flow_leaves(A, L, T).
flow_leaves(require(A, _), L, T) :- !, flow_leaves(A, L, T).
flow_leaves(require(A, _, _), L, T) :- !, flow_leaves(A, L, T).
flow_leaves(G, [G|T], T).

pattern_sources([], []).
pattern_sources([E|Es], Known) :-
    (   E = (N = V0) -> term_variables(V0, Vs), pairs_with(Vs, [N], K1)
    ;   E = args(V), var(V) -> K1 = [V-[all]]
    ;   K1 = []
    ),
    pattern_sources(Es, K2), append(K1, K2, Known).

pairs_with([], _, []).
pairs_with([V|Vs], S, [V-S|Ps]) :- pairs_with(Vs, S, Ps).

sources_of(V, Known, S) :- member(V0-S, Known), V0 == V, !.

flow(Leaf, Known0, Known) :-
    term_variables(Leaf, Vs),
    findall(S, ( member(V, Vs), sources_of(V, Known0, S0), member(S, S0) ), Ss0), sort(Ss0, Ss),
    new_vars(Vs, Known0, New), pairs_with(New, Ss, Pairs),
    append(Known0, Pairs, Known).

new_vars([], _, []).
new_vars([V|Vs], K, New) :- ( sources_of(V, K, _) -> New = New1 ; New = [V|New1] ), new_vars(Vs, K, New1).
