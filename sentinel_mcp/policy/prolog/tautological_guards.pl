/*  Part of sentinel_core (included): guards that hold for every call (for the checker).

    A guard "holds for every call" when its goal is proved whatever the facts, the contexts, the user's
    answers, the confirmations and the call's arguments are: ``\+ fail``, ``(X = X)``, ``(blocked(x) ;
    true)``, a rule with a clause that needs nothing. It reads as a condition and lets everything through.
    ``true`` as the whole goal is the language's way to say a guard is open on purpose, and a citation of
    the policy sentence (require/3 with a policy_ref) says why: neither is told.

    Decided by a three-valued evaluation, not by spellings: every goal that reads something (a base fact,
    an askable, a confirmation, a context, one of Sentinel's runtime predicates) is unknown, and so is every
    value it binds and every argument of the call (each an opaque '$sn_unknown'(Key, N), equal only to itself).
    A pure builtin over known values is run as the gateway would run it; over an unknown, it is unknown, but for
    the few that decide the same for every value (U = U, U == U, f(U) \= g(V): unknown_values.pl).
    Control constructs combine their parts' values (a disjunction holds when either part holds, whether the
    other is known or not; a negation swaps holds and fails), the rulebase's rules through their clauses,
    bounded in depth and inferences. A result is t(Det) (holds, Det: no other solution left), f or u.
    Where it cannot tell the result is u: fewer warnings, never a false one. A walk out of its budget is said.
*/

%  sn_tautological_guards(+RB, -Out): file, line and tool of every guard whose goal holds for every call; a
%  guard whose walk could not finish (its budget, an error) is listed apart, with the reason
%  (unfinished_walks.pl).
sn_tautological_guards(RB, Out) :-
    findall(I, ( RB:'$src'(decl, guard(T, Args, G), F, L), atom(T), G \== true, \+ cites_policy(G),
                 guard_verdict(RB, Args, G, V), verdict_item(V, T, F, L, I) ),
            Is),
    walk_report(guards, Is, Out).

verdict_item(holds, T, F, L, found(json([tool=T, file=F, line=L, kind=holds]))).
verdict_item(vacuous, T, F, L, found(json([tool=T, file=F, line=L, kind=vacuous]))).
verdict_item(unfinished(Why), T, F, L, unfinished(Row)) :- unfinished_row(T, F, L, Why, Row).

%  guard_verdict(+RB, +Args, +G, -V): holds, tells nothing (V = no), or could not finish (V = unfinished(Why):
%  its inferences, the stacks, an error, a case analysis too large for its probe's budget; said, not kept
%  silent).
guard_verdict(RB, Args, G, V) :-
    new_shown_room,  % the room the texts its builtins make count against, as a decision's pass has
    reset_too_large, reset_vacuous_read,
    Limit = 1000000,  % room for the probes' budget (probe_tv/5)
    walk_outcome(( \+ \+ ( random_between(1, 4611686018427387904, K), b_setval(sn_unknown_key, K),
                           walk_room(RB, Limit), ( hoisted_reads(RB, G, Args, G1) -> true ; G1 = G ),
                           unknowns(Args), probed_tv(RB, G1, 6, R), R = t(_) )
                 -> V0 = holds ; V0 = no ), Limit, O),
    (   O = unfinished(Why) -> V = unfinished(Why)
    ;   V0 == no, too_large_case -> V = unfinished(too_large)  % a case analysis not read: said (probe_tv/5)
    ;   V0 == no, vacuous_read -> V = vacuous                   % hoisted_reads.pl
    ;   V = V0
    ).

%  unknowns(+T): every variable of T becomes a value of its own that nothing known equals. Each walk's
%  unknowns carry a key of its own: a rulebase that spells one cannot pass for unknown what it knows.
unknowns(T) :- term_variables(T, Vs), maplist(unknown, Vs).
unknown('$sn_unknown'(K, N)) :- b_getval(sn_unknown_key, K), flag(sn_unknown, N, N + 1).

has_unknown(T) :- sub_term(S, T), is_unknown(S), !.
is_unknown(T) :- compound(T), T = '$sn_unknown'(K0, _), b_getval(sn_unknown_key, K), K0 == K.

