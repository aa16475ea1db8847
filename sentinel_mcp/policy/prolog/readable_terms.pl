/*  Arguments of question templates as a person reads them (included by sentinel_core).

    A question's ~w gets plain text, never Prolog term syntax: a JSON object json([k=v, ...]) reads
    "k: v, ...", a list reads as its items separated by ", " (objects in a list by "; "), true/false/null
    read yes/no/none, and a value still being asked for in the same round reads "the answer you give above".
*/

readable_args(Args, Texts) :- is_list(Args), !, maplist(readable, Args, Texts).
readable_args(Arg, [Text]) :- readable(Arg, Text).

readable(V, 'the answer you give above') :- var(V), !.
readable(true, yes) :- !.
readable(false, no) :- !.
readable(null, none) :- !.
readable(@(X), T) :- atom(X), !, readable(X, T).
readable(S, T) :- string(S), !, atom_string(T, S).
readable(A, A) :- atomic(A), !.
readable(json(KVs), T) :- is_list(KVs), !, maplist(readable_pair, KVs, Ps), separated_fit(Ps, ', '),
    atomic_list_concat(Ps, ', ', T).
readable([], none) :- !.
readable(L, T) :- is_list(L), !,
    maplist(readable_item, L, Items),
    ( member(json(_), L) -> Sep = '; ' ; Sep = ', ' ),
    separated_fit(Items, Sep), atomic_list_concat(Items, Sep, T).  % bounded_terms.pl
readable(money(N), T) :- number(N), !,
    ( integer(N) -> format(atom(T), '$~d', [N]) ; format(atom(T), '$~2f', [N]) ).
readable(K-V, T) :- !, readable(K, KT), readable(V, VT), atomic_list_concat([KT, VT], ': ', T).
readable(T0, T) :- bounded_format(atom(T), '~w', [T0]).

readable_pair(K=V, T) :- !, readable(K, KT), readable_value(V, VT), atomic_list_concat([KT, ': ', VT], T).
readable_pair(X, T) :- readable(X, T).

% nested objects and lists inside an object are bracketed with parentheses, never [ ]
readable_value(V, T) :- nonvar(V), ( V = json(_) ; is_list(V), V \== [] ), !, readable(V, T0), atomic_list_concat(['(', T0, ')'], T).
readable_value(V, T) :- readable(V, T).

readable_item(V, T) :- readable(V, T).

%  items_text(+Headline, +Items, -Text): a confirmation built from what it must show, as one paragraph a
%  person reads: "Headline Label: value. Label: value." Items are Label = Value (a value as above, money(N)
%  for an amount); an item whose value is none (an empty list, null) is left out.
items_text(H, Items, Text) :-
    readable(H, HT),
    findall(IT, ( member(Item, Items), item_text(Item, IT) ), ITs),
    separated_fit([HT|ITs], ' '), atomic_list_concat([HT|ITs], ' ', Text).

item_text(L = V, T) :- nonvar(L), readable(V, VT), VT \== none, readable(L, LT),
    ( sub_atom(VT, _, 1, 0, '.') -> Sep = '' ; Sep = '.' ),
    atomic_list_concat([LT, ': ', VT, Sep], T).
