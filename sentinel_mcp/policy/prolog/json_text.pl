/*  Part of sentinel_core (included): the JSON text of the engine's answers, compact and in one pass.

    Only Python's json.loads reads it, so it has no layout. The terms are those library(http/json) writes:
    json([Key = Value, ...]), lists, @(true), @(false), @(null), numbers, atoms and strings (as JSON
    strings). Writing to a stream costs SWI-Prolog about 20 ns a character, more than the rest of a
    decision's answer, so the text is joined from its pieces instead, with the texts unescaped; one scan
    over all of them checks that none needs an escape (a quote, a backslash or a control character). If
    one does, or the term is anything else, the library writes the whole answer - exactly as before,
    including the errors it raises.
*/

json_text(Term, Atom) :-
    (   catch(json_pieces(Term, Pieces, [], Texts, []), sn_json_other, fail),
        atomic_list_concat(Texts, All), json_plain(All)
    ->  atomic_list_concat(Pieces, Atom)
    ;   finite_json(Term, Term1), atom_json_term(Atom, Term1, [as(atom), width(0)])
    ).

%  An infinite or NaN number is written as its text (pl_json/2 writes a fact's so): the library writes inf or
%  nan, which no JSON reader takes. (Only on the library's path: the fast one writes the text itself.)
finite_json(V, V) :- var(V), !.
finite_json(N, T) :- float(N), \+ ( N =:= N, abs(N) =\= inf ), !, format(atom(T), '~q', [N]).
finite_json(json(KVs), json(KVs1)) :- is_list(KVs), !, maplist(finite_pair, KVs, KVs1).
finite_json(L, L1) :- is_list(L), !, maplist(finite_json, L, L1).
finite_json(X, X).

finite_pair(KV, KV1) :- nonvar(KV), KV = (K = V), !, finite_json(V, V1), KV1 = (K = V1).
finite_pair(KV, KV1) :- nonvar(KV), KV = (K - V), !, finite_json(V, V1), KV1 = (K - V1).
finite_pair(KV, KV).

%  json_plain(+Text): no character of Text needs an escape in a JSON string. (split_string/4 reads its
%  separators as a C string, so the NUL character is looked for on its own: sub_atom_icasechk/3 is a C
%  search, ~7x faster than sub_atom/5's over a proof's few kilobytes; NUL has no case.)
json_plain(All) :-
    json_escaped_chars(Cs), split_string(All, Cs, "", [_]),
    char_code(Nul, 0), \+ sub_atom_icasechk(All, _, Nul).

json_escaped_chars(Cs) :-
    (   nb_current(sn_json_escaped, Cs0) -> Cs = Cs0
    ;   numlist(1, 31, L), string_codes(S0, L), string_concat(S0, "\"\\", Cs), nb_setval(sn_json_escaped, Cs)
    ).

%  json_pieces(+Term, -Pieces, ?Tail, -Texts, ?TextsTail): difference lists of the output and of its texts.
json_pieces(V, _, _, _, _) :- var(V), !, throw(sn_json_other).
json_pieces(json(KVs), ['{'|P], T, S, ST) :- !,
    ( is_list(KVs) -> true ; throw(sn_json_other) ),
    json_pairs(KVs, P, ['}'|T], S, ST).
json_pieces(L, ['['|P], T, S, ST) :- is_list(L), !, json_items(L, P, [']'|T], S, ST).
json_pieces(@(X), [X|T], T, S, S) :- !, ( json_constant(X) -> true ; throw(sn_json_other) ).
json_pieces(N, [N|T], T, S, S) :- integer(N), !.
json_pieces(N, P, T, S, S) :- float(N), !,
    ( N =:= N, abs(N) =\= inf -> P = [N|T] ; format(atom(A), '~q', [N]), P = ['"', A, '"'|T] ).
json_pieces(A, ['"', A, '"'|T], T, [A|S], S) :- ( atom(A) ; string(A) ), !.
json_pieces(_, _, _, _, _) :- throw(sn_json_other).

json_constant(true). json_constant(false). json_constant(null).

json_pairs([], T, T, S, S).
json_pairs([KV|KVs], ['"', K, '":'|P], T, [K|S], ST) :-
    ( nonvar(KV), ( KV = (K = V) ; KV = (K - V) ), ( atom(K) ; string(K) ) -> true ; throw(sn_json_other) ),
    json_pieces(V, P, P1, S, S1),
    ( KVs == [] -> P1 = T, S1 = ST ; P1 = [','|P2], json_pairs(KVs, P2, T, S1, ST) ).

json_items([], T, T, S, S).
json_items([X|Xs], P, T, S, ST) :-
    json_pieces(X, P, P1, S, S1),
    ( Xs == [] -> P1 = T, S1 = ST ; P1 = [','|P2], json_items(Xs, P2, T, S1, ST) ).