%  tv(+RB, +Goal, +Depth, -Value): Goal's value; its bindings stay only where the gateway would make them.
tv(_, V, _, u) :- var(V), !.
tv(_, G, _, u) :- G = _:_, !, unknowns(G).
%  a cut, reached, holds: what it prunes is the rule's to read (rule_tv/4, rule_cases/4), not its value
tv(_, G, _, t(true)) :- G == !, !.
tv(RB, G, _, R) :- runnable(G), !, run_pure(RB, G, R).
tv(RB, G, _, R) :- unknown_value_goal(G), has_unknown(G), !, unknown_value_tv(RB, G, R).  % unknown_values.pl
tv(RB, (A, B), D, R) :- !, flag(sn_unknown, N0, N0), tv(RB, A, D, RA), and_tv(RA, RB, B, D-N0, R).
tv(RB, (C -> A ; B), D, R) :- !, if_tv(RB, C, A, B, D, R).
%  *-> tries the condition's other solutions too: the walk, following the first, can tell only that it holds
tv(RB, (C *-> A ; B), D, R) :- !, if_tv(RB, C, A, B, D, R0), ( R0 = t(_) -> R = t(false) ; R = u ).
tv(RB, (C -> A), D, R) :- !, if_tv(RB, C, A, fail, D, R).
tv(RB, (C *-> A), D, R) :- !, if_tv(RB, C, A, fail, D, R0), ( R0 = t(_) -> R = t(false) ; R = u ).
tv(RB, (A ; B), D, R) :- !,
    captured(RB, A, D, RA, Bind),
    (   RA = t(_) -> Bind, R = t(false)             % the first branch, and the second left to try
    ;   RA == f -> tv(RB, B, D, R)
    ;   captured(RB, B, D, RB1, _), ( RB1 = t(_) -> R = t(false) ; R = u ), unknowns((A ; B))
    ).
tv(RB, \+ A, D, R) :- !, captured(RB, A, D, RA, _), not_tv(RA, R).
tv(RB, once(A), D, R) :- !, tv(RB, A, D, R0), ( R0 = t(_) -> R = t(true) ; R = R0 ).
tv(_, ignore(A), _, t(true)) :- !, unknowns(A).
tv(RB, forall(C, A), D, R) :- !, tv(RB, \+ (C, \+ A), D, R).
tv(RB, require(A, _), D, R) :- !, tv(RB, A, D, R).
tv(RB, require(A, _, _), D, R) :- !, tv(RB, A, D, R).
%  a collection into a variable holds, whatever the goal finds (its value is then unknown)
tv(_, G, _, R) :- collects_into(G, Into), !, ( var(Into) -> unknowns(G), R = t(true) ; unknowns(G), R = u ).
tv(RB, G, D, R) :- D > 0, callable(G), \+ base(RB, G), user_pred(RB, G), !, D1 is D - 1, rule_tv(RB, G, D1, R).
tv(_, G, _, u) :- unknowns(G).                     % reads something: a fact, an answer, a context, ...

