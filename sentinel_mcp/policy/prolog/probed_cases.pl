/*  Part of sentinel_core (included): case analyses over an unknown value, for tautological_guards.pl.

    The walk leaves ( U == a -> true ; U \== a ) unknown: each branch alone tests U. Taken together they
    cover every value, and such a guard lets every call through. Decided by probes, not by spellings:

    Where every goal that takes an unknown U is a test of U by the standard order (==, \==, =, \=, @<, @>, @=<,
    @>=, compare/3; member/2, memberchk/2 of a list of them) against atomic constants (or U itself), the goal's value for a value of U depends only
    on where that value lies among the constants: unbound, equal to one, or strictly between two (below all,
    above all). The goal is walked once for a probe of each place, with U replaced by it; where every probe
    holds, it holds for every value (and where every probe fails, it fails for every value). A place no probe
    can be found for is not assumed empty: the goal is then unknown, as before.

    What makes a probe tell the value for all is that nothing can read the probe but such a test. So a goal
    is not probed where an unknown reaches anything else: another builtin (atom_length/2, arithmetic, a type
    test: they tell apart values of one place), a rule of the rulebase whose clauses do (a rule's clauses are
    read as a disjunction, rule_cases/4), a collection (its result carries the
    value out), a unification with a variable or a compound (the variable carries it on), a test of two
    different unknowns. A goal that reads (a fact, an answer, a context) is unknown whatever the probe is.
    Fewer warnings, never a false one.

    What such a read binds is an unknown too, and the goals after it are probed over it (and_tv/5, if_tv/6):
    a fact holds ground terms, each in one of the places probed, so ( booking(B, S) -> ( S == x ; S \== x )
    ; true ) is told; booking(B, S), ( S == x ; S \== x ) is not (it holds only where the booking is there).
    Two reads of one fact are related only where they are one read exactly (hoisted_reads.pl); a case split
    on each read's answer would double the walks per read: not told (docs say why). And a rule's clauses
    are probed together where each alone is unknown (clause_set_tv/4): ok(a) and ok(X) :- X \== a cover
    every value as ( U = a ; U \== a ) does. The probes are bounded by the work they take (probe_tv/5), not
    by how many clauses or constants they read: one out of its budget is said (the guard is not analysed).
*/

%  probed_tv(+RB, +G, +D, -R): G's value, its bindings undone; one the walk leaves unknown is probed.
probed_tv(RB, G, D, R) :-
    captured(RB, G, D, R0, _),
    (   R0 == u, probe_tv(RB, G, D, 3, R1) -> R = R1 ; R = R0 ).

%  probed_kept_tv(+RB, +G, +D, +N0, -R, -How): probed_tv/4 with the walk's bindings kept (the second goal of a
%  conjunction: what it binds, the goals after it read), probed only where it takes an unknown made since
%  N0 (by the first goal: a value a fact read gave); those before were probed with the goal that holds the
%  conjunction, and probing each conjunction's rest over them again costs its length squared. Probed before
%  the bindings are made: bound, G's unknowns would be other terms.
%  How: probed where the probe told R, walked otherwise.
probed_kept_tv(RB, G, D, N0, R, How) :-
    captured(RB, G, D, R0, Bind),
    (   R0 == u, \+ \+ ( sub_term(S, G), is_unknown(S), arg(2, S, N), N >= N0 ), probe_tv(RB, G, D, 0, R1)
    ->  R = R1, How = probed
    ;   R = R0, How = walked
    ),
    Bind.

%  clause_set_tv(+RB, +G, +D, -R): the value of G's predicate as a whole, its clauses read as one goal
%  (ok(a). ok(X) :- X \== a. is ( U = a ; U \== a ) for ok(U)), probed as a body is; fails where it cannot
%  be. A head's variable (its first place) stands for the argument; any other head argument is a test of it
%  (a constant: of its place; a compound or a repeated variable: not a place test, so not probed).
clause_set_tv(RB, G, D, R) :-
    findall(R1, ( rule_cases(RB, G, _, Disj), probe_tv(RB, Disj, D, 3, R1) ), [R]).

