/*  Part of sentinel_core (included): guards whose decision rests on a negation over the caller's text (for
    the checker).

    `\+ frozen_account(A)`, `\+ member(A, Blocked)` or `\+ A == admin`, with A taken from the call's
    arguments, is a deny list: the client spells the same account another way the upstream reads as equal
    (case, padding, a Unicode form) and the negation holds. The walk finds such an identity test of an
    argument under a negation: a store fact compared with it (not the key the fact was fetched by: the
    upstream answered for that very spelling), a rule clause whose head names a value in its place,
    `member/2` or `memberchk/2` of it in a list the client did not give, `=`/`==` against such a term, and
    the positive `\==`/`\=` against one (not against `[]` or `''`: those test a shape). It
    follows the goal's structure (conjunctions, disjunctions, if-then-else, `( G -> fail ; true )` as the
    `\+ G` it is, `\+`, `not/1`, `forall/2` as its negation, requirements, meta-calls through their parts)
    and the rulebase's own rules through each clause (one already being walked is not walked again), bounded
    in depth and in inferences; it runs nothing.

    An argument is no longer the client's spelling once a positive goal before the negation pinned it to a
    value the policy knows: an allow list (`member(A, [x, y])`, a rule's clauses naming each value, `A ==
    x`), a value read from the store (a binding's extracted field: airline.pl's `reservation_id_of(R, R)`, the
    reservation's id as the airline writes it), a fact only the rulebase or the config sets, or a list each of
    whose elements a `forall/2` pinned (airline.pl's `payments_in_profile/2`). A binding's tool input does not
    pin (the fact is stored under the client's spelling), nor does a fact an effect established from an
    earlier call's arguments (retail.pl's `order_changed/2`).

    Values a rule computes from an argument count as the policy's (a normalisation, a classifier's own work):
    the client's text is followed through pure builtins (`member(X, Args)`, `atom_string/2`) only, so text
    classifiers (device.pl's one-time codes and card numbers) are not warned about unless they compare the
    text itself with a value.
*/

%  sn_negated_arguments(+RB, -Out): for each guard, the arguments whose identity a negation tests, with the
%  negated goal (its argument variables named after the arguments); a guard the walk cannot finish is listed
%  apart, with the reason (unfinished_walks.pl).
sn_negated_arguments(RB, Out) :-
    findall(I, ( RB:'$src'(decl, guard(T, Pat, G), F, L), atom(T), guard_negations(RB, Pat, G, Res),
                 walk_item(Res, T, F, L, argument-goal, I) ),
            Is),
    walk_report(negations, Is, Out).

guard_negations(RB, Pat, G, Res) :-
    copy_term(Pat-G, P1-G1),
    guard_walk(( pattern_taint(P1, Taint), neg_walk(RB, G1, pos, d(6, []), st(Taint, []), _, [], Fs0) ), Fs0, Res).

%  The call's argument variables, each with its argument's name (args(All): "args").
pattern_taint([], []).
pattern_taint([E|Es], T) :-
    (   E = (N = V0), atom(N) -> term_variables(V0, Vs), name_each(Vs, N, T1)
    ;   E = args(V) -> term_variables(V, Vs), name_each(Vs, args, T1)
    ;   T1 = []
    ),
    pattern_taint(Es, T2), append(T1, T2, T).

name_each([], _, []).
name_each([V|Vs], N, [V-N|T]) :- name_each(Vs, N, T).

%  neg_walk(+RB, +G, +Mode, +Depth, +S0, -S, +F0, -F): Mode is pos, or neg(Top) under the negation Top; S is
%  st(Taint, Pinned): the variables holding the client's text (Var-ArgName) and those pinned to a value the
%  policy knows; F accumulates f(ArgName, NegationText).
neg_walk(_, V, _, _, S, S, F, F) :- var(V), !.
neg_walk(_, _:_, _, _, S, S, F, F) :- !.
neg_walk(RB, (A, B), M, D, S0, S, F0, F) :- !,
    neg_walk(RB, A, M, D, S0, S1, F0, F1), neg_walk(RB, B, M, D, S1, S, F1, F).
neg_walk(RB, (C -> A ; B), M, D, S0, S, F0, F) :- nonvar(A), ( A == fail ; A == false ), !,   % \+ C, spelt out
    neg_branches(RB, \+ C, B, M, D, S0, S, F0, F).