%  runnable(+G): G calls pure builtins only (their parts too) over no unknown value: run as it is.
%  (Prolog's own constructs only: a Sentinel one, require/2,3, is not a goal to run outside a proof.)
runnable(G) :- \+ has_unknown(G), pure_tree(G).

pure_tree(G) :- var(G), !, fail.
pure_tree(G) :- catch(goal_parts(prolog, G, Parts), refused(_), fail), !, forall(member(P, Parts), pure_tree(P)).
pure_tree(G) :- callable(G), G \= _:_, functor(G, N, A), pure_builtin(N, A).

%  Run in the rulebase's module, as the gateway runs it: with its bounded and strict twins of the builtins
%  (a list or a text past their bound is an error, not a checker's gigabytes). An error is unknown, not a
%  failure: the guard errs, and a negation of it holds nothing.
run_pure(RB, G, R) :-
    (   catch(call_with_inference_limit(RB:G, 10000, Done), E, erred(E))
    ->  (   nonvar(E) -> R = u
        ;   Done == inference_limit_exceeded -> R = u
        ;   Done == ! -> R = t(true)
        ;   R = t(false)
        )
    ;   R = f
    ).

erred(E) :- walk_budget_error(E), !, throw(E).  % the walk's own budget: passed on (unfinished_walks.pl)
erred(_).

%  A conjunction: the second part under the first's bindings (probed over the unknowns the first made: N0,
%  the count of unknowns before it); one that fails after a first part that left
%  solutions untried may hold on another of them (unknown).
and_tv(f, _, _, _, f) :- !.
and_tv(t(D1), RB, B, D-N0, R) :- !, probed_kept_tv(RB, B, D, N0, RB1, _),
    ( RB1 = t(D2) -> ( D1 == true, D2 == true -> R = t(true) ; R = t(false) )
    ; RB1 == f, D1 == true -> R = f
    ; R = u ).
%  An unknown first part that made values the second tests with tests that cover every value (probed: t) is
%  the first part alone: the tests test nothing (said: hoisted_reads.pl).
and_tv(u, RB, B, D-N0, R) :- probed_kept_tv(RB, B, D, N0, RB1, How),  % probed_cases.pl
    ( RB1 == f -> R = f ; R = u, ( RB1 = t(_), How == probed -> note_vacuous_read ; true ) ).

%  An if-then-else: a known condition picks its branch; an unknown one holds when both branches do.
if_tv(RB, C, A, B, D, R) :-
    captured(RB, C, D, RC, Bind),
    (   RC = t(_) -> Bind, tv(RB, A, D, R)
    ;   RC == f -> tv(RB, B, D, R)
    ;   findall(RA0, ( unknowns(C), probed_tv(RB, A, D, RA0) ), [RA]),  % the branch, whatever C bound
        probed_tv(RB, B, D, RB1), unknowns((C, A ; B)),
        ( RA = t(_), RB1 = t(_) -> R = t(false) ; RA == f, RB1 == f -> R = f ; R = u )
    ).

not_tv(t(_), f).
not_tv(f, t(true)).
not_tv(u, u).

%  captured(+RB, +G, +D, -R, -Bind): G's value, its bindings undone; calling Bind makes them again.
captured(RB, G, D, R, Bind) :-
    term_variables(G, Vs),
    findall(R0-Vs, tv(RB, G, D, R0), [R-Vs1]),
    Bind = (Vs = Vs1).

collects_into(findall(_, _, R), R).
collects_into(findall(_, _, R, _), R).
collects_into(aggregate_all(S, _, R), R) :- nonvar(S), memberchk(S, [count, sum(_), bag(_), set(_)]).

%  A rule: holds when a clause whose head takes the goal as it is holds (and no clause before it that may
%  take the goal has a cut: ok(a) :- !, fail. ok(_). fails for a); fails when every clause fails or
%  cannot take it whatever the unknowns are; otherwise (a head that takes it only for some value of an
%  unknown: ok(admin) for ok(Arg)) unknown. What it binds is then unknown.
rule_tv(RB, G, D, R) :-
    copy_term(G, Open0), open_unknowns(Open0, Open),
    findall(V-Cut, ( rule_parts(RB, G, H, B), clause_tv(RB, G, Open, H, B, D, V),
                     clause_cut(RB, G, Open, H, B, D, Cut) ), VCs),
    (   append(Before, [t(_)-_|_], VCs), \+ member(_-cut, Before) -> R = t(false)  % no cut before may prune it
    ;   forall(member(V-_, VCs), V == f) -> R = f
    ;   clause_set_tv(RB, G, D, R1) -> R = R1  % the clauses together (probed_cases.pl)
    ;   rule_cases(RB, G, _, Disj), hoisted_reads(RB, Disj, G, Disj1) -> captured(RB, Disj1, D, R, _)
    ;   R = u
    ),
    unknowns(G).

%  clause_cut(+RB, +G, +Open, +H, +B, +D, -Cut): cut where the clause may reach a cut for G; none where its
%  head cannot take G, or takes it as it is and the goals before its first cut fail for it (ok(X) :- X == a,
%  !, fail. cuts nothing for ok(b))
clause_cut(RB, G, Open, H, B, D, Cut) :-
    (   \+ \+ H = Open, body_has_cut(B),
        \+ ( \+ \+ H = G, cut_split(B, _, _),
             copy_term((H :- B), (H1 :- B1)), H1 = G, cut_split(B1, Pre, _), probed_tv(RB, Pre, D, f) )
    ->  Cut = cut
    ;   Cut = none
    ).

clause_tv(RB, G, Open, H, B, D, V) :-
    (   \+ \+ H = G
    ->  copy_term((H :- B), (H1 :- B0)), H1 = G, ( hoisted_reads(RB, B0, G, B1) -> true ; B1 = B0 ),
        probed_tv(RB, B1, D, V)  % probed_cases.pl
    ;   \+ \+ H = Open
    ->  V = u
    ;   V = f
    ).

%  open_unknowns(+T, -O): T with each unknown value replaced by a variable (what the unknown might be).
open_unknowns(T, O) :- is_unknown(T), !, O = _.
open_unknowns(T, O) :- compound(T), has_unknown(T), !, T =.. [F|As], maplist(open_unknowns, As, Os), O =.. [F|Os].
open_unknowns(T, T).
