/*  Part of sentinel_core (included): guards that read a fact some effect establishes where an unsure one
    is not seen (for the checker).

    A write whose outcome is unknown stores what it would establish as '$unsure'(Fact) (fact_terms.pl), seen
    only by a goal of negative polarity: \+ G, ( G -> fail ; E ), forall/2's condition, findall(_, G, []),
    aggregate_all(count, G, 0). A goal of mixed polarity - any other if-then-else's condition, once/1,
    ignore/1, a collection whose result is compared afterwards, a predicate with a cut - never sees it (there
    it could grant). A "not yet" written there (`aggregate_all(count, changed(X), N), N =:= 0`,
    `( changed(X) -> deny ; allow )`) lets a second write through after an unknown outcome: the walk lists the
    established facts such a position reads, pointing to \+. It follows requirements, meta-calls and the
    rulebase's rules (one already being walked is not walked again), bounded in depth and in inferences; it
    runs nothing.
*/

%  sn_unsure_blind_reads(+RB, -Out): for each guard, the established facts it reads in a mixed position,
%  with what made it mixed; a guard the walk cannot finish is listed apart, with the reason
%  (unfinished_walks.pl).
sn_unsure_blind_reads(RB, Out) :-
    findall(I, ( RB:'$src'(decl, guard(T, _, G), F, L), atom(T), blind_reads(RB, G, Res),
                 walk_item(Res, T, F, L, predicate-where, I) ),
            Is),
    walk_report(reads, Is, Out).

blind_reads(RB, G, Res) :-
    copy_term(G, G1),
    guard_walk(( blind_walk(RB, G1, pos, d(6, []), [], All), established_reads(RB, All, Fs0) ), Fs0, Res).

%  The findings of a walk whose predicate some effect establishes, named for the checker's message.
established_reads(RB, All, Fs) :-
    findall(f(PA, Why), ( member(f(N/A, Why), All), functor(H, N, A), effect_established(RB, H),
                          format(atom(PA), '~q/~w', [N, A]) ),
            Fs).

%  blind_walk(+RB, +G, +Mode, +Depth, +F0, -F): Mode is pos, neg or mixed(Why); F accumulates
%  f(Name/Arity, Why) for every base fact read in a mixed position, and f('$depth', Why) for a rule left
%  unwalked at the depth bound (what it reads is not known: unknown_outcomes.pl then refuses). The polarity
%  rules are proof_interpreter.pl's.
blind_walk(_, V, _, _, F, F) :- var(V), !.
blind_walk(_, _:_, _, _, F, F) :- !.
blind_walk(RB, (A, B), M, D, F0, F) :- !, blind_walk(RB, A, M, D, F0, F1), blind_walk(RB, B, M, D, F1, F).
blind_walk(RB, (A ; B), M, D, F0, F) :- nonvar(A), A = (C -> T), fails_branch(T), !,
    blind_walk(RB, \+ C, M, D, F0, F1), blind_walk(RB, B, M, D, F1, F).
blind_walk(RB, (A ; B), M, D, F0, F) :- nonvar(A), ( A = (C -> T) ; A = (C *-> T) ), !,
    blind_walk(RB, (C -> T), M, D, F0, F1), blind_walk(RB, B, M, D, F1, F).
blind_walk(RB, (A ; B), M, D, F0, F) :- !, blind_walk(RB, A, M, D, F0, F1), blind_walk(RB, B, M, D, F1, F).
blind_walk(RB, (C -> T), M, D, F0, F) :- !,
    mixed(M, 'the condition of an if-then-else', M1), blind_walk(RB, C, M1, D, F0, F1), blind_walk(RB, T, M, D, F1, F).
blind_walk(RB, (C *-> T), M, D, F0, F) :- !, blind_walk(RB, (C -> T), M, D, F0, F).
blind_walk(RB, \+ A, M, D, F0, F) :- !, polarity_flip(M, M1), blind_walk(RB, A, M1, D, F0, F).
blind_walk(RB, forall(C, A), M, D, F0, F) :- !, blind_walk(RB, \+ (C, \+ A), M, D, F0, F).
blind_walk(RB, G, M, D, F0, F) :- absence_form(G, A), !, blind_walk(RB, \+ A, M, D, F0, F).
blind_walk(RB, G, M, D, F0, F) :- collection_goal(G, A), !,
    mixed(M, 'a collection whose result is used afterwards', M1), blind_walk(RB, A, M1, D, F0, F).
blind_walk(RB, once(A), M, D, F0, F) :- !, mixed(M, 'once/1', M1), blind_walk(RB, A, M1, D, F0, F).
blind_walk(RB, ignore(A), M, D, F0, F) :- !, mixed(M, 'ignore/1', M1), blind_walk(RB, A, M1, D, F0, F).
blind_walk(RB, G, M, _, F0, F) :- base(RB, G), !,
    (   M = mixed(Why)
    ->  functor(G, N, A), F = [f(N/A, Why)|F0]
    ;   F = F0
    ).
blind_walk(RB, G, M, D, F0, F) :- catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    foldl(blind_part(RB, M, D), Parts, F0, F).   % require/2,3
blind_walk(RB, G, M, d(K, On), F0, F) :-
    K > 0, callable(G), user_pred(RB, G), functor(G, N, A), \+ memberchk(N/A-M, On), !,
    K1 is K - 1,
    ( catch(RB:'$has_cut'(N/A), _, fail) -> mixed(M, 'a predicate with a cut', M1) ; M1 = M ),
    findall(Fs, ( rule_parts(RB, G, _, B),
                  blind_walk(RB, B, M1, d(K1, [N/A-M|On]), [], Fs) ),
            Fss),
    foldl(append, Fss, F0, F).
blind_walk(RB, G, M, d(0, On), F0, [f('$depth', M)|F0]) :-
    callable(G), user_pred(RB, G), functor(G, N, A), \+ memberchk(N/A-M, On), !.
blind_walk(_, _, _, _, F, F).

blind_part(RB, M, D, P, F0, F) :- blind_walk(RB, P, M, D, F0, F).

polarity_flip(pos, neg).
polarity_flip(neg, pos).
polarity_flip(mixed(W), mixed(W)).

mixed(mixed(W), _, mixed(W)) :- !.
mixed(_, W, mixed(W)).

collection_goal(findall(_, A, _), A).
collection_goal(findall(_, A, _, _), A).
collection_goal(aggregate_all(_, A, _), A).
collection_goal(bagof(_, A, _), G) :- strip_carets(A, G).
collection_goal(setof(_, A, _), G) :- strip_carets(A, G).

%  G's predicate is one some effect of the rulebase establishes (what an unknown outcome leaves unsure).
effect_established(RB, G) :-
    functor(G, N, A), functor(H, N, A),
    RB:'$src'(decl, effect(_, _, Acts), _, _), is_list(Acts),
    ( memberchk(establish(H), Acts) ; memberchk(establish(H, _), Acts) ), !.
