/*  Predicates every rulebase can call (imported into each rulebase module). */
:- module(sentinel_rt, [now/1, iso_hours_between/3, iso_date_before/2, option_value/4, json_get/3,
                        fact_provenance/2, context_value/2, call_tool_name/1, answer_label/3, humanized/2,
                        unicode_category/2, speaks_of_a_code/1]).
:- use_module(library(lists)).
:- use_module(unicode_categories, [uc_category/2]).  % Unicode 14's categories (SWI-Prolog's tables are 5.x)
:- use_module(code_words, [code_word/1, short_code_word/1, letter_fold/2]).  % core/code_words.py's list and fold
:- reexport(person_names, [person_name/1, person_name_key/2]).  % a person's name in any script, nothing hidden (person_names.pl)
:- reexport(calendar_texts, [calendar_date/1, calendar_time/1]).  % YYYY-MM-DD(THH:MM:SS) that exists (calendar_texts.pl)
:- use_module(library(date)).  % parse_time/3: loaded here, never autoloaded during a decision

now(T) :- sentinel_core:query_now(T).

fact_provenance(G, P) :- sentinel_core:fact_provenance(G, P).
%  A binding counts only while its checks hold, also where a rule's goal runs natively (inside findall/3 and
%  the other collecting builtins, in a rule with a cut): the same read as prove/2's (bound_contexts.pl).
context_value(N, V) :- sentinel_core:checked_context(N, V, _).
call_tool_name(T) :- sentinel_core:call_tool_name(T).

%  iso_hours_between(+T1, +T2, -H): hours from T1 to T2 ('2024-05-08T11:25:00', '2024-05-15 15:00:00', '2024-05-15').
iso_hours_between(T1, T2, H) :- iso_stamp(T1, S1), iso_stamp(T2, S2), H is (S2 - S1) / 3600.

iso_date_before(D1, D2) :- iso_stamp(D1, S1), iso_stamp(D2, S2), S1 < S2.

%  Parsing a time is most of a rule that compares times; the same few timestamps come back in every
%  decision, so the last few thousand parsed are kept (a pure function of the text: nothing goes stale).
:- dynamic iso_memo/2.
iso_stamp(T, S) :-
    ( atom(T) -> A = T ; string(T) -> atom_string(A, T) ; format(atom(A), '~w', [T]) ),
    (   iso_memo(A, S0)
    ->  S = S0
    ;   iso_parse(A, S0),
        flag(sn_iso_memo, N, N + 1),
        ( N >= 4096 -> retractall(iso_memo(_, _)), flag(sn_iso_memo, _, 1) ; true ),
        assertz(iso_memo(A, S0)), S = S0
    ).

iso_parse(A, S) :-
    (   sub_atom(A, 10, 1, _, ' ') -> sub_atom(A, 0, 10, _, D), sub_atom(A, 11, _, 0, R), atomic_list_concat([D, 'T', R], A1)
    ;   A1 = A
    ),
    ( atom_length(A1, 10) -> atom_concat(A1, 'T00:00:00', A2) ; A2 = A1 ),
    parse_time(A2, iso_8601, S).

%  unicode_category(+Code, -Category): Unicode's general category of the character Code ('Lu', 'Nd', 'Mn', ...);
%  fails for anything but an assigned code point (an unbound Code enumerates nothing). SWI-Prolog's char_type
%  alpha is no letter test: it holds for the decimal digits of every script but ASCII's ('٤', '４', '𝟒'), Roman
%  numerals and circled letters, and not for most combining marks (the acute of a decomposed 'é', a virama).
%  Its unicode_property/2 is Unicode 5.x: Ethiopic Extended-A, Adlam and newer letters were none (the table
%  is sentinel_mcp/policy/unicode_table.py's).
unicode_category(C, K) :-
    integer(C), C >= 0, C =< 0x10FFFF, uc_category(C, K0), K0 \== 'Cn', K = K0.

%  speaks_of_a_code(+Text): the text (an atom or a string) holds a word a message speaks of a one-time code
%  with, in any of the languages of core/code_words.py, read through its fold (case, width, styled letters,
%  accents, an invisible character as a space): "Your code", "Tu código", "Ваш код", "ＣＯＤＥ", "验证码".
%  The same list and fold as the device's SMS tool and the records' redactor (code_words.pl is written from
%  it), so a rulebase and the tool decide alike.
speaks_of_a_code(T) :-
    ( atom(T) -> true ; string(T) ), atom_codes(T, Cs0), maplist(folded_letter, Cs0, Cs), atom_codes(L, Cs),
    (   code_word(W), atom_codes(A, W), sub_atom(L, _, _, _, A) -> true
    ;   short_code_word(W), atom_codes(A, W), sub_atom(L, B, N, _, A),
        \+ ( B > 0, Bp is B - 1, sub_atom(L, Bp, 1, _, P), ascii_lower(P) ),
        \+ ( E is B + N, sub_atom(L, E, 1, _, F), ascii_lower(F) ) -> true
    ).

folded_letter(C, F) :- ( letter_fold(C, F0) -> F = F0 ; F = C ).

ascii_lower(C) :- char_code(C, X), X >= 0'a, X =< 0'z.

option_value(List, Name, Default, V) :- ( memberchk(Name = V0, List) -> V = V0 ; V = Default ).

json_get(json(KVs), K, V) :- memberchk(K = V, KVs).

%  answer_label(+Predicate, +Value, -Label): how the askable Predicate offers Value to a person (its label in
%  choice([Value - Label, ...])), else the value humanized (change_of_plan -> 'Change of plan').
answer_label(P, V, L) :-
    (   sentinel_core:query_rb(RB), RB:askable(H, _, choice(Cs), _), functor(H, P, _), memberchk(V - L0, Cs)
    ->  ( string(L0) -> atom_string(L, L0) ; L = L0 )
    ;   humanized(V, L)
    ).

%  humanized(+Token, -Text): a snake_case token as words, first letter capital.
%  An unknown value (a fact assumed while it is fetched or asked) stays unknown: its text is the same variable,
%  never the variable's internal name (that name differs from run to run and read as a number, "_123" -> " 123").
humanized(V, T) :- var(V), !, T = V.
humanized(V, T) :-
    ( atom(V) -> A = V ; format(atom(A), '~w', [V]) ),
    atomic_list_concat(Ws, '_', A), atomic_list_concat(Ws, ' ', T0),
    (   sub_atom(T0, 0, 1, _, F), sub_atom(T0, 1, _, 0, Rest), upcase_atom(F, FU) -> atom_concat(FU, Rest, T)
    ;   T = T0
    ).
