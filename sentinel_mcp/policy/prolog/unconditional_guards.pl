/*  Part of sentinel_core (included): guards whose goal holds on nothing (for the checker).

    A guard "holds on nothing" when its goal can be proved with no fact, no answer of the user and no
    confirmation: an empty world, in which every base predicate and the user's askables fail (one the agent
    may answer holds: the client answers it) and nothing is confirmed,
    and in which the call's arguments are whatever the caller chooses (so a pure builtin over them, which the
    caller can satisfy, counts as holding). On a destructive tool such a guard turns off the confirmation
    the fail-safe default would ask: the checker warns unless the guard cites the policy sentence that says
    so (a require/3 with a policy_ref, itself checked against the document).

    The walk follows the goal's structure, not its spelling: control constructs by their meaning (a
    disjunction holds when either branch does, an if-then-else when its else does or its condition and
    then do, its then alone where its condition surely holds), the rulebase's own rules through each clause
    (one clause holding is enough, unless a clause before it surely cuts the goal off: clauses_hold/4),
    bounded in depth.
    Where it cannot tell, it says "needs something" (fewer warnings, never a false clean bill): a negation
    counts as what it negates, a meta-call as its parts, a Sentinel construct as needing the user or a fact.
    A walk out of its budget, or stopped by an error, is said as such (unfinished_walks.pl).
*/

