/*  Part of sentinel_core (included): which variables the walk of secret_flows.pl knows bound, for telling
    what a goal given a secret binds (its outputs) from what it was given (its inputs).

    A variable met is not a variable bound: one met in an alias (Y = [X]), a type test (var(Y)), a comparison,
    a negation, a collection's template or one branch of two is still unbound after it, and a goal given a
    secret later binds it (Y = [X], login_ok(U, P, Y): X is the tool's answer for the password). So the walk
    keeps, b_setval/2 (undone on backtracking, each declaration and clause its own), st(Met, Open, Aliases):
    the variables met; those of them not known bound (an input only once a goal binds it: the call's
    arguments, a goal that computes it, an alias of a bound value); and each alias as Var-Term, both ways
    for two variables. A value built of variables holds what they hold (secret_vars/2): binding it binds
    them, showing it shows them. What counts as bound is an under-approximation: too few bound only makes
    more outputs, tainted (denied at load), never fewer.
*/

secret_state(S) :- b_getval(sn_secret_state, S).

%  a walk from Bound (a declaration's argument pattern: given values; a rule's head: its caller's, of which
%  Open are unbound in the call)
secret_seen_from(Bound) :- secret_seen_from(Bound, []).
secret_seen_from(Bound, Open) :- term_variables(Bound-Open, S), term_variables(Open, O),
    b_setval(sn_secret_state, st(S, O, [])), secret_choices_reset.

%  secret_vars(+X, -Vs): X's variables and those of what each aliases, transitively
secret_vars(X, Vs) :- secret_state(st(_, _, A)), term_variables(X, V0), secret_close(V0, A, V0, Vs).

secret_close([], _, Acc, Acc).
secret_close([V|Q], A, Acc, Out) :- secret_aliases_of(A, V, Ts), term_variables(Ts, Ws),
    secret_not_in(Ws, Acc, New), append(Acc, New, Acc1), append(Q, New, Q1), secret_close(Q1, A, Acc1, Out).

secret_aliases_of([], _, []).
secret_aliases_of([W-T|A], V, Ts) :- ( W == V -> Ts = [T|Ts1] ; Ts = Ts1 ), secret_aliases_of(A, V, Ts1).

secret_not_in([], _, []).
secret_not_in([V|Vs], S, Out) :- ( secret_has(S, V) -> Out = Out1 ; Out = [V|Out1] ), secret_not_in(Vs, S, Out1).

secret_has([S|Ss], V) :- ( S == V -> true ; secret_has(Ss, V) ).

%  secret_fresh(+Vs, +State, -New, -Old): of Vs, those a goal may bind (not known bound: not met, or met
%  open) and those met bound (a rule's head: its caller's, marked branch(Name) for the caller)
secret_fresh([], _, [], []).
secret_fresh([V|Vs], St, New, Old) :-
    St = st(S, O, _),
    ( secret_has(S, V), \+ secret_has(O, V) -> New = New1, Old = [V|Old1] ; New = [V|New1], Old = Old1 ),
    secret_fresh(Vs, St, New1, Old1).