neg_walk(RB, (C -> A ; B), M, D, S0, S, F0, F) :- !, neg_branches(RB, (C, A), B, M, D, S0, S, F0, F).
neg_walk(RB, (C *-> A ; B), M, D, S0, S, F0, F) :- !, neg_branches(RB, (C, A), B, M, D, S0, S, F0, F).
neg_walk(RB, (A ; B), M, D, S0, S, F0, F) :- !, neg_branches(RB, A, B, M, D, S0, S, F0, F).
neg_walk(RB, (A -> B), M, D, S0, S, F0, F) :- !, neg_walk(RB, (A, B), M, D, S0, S, F0, F).
neg_walk(RB, (A *-> B), M, D, S0, S, F0, F) :- !, neg_walk(RB, (A, B), M, D, S0, S, F0, F).
neg_walk(RB, \+ A, M, D, S, S, F0, F) :- !, flip(M, \+ A, M1), neg_walk(RB, A, M1, D, S, _, F0, F).
neg_walk(RB, not(A), M, D, S, S, F0, F) :- !, flip(M, not(A), M1), neg_walk(RB, A, M1, D, S, _, F0, F).
neg_walk(RB, forall(C, A), M, D, S0, S, F0, F) :- !,
    neg_walk(RB, \+ (C, \+ A), M, D, S0, _, F0, F),
    (   M == pos, C = member(_, L), var(L) -> each_pinned(RB, C, A, D, L, S0, S) ; S = S0 ).
neg_walk(RB, require(A, _), M, D, S0, S, F0, F) :- !, neg_walk(RB, A, M, D, S0, S, F0, F).
neg_walk(RB, require(A, _, _), M, D, S0, S, F0, F) :- !, neg_walk(RB, A, M, D, S0, S, F0, F).
neg_walk(RB, once(A), M, D, S0, S, F0, F) :- !, neg_walk(RB, A, M, D, S0, S, F0, F).
neg_walk(RB, ignore(A), M, D, S0, S, F0, F) :- !, neg_branches(RB, A, true, M, D, S0, S, F0, F).
neg_walk(_, G, M, _, S0, S, F0, F) :- identity_test(G, X, Y, Kind), !, identity(Kind, X, Y, G, M, S0, S, F0, F).
neg_walk(RB, G, M, _, S0, S, F0, F) :- base(RB, G), !, base_goal(RB, G, M, S0, S, F0, F).
neg_walk(RB, G, M, D, S0, S, F0, F) :- catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    foldl(part_walk(RB, M, D, S0), Parts, F0, F), spread(G, S0, S).    % findall/3 & co.: the parts' negations
neg_walk(_, G, _, _, S0, S, F, F) :- pure_goal(G), !, spread(G, S0, S).
neg_walk(RB, G, M, d(K, On), S0, S, F0, F) :-
    K > 0, callable(G), user_pred(RB, G), functor(G, N, A), \+ memberchk(N/A, On), !,
    rule_goal(RB, G, M, d(K, On), S0, S, F0, F).
neg_walk(_, _, _, _, S, S, F, F).

%  forall(member(X, L), A) proved: when A pins a value it took from X (payments_in_profile/2 of airline.pl:
%  each payment's id is one of the profile's), every element of L is the policy's, and so is L.
each_pinned(RB, C, A, D, L, S0, S) :-
    S0 = st(T0, P0), spread(C, S0, S1), neg_walk(RB, A, pos, D, S1, st(T2, P2), [], _),
    (   member(V-_, T2), \+ tainted(V, T0, _), var_in(V, P2), \+ var_in(V, P0) -> pin(L, S0, S) ; S = S0 ).

part_walk(RB, M, D, S0, P, F0, F) :- neg_walk(RB, P, M, D, S0, _, F0, F).

neg_branches(RB, A, B, M, D, S0, S, F0, F) :-
    neg_walk(RB, A, M, D, S0, S1, F0, F1), neg_walk(RB, B, M, D, S0, S2, F1, F), merge_states(S1, S2, S).

flip(pos, Top, neg(Top)).
flip(neg(_), _, pos).

%  Identity tests: X is the side that may hold the client's text.
identity_test(member(X, L), X, L, equal).
identity_test(memberchk(X, L), X, L, equal).
identity_test(X == Y, X, Y, equal).
identity_test(X = Y, X, Y, equal).
identity_test(X \== Y, X, Y, differ).
identity_test(X \= Y, X, Y, differ).

