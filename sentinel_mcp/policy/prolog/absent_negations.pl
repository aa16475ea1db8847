/*  Part of sentinel_core (included): guards whose proof negates a fact read absent_on_error (for the
    checker).

    A binding marked absent_on_error reads the upstream's error answer as "looked up, nothing there": its
    predicate then has no fact for those inputs. A negation of it (`\+ user_by_email(E, _)`) therefore holds
    on ANY error the upstream sends, whatever caused it: a permission resting on it is granted by a failing
    or hostile upstream. The walk finds such a fact under a negation: `\+`, `not/1`, `( G -> fail ; true )`
    (the `\+ G` it is), `forall/2` (its condition is negated), and the collections whose goal may find
    nothing (findall/3,4 and aggregate_all/3: the empty result an error leaves is a value the guard may
    accept). An if-then-else's condition is walked as a positive goal: its else branch's own goals decide (the
    next source, which must then answer). It follows requirements, meta-calls and the rulebase's own rules
    (one already being walked is not walked again), bounded in depth and in inferences; it runs nothing.

    The guard of a tool a binding reads is not walked: its negation chooses where to look next (retail.pl
    asks the name and zip code, and looks them up, only when the email was not found), which the option is
    for; what that look-up finds is then what the policy relies on. A wildcard guard is no such guard (it
    covers writes too).
*/

%  sn_absent_negations(+RB, -Out): for each guard, the facts read absent_on_error its proof negates, with the
%  negated goal; a guard the walk cannot finish is listed apart, with the reason (unfinished_walks.pl).
sn_absent_negations(RB, Out) :-
    findall(I, ( RB:'$src'(decl, guard(T, _, G), F, L), atom(T), \+ source_lookup(RB, T),
                 guard_absent_negations(RB, G, Res), walk_item(Res, T, F, L, predicate-goal, I) ),
            Is),
    walk_report(negations, Is, Out).

%  a tool some binding reads (a look-up the policy fetches facts with)
source_lookup(RB, T) :- RB:'$src'(decl, binding(_, tool(T0, _), _, _), _, _), T0 == T, !.

guard_absent_negations(RB, G, Res) :-
    copy_term(G, G1),
    guard_walk(absent_walk(RB, G1, pos, d(6, []), [], Fs0), Fs0, Res).

%  absent_walk(+RB, +G, +Mode, +Depth, +F0, -F): Mode is pos, or neg(Top) under the negation Top (flip/3 of
%  negated_arguments.pl); F accumulates f(PredicateText, NegationText).
absent_walk(_, V, _, _, F, F) :- var(V), !.
absent_walk(_, _:_, _, _, F, F) :- !.
absent_walk(RB, (A, B), M, D, F0, F) :- !, absent_walk(RB, A, M, D, F0, F1), absent_walk(RB, B, M, D, F1, F).
absent_walk(RB, (A ; B), M, D, F0, F) :- nonvar(A), A = (C -> T), nonvar(T), ( T == fail ; T == false ), !,
    absent_walk(RB, \+ C, M, D, F0, F1), absent_walk(RB, B, M, D, F1, F).      % \+ C, spelt out
absent_walk(RB, (A ; B), M, D, F0, F) :- !, absent_walk(RB, A, M, D, F0, F1), absent_walk(RB, B, M, D, F1, F).
absent_walk(RB, (A -> B), M, D, F0, F) :- !, absent_walk(RB, (A, B), M, D, F0, F).
absent_walk(RB, (A *-> B), M, D, F0, F) :- !, absent_walk(RB, (A, B), M, D, F0, F).
absent_walk(RB, \+ A, M, D, F0, F) :- !, flip(M, \+ A, M1), absent_walk(RB, A, M1, D, F0, F).
absent_walk(RB, not(A), M, D, F0, F) :- !, flip(M, not(A), M1), absent_walk(RB, A, M1, D, F0, F).
absent_walk(RB, forall(C, A), M, D, F0, F) :- !, absent_walk(RB, \+ (C, \+ A), M, D, F0, F).
absent_walk(RB, G, M, D, F0, F) :- collecting(G, A), !, flip(M, G, M1), absent_walk(RB, A, M1, D, F0, F).
absent_walk(RB, G, M, _, F0, F) :- base(RB, G), !,
    (   M = neg(Top), absent_fed(RB, G)
    ->  functor(G, N, A), format(atom(PA), '~q/~w', [N, A]), negation_text(Top, st([], []), Text),
        F = [f(PA, Text)|F0]
    ;   F = F0
    ).
absent_walk(RB, G, M, D, F0, F) :- catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    foldl(absent_part(RB, M, D), Parts, F0, F).   % require/2,3, once/1, ignore/1, bagof/setof
absent_walk(RB, G, M, d(K, On), F0, F) :-
    K > 0, callable(G), user_pred(RB, G), functor(G, N, A), \+ memberchk(N/A, On), !,
    K1 is K - 1,
    findall(Fs, ( rule_parts(RB, G, _, B),
                  absent_walk(RB, B, M, d(K1, [N/A|On]), [], Fs) ),
            Fss),
    foldl(append, Fss, F0, F).
absent_walk(_, _, _, _, F, F).

absent_part(RB, M, D, P, F0, F) :- absent_walk(RB, P, M, D, F0, F).

%  a collection whose goal may find nothing: the result of nothing is a value the guard may accept
collecting(findall(_, A, _), A).
collecting(findall(_, A, _, _), A).
collecting(aggregate_all(_, A, _), A).

absent_fed(RB, G) :-
    functor(G, N, A), functor(H, N, A),
    RB:'$src'(decl, binding(H, _, _, O), _, _), is_list(O), ( memberchk(absent_on_error, O) ; memberchk(absent_on_error(_), O) ), !.