%  X (a caller's argument) holds a variable a goal may bind
secret_open_term(X) :- secret_vars(X, Vs), secret_state(St), secret_fresh(Vs, St, [_|_], _).

%  after a goal: a check binds nothing (what it met stays open); an alias binds one side when the other is
%  bound (a written value, a bound variable), else records itself; a rule binds the arguments every clause
%  of it binds (secret_binds/4); any other goal binds what it met
secret_saw(G, _) :- secret_kind_of(G, alias), G =.. [_, X, Y], !, secret_alias(X, Y).
secret_saw(G, _) :- secret_kind_of(G, K), memberchk(K, [check, site]), !, secret_met(G, open).
secret_saw(G, C) :- callable(G), C = sctx(Cls, _, _), functor(G, N, A), get_assoc(N/A, Cls, _), !,
    G =.. [_|As], maplist(secret_open_flag, As, Opens), secret_binds(C, N/A, Opens, Binds),
    secret_met(G, open), foldl(secret_bound_by, As, Binds, 0, _).
secret_saw(G, _) :- secret_kind_of(G, K), memberchk(K, [makes, measure]), !, secret_grounded(G).
secret_saw(G, _) :- secret_met(G, bound).  % a base fact or a tool's answer: stored values, ground

%  a computing goal binds ground what its row says (secret_ground_row/4); its other variables are met open
%  and held together (arg(1, T, X) with T built with a hole: X is that hole, filled when T is)
secret_grounded(G) :-
    functor(G, N, A), ( secret_ground_row(N, A, From, Always) -> true ; From = [], Always = [] ),
    (   member(S, From), forall(member(I, S), ( arg(I, G, X), secret_all_bound(X) ))
    ->  secret_met(G, bound)
    ;   findall(X, ( member(I, Always), arg(I, G, X) ), Xs), secret_met(G, open), secret_met(Xs, bound),
        term_variables(G, Vs), secret_state(St), secret_fresh(Vs, St, Open, _), secret_chain(Open)
    ).

secret_chain([]).
secret_chain([V|Vs]) :- foldl(secret_link, Vs, V, _).

secret_link(W, V, W) :- secret_state(st(S, O, A)), b_setval(sn_secret_state, st(S, O, [V-W, W-V|A])).

secret_bound_by(X, B, _, _) :- ( B == 1 -> secret_met(X, bound) ; true ).

%  secret_binds(+Ctx, +PI, +Opens, -Binds): of the arguments a call leaves unbound (Opens: 1), those every
%  clause of the rule binds (1); walked once per (rule, Opens) with no secret, kept with the walk's summaries
%  (secret_memo/3); a rule met again within its own walk binds none of them (a recursion: not known)
secret_binds(_, PI, Opens, B) :- secret_memo(PI, binds(Opens), B0), !, B = B0.
secret_binds(_, _, Opens, B) :- maplist(==(0), Opens), !, B = Opens.
secret_binds(_, PI, Opens, B) :- nb_current(sn_secret_binding, K), memberchk(PI-Opens, K), !,
    maplist(secret_not_opened, Opens, B).
secret_binds(C, N/A, Opens, B) :-
    C = sctx(Cls, _, _), get_assoc(N/A, Cls, Clauses),
    ( nb_current(sn_secret_binding, K0) -> true ; K0 = [] ),
    b_setval(sn_secret_binding, [N/A-Opens|K0]),
    same_length(B0, Opens), maplist(=(1), B0),
    foldl(secret_binds_clause(C, Opens), Clauses, B0, B),
    b_setval(sn_secret_binding, K0),
    assertz(secret_memo(N/A, binds(Opens), B)).

secret_not_opened(O, B) :- ( O == 1 -> B = 0 ; B = 1 ).

secret_binds_clause(C, Opens, c(Cl, F, L), B0, B) :-
    b_getval(sn_secret_state, St),
    \+ \+ ( rule_head(Cl, H), ( Cl = (_ :- Body) -> true ; Body = true ), H =.. [_|As],
            secret_opened(As, Opens, Open), secret_seen_from(H, Open),
            secret_walk(Body, C, F-L, [], [], _),
            maplist(secret_bound_flag, As, Got), nb_setval(sn_secret_got, Got) ),
    b_setval(sn_secret_state, St),
    nb_getval(sn_secret_got, Got),
    maplist(secret_both_bound, Got, B0, B).

secret_bound_flag(X, F) :- ( secret_all_bound(X) -> F = 1 ; F = 0 ).

secret_both_bound(X, Y, Z) :- ( X == 1, Y == 1 -> Z = 1 ; Z = 0 ).

secret_met(X, How) :-
    secret_state(st(S0, O0, A)), term_variables(X, Vs), secret_not_in(Vs, S0, New), append(S0, New, S),
    ( How == open -> append(O0, New, O) ; secret_not_in(O0, Vs, O) ),
    b_setval(sn_secret_state, st(S, O, A)).

%  (which side is bound is read before the alias is recorded: through it, each side holds the other)
secret_alias(X, Y) :-
    ( ( secret_all_bound(X) ; secret_all_bound(Y) ) -> How = bound ; How = open ),
    secret_state(st(S, O, A0)), secret_pairs(X, Y, A0, A), b_setval(sn_secret_state, st(S, O, A)),
    secret_met(X-Y, How).

secret_all_bound(X) :- secret_vars(X, Vs), secret_state(St), secret_fresh(Vs, St, [], _).

secret_pairs(X, Y, A0, A) :-
    (   var(X), var(Y) -> A = [X-Y, Y-X|A0]
    ;   var(X) -> A = [X-Y|A0]
    ;   var(Y) -> A = [Y-X|A0]
    ;   compound(X), compound(Y), compound_name_arity(X, N, Ar), compound_name_arity(Y, N, Ar)
    ->  X =.. [_|Xs], Y =.. [_|Ys], foldl(secret_pairs, Xs, Ys, A0, A)
    ;   A = A0
    ).

%  a goal whose bindings are not kept after it (\+, forall/2, a collection's goal and template): what it met
%  is met open, what it bound before it stays bound, its aliases kept (more aliases: more outputs, never fewer)
secret_unbinding(St0) :-
    St0 = st(S0, O0, _), secret_state(st(S1, _, A1)),
    secret_not_in(S1, S0, New), append(O0, New, O), b_setval(sn_secret_state, st(S1, O, A1)).

%  branches walked each from the state before them all: after them a variable is bound when every branch
%  bound it, open when one did not (met in one branch only, or open in one)
secret_branch_state(st(S0, _, _), Ends) :-
    foldl(secret_end_union, Ends, st(S0, [], []), st(S, _, A)),
    include(secret_open_in_one(Ends), S, O),
    b_setval(sn_secret_state, st(S, O, A)).

secret_end_union(st(S1, _, A1), st(S0, O0, A0), st(S, O0, A)) :-
    secret_not_in(S1, S0, New), append(S0, New, S), secret_not_in_pairs(A1, A0, NewA), append(A0, NewA, A).

secret_not_in_pairs([], _, []).
secret_not_in_pairs([V-T|Ps], A, Out) :-
    ( member(W-U, A), W == V, U == T -> Out = Out1 ; Out = [V-T|Out1] ), secret_not_in_pairs(Ps, A, Out1).

secret_open_in_one(Ends, V) :- member(st(S, O, _), Ends), ( \+ secret_has(S, V) ; secret_has(O, V) ), !.