%  An identity test of a client's variable against a term the client did not give: under a negation it is a
%  deny list, otherwise an allow list that pins the variable (\+ X \== x too). Anything else
%  (both sides the client's, no variable at all) relates the two sides: the client's text spreads.
identity(Kind, X, Y, G, M, S0, S, F0, F) :-
    \+ ( G = (_ = _), var(X), var(Y) ),     % X = Y of two variables binds, it tests nothing
    (   tested_var(X, Y, S0, V, N) -> true
    ;   G \= member(_, _), G \= memberchk(_, _), tested_var(Y, X, S0, V, N)
    ),
    !,
    (   Kind == equal, M = neg(Top) -> S = S0, negation_text(Top, S0, Text), F = [f(N, Text)|F0]
    ;   Kind == differ, M == pos
    ->  S = S0,     % A \== admin, forall(member(B, Blocked), A \== B): a deny list; L \== [] a shape
        (   G =.. [_, X1, Y1], ( X1 == V -> Other = Y1 ; Other = X1 ), ( var(Other) ; Other \== '' )
        ->  negation_text(G, S0, Text), F = [f(N, Text)|F0]
        ;   F = F0
        )
    ;   pin(V, S0, S), F = F0
    ).
identity(_, _, _, G, _, S0, S, F, F) :- spread(G, S0, S).

tested_var(X, Y, st(T, P), X, N) :-
    var(X), tainted(X, T, N), \+ var_in(X, P), names_text(Y), term_variables(Y, Ys),
    \+ ( member(Y1, Ys), tainted(Y1, T, _) ).

%  a term that may name a value in text: a variable (a value read from the store), a text, or a list or
%  term holding one ([] and numbers are shapes and amounts, not spellings)
names_text(Y) :- var(Y), !.
names_text(Y) :- has_text(Y).

has_text(Y) :- ( atom(Y), Y \== [] ; string(Y) ), !.
has_text(Y) :- compound(Y), arg(_, Y, A), nonvar(A), has_text(A), !.


%  A store fact: under a negation, a deny list when the client's spelling is compared with values the store
%  holds (a binding's extracted field, a fact an effect or the config wrote, an answer); not when it is the
%  key the fact was fetched by (the binding's tool input): the upstream itself answered for that spelling.
%  Positive, it pins the variables in the places a binding extracts, and every place of a fact only the
%  rulebase or the config sets (a seed, a fact/1 no effect establishes).
base_goal(RB, G, neg(Top), S, S, F0, F) :- !,
    S = st(T, P), fetched_by(RB, G, Keys),
    (   term_variables(G, Vs), member(V, Vs), tainted(V, T, N), \+ var_in(V, P), \+ var_in(V, Keys)
    ->  negation_text(Top, S, Text), F = [f(N, Text)|F0]
    ;   F = F0
    ).
base_goal(RB, G, pos, S0, S, F, F) :-
    functor(G, Name, A), functor(H0, Name, A),
    (   \+ RB:'$src'(decl, binding(H0, _, _, _), _, _), \+ RB:'$src'(decl, askable(H0, _, _, _), _, _),
        \+ established(RB, H0)
    ->  numlist(1, A, Is)
    ;   findall(I, ( RB:'$src'(decl, binding(H0, tool(_, As), _, _), _, _), place(I, H0, HA), var(HA),
                     term_variables(As, AVs), \+ var_in(HA, AVs) ), Is)
    ),
    foldl(pin_arg(G), Is, S0, S).

established(RB, H) :-
    RB:'$src'(decl, effect(_, _, Actions), _, _), is_list(Actions),
    ( memberchk(establish(H), Actions) ; memberchk(establish(H, _), Actions) ), !.

%  the variables of G in the places a binding of its predicate fetches by (its tool's inputs)
fetched_by(RB, G, Keys) :-
    functor(G, Name, A), functor(H0, Name, A),
    findall(I, ( RB:'$src'(decl, binding(H0, tool(_, As), _, _), _, _), place(I, H0, HA), var(HA),
                 term_variables(As, AVs), var_in(HA, AVs) ), Is),
    keys_of(Is, G, Keys).

keys_of([], _, []).
keys_of([I|Is], G, Ks) :- arg(I, G, V), ( var(V) -> Ks = [V|Ks1] ; Ks = Ks1 ), keys_of(Is, G, Ks1).

%  place(?I, +T, ?A): A is T's I-th argument; a goal of no arguments (an atom: retail.pl's name_zip_asked) has
%  none (arg/3 of an atom errs, and an error ends the whole walk: the guard unfinished).
place(I, T, A) :- compound(T), arg(I, T, A).

pin_arg(G, I, S0, S) :- arg(I, G, V), ( var(V) -> pin(V, S0, S) ; S = S0 ).

%  A rule: each clause, its head's values in the client's places being identity tests, its body walked one
%  level deeper. An argument is pinned when every clause pins it.
rule_goal(RB, G, M, d(K, On), S0, S, F0, F) :-
    K1 is K - 1, functor(G, Name, A), D1 = d(K1, [Name/A|On]),
    findall(r(Fs, Is),
            ( rule_parts(RB, G, H, B),
              head_tests(G, H, M, S0, Fh, Ih),
              H = G,
              neg_walk(RB, B, M, D1, S0, S1, Fh, Fs),
              findall(I, ( place(I, G, V), var(V), S1 = st(_, P1), var_in(V, P1) ), Ib),
              append(Ih, Ib, Is) ),
            Rs),
    foldl(clause_findings, Rs, F0, F),
    (   Rs = [r(_, I0)|Rest] -> foldl(common_places, Rest, I0, Is) ; Is = [] ),
    foldl(pin_arg(G), Is, S0, S).

clause_findings(r(Fs, _), F0, F) :- append(Fs, F0, F).
common_places(r(_, Is), I0, I) :- intersection(I0, Is, I).

head_tests(G, H, M, S, F, Is) :-
    S = st(T, P),
    findall(I-N, ( place(I, G, V), var(V), tainted(V, T, N), \+ var_in(V, P), arg(I, H, HA), nonvar(HA),
                   has_text(HA) ), Tests),
    (   Tests = [_-N|_], M = neg(Top) -> negation_text(Top, S, Text), F = [f(N, Text)], Is = []
    ;   M == pos -> pairs_keys(Tests, Is), F = []
    ;   F = [], Is = []
    ).

%  the client's text spreads through a goal that relates it to other values (member(X, Args), atom_string/2);
%  a pinned variable is the policy's value, it spreads nothing. (No findall/3 over variables here: it would
%  copy them, and the walk follows the guard's own.)
spread(G, S0, S) :-
    S0 = st(T, P), term_variables(G, Vs),
    (   member(V, Vs), tainted(V, T, N), \+ var_in(V, P)
    ->  exclude(known_var(T, P), Vs, New), name_each(New, N, TN), append(T, TN, T1), S = st(T1, P)
    ;   S = S0
    ).

known_var(T, P, V) :- ( tainted(V, T, _) -> true ; var_in(V, P) ).

pin(V, st(T, P), st(T, [V|P])).

tainted(V, T, N) :- member(W-N, T), W == V, !.
var_in(V, L) :- member(W, L), W == V, !.

merge_states(st(T1, P1), st(T2, P2), st(T, P)) :-
    exclude(tainted_in(T1), T2, T3), append(T1, T3, T),
    include(in_list(P2), P1, P).

tainted_in(T, V-_) :- tainted(V, T, _).
in_list(L, V) :- var_in(V, L).

%  The negated goal as written, its argument variables named after the arguments (the others _), at most
%  200 characters.
negation_text(Top, st(T, _), Text) :-
    copy_term(Top-T, Top1-T1),
    foldl(name_var, T1, 0, _),
    term_variables(Top1, Rest), maplist(=('$VAR'('_')), Rest),
    format(atom(Full), '~W', [Top1, [quoted(true), numbervars(true), portray(false)]]),
    (   atom_length(Full, L), L > 200
    ->  sub_atom(Full, 0, 200, _, Cut), atom_concat(Cut, '...', Text)
    ;   Text = Full
    ).

name_var(V-N, K, K) :- ( var(V) -> var_name(N, VN), V = '$VAR'(VN) ; true ).

%  an argument named '' has no letter to capitalize: shown as _ (the walk stopped there, its guard unchecked)
var_name('', '_') :- !.
var_name(N, VN) :-
    sub_atom(N, 0, 1, _, C), sub_atom(N, 1, _, 0, Rest), upcase_atom(C, U), atom_concat(U, Rest, VN).
