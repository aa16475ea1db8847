/*  Part of sentinel_core (included): the values a later test of a secret chooses, for the walk of
    secret_flows.pl.

    A goal with several solutions (a generator: member/2, between/3, a stored fact, a rule of several
    clauses, a disjunction) binds a value, and a later goal given a secret that fails backtracks into it for
    the next: the value that stays is the one the secret let through (member(C, [a, b, c]),
    \+ \+ sub_atom(P, 0, 1, _, C): C is the password's first letter; between(1, 64, N), atom_length(P, N): N
    is its length). So the variables a generator bound are kept (b_setval/2, each clause its own), and a goal
    given a secret after them makes them computed from it (of(Name)). Which goals have one solution is an
    allow list (secret_single/2); any other goal, a rule included, is a generator unless every clause of it
    is single (one clause, or clauses whose first head arguments differ and the call's first argument bound).
*/

secret_choices(Vs) :- ( nb_current(sn_secret_chosen, Vs0) -> Vs = Vs0 ; Vs = [] ).

secret_choices_reset :- b_setval(sn_secret_chosen, []).

%  after G (walked from state St0): the variables it bound, kept when it may have another solution (Single:
%  yes when it has one at most, read before it ran: secret_single/2)
secret_chose(_, yes, _) :- !.
secret_chose(G, _, St0) :-
    term_variables(G, Vs), secret_fresh(Vs, St0, New, _), secret_choices(Cs0), append(Cs0, New, Cs),
    b_setval(sn_secret_chosen, Cs).

%  a goal given a secret (or a value computed from one) chooses what the generators before it bound
secret_choose(G, T0, T1, T) :-
    (   secret_of(G, T0, N), secret_choices(Cs), Cs \== []
    ->  secret_measured(N, M), secret_add(Cs, M, T1, T)
    ;   T = T1
    ).

%  secret_single(+G, +Ctx, -Single): whether G has one solution at most, called now (before it is walked)
secret_single(G, C, Single) :- ( secret_single_goal(G, C) -> Single = yes ; Single = no ).

secret_single_goal(G, _) :- secret_kind_of(G, K), memberchk(K, [check, site, alias, control, collect]),
    \+ ( functor(G, N, _), memberchk(N, [bagof, setof]) ), !.
secret_single_goal(G, _) :- functor(G, N, A), secret_single_row(N, A, Bound), !,
    forall(member(I, Bound), ( arg(I, G, X), secret_bound_in(X) )).
secret_single_goal(G, sctx(_, Bases, _)) :- functor(G, N, A), get_assoc(N/A, Bases, base(K, _)), !,
    memberchk(K, [binding, askable]).
secret_single_goal(G, sctx(Cls, _, _)) :- functor(G, N, A), get_assoc(N/A, Cls, Clauses), !,
    ( arg(1, G, X) -> ( secret_bound_in(X) -> First = bound ; First = open ) ; First = none ),
    secret_single_rule(Cls, N/A, Clauses, First, []).

secret_bound_in(X) :- secret_all_bound(X).

%  a rule whose clauses answer once: one clause, or heads whose first arguments cannot meet (the call's
%  bound), each body single (a rule met again within its own check is taken as single; a structural
%  recursion's first argument is a piece of the bound one)
secret_single_rule(_, PI, _, First, _) :- secret_single_memo(PI, First, R), !, R == yes.
secret_single_rule(Cls, PI, Clauses, First, Seen) :-
    ( secret_single_rule_(Cls, PI, Clauses, First, Seen) -> R = yes ; R = no ),
    assertz(secret_single_memo(PI, First, R)),  % each rule decided once a walk (a DAG of calls stays linear)
    R == yes.

secret_single_rule_(Cls, PI, Clauses, First, Seen) :-
    (   Clauses = [_] -> true
    ;   First == bound, secret_heads_apart(Clauses)
    ),
    forall(member(c(Cl, _, _), Clauses),
           ( rule_head(Cl, H), ( Cl = (_ :- B) -> true ; B = true ), secret_single_body(B, H, Cls, [PI|Seen]) )).

secret_heads_apart(Clauses) :-
    findall(F, ( member(c(Cl, _, _), Clauses), rule_head(Cl, H), arg(1, H, F) ), Fs),
    \+ ( append(_, [X|Rest], Fs), member(Y, Rest), \+ X \= Y ).

secret_single_body(G, _, _, _) :- var(G), !, fail.
secret_single_body((A, B), H, Cls, Seen) :- !, secret_single_body(A, H, Cls, Seen), secret_single_body(B, H, Cls, Seen).
secret_single_body((I -> Th ; E), H, Cls, Seen) :- !, secret_single_body(Th, H, Cls, Seen),
    secret_single_body(E, H, Cls, Seen), ( secret_single_body(I, H, Cls, Seen) -> true ; true ).
secret_single_body((_ ; _), _, _, _) :- !, fail.
secret_single_body(G, _, _, _) :- secret_kind_of(G, K), memberchk(K, [check, site, alias, control, collect]),
    \+ ( functor(G, N, _), memberchk(N, [bagof, setof]) ), !.
secret_single_body(G, _, _, _) :- functor(G, N, A), secret_single_row(N, A, []), !.
secret_single_body(G, H, Cls, Seen) :- callable(G), functor(G, N, A), get_assoc(N/A, Cls, Clauses), !,
    (   memberchk(N/A, Seen) -> true
    ;   ( arg(1, G, X), arg(1, H, F), var(X), sub_term(S, F), S == X, S \== F -> First = bound ; First = open ),
        secret_single_rule(Cls, N/A, Clauses, First, Seen)
    ).

%  the goals of one solution (the arguments listed known bound first): everything but a generator
secret_single_row(N, A, []) :- memberchk(N/A, [(is)/2, succ/2, plus/3, atom_length/2, string_length/2,
    compare/3, format/3, upcase_atom/2, downcase_atom/2, atom_number/2, atom_string/2, atom_chars/2,
    atom_codes/2, char_code/2, number_codes/2, number_string/2, atomic_list_concat/2, atomic_list_concat/3,
    string_chars/2, string_codes/2, string_to_atom/2, string_lower/2, string_upper/2, split_string/4,
    string_code/3, sub_atom_icasechk/3, msort/2, sort/2, sort/4, keysort/2, memberchk/2, selectchk/3,
    sum_list/2, sumlist/2, max_list/2, min_list/2, numlist/3, reverse/2, list_to_set/2, subtract/3,
    intersection/3, union/3, delete/3, flatten/2, pairs_keys_values/3, pairs_keys/2, pairs_values/2,
    option_value/4, json_get/3, now/1, iso_hours_between/3, call_tool_name/1, unicode_category/2,
    person_name_key/2, humanized/2, answer_label/3, copy_term/2, functor/3, (=..)/2, term_variables/2,
    max_member/2, min_member/2, context_value/2]).
secret_single_row(N, A, [1]) :- memberchk(N/A, [length/2, nth0/3, nth1/3, last/2, append/3]).
secret_single_row(arg, 3, [1, 2]).
secret_single_row(N, 3, [1, 2]) :- memberchk(N, [atom_concat, string_concat]).
