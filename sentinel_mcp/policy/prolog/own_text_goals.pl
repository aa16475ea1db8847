/*  Part of sentinel_core (included): what one goal makes of the rulebase's own words (own_texts.pl).

    own_goal/6 adds to the own variables those a goal binds to values made only of own values: a rule of the
    rulebase by its summary (given which arguments its caller passes own), a base fact only where Sentinel
    vouches for it (a choice question's answer, vouched_text/2), a builtin by what it is known to compute. A
    goal not listed here makes nothing own: the allow list, not a list of bad goals.
*/

own_goal(G, Ctx, F-L, K, S0, S) :- callable(G), functor(G, N, A), Ctx = ctx(_, Cls, _), get_assoc(N/A, Cls, _), !,
    G =.. [_|As], S0 = s(O, _, _),
    own_mask(As, O, Mask),
    own_summary(Ctx, N/A, Mask, [F-L|K], Out),
    add_masked(As, Out, S0, S).
own_goal(G, ctx(_, _, Bases), _, _, S0, S) :- callable(G), functor(G, N, A), get_assoc(N/A, Bases, base(_, Is)), !,
    G =.. [_|As], add_nth(Is, As, S0, S).
own_goal(G, _, F-L, _, S0, S) :- built_term(G, S0, Why), !,
    site_words_built(Why, M), ( own_error(F, L, M) -> true ; assertz(own_error(F, L, M)) ), S = S0.
own_goal(G, _, _, _, S0, S) :- S0 = s(O, _, _), findall(I, own_builtin(G, O, I), Is), !,
    G =.. [_|As], add_nth(Is, As, S0, S).
own_goal(_, _, _, _, S, S).

%  (no lambdas here: yall copies a lambda's free variables, and the walk follows the clause's own variables)
own_mask([], _, []).
own_mask([X|Xs], O, [B|Bs]) :- ( own_all(X, O) -> B = 1 ; B = 0 ), own_mask(Xs, O, Bs).

add_masked([], [], S, S).
add_masked([X|Xs], [B|Bs], S0, S) :- ( B == 1 -> add_own(X, S0, S1) ; S1 = S0 ), add_masked(Xs, Bs, S1, S).

add_nth([], _, S, S).
add_nth([I|Is], As, S0, S) :- nth1(I, As, X), add_own(X, S0, S1), add_nth(Is, As, S1, S).

%  A base fact's argument that is Sentinel's, not the outside's: the answer to a choice([...]) question (an
%  answer is checked to be one of its values: answer_is_a_choice/2), and the text a built-in vouches for.
%  Only for a predicate nothing else fills (no binding, fact/1 or effect besides). Read once per load:
%  own_bases(+RB, -Bases), an assoc of each base predicate to base(Kind, OwnArguments).
own_bases(RB, Bases) :-
    findall(PI-D, ( RB:'$src'(decl, D, _, _), base_head(D, PI) ), Ds0),
    findall(PI-effect, ( RB:'$src'(decl, effect(_, _, Acts), _, _), is_list(Acts), member(X, Acts),
                         ( X = establish(H) ; X = establish(H, _) ), callable(H), functor(H, N, A), PI = N/A ), Es),
    append(Ds0, Es, Ds), keysort(Ds, Ds1), group_pairs_by_key(Ds1, Grouped),
    maplist(base_entry, Grouped, Entries), list_to_assoc(Entries, Bases).

base_entry(PI-Ds, PI-base(Kind, Is)) :-
    Ds = [D|_],
    (   D = binding(_, _, _, _) -> Kind = binding ; D = askable(_, _, _, _) -> Kind = askable ; Kind = store ),
    ( Ds = [D] -> findall(I, own_base_arg_(D, I), Is) ; Is = [] ).
own_base_arg_(askable(H, _, choice(_), _), I) :- functor(H, _, I), I > 0.
own_base_arg_(binding(H, tool(T, _), extract(Xs), _), I) :- atom(T), is_list(Xs),
    member(E, Xs), nonvar(E), E = (V = Ptr), var(V), atom(Ptr), vouched_text(T, Ptr),
    H =.. [_|Hs], nth1(I, Hs, V0), V0 == V.

%  =../2 and functor/3 building a term that could be text/1,2 or joined/2 (one or two arguments, or a count not
%  written) whose name is not written in the rulebase, or is text or joined: any value could become text(...)
%  that way. A term of another arity is no marked text (a question reads its name and texts quoted).
built_term(T =.. L, s(O, W, _), Why) :-
    \+ own_all(T, O), \+ read_goal_var(T), \+ ( is_list(L), length(L, N), N \== 2, N \== 3 ),
    \+ ( nonvar(L), L = [Nm|_], atom(Nm), \+ memberchk(Nm, [text, joined]) ),
    ( nonvar(L), L = [Nm|_], \+ own_all(Nm, O) -> why_of_first(Nm, O, W, Why) ; why_of_first(T-L, O, W, Why) ).
