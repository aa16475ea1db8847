/*  Part of sentinel_core (included): a call is not allowed on a fact an unknown outcome left unsure that its
    guard reads where an unsure fact is not seen.

    A write whose outcome is unknown stores what it would establish as '$unsure'(Fact) (fact_terms.pl), seen
    only where its presence denies (\+ G, ...). In a mixed position (any other if-then-else's condition,
    once/1, ignore/1, a collection compared afterwards, bagof/setof, a predicate with a cut) it is absent, so
    a "not yet" written there would let a second write through. The checker warns of such a guard
    (unsure_blind_reads.pl); a decision does not rely on that warning being heeded: a proof that would
    allow a call, in a session holding an unsure fact whose predicate (Name/Arity) one of the call's guards
    reads in a mixed position - through its rules and requirements, by the checker's walk, every finding
    kept - is a denial instead. A walk that cannot finish (its budget, the depth bound) reads as reading
    every predicate: fail closed. Guards that read such a fact only where it is seen decide as before.
*/

%  unknown_outcome_checked(+RB, +Tool, +Out0, -Out): Out0, or the denial of a proved Out0 resting on a read
%  blind to an unsure fact of the session (the query's state: begin_query/4).
unknown_outcome_checked(RB, Tool, Out0, Out) :-
    nb_getval(sn_query, q(_, S, Now, _, U)),
    (   U \== off,  % the session holds an unsure fact (begin_query/4)
        Out0 = json([status=proved|Rest]),
        blind_unsure_fact(RB, Tool, S, Now, G)
    ->  ( memberchk(tree=json([kept=Id]), Rest), integer(Id) -> catch(sn_forget_kept_proof(Id, _), _, true) ; true ),
        record_unmet(unknown_outcome(G)),
        Out = json([status=failed, tree= @(null)])
    ;   Out = Out0
    ).

%  An unsure fact of the session whose predicate a guard of Tool reads blind (the first found).
blind_unsure_fact(RB, Tool, S, Now, G) :-
    tool_blind_reads(RB, Tool, Reads),
    S:'$fact'('$unsure', G, '$unsure'(G), Exp, _), Exp > Now,
    ( Reads == unfinished -> true ; functor(G, N, A), memberchk(N/A, Reads) ), !.

%  tool_blind_reads(+RB, +Tool, -Reads): the predicates (Name/Arity, sorted) the guards of Tool read in a
%  mixed position, or unfinished; walked once per rulebase load (the module is emptied when it is loaded
%  again), only when a session holds an unsure fact.
tool_blind_reads(RB, Tool, Reads) :-
    (   catch(RB:'$blind_reads_of'(Tool, R0), error(existence_error(_, _), _), fail)
    ->  Reads = R0
    ;   findall(G, ( decl(RB, guard(T, _, G)), tool_matches(T, Tool) ), Gs),
        foldl(guard_blind_reads(RB), Gs, [], Reads0),
        ( Reads0 == unfinished -> Reads = unfinished ; sort(Reads0, Reads) ),
        assertz(RB:'$blind_reads_of'(Tool, Reads))
    ).

guard_blind_reads(_, _, unfinished, unfinished) :- !.
%  (The decision's wall-clock limit is let through: the call is decided again, and nothing is kept of a walk
%  it cut short. What the rulebase itself makes of the walk - its budget, an error, the depth - is kept.)
guard_blind_reads(RB, G, R0, R) :-
    copy_term(G, G1),
    (   catch(call_with_inference_limit(blind_walk(RB, G1, pos, d(8, []), [], Fs), 400000, Done), E,
              ( ( E == time_limit_exceeded ; subsumes_term(time_limit_exceeded(_), E) ) -> throw(E) ; Done = error ))
    ->  true
    ;   Done = failed
    ),
    (   ( Done == ! ; Done == true ), \+ memberchk(f('$depth', _), Fs)
    ->  findall(N/A, member(f(N/A, _), Fs), PAs), append(PAs, R0, R)
    ;   R = unfinished
    ).
