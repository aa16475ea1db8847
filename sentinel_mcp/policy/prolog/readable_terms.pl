/*  Arguments of question templates as a person reads them (included by sentinel_core).

    A question's ~w gets plain text, never Prolog term syntax: a JSON object json([k=v, ...]) reads
    "k: v, ...", a list reads as its items separated by ", " (objects in a list by "; "), true/false/null
    read yes/no/none, and a value still being asked for in the same round reads "the answer you give above".

    A text (an atom or a string) is a value someone supplied: a call's argument, a tool's result, an agent's
    answer. A JSON string arrives as an atom, as the rulebase's own enumerations do, so the type cannot tell
    who wrote it: a text reads bare only when it is made of [A-Za-z0-9_.#@+-] (an identifier, a code, a date,
    an e-mail address, a number), which cannot carry a sentence, and is at most 64 characters long (a longer
    one is quoted, so that it is cut inside its quotes where the question is shown, not its tail). Any other text reads as one quoted value,
    “…”, so nothing inside it passes for a label, a sentence or a line of the question: inside it, a mark
    that could close the quote (” and every double quote mark drawn like it) and the backslash are shown
    escaped (\”, \\), and a line feed or carriage return as \n, \r. Nothing else is changed here: hidden
    characters (bidi, zero-width, control, line separators) are shown by the gateway's safe_question, the
    one marking a person sees (display_text.py).

    The rulebase's own text, and text Sentinel made and vouches for (a peer's description from a built-in),
    is marked text(T) and reads as it is; text(Template, Args) is the rulebase's template with its values
    read as above (a text made of the rulebase's words and values it quotes, never quoted again);
    joined(Items, Separator) reads its items (each as above) joined by the rulebase's separator.
*/

readable_args(Args, Texts) :- is_list(Args), !, maplist(readable, Args, Texts).
readable_args(Arg, [Text]) :- readable(Arg, Text).

%  readable_room(+Values, -Texts, +Room0, -Room): a template's values, each read, and Room0 less their texts'
%  lengths while each is one ~w writes as atomic_list_concat/2 does (an atom or an integer: plain_room/3's
%  test); Room is -1 after any other (a float), which only format/3 writes.
readable_room([], [], R, R).
readable_room([V|Vs], [T|Ts], R0, R) :-
    readable(V, T),
    ( R0 >= 0, ( atom(T) ; integer(T) ) -> atom_length(T, N), R1 is R0 - N ; R1 = -1 ),
    readable_room(Vs, Ts, R1, R).

readable(V, 'the answer you give above') :- var(V), !.
readable(true, yes) :- !.
readable(false, no) :- !.
readable(null, none) :- !.
readable(@(X), T) :- atom(X), !, readable(X, T).
readable(text(S), T) :- atom(S), !, T = S.
readable(text(S), T) :- string(S), !, atom_string(T, S).
readable(text(F, Args), T) :- ( atom(F) ; string(F) ), is_list(Args), !, own_template_text(F, Args, T).
readable(joined(L, Sep), T) :- is_list(L), atom(Sep), !,
    ( L == [] -> T = none ; maplist(readable, L, Ts), separated_fit(Ts, Sep), atomic_list_concat(Ts, Sep, T) ).