built_term(functor(T, N, A), s(O, W, _), Why) :-
    \+ own_all(T, O), \+ read_goal_var(T), \+ ( integer(A), A \== 1, A \== 2 ),
    \+ ( atom(N), \+ memberchk(N, [text, joined]) ), why_of_first(N-T, O, W, Why).

%  own_builtin(+Goal, +Own, -I): Goal's argument I is own after it, given the own variables Own.
own_builtin(X = Y, O, I) :- eq_own(X, Y, O, I).
own_builtin(unify_with_occurs_check(X, Y), O, I) :- eq_own(X, Y, O, I).
own_builtin(X == Y, O, I) :- eq_own(X, Y, O, I).
own_builtin(G, _, I) :- number_result(G, Is), member(I, Is).
own_builtin(G, O, I) :- whole_and_parts(G, W, Ps), ( own_all(W, O) -> true ; own_all(Ps, O) ),
    functor(G, _, A), between(1, A, I).
own_builtin(G, O, I) :- source_result(G, Src, Is), own_all(Src, O), member(I, Is).

eq_own(X, Y, O, I) :- ( own_all(X, O) -> I = 2 ; own_all(Y, O) -> I = 1 ).

%  the arguments that are numbers (or one character's code) after the goal: nothing a sentence fits in
number_result(_ is _, [1]).
number_result(succ(_, _), [1, 2]).
number_result(plus(_, _, _), [1, 2, 3]).
number_result(between(_, _, _), [3]).
number_result(length(_, _), [2]).
number_result(atom_length(_, _), [2]).
number_result(string_length(_, _), [2]).
number_result(sum_list(_, _), [2]).
number_result(sumlist(_, _), [2]).
number_result(max_list(_, _), [2]).
number_result(min_list(_, _), [2]).
number_result(numlist(_, _, _), [3]).
number_result(atom_number(_, _), [1, 2]).
number_result(number_codes(_, _), [1, 2]).
number_result(number_string(_, _), [1, 2]).
number_result(compare(_, _, _), [1]).
number_result(string_code(_, _, _), [1, 3]).
number_result(sub_atom(_, _, _, _, _), [2, 3, 4]).
number_result(sub_string(_, _, _, _, _), [2, 3, 4]).
number_result(nth0(_, _, _), [1]).
number_result(nth1(_, _, _), [1]).
number_result(now(_), [1]).
number_result(iso_hours_between(_, _, _), [3]).
number_result(unicode_category(_, _), [1, 2]).
number_result(fact_provenance(_, _), [2]).

%  a whole made of its parts, either way: own when the whole is, or when every part is
whole_and_parts(atom_concat(A, B, C), C, A-B).
whole_and_parts(string_concat(A, B, C), C, A-B).
whole_and_parts(append(A, B, C), C, A-B).
whole_and_parts(atom_string(A, B), A, B).
whole_and_parts(atom_chars(A, B), A, B).
whole_and_parts(atom_codes(A, B), A, B).
whole_and_parts(string_chars(A, B), A, B).
whole_and_parts(string_codes(A, B), A, B).
whole_and_parts(string_to_atom(A, B), A, B).
whole_and_parts(char_code(A, B), A, B).
whole_and_parts(copy_term(A, B), A, B).
whole_and_parts(reverse(A, B), A, B).
whole_and_parts(msort(A, B), A, B).
whole_and_parts(permutation(A, B), A, B).
whole_and_parts(pairs_keys_values(P, K, V), P, K-V).
whole_and_parts(select(X, L, R), L, X-R).
whole_and_parts(selectchk(X, L, R), L, X-R).
whole_and_parts(atomic_list_concat(L, Sep, R), R-Sep, L-Sep).

%  source_result(+Goal, -Source, -Results): when Source is own, so are the arguments Results (pieces,
%  elements, conversions, joins of own values)
source_result(atomic_list_concat(L, _), L, [2]).
source_result(sub_atom(W, _, _, _, _), W, [5]).
source_result(sub_string(W, _, _, _, _), W, [5]).
source_result(split_string(W, _, _, _), W, [4]).
source_result(upcase_atom(A, _), A, [2]).
source_result(downcase_atom(A, _), A, [2]).
source_result(string_lower(A, _), A, [2]).
source_result(string_upper(A, _), A, [2]).
source_result(member(_, L), L, [1]).
source_result(memberchk(_, L), L, [1]).
source_result(nth0(_, L, _), L, [3]).
source_result(nth1(_, L, _), L, [3]).
source_result(last(L, _), L, [2]).
source_result(append(Ls, _), Ls, [2]).
source_result(sort(L, _), L, [2]).
source_result(sort(_, _, L, _), L, [4]).
source_result(keysort(L, _), L, [2]).
source_result(list_to_set(L, _), L, [2]).
source_result(flatten(L, _), L, [2]).
source_result(max_member(_, L), L, [1]).
source_result(min_member(_, L), L, [1]).
source_result(subtract(L, _, _), L, [3]).
source_result(intersection(L, _, _), L, [3]).
source_result(intersection(_, L, _), L, [3]).
source_result(union(A, B, _), A-B, [3]).
source_result(delete(L, _, _), L, [3]).
source_result(nextto(_, _, L), L, [1, 2]).
source_result(pairs_keys(P, _), P, [2]).
source_result(pairs_values(P, _), P, [2]).
source_result(arg(_, T, _), T, [1, 3]).
source_result(functor(T, _, _), T, [2, 3]).
source_result(T =.. _, T, [2]).
source_result(_ =.. L, L, [1]).
source_result(format(Sink, Fmt, Args), Fmt-Args, [1]) :- nonvar(Sink), Sink =.. [K, _], memberchk(K, [atom, string, codes, chars]).
source_result(option_value(L, _, D, _), L-D, [4]).
source_result(json_get(J, _, _), J, [3]).
source_result(answer_label(P, V, _), P-V, [3]).
source_result(humanized(V, _), V, [2]).

%  own_summary(+Ctx, +N/A, +Mask, +Stack, -Out): which arguments of N/A are own after it succeeds, when those
%  of Mask (1) are own as it is called: every clause walked once per Mask (a recursive call gives nothing own).
own_summary(_, N/A, Mask, _, Out) :- own_memo(N, A, Mask, Out0), !, Out = Out0.
own_summary(_, PI, Mask, K, Out) :- memberchk(PI-Mask, K), !, same_length(Mask, Out), maplist(=(0), Out).
own_summary(Ctx, N/A, Mask, K, Out) :-
    Ctx = ctx(_, Cls, _), get_assoc(N/A, Cls, Clauses),
    same_length(Mask, Out0), maplist(=(1), Out0),
    foldl(own_clause(Ctx, N/A, Mask, [N/A-Mask|K]), Clauses, Out0, Out),
    assertz(own_memo(N, A, Mask, Out)).

own_clause(Ctx, N/A, Mask, K, c(T, F, L), Out0, Out) :-
    rule_head(T, H), ( T = (_ :- B) -> true ; B = true ),
    H =.. [_|As],
    foldl(head_arg(N/A), As, Mask, 1-s([], [], []), _-S0),
    goal_sites(H, S0, S1),
    S1 = s(O1, W1, Sites1),
    with_read_goals(T, own_walk(B, Ctx, F-L, K, s(O1, W1, Sites1), s(O, W, Sites))),
    check_sites(Sites, O, W, F, L),
    own_mask(As, O, Own), maplist(both_own, Own, Out0, Out).

both_own(A, B, C) :- ( A == 1, B == 1 -> C = 1 ; C = 0 ).

head_arg(_, X, 1, I-S0, I1-S) :- !, I1 is I + 1, add_own(X, S0, S).
head_arg(N/A, X, _, I-S0, I1-S) :- I1 is I + 1,
    note_why(X, why(argument(I), N/A), S0, S).

%  A term built only to be read as a fact (fact_provenance(G, _), G =.. [Name, ...]: a fact named at run
%  time) is never shown: its variable occurs nowhere else in the clause. Kept for the clause's walk
%  (b_setval/2 keeps the variables themselves; the walk binds nothing).
with_read_goals(Clause, Goal) :-
    ( nb_current(own_read_goals, Old) -> true ; Old = [] ),
    (   sub_term(G, Clause), compound(G), ( G = (_ =.. _) ; G = functor(_, _, _) )
    ->  term_variables(Clause, Vs), include(only_read(Clause), Vs, Rs)
    ;   Rs = []  % nothing built: the usual clause, at no cost
    ),
    b_setval(own_read_goals, Rs), call(Goal), b_setval(own_read_goals, Old).

only_read(Clause, V) :-
    occurrences_of_var(V, Clause, All),
    aggregate_all(count, ( sub_term(G, Clause), compound(G), read_position(G, X), X == V ), Read),
    All =:= Read.

read_position(fact_provenance(X, _), X).
read_position(X =.. _, X).
read_position(functor(X, _, _), X).

read_goal_var(T) :- var(T), nb_current(own_read_goals, Rs), member(R, Rs), R == T, !.
