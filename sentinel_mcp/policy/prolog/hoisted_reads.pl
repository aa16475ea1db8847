/*  Part of sentinel_core (included): two reads of one fact read as one, for tautological_guards.pl.

    Each read of a fact makes unknowns of its own (tautological_guards.pl): ( status(B, S), S == active ;
    status(B, T), T \== active ) is then two unrelated reads, each tested against one value, and the walk
    cannot see that the two cover every status. Yet a disjunction whose two sides start with the same read
    is that read followed by the disjunction of the rests: "some row has P or some row has Q" is "some row
    has P or Q" (an existential distributes over a disjunction, whatever the rows are: no fact is assumed to
    have one row). So the sides are joined where that holds exactly: the same predicate of the base facts,
    each argument the same term on both sides, or a variable of that side alone (in no other goal, and once
    in its read): status(B, S) and status(B, T) are one read; status(B, S) and status(C, T), or status(B, S)
    where S is read on after the disjunction, are not. A rule's clauses are such a disjunction too.

    What the join shows is a value tested with tests that cover every value it can have (the walk's probes,
    probed_cases.pl): status(B, S), ( S == active ; S \== active ) holds exactly where a status is there,
    and tests nothing of it. Said apart (vacuous_read/0): not "holds for every call", which it does not.
*/

%  hoisted_reads(+RB, +G, +Keep, -G1): G with such disjunctions joined (Keep: a term holding the variables
%  outside G); fails where none is.
hoisted_reads(RB, G, Keep, G1) :- hoist(RB, G, Keep, G1, false, Changed), Changed == true.

hoist(_, G, _, G, C, C) :- var(G), !.
hoist(RB, (A, B), Keep, (A1, B1), C0, C) :- !,
    hoist(RB, A, B-Keep, A1, C0, C1), hoist(RB, B, A1-Keep, B1, C1, C).
hoist(RB, \+ A, Keep, \+ A1, C0, C) :- !, hoist(RB, A, Keep, A1, C0, C).
hoist(RB, (A ; B), Keep, G1, C0, C) :- A \= (_ -> _), A \= (_ *-> _), !,
    hoist(RB, A, B-Keep, A1, C0, C1), hoist(RB, B, A1-Keep, B1, C1, C2),
    (   one_read(RB, A1, B1, Keep, G1) -> C = true ; G1 = (A1 ; B1), C = C2 ).
hoist(_, G, _, G, C, C).

%  one_read(+RB, +A, +B, +Keep, -G): A and B start with the same read of a base fact: G is it, then A's rest or
%  B's (B's own variables of the read become A's)
one_read(RB, A, B, Keep, (R1, (RestA ; RestB))) :-
    first_goal(A, R1, RestA), first_goal(B, R2, RestB),
    callable(R1), R1 \= _:_, base(RB, R1), callable(R2), R2 \= _:_,
    R1 =.. [N|As1], R2 =.. [N|As2], length(As1, L), length(As2, L),
    term_variables(Keep, KVs), term_variables(RestA, AVs), term_variables(RestB, BVs),
    maplist(same_argument(KVs, As1, As2, AVs-RestB, BVs-RestA), As1, As2),
    maplist(=, As1, As2).  % each pair identical already, or two variables each side's own

same_argument(_, _, _, _, _, X1, X2) :- X1 == X2, !.
same_argument(KVs, As1, As2, _-RestB, _-RestA, X1, X2) :-
    var(X1), var(X2),
    own_variable(X1, As1, KVs, RestB, As2), own_variable(X2, As2, KVs, RestA, As1).

%  own_variable(+X, +Args, +KVs, +Other, +OtherArgs): X is once in its read's arguments, and in no goal outside
%  its side (Other: the other side's rest; OtherArgs: the other side's read)
own_variable(X, Args, KVs, Other, OtherArgs) :-
    \+ var_in(X, KVs), \+ ( term_variables(Other-OtherArgs, Vs), var_in(X, Vs) ),
    occurrences_of_var(X, Args, 1).  % var_in/2: negated_arguments.pl


%  first_goal(+G, -F, -Rest): G's first goal (past any true) and the goals after it
first_goal(G, _, _) :- var(G), !, fail.
first_goal((A, B), F, Rest) :- !,
    (   A == true -> first_goal(B, F, Rest)
    ;   first_goal(A, F, RestA), ( RestA == true -> Rest = B ; Rest = (RestA, B) )
    ).
first_goal(G, G, true) :- G \== true.

%  vacuous_read: a value a goal read was tested, in the current guard's walk, with tests that cover every
%  value (and_tv/5); reset by reset_vacuous_read/0
vacuous_read :- nb_current(sn_vacuous_read, T), T == true.
note_vacuous_read :- ( probing -> true ; nb_setval(sn_vacuous_read, true) ).
reset_vacuous_read :- nb_setval(sn_vacuous_read, false).