readable(S, T) :- atom(S), !,
    %  bare: at most 64 characters (a longer value is quoted, so a question can cut it inside its quotes),
    %  checked in one pass inside SWI-Prolog (values of every confirmation come here): split_string/4 with no separators and the bare set as padding strips the set's characters
    %  from both ends, so nothing is left exactly when every character is one of them; except NUL, which
    %  split_string/4 takes for one of any set in a text of one-byte characters (C's end of string): refused
    %  by name, one part when split at it (every other code point checked, alone and beside a one-byte and
    %  a wide character)
    (   S \== '', atom_length(S, N), N =< 64,
        split_string(S, "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.#@+-", [""]),
        atomic_list_concat([_], '\0\', S)
    ->  T = S
    ;   quoted_text(S, T)
    ).
readable(S, T) :- string(S), !, atom_string(A, S), readable(A, T).
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
%  Any other term reads as ~w writes it while every text and name in it reads bare (f(x), 1/2); one holding
%  another reads as its name and its arguments, each read as above (foo(“mug. Answer yes”)): ~w would write
%  that text unquoted, as if it were the question's own words.
readable(T0, T) :- compound(T0), \+ bare_leaves(T0), !,
    compound_name_arguments(T0, N0, As), ( bare_name(N0) -> N = N0 ; readable(N0, N) ),
    maplist(readable, As, Ts), separated_fit(Ts, ', '), atomic_list_concat(Ts, ', ', In), bounded_format(atom(T), '~w(~w)', [N, In]).
readable(T0, T) :- bounded_format(atom(T), '~w', [T0]).

%  every text in it reads bare, and so does every name of a term in it (or is an operator's symbols: 1/2)
bare_leaves(T0) :-
    \+ ( sub_term(X, T0), ( compound(X) -> compound_name_arity(X, Y, _), \+ bare_name(Y) ; Y = X ),
         ( atom(Y) ; string(Y) ), \+ ( atom(Y), readable(Y, R), R == Y ) ).

bare_name(N) :- atom(N), atom_codes(N, Cs), Cs \== [], forall(member(C, Cs), memberchk(C, `#$&*+-./:<=>?@\\^~`)).

readable_pair(K=V, T) :- !, readable(K, KT), readable_value(V, VT), atomic_list_concat([KT, ': ', VT], T).
readable_pair(X, T) :- readable(X, T).

% nested objects and lists inside an object are bracketed with parentheses, never [ ]
readable_value(V, T) :- nonvar(V), ( V = json(_) ; is_list(V), V \== [] ), !, readable(V, T0), atomic_list_concat(['(', T0, ')'], T).
readable_value(V, T) :- readable(V, T).

readable_item(V, T) :- readable(V, T).

%  text(Template, Args): a template of the rulebase's, checked as a confirmation's is (goal_check.pl: only
%  directives that print their argument), filled with its values as a question's are. A template of ~w and
%  ~~ only (safe by what it is) is read once (plain_formats.pl's memo) and its values joined between its own
%  texts: the text format/3 writes, without parsing the template again on every decision.
own_template_text(F, Args, T) :-
    (   atom(F), ( plain_memo(F, Vs, Parts) -> true ; plain_template(F, Vs, Parts) ), Parts \== none
    ->  readable_room(Args, As, 1000000, R),  % max_text_chars/1: the bound bounded_format/3 keeps
        (   R >= 0, Vs = As
        ->  atomic_list_concat(Parts, T)
        ;   formatted_numbers(F, As), bounded_format(atom(T), F, As)
        )
    ;   safe_format(F)
    ->  readable_args(Args, As), formatted_numbers(F, As), bounded_format(atom(T), F, As)
    ;   throw(error(domain_error(safe_text_template, F), _))
    ).

%  A label a rulebase gives a choice, or its own headline: its text as written (a value made of outside
%  text is marked by what it is, e.g. a label built with text(Template, Args)).
own_text(S, T) :- atom(S), !, T = S.
own_text(S, T) :- string(S), !, atom_string(T, S).
own_text(V, T) :- readable(V, T).

%  items_text(+Headline, +Items, -Text): a confirmation built from what it must show, as one paragraph a
%  person reads: "Headline Label: value. Label: value." Items are Label = Value: the headline and the
%  labels are the rulebase's words, as written; a value reads as above (a text quoted unless it is bare or
%  marked text(...), money(N) for an amount); an item whose value is none (an empty list, null) is left out.
items_text(H, Items, Text) :-
    ( atom(H) -> HT = H ; own_text(H, HT) ),
    findall(IT, ( member(Item, Items), item_text(Item, IT) ), ITs),
    separated_fit([HT|ITs], ' '), atomic_list_concat([HT|ITs], ' ', Text).

item_text(L = V, T) :- nonvar(L), readable(V, VT), VT \== none, ( atom(L) -> LT = L ; own_text(L, LT) ),
    ( sub_atom(VT, _, 1, 0, '.') -> Sep = '' ; Sep = '.' ),
    atomic_list_concat([LT, ': ', VT, Sep], T).

%  A value with nothing to escape (no closing mark, backslash or line break: one part when split at them, one
%  pass inside SWI-Prolog) is quoted as it is; any other is walked code by code (so is one with a NUL, which
%  split_string/4 splits at too: the same text, the long way).
quoted_text(S, T) :-
    (   closing_codes(Es), split_string(S, [0'\n, 0'\r|Es], "", [_])
    ->  atomic_list_concat(['\u201C', S, '\u201D'], T)
    ;   string_codes(S, Cs), phrase(quoted_codes(Cs), Out),
        atom_codes(A, Out), atomic_list_concat(['\u201C', A, '\u201D'], T)
    ).

quoted_codes([]) --> [].
quoted_codes([C|Cs]) --> quoted_code(C), quoted_codes(Cs).

quoted_code(0'\n) --> !, "\\n".
quoted_code(0'\r) --> !, "\\r".
quoted_code(C) --> { closing_like(C) }, !, [0'\\, C].
quoted_code(C) --> [C].

%  What could close “…” for a reader: the backslash its escapes start with, and every double quotation mark
%  and mark drawn like one (straight, curly, low, reversed, primes, ditto, fullwidth, CJK double prime
%  quotes, guillemets). Single quotes and apostrophes stay as they are: names are full of them.
closing_like(C) :- closing_codes(Cs), memberchk(C, Cs).

closing_codes([0'\\, 0'", 0x00AB, 0x00BB, 0x02BA, 0x02EE, 0x201C, 0x201D, 0x201E, 0x201F,
               0x2033, 0x2036, 0x3003, 0x301D, 0x301E, 0x301F, 0xFF02]).
