/*  Part of sentinel_core (included): a rulebase's values written, kept and concatenated within a size.

    One inference can make far more than the work it took. f(A, A) nested N deep is N cells that read as a
    tree of 2^N: writing it (format/3's ~w, a proof's text, a question), or asserting it (a need), is one
    step of unbounded work, which neither the inference limit nor an alarm interrupts (SWI-Prolog's writer
    and clause compiler do not poll for signals). A guard building one from a call's number held the engine
    every decision waits for (and the event loop, on the caller's thread) for good; asserting it, or
    atom_concat(A, A, B) 33 times (8 GB asked for one text), killed the process. So:

    - every text Sentinel writes of a rulebase's terms (format/3 in a rule, a proof's goals, a confirmation,
      a guard's error) goes through a stream that stops at max_text_chars (bounded_text/2), and the long
      texts one answer shows stop at max_answer_chars in all (shown_text/2);
    - a term a rule hands Sentinel to keep (a need, an unmet condition) is walked first, shared subterms
      counted each time they are reached, up to the same bound (term_fits/1);
    - a rulebase's concatenations refuse a text over the bound before making it, and length/2 and functor/3
      a list or a term over max_list_length (their twins, defined in the rulebase's module beside
      strict_arithmetic.pl's);
    - and the atoms a rulebase's builtins make count against one room per pass, max_made_chars in all
      (made/1): each text is bounded, but not how many, and atoms live outside SWI-Prolog's stacks, so no
      stack limit holds them (every suffix of a 300,000-character argument, each a new atom, took the
      gateway to 2.8 GB in one decision).
    Each raises resource_error: the decision errs, and a guard that errs denies.
*/

:- use_module(library(prolog_stream)).

max_text_chars(1000000).
max_list_length(1000000).
max_answer_chars(8000000).  % an engine's answer: a proof of many goals, each shown within max_text_chars
max_made_chars(8000000).  % the atoms a rulebase's builtins make in one pass, in all

%  bounded_text(:Goal, -Text): Text (an atom) is what Goal writes to current_output; a resource error
%  (text_size) when that is more than max_text_chars characters. Goal is written twice: first to a stream that
%  only counts and stops the writing at the bound, then, within it, to the text (no chunks kept and joined).
bounded_text(Goal, Text) :-
    max_text_chars(Max),
    (   nb_current(sn_bt_room, Outer) -> true ; Outer = none ),  % written inside another bounded text
    setup_call_cleanup(nb_setval(sn_bt_room, Max), counted(Goal, Room), nb_setval(sn_bt_room, Outer)),
    (   Room < 0
    ->  throw(error(resource_error(text_size), context(sentinel_bounded_text, 'a text longer than a rulebase may write')))
    ;   with_output_to(atom(Text), Goal)
    ).

counted(Goal, Room) :-
    open_prolog_stream(sentinel_core, write, S, []),
    setup_call_cleanup(true, catch(with_output_to(S, Goal), E, true), close(S, [force(true)])),
    nb_getval(sn_bt_room, Room),
    ( Room >= 0, nonvar(E) -> throw(E) ; true ).

%  The counting stream's writer (library(prolog_stream) calls it with each buffer): it fails once the room is
%  used up, which ends the write with an I/O error (counted/2 then tells the size).
stream_write(_, Chunk) :-
    nb_getval(sn_bt_room, R0), string_length(Chunk, L), R is R0 - L, nb_setval(sn_bt_room, R), R >= 0.
stream_close(_).

%  shown_text(+Term, -Text): Term as writeq/1 writes it, or a placeholder saying it is too long to show (a
%  proof's goal or a guard's error is shown, never decided on).
%  One text may be shown in many places of an answer (a big fact in every goal that reads it): the texts of
%  512 characters or more that one answer shows are bounded by max_answer_chars in all (shown_room, from
%  begin_query/4 or sn_render_kept_proof/2); past that they are shown by the placeholder too.
shown_text(T, A) :-
    catch(bounded_text(writeq(T), A0), error(resource_error(text_size), _), too_large_shown(A0)),
    atom_length(A0, L),
    (   L < 512 -> A = A0
    ;   ( nb_current(sn_shown_room, R0) -> true ; max_answer_chars(R0) ), R is R0 - L,
        ( R >= 0 -> nb_linkval(sn_shown_room, R), A = A0 ; too_large_shown(A) )
    ).

%  new_shown_room: a new answer's room for long texts, and a new pass's room for the atoms its rules make.
%  The rooms are small integers (at most 8,000,000, less the lengths taken), which SWI-Prolog keeps in the
%  cell itself: nb_linkval/2 stores one as nb_setval/2 does, without its copy (two inferences each).
new_shown_room :- nb_linkval(sn_shown_room, 8000000), nb_linkval(sn_made_room, 8000000).  % max_answer_chars/1,
                                                                                          % max_made_chars/1

