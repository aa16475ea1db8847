/*  Part of sentinel_core (included): a rulebase's format/3, with its common case joined instead of formatted.

    A rule's labels and amounts are format/3 into an atom of a template whose only directives are ~w, with
    atoms, strings and integers as arguments ('~w (~w)', '$~w to ...'): four of them in an allowed airline
    cancel. format/3 opens an output stream for each (~1.5 us); what it writes there is each argument's text
    between the template's own texts, which atomic_list_concat/2 makes directly (~0.2 us). A float, a compound,
    a variable, any other directive or sink, or arguments that do not fit the template take the general path
    (strict_arithmetic.pl's checks, bounded_format/3), as before.
*/

%  rule_format(+Sink, +Format, +Args): the body of a rulebase's strict format/3: formatted_numbers/2,
%  bounded_format/3 and sink_made/1, or, for a plain template into atom(_), the same text joined, within the
%  same bound (bounded_format/3's on the arguments' texts, max_text_chars/1 written out) and counted as made
%  (made_one/1's, in line: the text is an atom).
rule_format(S, F, A) :-
    (   compound(S), S = atom(X), atom(F), is_list(A),
        ( plain_memo(F, A0, Parts) -> true ; plain_template(F, A0, Parts) ),
        A0 = A,  % a template that is not plain is remembered as none, which no list is
        plain_room(A, 1000000, R), R >= 0
    ->  atomic_list_concat(Parts, X0), X = X0,
        atom_length(X0, L), ( L >= 64 -> take_made(L) ; true )
    ;   formatted_numbers(F, A), bounded_format(S, F, A), sink_made(S)
    ).

%  plain_room(+Values, +Room0, -Room): Room0 less the values' lengths, for values ~w writes as their own text,
%  the text atomic_list_concat/2 makes of them; fails on any other (a float is written by the float_format
%  flag, [] is no atom, a compound by the writer: format/3's).
plain_room([], R, R).
plain_room([V|Vs], R0, R) :-
    ( atom(V) -> true ; string(V) -> true ; integer(V) ),
    atom_length(V, N), R1 is R0 - N, plain_room(Vs, R1, R).

%  plain_template(+Format, -Args, -Parts): a template of ~w directives (and ~~) as the list of its texts with
%  a variable for each argument (Args, in order); Args and Parts none for any other template. Worked out once
%  per template and remembered in plain_memo/3 (a rulebase's templates are literal texts: a few).
:- dynamic plain_memo/3.
plain_template(F, Args, Parts) :-
    atom_codes(F, Cs),
    ( plain_parts(Cs, [], Args, Parts) -> true ; Args = none, Parts = none ),
    keep_memo(sn_plain_memo, plain_memo(F, Args, Parts)).  % proof_interpreter.pl: bounded

%  plain_parts(+Codes, +Text, -Args, -Parts): Text holds the codes of the literal text read so far, reversed.
plain_parts([], T, [], Parts) :- literal_part(T, [], Parts).
plain_parts([0'~, 0'~|Cs], T, Args, Parts) :- !, plain_parts(Cs, [0'~|T], Args, Parts).
plain_parts([0'~, 0'w|Cs], T, [V|Args], Parts) :- !,
    literal_part(T, [V|Parts1], Parts), plain_parts(Cs, [], Args, Parts1).
plain_parts([0'~|_], _, _, _) :- !, fail.
plain_parts([C|Cs], T, Args, Parts) :- plain_parts(Cs, [C|T], Args, Parts).

literal_part([], Parts, Parts) :- !.
literal_part(T, Rest, [A|Rest]) :- reverse(T, Cs), atom_codes(A, Cs).