%  rule_cases(+RB, +G, -NC, -Goal): the NC clauses of G's predicate that may take G as one goal, as Prolog
%  runs them: a clause without a cut is a disjunct, ( Tests, Body ; Rest ); one whose cut is among its
%  top-level goals commits to it once its head and the goals before the cut hold, and only where they fail are
%  the clauses after it tried: ( Tests, Pre -> Post ; Rest ) (a cut after the first is Post's own commit).
%  The if-then-else prunes Rest as the cut does, so the goal reads right inside a conjunction too (a goal
%  after it that fails does not bring back the clauses the cut pruned). A cut anywhere else (in a
%  disjunction: it cuts the clause from inside) is not read: the rule is then not probed. How many clauses
%  are read is bounded by the probe's work (probe_tv/5), not by their count.
rule_cases(RB, G, NC, Goal) :-
    open_unknowns(G, Open),  % a clause whose head takes G for no value of its unknowns is no case of it
    findall(Tests-B1, ( taking_clause(RB, G, Open, H, B), clause_case(G, H, B, Tests, B1) ), Cases),
    length(Cases, NC), NC > 0, cases_goal(Cases, Goal).

taking_clause(RB, G, Open, H, B) :- rule_parts(RB, G, H, B), \+ \+ H = Open.

clause_case(G, H, B, Tests, B1) :-
    copy_term((H :- B), (H1 :- B1)), G =.. [_|As], H1 =.. [_|HAs],
    maplist(head_test, As, HAs, Ts), conjunction(Ts, Tests).  % rule_compiler.pl

head_test(A, HA, true) :- var(HA), !, HA = A.
head_test(A, HA, A = HA).

%  cases_goal(+Cases, -Goal): the clauses (Tests-Body, in order) as one goal; fails on a cut it cannot read.
cases_goal([], fail).
cases_goal([Tests-B|Cases], Goal) :-
    cases_goal(Cases, Rest),
    (   \+ body_has_cut(B)
    ->  ( Rest == fail -> Goal = (Tests, B) ; Goal = ((Tests, B) ; Rest) )
    ;   cut_split(B, Pre, Post), \+ body_has_cut(Pre), committed(Post, Post1)  % unconditional_guards.pl
    ->  Goal = ((Tests, Pre) -> Post1 ; Rest)
    ).

%  committed(+Post, -Goal): the goals after a cut, each further top-level cut a commit of those before it
committed(Post, Post) :- \+ body_has_cut(Post), !.
committed(Post, (Pre -> Post1 ; fail)) :- cut_split(Post, Pre, Rest), \+ body_has_cut(Pre), committed(Rest, Post1).

%  probe_tv(+RB, +G, +D, +Deep, -R): t(false), f or u from a walk of G for a probe of each place of its unknowns
%  (read through rules Deep deep: none for the rest of each conjunction, which a rule's own probe covers);
%  fails where G cannot be probed (an unknown reaches more than a test of its place). How many unknowns,
%  constants and clauses it reads is bounded by the work it takes, not by their count (a count hides a guard
%  that lets everything through): past probe_budget/1 inferences it is unknown, and the guard's walk says so
%  (too_large_case/0: the guard is not analysed, never taken as checked).
probe_tv(RB, G, D, Deep, R) :-
    \+ probing,  % a run of a probe probes nothing again: each nesting would multiply the runs
    probe_budget(Limit),
    call_with_inference_limit(findall(R0, probe_runs(RB, G, D, Deep, R0), Rs), Limit, Done),
    (   Done == inference_limit_exceeded -> nb_setval(sn_too_large_case, true), R = u
    ;   Rs = [R]
    ).

%  the inferences one case analysis may take: what the guard's walk has left (walk_room/2), less a reserve for
%  the rest of the walk, so that a walk whose probe ran out finishes and says which guard was too large
probe_budget(L) :-
    (   nb_current(sn_walk_end, End), integer(End)
    ->  statistics(inferences, Now), L is max(1, End - Now - 150000)
    ;   L = 800000
    ).

%  walk_room(+RB, +Limit): the walk starting now ends within Limit inferences, or what the check has left
walk_room(RB, Limit) :-
    (   checked_rulebase(RB1), RB1 == RB, RB:'$check_budget'(Left, _) -> L is min(Limit, Left) ; L = Limit ),
    statistics(inferences, Now), End is Now + L, b_setval(sn_walk_end, End).

%  too_large_case: a probe of the current guard's walk ran out of its budget (reset by reset_too_large/0)
too_large_case :- nb_current(sn_too_large_case, T), T == true.
reset_too_large :- nb_setval(sn_too_large_case, false).

probe_runs(RB, G, D, Deep, R) :-
    probe_leaves(RB, Deep, G, [], Tested),
    Tested \== [],
    pairs_keys(Tested, Us0), sort(Us0, Us), pairs_values(Tested, Cs0), sort(Cs0, Cs),
    \+ ( member(C, Cs), float(C), C =\= C ),  % NaN: its place in the standard order is no place
    probes(Cs, Probes),
    % the runs stop at the first that is unknown or differs from the ones before: the value is then unknown
    State = seen(none),
    (   forall(( opened(G, Open, Pairs), probe_each(Pairs, Us, Probes), b_setval(sn_probing, true),
                 captured(RB, Open, D, R0, _) ),
               ( run_value(R0, V), arg(1, State, V0), ( V0 == none -> nb_setarg(1, State, V) ; V0 == V ) ))
      , arg(1, State, V1), V1 \== none
    ->  ( V1 == t -> R = t(false) ; R = f )
    ;   R = u
    ).

run_value(t(_), t).
run_value(f, f).

probing :- nb_current(sn_probing, P), P == true.

%  probe_each(+Pairs, +Us, +Probes): each probed unknown (Pairs: Unknown-Variable) takes one probe, on
%  backtracking every combination (the unbound one leaves it a variable); any other is itself again.
probe_each([], _, _).
probe_each([U-V|Pairs], Us, Probes) :-
    (   member(U1, Us), U1 == U -> member(P, Probes), ( P = value(V) -> true ; P == unbound ) ; V = U ),
    probe_each(Pairs, Us, Probes).

%  probe_leaves(+RB, +K, +G, +Tested0, -Tested): G's goals, through its control constructs, each one that takes
%  an unknown a test of its place (Tested: Unknown-Constant of each); fails if one is anything else. A rule
%  that takes one is read through its clauses (rule_cases/4; K rules deep at most: a loop is not probed):
%  ( one(U) ; other(U) ) with one(a) and other(X) :- X \== a covers every value as ( U = a ; U \== a ) does.
probe_leaves(RB, K, G, T0, T) :- probe_leaves_(RB, K, G, T0, T).

probe_leaves_(_, _, G, T, T) :- var(G), !.
probe_leaves_(_, _, G, T, T) :- \+ has_unknown(G), !.
probe_leaves_(_, _, G, T, T) :- G = _:_, !.                    % unknown whatever it takes
probe_leaves_(_, _, G, _, _) :- is_unknown(G), !, fail.        % called: the probe would be a goal
probe_leaves_(_, _, G, _, _) :- collection(G), !, fail.        % its result carries the value out
probe_leaves_(RB, K, G, T0, T) :- catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    foldl(probe_leaves_(RB, K), Parts, T0, T).
probe_leaves_(_, _, G, T0, T) :- place_test(G, U, Cs), !, findall(U-C, member(C, Cs), T1), append(T1, T0, T).
probe_leaves_(RB, _, G, T, T) :- callable(G), functor(G, N, A), \+ pure_builtin(N, A),
    ( base(RB, G) ; \+ user_pred(RB, G) ), !.                  % reads: unknown whatever it takes
probe_leaves_(RB, K, G, T0, T) :- K > 0, callable(G), user_pred(RB, G), !,
    K1 is K - 1, rule_cases(RB, G, _, Disj), probe_leaves_(RB, K1, Disj, T0, T).

collection(G) :- functor(G, N, A), memberchk(N/A, [findall/3, findall/4, aggregate_all/3, bagof/3, setof/3]).

%  place_test(+G, -U, -Cs): G tests where the unknown U lies against the atomic constants Cs ([]: U against
%  itself); member/2 and memberchk/2 of a list of them test whether it is one of them.
place_test(G, U, Cs) :-
    (   G = compare(O, A, B) -> ( var(O) -> true ; memberchk(O, [<, =, >]) )
    ;   functor(G, N, 2), memberchk(N, [==, \==, =, \=, @<, @>, @=<, @>=]), G =.. [_, A, B]
    ;   ( G = member(A, L) ; G = memberchk(A, L) ), is_list(L), L \== [], maplist(atomic, L)
    ->  is_unknown(A), U = A, Cs = L
    ),
    (   nonvar(U) -> true
    ;   is_unknown(A), A == B -> U = A, Cs = []
    ;   is_unknown(A), atomic(B) -> U = A, Cs = [B]
    ;   is_unknown(B), atomic(A) -> U = B, Cs = [A]
    ).

%  probes(+Cs, -Probes): unbound, a value strictly between each two constants (below the first, above the
%  last), and each constant; fails if one of those places has none of the values tried (it may not be
%  empty). The values between come first: a table of allowed values fails for the first of them, and the
%  runs stop there. Each place tries the values near its two ends and a few fixed ones: linear in Cs.
probes(Cs, [unbound|Probes]) :-
    places(Cs, bottom, Between),
    findall(value(V), ( member(V, Between) ; member(V, Cs) ), Probes).

places([], Lo, [X]) :- !, tried(Lo, top, X), above(Lo, X), !.
places([C|Cs], Lo, Xs) :-
    (   tried(Lo, C, X), above(Lo, X), X @< C -> Xs = [X|Xs1]
    ;   adjacent(Lo, C) -> Xs = Xs1
    ),
    places(Cs, C, Xs1).

tried(Lo, Hi, X) :-
    (   member(E, [Lo, Hi]), E \== bottom, E \== top, probe_near(E, X)
    ;   member(X, [0, -1, 1, 0.5, '', a, z, "", "z", f(x)])
    ).

above(bottom, X) :- !, nonvar(X).
above(Lo, X) :- Lo @< X.

%  adjacent(+Lo, +Hi): nothing lies strictly between them: a float and the integer of its value (the standard
%  order puts the float first), small enough that no other number compares equal to them (and not 0: -0.0).
adjacent(Lo, Hi) :- float(Lo), integer(Hi), Lo =:= Hi, Hi =\= 0, abs(Hi) < 1 << 50.

probe_near(C, X) :- number(C), member(D, [1, -1, 0.5, -0.5]), X is C + D.
probe_near(C, X) :- atom(C), member(S, ['\x1\', x]), atom_concat(C, S, X).
probe_near(C, X) :- string(C), member(S, ["\x1\", "x"]), string_concat(C, S, X).