%  sn_unconditional_guards(+RB, -Out): file and line of every guard, and whether it holds on nothing and
%  cites no policy sentence (for the checker to tell which guards a tool's calls meet); a guard whose walk
%  could not finish is listed apart, with the reason (unfinished_walks.pl).
sn_unconditional_guards(RB, Out) :-
    findall(I, ( RB:'$src'(decl, guard(T, _, G), F, L), atom(T), needs_item(RB, G, T, F, L, I) ), Is),
    walk_report(guards, Is, Out).

%  The walk of one guard, in a budget: rules written to branch (each clause calling many goals that each try
%  the rule again) take exponentially many steps in the depth. A walk that does not finish, or that errs,
%  cannot call the guard safe, nor tell that it holds on nothing: it is said as unfinished.
needs_item(RB, G, T, F, L, Item) :-
    (   cites_policy(G) -> O = done, N = @(false)
    ;   walk_outcome(( holds_on_nothing(RB, G, 6) -> N = @(true) ; N = @(false) ), 200000, O)
    ),
    (   O = unfinished(Why) -> unfinished_row(T, F, L, Why, Row), Item = unfinished(Row)
    ;   Item = found(json([tool=T, file=F, line=L, nothing=N]))
    ).

%  a citation counts when the guard always proves it: a requirement among its top-level conjuncts (one on a
%  branch never taken says nothing)
cites_policy(G) :- conjunct(G, C), nonvar(C), C = require(_, _, policy_ref(_, _)), !.

conjunct(G, G).
conjunct(G, C) :- nonvar(G), G = (A, B), ( conjunct(A, C) ; conjunct(B, C) ).

holds_on_nothing(_, V, _) :- var(V), !, fail.
holds_on_nothing(_, _:_, _) :- !, fail.
holds_on_nothing(RB, (A, B), D) :- !, holds_on_nothing(RB, A, D), holds_on_nothing(RB, B, D).
holds_on_nothing(RB, (C -> A ; B), D) :- !, if_holds(RB, C, A, B, D).
holds_on_nothing(RB, (C *-> A ; B), D) :- !, if_holds(RB, C, A, B, D).
holds_on_nothing(RB, (A ; B), D) :- !, ( holds_on_nothing(RB, A, D) -> true ; holds_on_nothing(RB, B, D) ).
holds_on_nothing(_, ignore(_), _) :- !.
holds_on_nothing(RB, \+ A, D) :- !, ( ground(A), pure_goal(A) -> \+ pure_holds(RB, A) ; holds_on_nothing(RB, A, D) ).
%  The meta-calls that hold when their goal does not (a collection of nothing is empty, a count is 0, a
%  condition nothing meets is met for all): a goal they hold on needs nothing, so an empty world's result
%  is theirs when the walk says it needs something (findall(x, blocked(y), _) and forall(fail, ...) held
%  for every call, walked as if each part had to hold). forall's action is walked where its condition holds.
holds_on_nothing(RB, findall(_, G, R), D) :- !, ( \+ \+ holds_on_nothing(RB, G, D) -> true ; R = [] ).
holds_on_nothing(RB, findall(_, G, R, T), D) :- !, ( \+ \+ holds_on_nothing(RB, G, D) -> true ; R = T ).
holds_on_nothing(RB, aggregate_all(S, G, R), D) :- nonvar(S), !,
    ( \+ \+ holds_on_nothing(RB, G, D) -> true ; empty_aggregate(S, R) ).
holds_on_nothing(RB, forall(C, A), D) :- !,
    ( \+ \+ holds_on_nothing(RB, C, D) -> \+ \+ ( holds_on_nothing(RB, C, D), holds_on_nothing(RB, A, D) ) ; true ).
holds_on_nothing(RB, G, D) :- catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    forall(member(P, Parts), holds_on_nothing(RB, P, D)).
holds_on_nothing(RB, G, _) :- pure_goal(G), !, pure_holds(RB, G).
holds_on_nothing(RB, G, _) :- agent_answers(RB, G), !.
holds_on_nothing(RB, G, D) :- D > 0, \+ base(RB, G), user_pred(RB, G), !, D1 is D - 1,
    findall(H-B, rule_parts(RB, G, H, B), Clauses), clauses_hold(Clauses, RB, G, D1).

%  clauses_hold(+Clauses, +RB, +G, +D): a clause that takes G holds on nothing, and no clause before it cuts
%  G off. One cuts it off when its head takes G whatever the caller chooses and its goals before its cut
%  hold whatever the caller chooses (pure, none of the caller's values in them: run): the rule is then that
%  clause's (ok(_) :- !, fail. ok(_). never holds). A cut reached only with a fact (blocked(X), !, fail) or
%  only for arguments the caller need not choose (X == admin, !, fail) does not stop the clauses after it.
clauses_hold([H-B|Clauses], RB, G, D) :-
    (   \+ \+ ( H = G, holds_on_nothing(RB, B, D) ) -> true
    ;   subsumes_term(H, G), cut_split(B, Pre, _), \+ \+ ( H = G, surely_holds(RB, G, Pre) ) -> fail
    ;   clauses_hold(Clauses, RB, G, D)
    ).

%  cut_split(+B, -Pre, -Post): B's goals before and after its first cut among its top-level conjuncts
cut_split(B, true, true) :- B == !, !.
cut_split(B, Pre, Post) :- nonvar(B), B = (A, Rest),
    ( A == ! -> Pre = true, Post = Rest ; cut_split(Rest, Pre1, Post), Pre = (A, Pre1) ).

%  surely_holds(+RB, +G, +Pre): Pre holds for every call of G: pure, none of G's (the caller's) variables in
%  it, and proved as the guard would prove it
surely_holds(RB, G, Pre) :-
    pure_goal(Pre), term_variables(G, GVs), term_variables(Pre, PVs),
    \+ ( member(V, PVs), member(W, GVs), V == W ),
    required_goal(Pre, P),
    catch(call_with_inference_limit(once(RB:P), 10000, R), E, not_the_budget(E)), R \== inference_limit_exceeded.

%  An if-then-else cuts too: a condition that holds whatever the caller chooses (ground, pure, proved: no
%  variable of the caller's or of its own in it) leaves its else never taken ((true -> blocked(x) ; true)
%  needs the fact).
if_holds(RB, C, A, B, D) :-
    (   surely_holds(RB, C, C) -> holds_on_nothing(RB, A, D)
    ;   holds_on_nothing(RB, B, D) -> true
    ;   holds_on_nothing(RB, C, D), holds_on_nothing(RB, A, D)
    ).

%  An askable the agent may answer (from([user, agent]), the default): the client meets it with its answer.
agent_answers(RB, G) :- callable(G), functor(G, N, A), functor(H, N, A),
    RB:'$src'(decl, askable(H, _, _, O), _, _), askable_from(O, From), memberchk(agent, From), !.

%  pure_goal(+G): every goal G calls takes nothing from the store or the user: a pure builtin, format/3 into
%  text, a cut, or one of Sentinel's runtime predicates over the call, the clock and text (not those that
%  read facts or contexts: fact_provenance/2, context_value/2).
pure_goal(G) :- forall(leaf_goal(G, L), ( callable(L), L \= _:_, functor(L, N, A), pure_call(N/A) )).

