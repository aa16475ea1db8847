/*  Part of sentinel_core (included): a bound context counts only while its check holds.

    sentinel_bind binds a context only when its checks (context/3) prove: "the booking in focus is the
    current user's". A guard that reads the context (context_value/2) rests on that check. The binding is
    derived from facts, and those facts expire, are invalidated by a write's effect (the user gave the
    booking away), or are read again and now say otherwise; a new policy may check otherwise. A binding kept
    as proved once let a guard act on a booking that was no longer the user's. So every read of a bound
    context in a proof proves its checks again, within that proof (what they need is fetched like any other
    fact; a check that fails makes the binding no value). A context declared without a check (context/1
    only) is read as bound.
*/

%  checked_context(+N, -V, -Tree): N is bound to V and every check of N holds for V now. A check that reads
%  a context whose checks are being proved (its own, or one of a cycle) reads it as bound: as at bind time,
%  where the check read the bindings of the moment, and never a proof without end.
checked_context(N, V, Tree) :-
    context_value(N, V),
    query_rb(RB),
    checking_contexts(Open),
    (   memberchk(N, Open)
    ->  Tree = context(N, V)
    ;   findall(N-C, RB:context(N, V, C), Checks),
        (   Checks == []
        ->  Tree = context(N, V)
        ;   b_setval(sn_checking_contexts, [N|Open]),  % undone on backtracking and on an exception
            context_checks(Checks, Ts),
            b_setval(sn_checking_contexts, Open),
            Tree = checked_context(N, V, Ts)
        )
    ).

checking_contexts(Open) :-
    (   nb_current(sn_checking_contexts, Open0), is_list(Open0) -> Open = Open0 ; Open = [] ).

context_checks([], []).
context_checks([_-C|Cs], [T|Ts]) :- once(prove(C, T)), context_checks(Cs, Ts).
