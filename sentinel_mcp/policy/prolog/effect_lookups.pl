/*  Part of sentinel_core (included): what an effect looks up names stored facts. An invalidate(Pattern) and
    each goal of an establish(Head, Cond) condition are matched against the fact store (fact_terms.pl's
    sn_effect_actions/6, effect_cond/3), never proved: one naming a rule, a builtin, a disjunction, a negation,
    another module's goal or a variable matched nothing, ever, and the effect loaded silently.
*/

post_load_problem(RB, P) :-
    RB:'$src'(decl, effect(_, _, Acts), File, Line), is_list(Acts), member(X, Acts),
    effect_lookup(X, How, G), \+ ( callable(G), G \= _:_, base(RB, G) ),
    format(atom(M), 'an effect''s ~w ~q, which is not a stored fact (a base predicate: fact/1, a binding, an \c
                     askable or a seed): it is looked up in the store, never proved, so it matches nothing', [How, G]),
    problem(error, File, Line, M, P).

%  effect_lookup(+Action, -How, -Goal): Goal is looked up in the store when Action is taken
effect_lookup(invalidate(H), 'invalidate names', H).
effect_lookup(establish(_, C), 'establish condition reads', G) :- condition_goal(C, G).
%  a condition is a conjunction (fact_terms.pl's effect_cond/3): each of its goals
condition_goal(C, G) :- nonvar(C), C = (A, B), !, ( condition_goal(A, G) ; condition_goal(B, G) ).
condition_goal(G, G).
