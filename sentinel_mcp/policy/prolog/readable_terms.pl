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

readable(V, 'the answer you give above') :- var(V), !.
readable(true, yes) :- !.
readable(false, no) :- !.
readable(null, none) :- !.
readable(@(X), T) :- atom(X), !, readable(X, T).
readable(text(S), T) :- ( atom(S) ; string(S) ), !, atom_string(T, S).
readable(text(F, Args), T) :- ( atom(F) ; string(F) ), is_list(Args), !, own_template_text(F, Args, T).
readable(joined(L, Sep), T) :- is_list(L), atom(Sep), !,
    ( L == [] -> T = none ; maplist(readable, L, Ts), separated_fit(Ts, Sep), atomic_list_concat(Ts, Sep, T) ).
readable(S, T) :- ( atom(S) ; string(S) ), !, ( bare_text(S) -> atom_string(T, S) ; quoted_text(S, T) ).
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

%  text(Template, Args): a template of the rulebase's, checked as a confirmation's is (goal_check.pl: only
%  directives that print their argument), filled with its values as a question's are.
own_template_text(F, Args, T) :-
    (   safe_format(F)
    ->  readable_args(Args, As), formatted_numbers(F, As), bounded_format(atom(T), F, As)
    ;   throw(error(domain_error(safe_text_template, F), _))
    ).

%  A label a rulebase gives a choice, or its own headline: its text as written (a value made of outside
%  text is marked by what it is, e.g. a label built with text(Template, Args)).
own_text(S, T) :- ( atom(S) ; string(S) ), !, atom_string(T, S).
own_text(V, T) :- readable(V, T).

%  items_text(+Headline, +Items, -Text): a confirmation built from what it must show, as one paragraph a
%  person reads: "Headline Label: value. Label: value." Items are Label = Value: the headline and the
%  labels are the rulebase's words, as written; a value reads as above (a text quoted unless it is bare or
%  marked text(...), money(N) for an amount); an item whose value is none (an empty list, null) is left out.
items_text(H, Items, Text) :-
    own_text(H, HT),
    findall(IT, ( member(Item, Items), item_text(Item, IT) ), ITs),
    separated_fit([HT|ITs], ' '), atomic_list_concat([HT|ITs], ' ', Text).

item_text(L = V, T) :- nonvar(L), readable(V, VT), VT \== none, own_text(L, LT),
    ( sub_atom(VT, _, 1, 0, '.') -> Sep = '' ; Sep = '.' ),
    atomic_list_concat([LT, ': ', VT, Sep], T).

bare_text(S) :- string_length(S, N), N =< 64, string_codes(S, Cs), Cs \== [], forall(member(C, Cs), bare_code(C)).

bare_code(C) :- C >= 0'a, C =< 0'z, !.
bare_code(C) :- C >= 0'A, C =< 0'Z, !.
bare_code(C) :- C >= 0'0, C =< 0'9, !.
bare_code(C) :- memberchk(C, `_.#@+-`).

quoted_text(S, T) :-
    string_codes(S, Cs), phrase(quoted_codes(Cs), Out),
    atom_codes(A, Out), atomic_list_concat(['\u201C', A, '\u201D'], T).

quoted_codes([]) --> [].
quoted_codes([C|Cs]) --> quoted_code(C), quoted_codes(Cs).

quoted_code(0'\n) --> !, "\\n".
quoted_code(0'\r) --> !, "\\r".
quoted_code(C) --> { closing_like(C) }, !, [0'\\, C].
quoted_code(C) --> [C].

%  What could close “…” for a reader: the backslash its escapes start with, and every double quotation mark
%  and mark drawn like one (straight, curly, low, reversed, primes, ditto, fullwidth, CJK double prime
%  quotes, guillemets). Single quotes and apostrophes stay as they are: names are full of them.
closing_like(C) :- memberchk(C, [0'\\, 0'", 0x00AB, 0x00BB, 0x02BA, 0x02EE, 0x201C, 0x201D, 0x201E, 0x201F,
                                 0x2033, 0x2036, 0x3003, 0x301D, 0x301E, 0x301F, 0xFF02]).
