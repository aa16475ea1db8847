/*  Part of sentinel_core (included): the shapes of a rulebase's clauses and declarations that the loader
    and the gateway read, checked as each is read, so that a clause of another shape is an error naming its
    file and line, and the rest of the file is still read and checked.

    Before, a clause SWI-Prolog could not store (a :- 1, a --> 1) or a declaration a later step could not
    read (fact(p/(-1)), read_only(f(x)), symbolic_exempt(t, X)) ended the whole load at line 0, or the
    trial run with a raw exception; symbolic_exempt(t, ab) was read as the arguments "a" and "b". Each
    declaration's parts are held to an allow list of shapes: what is not on it is refused, and not kept.
*/

%  clause_words(+Error, -Message): why a clause could not be stored, in words.
clause_words(error(type_error(callable, X), _), M) :- !,
    format(atom(M), 'cannot load this clause: ~q is not a goal (a body is goals joined by , ; -> \\+)', [X]).
clause_words(error(type_error(list_or_partial_list, X), _), M) :- !,
    format(atom(M), 'cannot load this clause: ~q is not a list (a grammar rule''s terminals are a list)', [X]).
clause_words(E, M) :- resource_words(E, store, M).

%  shape_problem(+Declaration, -Message): a part of Declaration is not of a shape Sentinel reads.
shape_problem(read_only(T), M) :- \+ atom(T),
    format(atom(M), 'read_only(Tool) needs a tool name (an atom), got ~q', [read_only(T)]).