%  fresh(+Args, -Fresh): the arguments that are unbound before a builtin runs: after it, what it made.
fresh([], []).
fresh([A|As], F) :- ( var(A) -> F = [A|F1] ; F = F1 ), fresh(As, F1).

%  made(+Values): the atoms among Values (or in lists among them), just made by a rulebase's builtin, taken
%  from the pass's room; a resource error (text_size) once the room is used up. An atom already in SWI-Prolog's
%  table is counted too: what a rule makes is bounded whatever else the engine holds.
made(Vs) :-
    made_chars(Vs, 0, N),
    ( N =:= 0 -> true ; take_made(N) ).

%  made_one(+Value): made/1 of one value (the common case, without a list walked: a twin whose one output was
%  unbound, format/3 to an atom). An atom under 64 characters is not taken from the room: how many of those a
%  pass makes is bounded by its inference limit (each costs inferences), and a guard's own texts (a question,
%  a confirmation's wording) are mostly such; what a loop over a long text makes is counted.
made_one(V) :- ( atom(V), atom_length(V, L), L >= 64 -> take_made(L) ; true ).

take_made(N) :-
    ( nb_current(sn_made_room, R0) -> true ; max_made_chars(R0) ), R is R0 - N, nb_linkval(sn_made_room, R),
    ( R >= 0 -> true ; throw(error(resource_error(text_size), context(sentinel_bounded_text, 'more text than a rulebase may make in one decision'))) ).

%  sink_made(+Sink): format/3's text, when it made an atom.
sink_made(atom(X)) :- !, made_one(X).
sink_made(_).

made_chars([], N, N).
made_chars([V|Vs], N0, N) :-
    (   atom(V) -> atom_length(V, L), N1 is N0 + L
    ;   is_list(V) -> made_chars(V, N0, N1)
    ;   N1 = N0
    ),
    made_chars(Vs, N1, N).

too_large_shown('<a term too large to show>').

%  bounded_format(+Sink, +Format, +Args): format/3 into atom(_), string(_), codes(_) or chars(_), bounded.
%  Arguments that are all atomic, the common case, are written at once: a template passes the load's check
%  only with directives that print an argument as it is (goal_check.pl: counts only for numbers, at most 20),
%  so the text is at most the template and those arguments' own texts (a number's digits are bounded too).
bounded_format(Sink, F, A) :-
    (   is_list(A), texts_room(A, 1000000, R), R >= 0  % max_text_chars/1, written out: a format on every decision
    ->  format(Sink, F, A)
    ;   bounded_text(format(F, A), Text), sink_text(Sink, Text)
    ).

sink_text(atom(X), T) :- !, X = T.
sink_text(string(X), T) :- !, atom_string(T, X).
sink_text(codes(X), T) :- !, atom_codes(T, X).
sink_text(chars(X), T) :- !, atom_chars(T, X).
sink_text(S, _) :- throw(error(domain_error(output_sink, S), _)).

%  term_fits(+T): T read as a tree (a shared subterm counted each time it is reached) has at most
%  max_text_chars nodes and characters of text; a resource error (term_size) otherwise, the walk stopped there.
term_fits(T) :-
    max_text_chars(Max),
    (   fits(T, Max, _) -> true
    ;   throw(error(resource_error(term_size), context(sentinel_bounded_text, 'a term larger than a rulebase may hand over')))
    ).

fits(T, B0, B) :- var(T), !, B is B0 - 1, B >= 0.
fits(T, B0, B) :- atomic(T), !, ( ( atom(T) ; string(T) ) -> atom_length(T, L) ; L = 1 ), B is B0 - L - 1, B >= 0.
fits(T, B0, B) :- compound_name_arity(T, _, A), B1 is B0 - 1, B1 >= 0, fits_args(1, A, T, B1, B).

fits_args(I, A, _, B, B) :- I > A, !.
fits_args(I, A, T, B0, B) :- arg(I, T, X), fits(X, B0, B1), I1 is I + 1, fits_args(I1, A, T, B1, B).

%  texts_fit(+Texts, +Extra): the texts (atomic) with Extra more characters are within max_text_chars; a
%  resource error otherwise. Anything not atomic (a variable: a concatenation that splits) is left to the builtin.
texts_fit(Ts, Extra) :-
    max_text_chars(Max), R0 is Max - Extra,
    (   is_list(Ts), texts_room(Ts, R0, R), R < 0 -> text_too_long ; true ).

