/*  Part of sentinel_core (included): how the checker's walks of a guard end (for the checker).

    A walk of a guard (negated_arguments.pl, absent_negations.pl, unsure_blind_reads.pl,
    tautological_guards.pl, unconditional_guards.pl) that runs out of its budget, errs or fails has not checked the guard: kept
    silent, the guard reads as checked and found fine. Every walk runs through walk_outcome/3, and a guard
    whose walk did not finish is listed (unfinished_row/5) with the reason: a word from a fixed list, never
    the text the error carried (a rulebase's own terms may be in it, of any size).
*/

%  walk_outcome(:Walk, +Limit, -Outcome): done (Walk's bindings kept), or unfinished(Reason). Within Limit
%  inferences, and, in a check (sn_check_walk/3), within what is left of the check's budget (check_budget.pl).
walk_outcome(Walk, Limit, Outcome) :-
    (   checked_rulebase(RB)
    ->  budgeted_outcome(RB, Walk, Limit, Outcome)
    ;   bounded_outcome(Walk, Limit, Outcome)
    ).

bounded_outcome(Walk, Limit, Outcome) :-
    (   catch(call_with_inference_limit(Walk, Limit, Done), E, true)
    ->  (   nonvar(E) -> walk_error_reason(E, Why), Outcome = unfinished(Why)
        ;   Done == inference_limit_exceeded -> Outcome = unfinished(budget)
        ;   Outcome = done
        )
    ;   Outcome = unfinished(failed)
    ).

%  The budget is the inferences, the stacks and the wall clock; an error's kind is named only when it is
%  one of ISO's (an unknown one is "error"); anything else thrown is "exception".
walk_error_reason(E, budget) :- E == inference_limit_exceeded, !.
walk_error_reason(E, budget) :- E == time_limit_exceeded, !.
walk_error_reason(E, budget) :- subsumes_term(time_limit_exceeded(_), E), !.
walk_error_reason(E, budget) :- subsumes_term(error(resource_error(_), _), E), !.
walk_error_reason(E, Kind) :-
    subsumes_term(error(_, _), E), E = error(Formal, _), callable(Formal), functor(Formal, Kind, _),
    memberchk(Kind, [type_error, domain_error, instantiation_error, uninstantiation_error, existence_error,
                     permission_error, representation_error, evaluation_error, syntax_error]), !.
walk_error_reason(E, error) :- subsumes_term(error(_, _), E), !.
walk_error_reason(_, exception).

%  outcome_reason(+Outcome, -Reason): '' for a finished walk.
outcome_reason(done, '').
outcome_reason(unfinished(Why), Why).

%  unfinished_row(+Tool, +File, +Line, +Why, -Row): the row every walk lists an unfinished guard with.
unfinished_row(T, F, L, Why, json([tool=T, file=F, line=L, unfinished=Why])).

%  walk_rows(+Items, -Found, -Unfinished): a walk's items (found(Row) or unfinished(Row)) split.
walk_rows([], [], []).
walk_rows([found(R)|Is], [R|Fs], Us) :- walk_rows(Is, Fs, Us).
walk_rows([unfinished(R)|Is], Fs, [R|Us]) :- walk_rows(Is, Fs, Us).

%  guard_walk(:Walk, ?Fs0, -Result): found(Fs), a few of the findings Walk left in Fs0 (distinct; a few per
%  guard: the pattern, not every place), or unfinished(Why).
guard_walk(Walk, Fs0, Result) :-
    walk_outcome(Walk, 200000, O),
    (   O = unfinished(Why) -> Result = unfinished(Why)
    ;   list_to_set(Fs0, Fs1), first_n(Fs1, 5, Fs), Result = found(Fs)
    ).

first_n(L, N, F) :- length(L, Len), ( Len =< N -> F = L ; length(F, N), append(F, _, L) ).

%  walk_item(+Result, +Tool, +File, +Line, +K1-K2, -Item): on backtracking, a row for each finding f(A, B)
%  (named K1 and K2), or the one row of an unfinished walk.
walk_item(unfinished(Why), T, F, L, _, unfinished(Row)) :- unfinished_row(T, F, L, Why, Row).
walk_item(found(Fs), T, F, L, K1-K2, found(json([tool=T, file=F, line=L, K1=A, K2=B]))) :- member(f(A, B), Fs).

%  walk_report(+Key, +Items, -Out): the JSON of a walk over every guard: Key = its findings, unfinished = the
%  guards it could not finish.
walk_report(Key, Items, Out) :-
    walk_rows(Items, Found, Unfinished),
    to_json_atom(json([Key=Found, unfinished=Unfinished]), Out).
