/*  Part of sentinel_core (included): a rulebase's rule clauses, by predicate.

    The loader keeps each clause as read ('$src'(rule, Clause, File, Line)); a walk that wants the clauses
    of one predicate scanned all of them, so a rulebase of n rules cost n * n (a chain of 8,000 rules took
    half a minute to load and check). Each clause is also stored under its name and arity ('$rule_of'/3,
    indexed on the name), in the order read: a look-up costs the predicate's own clauses.
*/

%  store_rule(+RB, +T, +File, +Line): the rule clause T, as read, and its index entry.
store_rule(RB, T, File, Line) :-
    assertz(RB:T), assertz(RB:'$src'(rule, T, File, Line)),
    rule_head(T, H), functor(H, N, A), assertz(RB:'$rule_of'(N, A, T)).

%  rule_clause(+RB, +N, +A, -T): on backtracking, each clause of N/A in the order read.
rule_clause(RB, N, A, T) :- RB:'$rule_of'(N, A, T).

%  rule_parts(+RB, +G, -H, -B): on backtracking, the head and body of each clause of G's predicate.
rule_parts(RB, G, H, B) :- functor(G, N, A), rule_clause(RB, N, A, T), ( T = (H :- B) -> true ; H = T, B = true ).