%  concat_fits(+A, +B): atom_concat/3's and string_concat/3's two texts, when both are given, within the bound.
concat_fits(A, B) :-
    (   atomic(A), atomic(B), atom_length(A, LA), atom_length(B, LB), LA + LB > 1000000  % max_text_chars/1
    ->  text_too_long
    ;   true
    ).

text_too_long :-
    throw(error(resource_error(text_size), context(sentinel_bounded_text, 'a text longer than a rulebase may make'))).

%  texts_room(+Texts, +Room0, -Room): Room0 less the texts' lengths; fails on anything not atomic.
texts_room([], R, R).
texts_room([T|Ts], R0, R) :- atomic(T), atom_length(T, N), R1 is R0 - N, texts_room(Ts, R1, R).

%  separated_fit(+Texts, +Separator): atomic_list_concat/3 joining Texts with Separator stays within the bound.
separated_fit(Ts, Sep) :-
    (   atomic(Sep), is_list(Ts), separated_room(Ts, Sep, 1000000, R), R < 0 -> text_too_long ; true ).  % max_text_chars/1

separated_room([], _, R, R).
separated_room([T|Ts], Sep, R0, R) :-
    atomic(T), atom_length(T, N), ( Ts == [] -> R is R0 - N ; atom_length(Sep, S), R1 is R0 - N - S, separated_room(Ts, Sep, R1, R) ).

list_length_fits(N) :-
    (   integer(N), max_list_length(Max), N > Max
    ->  throw(error(resource_error(list_length), context(sentinel_bounded_text, 'a list longer than a rulebase may make')))
    ;   true
    ).

%  text_builtin(?RB, ?Head, ?Body): the bounded twin of a builtin that makes a text or a list (defined in the
%  rulebase's module with the strict ones: strict_arithmetic/1).
%  Each builtin that makes an atom counts what it made (made/1), on every solution (atom_concat/3 splitting a
%  text, sub_atom/5 enumerating its parts); strings live on the stacks, which the stack limit holds.
text_builtin(_, atom_concat(A, B, C), (sentinel_core:concat_fits(A, B), sentinel_core:fresh([A, B, C], F),
                                       system:atom_concat(A, B, C), sentinel_core:made(F))).
text_builtin(_, string_concat(A, B, C), (sentinel_core:concat_fits(A, B), system:string_concat(A, B, C))).
text_builtin(_, atomic_list_concat(L, R), (sentinel_core:texts_fit(L, 0),
                                           (   var(R)
                                           ->  system:atomic_list_concat(L, R), sentinel_core:made_one(R)
                                           ;   system:atomic_list_concat(L, R)
                                           ))).
text_builtin(_, atomic_list_concat(L, S, R), (sentinel_core:separated_fit(L, S), sentinel_core:fresh([L, R], F),
                                              system:atomic_list_concat(L, S, R), sentinel_core:made(F))).
text_builtin(_, sub_atom(T, B, L, A, S), (   var(S)
                                         ->  system:sub_atom(T, B, L, A, S), sentinel_core:made_one(S)
                                         ;   system:sub_atom(T, B, L, A, S)
                                         )).
text_builtin(_, upcase_atom(T, U), ( var(U) -> system:upcase_atom(T, U), sentinel_core:made_one(U) ; system:upcase_atom(T, U) )).
text_builtin(_, downcase_atom(T, D), ( var(D) -> system:downcase_atom(T, D), sentinel_core:made_one(D) ; system:downcase_atom(T, D) )).
text_builtin(_, atom_string(A, S), ( var(A) -> system:atom_string(A, S), sentinel_core:made_one(A) ; system:atom_string(A, S) )).
text_builtin(_, string_to_atom(S, A), ( var(A) -> system:string_to_atom(S, A), sentinel_core:made_one(A) ; system:string_to_atom(S, A) )).
text_builtin(_, atom_chars(A, L), ( var(A) -> system:atom_chars(A, L), sentinel_core:made_one(A) ; system:atom_chars(A, L) )).
text_builtin(_, atom_codes(A, L), ( var(A) -> system:atom_codes(A, L), sentinel_core:made_one(A) ; system:atom_codes(A, L) )).
text_builtin(_, atom_number(A, N), ( var(A) -> system:atom_number(A, N), sentinel_core:made_one(A) ; system:atom_number(A, N) )).
text_builtin(_, length(L, N), (sentinel_core:list_length_fits(N), system:length(L, N))).
%  a term of N arguments is N cells made in one step, as a list of N (and no alarm interrupts the making)
text_builtin(_, functor(T, N, A), (sentinel_core:list_length_fits(A), system:functor(T, N, A))).
