/*  Part of sentinel_core (included): one budget for the whole check of a rulebase (checker.py).

    Each walk of a guard has a limit of its own (unfinished_walks.pl), but a rulebase of many guards, each
    walked to its limit by each walk, cost their product: a hostile draft, checked live in the console,
    held the engine for minutes. So a check sets one budget, inferences and a wall-clock deadline, that every
    walk of every guard draws on: once spent, each walk left says it could not finish (unfinished(budget)),
    which refuses a draft (checker.py, unchecked_guard) and warns otherwise. Never silence.
*/

%  sn_check_budget(+RB, +Inferences, +Seconds): the budget the walks of RB's check share from now on.
sn_check_budget(RB, Inferences, Seconds) :-
    must_be(positive_integer, Inferences), must_be(positive_integer, Seconds),
    get_time(Now), Deadline is Now + Seconds,
    dynamic(RB:'$check_budget'/2),
    retractall(RB:'$check_budget'(_, _)), assertz(RB:'$check_budget'(Inferences, Deadline)).

%  sn_check_walk(+Walk, +RB, -Out): one of the checker's walks (engine.py GUARD_WALKS) on RB's budget.
sn_check_walk(Walk, RB, Out) :-
    must_be(oneof([sn_tautological_guards, sn_negated_arguments, sn_absent_negations, sn_unsure_blind_reads,
                   sn_unconditional_guards, sn_unreached_rules]), Walk),
    setup_call_cleanup(nb_setval(sn_checked_rulebase, RB), call(Walk, RB, Out),
                       nb_setval(sn_checked_rulebase, [])).

%  sn_check_spent(+RB, -Out): what the check has left (for the checker's tests: a budget that is kept).
sn_check_spent(RB, Out) :-
    RB:'$check_budget'(Left, _), to_json_atom(json([left=Left]), Out).

checked_rulebase(RB) :-
    nb_current(sn_checked_rulebase, RB), atom(RB), RB \== [], current_predicate(RB:'$check_budget'/2), !.

%  budgeted_outcome(+RB, :Walk, +Limit, -Outcome): walk_outcome/3 within Limit and what the budget has left;
%  what it spends is taken from the budget (a walk that errs or fails spent it too).
budgeted_outcome(RB, Walk, Limit0, Outcome) :-
    RB:'$check_budget'(Left, Deadline),
    get_time(Now), Seconds is Deadline - Now,
    (   ( Left =< 0 ; Seconds =< 0 )
    ->  Outcome = unfinished(budget)
    ;   Limit is min(Limit0, Left),
        statistics(inferences, I0),
        bounded_outcome(call_with_time_limit(Seconds, Walk), Limit, Outcome),
        statistics(inferences, I1),
        Left1 is max(0, Left - (I1 - I0)),
        retractall(RB:'$check_budget'(_, _)), assertz(RB:'$check_budget'(Left1, Deadline))
    ).

%  walk_budget_error(+E): E is the budget's own (inferences or time), which a walk's catch must pass on.
walk_budget_error(E) :- E == inference_limit_exceeded, !.
walk_budget_error(E) :- E == time_limit_exceeded, !.
walk_budget_error(E) :- subsumes_term(time_limit_exceeded(_), E).
