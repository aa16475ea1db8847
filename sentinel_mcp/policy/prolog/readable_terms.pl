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
readable(json(KVs), T) :- is_list(KVs), !, maplist(readable_pair, KVs, Ps), atomic_list_concat(Ps, ', ', T).
readable([], none) :- !.
readable(L, T) :- is_list(L), !,
    maplist(readable_item, L, Items),
    ( member(json(_), L) -> Sep = '; ' ; Sep = ', ' ),
    atomic_list_concat(Items, Sep, T).
readable(K-V, T) :- !, readable(K, KT), readable(V, VT), atomic_list_concat([KT, VT], ': ', T).
readable(T0, T) :- format(atom(T), '~w', [T0]).

readable_pair(K=V, T) :- !, readable(K, KT), readable_value(V, VT), atomic_list_concat([KT, ': ', VT], T).
readable_pair(X, T) :- readable(X, T).

% nested objects and lists inside an object are bracketed with parentheses, never [ ]
readable_value(V, T) :- nonvar(V), ( V = json(_) ; is_list(V), V \== [] ), !, readable(V, T0), atomic_list_concat(['(', T0, ')'], T).
readable_value(V, T) :- readable(V, T).

readable_item(V, T) :- readable(V, T).
