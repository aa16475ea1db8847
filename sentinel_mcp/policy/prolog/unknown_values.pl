/*  Part of sentinel_core (included): builtins over unknown values, for the walk of tautological_guards.pl.

    An argument of the call, or a value a fact binds, is unknown to the walk ('$sn_unknown'(Key, N)). Most
    builtins over one are unknown too: atom_length(U, _) holds for an atom and errs for a number. A few decide
    the same for every value, and only those are told here (a false "holds" warns about a real guard):

    - unification and the pure list builtins built on it alone (=/2, member/2, memberchk/2, append/3): run
      with each unknown a variable of its own. A first solution that binds none of them is, by lifting, the
      first solution whatever they are (U = U, member(U, [U, a]), X = f(U)); no solution at all is none for
      any value (f(U) = g(V)); a first solution that binds one (U = admin) is unknown. Only the first: the
      gateway takes the first, and a later one may be preceded, for some value, by one the walk skipped.
    - ==/2: identical terms are identical whatever the unknowns are (the same unknown is the same value);
      terms that do not unify with the unknowns open are identical for no value; otherwise unknown.
    - \=/2 and \==/2: the negations of =/2 and ==/2 (holds exactly where those fail for every value).
    - copy_term/2 into a variable of its own: holds (the copy is then unknown).
    - the standard order (@=</2, @>=/2, @</2, @>/2, compare/3) of identical terms: equal whatever the unknowns
      are (U @=< U holds, U @< U fails, compare(O, U, U) makes O =); of other terms, unknown.
*/

%  unknown_value_goal(+G): G is one of the builtins above (told by its name alone: the walk asks of every goal).
unknown_value_goal(G) :- callable(G), functor(G, N, A), memberchk(N/A, [(=)/2, (\=)/2, (==)/2, (\==)/2,
                                                                   copy_term/2, member/2, memberchk/2, append/3,
                                                                   (@<)/2, (@>)/2, (@=<)/2, (@>=)/2, compare/3]).

%  unknown_value_tv(+RB, +G, -R): G's value when it is one of the builtins above over an unknown value.
%  (a negation binds nothing: the one it negates is decided on copies)
unknown_value_tv(RB, A \= B, R) :- !, findall(R0, unknown_value_tv(RB, A = B, R0), [R1]), not_tv(R1, R).
unknown_value_tv(RB, A \== B, R) :- !, findall(R0, unknown_value_tv(RB, A == B, R0), [R1]), not_tv(R1, R).
unknown_value_tv(_, A == B, R) :- !,
    (   A == B -> R = t(true)
    ;   opened(A-B, A1-B1, _), \+ A1 = B1 -> R = f
    ;   R = u
    ).
unknown_value_tv(_, G, R) :- standard_order(G, O, A, B), !,
    (   A == B, ( var(O) ; memberchk(O, [<, =, >]) )
    ->  ( O = (=) -> R = t(true) ; R = f )
    ;   R = u, unknowns(G)
    ).
unknown_value_tv(_, copy_term(A, B), R) :- !,
    (   var(B), term_variables(A, Vs), \+ ( member(V, Vs), V == B ) -> R = t(true) ; R = u ),
    unknowns(B).
unknown_value_tv(RB, G, R) :-
    unification_builtin(G), opened(G, Open, Pairs), pairs_values(Pairs, Vs),
    findall(Done-Open-Vs, once(catch(call_with_inference_limit(RB:Open, 10000, Done), E,
                                     ( erred(E), Done = erred ))), Sols),
    (   Sols == []
    ->  R = f
    ;   Sols = [Done1-Open1-Vs1], memberchk(Done1, [!, true]), distinct_variables(Vs1)
    ->  pairs_keys(Pairs, Us), Vs1 = Us, G = Open1,  % the solution's bindings, each unknown itself again
        ( Done1 == ! -> R = t(true) ; R = t(false) )
    ;   R = u, unknowns(G)
    ).

%  standard_order(+G, -O, -A, -B): G tests that compare(O, A, B) makes O one of its orders.
standard_order(compare(O, A, B), O, A, B).
standard_order(A @< B, <, A, B).
standard_order(A @> B, >, A, B).
standard_order(A @=< B, O, A, B) :- O = (=).  % identical terms are never <, so = is the one to test
standard_order(A @>= B, O, A, B) :- O = (=).

unification_builtin(_ = _).
unification_builtin(member(_, _)).
unification_builtin(memberchk(_, _)).
unification_builtin(append(_, _, _)).

distinct_variables(Vs) :- maplist(var, Vs), sort(Vs, S), length(S, N), length(Vs, N).

%  opened(+T, -O, -Pairs): T with each distinct unknown value a variable of its own (Pairs: Unknown-Variable).
opened(T, O, Pairs) :- opened(T, O, [], Pairs).

opened(T, O, Ps0, Ps) :- is_unknown(T), !,
    (   member(U-V, Ps0), U == T -> O = V, Ps = Ps0 ; Ps = [T-O|Ps0] ).
opened(T, O, Ps0, Ps) :- compound(T), has_unknown(T), !,
    T =.. [F|As], foldl(opened, As, Os, Ps0, Ps), O =.. [F|Os].
opened(T, T, Ps, Ps).