shape_problem(symbolic_exempt(T, As), M) :- \+ ( atom(T), is_list(As), maplist(atom, As) ),
    format(atom(M), 'symbolic_exempt(Tool, [Argument, ...]) needs a tool name and a list of argument names \c
                     (atoms), got ~q', [symbolic_exempt(T, As)]).
shape_problem(effect(T, _, _), M) :- \+ atom(T),
    format(atom(M), 'effect tool name must be an atom, got ~q', [T]).
shape_problem(effect(_, P, _), M) :- pattern_problem(P, M0), format(atom(M), 'effect ~w', [M0]).
shape_problem(guard(_, P, _), M) :- is_list(P), pattern_problem(P, M0), format(atom(M), 'guard ~w', [M0]).
shape_problem(binding(_, tool(_, As), _, _), M) :- is_list(As), member(A, As), \+ named_part(A),
    format(atom(M), 'binding tool arguments must be Name = Value with an atom Name, got ~q', [A]).
shape_problem(fact(PI), M) :- nonvar(PI), PI = _/_, \+ ( PI = N/A, atom(N), integer(A), between(0, 1024, A) ),
    format(atom(M), 'fact declaration must be Name/Arity with an atom Name and an arity of 0 to 1024, got ~q',
           [PI]).

%  A declaration is data the gateway reads as JSON, and JSON has no infinite or NaN number (one was written as
%  "inf" and the gateway's reader failed on the whole rulebase); a goal inside one may compare with one.
shape_problem(D, M) :- declaration_data(D, Data), sub_term(X, Data), float(X), \+ ( X =:= X, abs(X) =\= inf ),
    !, format(atom(M), 'a declaration holds no infinite or NaN number (~q): give a finite one', [X]).

declaration_data(guard(T, P, _), T-P) :- !.
declaration_data(context(N, V, _), N-V) :- !.
declaration_data(askable(H, Q, choice_of(V, L, _), O), f(H, Q, V, L, O)) :- !.
declaration_data(D, D).

%  A guard's or effect's argument pattern: a list of Name = Term (Name an atom) or args(All).
pattern_problem(P, M) :- var(P), !, variable_pattern(M).
pattern_problem(P, M) :- \+ is_list(P), !,
    format(atom(M), 'argument pattern must be a list of Name = Term, got ~q', [P]).
pattern_problem(P, M) :- member(X, P), \+ ( named_part(X) ; nonvar(X), X = args(_) ), !,
    format(atom(M), 'argument pattern must be a list of Name = Term (Name an atom) or args(All), got ~q', [X]).

named_part(X) :- nonvar(X), X = (K = _), atom(K).

%  A variable where the pattern goes (guard(T, Args, Goal)) is the first rulebase's usual mistake: say what to
%  write, not the variable's internal name (_9206).
variable_pattern('argument pattern is a variable: write a list of Name = Term ([reservation_id = R]), or [args(All)] to take every argument').

%  multifile_indicators(+Spec, -PIs): the Name/Arity indicators of a multifile or public directive.
multifile_indicators(V, _) :- var(V), !, fail.
multifile_indicators((A, B), PIs) :- !, multifile_indicators(A, P1), multifile_indicators(B, P2), append(P1, P2, PIs).
multifile_indicators([], []) :- !.
multifile_indicators([X|Xs], PIs) :- !, multifile_indicators(X, P1), multifile_indicators(Xs, P2), append(P1, P2, PIs).
multifile_indicators(N/A, [N/A]) :- atom(N), integer(A), A >= 0.

%  One value per setting: Sentinel reads the first of two option(inference_limit(N)) (another file's, maybe),
%  silently; which one was meant is unknowable, as a JSON key given twice. The second is an error naming the
%  first.
post_load_problem(RB, P) :-
    findall(Key-F-L, ( RB:'$src'(decl, D, F, L), one_per(D, Key) ), Read),
    findall(Key-I-F-L, nth1(I, Read, Key-F-L), Numbered), msort(Numbered, Sorted),  % by key, then as read
    append(_, [Key-_-F1-L1, Key-_-F2-L2|_], Sorted),
    format(atom(M), '~w is declared again: ~w (line ~w) declares it already (one value each: which one is \c
                     meant is unknowable); keep one', [Key, F1, L1]),
    problem(error, F2, L2, M, P).

one_per(option(O), Key) :- counted_option(O, _), functor(O, N, 1), format(atom(Key), 'the option ~w', [N]).

%  A question is asked by the first askable whose head covers it (askables_of/6): askables of one predicate
%  with heads for different questions (label(colour, X, C), label(owner, X, O)) each ask their own, but one
%  whose head an earlier one's covers (the same head again, or a narrower one) would never ask anything: its
%  question, type and time to live silently unused. That one is an error naming the earlier.
post_load_problem(RB, P) :-
    findall(N/A-(H-F-L), ( RB:'$src'(decl, askable(H, _, _, _), F, L), callable(H), functor(H, N, A) ), Ps0),
    keysort(Ps0, Ps), group_pairs_by_key(Ps, Groups),  % stable: each predicate's askables as read
    member(_-Group, Groups), Group = [_, _|_],
    append(_, [H1-F1-L1|Later], Group), member(H2-F2-L2, Later),
    copy_term(H1, C1), copy_term(H2, C2), subsumes_term(C1, C2),
    format(atom(M), 'this askable never asks anything: the askable of ~w (line ~w) covers every question it \c
                     would (a question is asked by the first askable whose head covers it); keep one', [F1, L1]),
    problem(error, F2, L2, M, P).

%  An askable's facts are its answers, from whom its from/1 names: no binding, seed, fact/1 or effect of the
%  rulebase may make facts of its predicate (a tool's result, an upstream's, would answer for the user; a
%  draft once named a read tool's fact and a user's question alike).
post_load_problem(RB, P) :-
    findall(N/A-(F-L), ( RB:'$src'(decl, askable(H, _, _, _), F, L), callable(H), functor(H, N, A) ), As0),
    As0 \== [], sort(1, @<, As0, As), list_to_assoc(As, Asked),  % one pass over the sources, not one each
    other_source(RB, N/A, F2, L2, What), get_assoc(N/A, Asked, F1-L1),
    format(atom(M), 'this ~w makes facts of ~w/~w, the askable of ~w (line ~w): an askable''s facts are its \c
                     answers, never another source''s (they would answer for the one it asks); rename one',
           [What, N, A, F1, L1]),
    problem(error, F2, L2, M, P).

other_source(RB, PI, F, L, What) :-
    RB:'$src'(decl, D, F, L), \+ D = askable(_, _, _, _), base_head(D, PI), functor(D, What, _).
other_source(RB, N/A, F, L, effect) :-
    RB:'$src'(decl, effect(_, _, Acts), F, L), is_list(Acts), member(X, Acts),
    ( X = establish(H) ; X = establish(H, _) ), callable(H), functor(H, N, A).