pure_call(N/A) :- pure_builtin(N, A), !.
pure_call(PI) :- memberchk(PI, [!/0, format/3, now/1, iso_hours_between/3, iso_date_before/2, option_value/4,
                                json_get/3, call_tool_name/1, answer_label/3, humanized/2, speaks_of_a_code/1]).

%  A pure goal holds when the caller can make it hold: always, unless it is ground (nothing of the caller's
%  in it) and false, as fail/0 or 1 == 2 (tried under a small inference limit), run as the guard runs it:
%  in the rulebase (its strict arithmetic, Sentinel's runtime predicates), a requirement as the goal it
%  requires (require/2,3 is the meta-interpreter's, no predicate: run as one it erred, read as false).
pure_holds(_, A = B) :- \+ ground(A = B), !, \+ A \= B.  % no value of its variables unifies what cannot unify
pure_holds(_, G) :- \+ ground(G), !.
pure_holds(RB, G) :-
    required_goal(G, P),
    catch(call_with_inference_limit(once(RB:P), 10000, R), E, not_the_budget(E)), R \== inference_limit_exceeded.

%  required_goal(+G, -P): G with every require/2,3 replaced by its goal, through the control constructs and
%  meta-calls that hold goals (goal_check.pl's goal_parts/3); a goal's data arguments are left as they are.
required_goal(G, G) :- var(G), !.
required_goal(require(A, _), P) :- !, required_goal(A, P).
required_goal(require(A, _, _), P) :- !, required_goal(A, P).
required_goal(G, P) :- goal_positions(G, Ms), !, G =.. [F|As], maplist(required_arg, Ms, As, Ps), P =.. [F|Ps].
required_goal(G, G).

required_arg(g, A, P) :- !, required_goal(A, P).
required_arg(_, A, A).

goal_positions((_, _), [g, g]).
goal_positions((_ ; _), [g, g]).
goal_positions((_ -> _), [g, g]).
goal_positions((_ *-> _), [g, g]).
goal_positions(\+ _, [g]).
goal_positions(once(_), [g]).
goal_positions(ignore(_), [g]).
goal_positions(forall(_, _), [g, g]).
goal_positions(findall(_, _, _), [d, g, d]).
goal_positions(findall(_, _, _, _), [d, g, d, d]).
goal_positions(aggregate_all(_, _, _), [d, g, d]).
goal_positions(bagof(_, _, _), [d, g, d]).
goal_positions(setof(_, _, _), [d, g, d]).
goal_positions(_ ^ _, [d, g]).

%  An error of a goal tried makes it false; the walk's own budget running out (needs_item/6) is passed on:
%  caught here, the walk would go on past it, unbounded.
not_the_budget(E) :- walk_budget_error(E), !, throw(E).
not_the_budget(_) :- fail.

%  what aggregate_all/3 gives when its goal has no solution (max and min fail)
empty_aggregate(count, 0).
empty_aggregate(sum(_), 0).
empty_aggregate(bag(_), []).
empty_aggregate(set(_), []).
