/*  Part of sentinel_core (included): the allow list of what a goal may call.

    Two modes. `client`: a goal typed by a client (sentinel_query, the CLI): control constructs, a few
    meta-calls whose goal arguments are themselves checked, the rulebase's own predicates and pure
    builtins over terms, numbers, text and lists. `rulebase`: the bodies of rules, guards and context checks
    read from disk, which may also use the policy constructs (require/2, confirmed/2,3), cut and format/3
    into text. Anything else is refused: no assert/retract, I/O, OS, threads, flags, operators, globals,
    module-qualified calls, or calling a variable, whatever the spelling. The check walks the whole goal;
    Prolog cannot call anything the walk did not see, because no allowed builtin calls a term built at
    run time (call/N, =../apply-style meta-calls are not on the list).

    check_goal(+Mode, +RB, +Goal) succeeds or throws refused(Message).
*/

check_goal(_, _, V) :- var(V), !,
    throw(refused('a variable cannot be called as a goal (call/N and variable goals are not allowed)')).
check_goal(_, _, M:G) :- !,
    format(atom(W), 'module-qualified goals are not allowed (~q)', [M:G]), throw(refused(W)).
check_goal(_, _, G) :- \+ callable(G), !,
    format(atom(W), '~q is not a goal', [G]), throw(refused(W)).
check_goal(Mode, RB, G) :- goal_parts(Mode, G, Parts), !, check_goals(Parts, Mode, RB).
check_goal(_, _, G) :- functor(G, N, _), sub_atom(N, 0, 1, _, '$'), !,
    format(atom(W), '~w is internal to Sentinel and cannot be called', [N]), throw(refused(W)).
check_goal(Mode, _, G) :- functor(G, N, A), allowed_builtin(Mode, N/A), !, builtin_args_ok(Mode, G).
check_goal(_, RB, G) :- rulebase_defined(RB, G), !.
check_goal(_, _, G) :- functor(G, N, A), \+ predicate_property(system:G, defined),
    \+ '$find_library'(_, N, A, _, _), !,
    format(atom(W), 'call to undefined predicate ~w/~w', [N, A]), throw(refused(W)).
check_goal(Mode, _, G) :- functor(G, N, A),
    ( Mode == client -> Where = 'a query' ; Where = 'a rulebase' ),
    format(atom(W), '~w/~w is not allowed in ~w (only the rulebase''s predicates and pure builtins over terms, numbers, text and lists are)', [N, A, Where]),
    throw(refused(W)).

check_goals([], _, _).
check_goals([G|Gs], Mode, RB) :- check_goal(Mode, RB, G), check_goals(Gs, Mode, RB).

%  goal_parts(+Mode, +Goal, -Goals): Goal is a control construct or an allowed meta-call; Goals are the
%  goals it calls.
goal_parts(_, (A, B), [A, B]).
goal_parts(_, (A ; B), [A, B]).
goal_parts(_, (A -> B), [A, B]).
goal_parts(_, (A *-> B), [A, B]).
goal_parts(_, \+ A, [A]).
goal_parts(_, once(A), [A]).
goal_parts(_, ignore(A), [A]).
goal_parts(_, forall(A, B), [A, B]).
goal_parts(_, findall(_, A, _), [A]).
goal_parts(_, findall(_, A, _, _), [A]).
goal_parts(_, aggregate_all(Spec, A, _), [A]) :- aggregate_spec(Spec).
goal_parts(_, bagof(_, A, _), [G]) :- strip_carets(A, G).
goal_parts(_, setof(_, A, _), [G]) :- strip_carets(A, G).
goal_parts(rulebase, require(A, _), [A]).
goal_parts(rulebase, require(A, _, _), [A]).

strip_carets(V, V) :- var(V), !.
strip_carets(_^A, G) :- !, strip_carets(A, G).
strip_carets(G, G).

aggregate_spec(S) :- var(S), !, throw(refused('the aggregate of aggregate_all/3 must be given (count, sum(E), max(E), ...)')).
aggregate_spec(S) :- memberchk(S, [count, sum(_), max(_), min(_), max(_, _), min(_, _), bag(_), set(_)]), !.
aggregate_spec(S) :- format(atom(W), 'unknown aggregate ~q (count, sum, max, min, bag or set)', [S]), throw(refused(W)).

%  A predicate of the rulebase itself: rules, base predicates (bindings, askables, seeds, facts) and its
%  declarations. Their bodies were checked when the rulebase was loaded.
rulebase_defined(RB, G) :- base(RB, G), !.
rulebase_defined(RB, G) :- user_pred(RB, G), !.
rulebase_defined(_, G) :- functor(G, N, A), decl_indicator(N/A).

%  Builtins whose arguments need a look (format/3 writes only to text and never calls a goal).
builtin_args_ok(rulebase, format(Sink, Fmt, _)) :- !,
    (   nonvar(Sink), memberchk(Sink, [atom(_), string(_), codes(_), chars(_)]) -> true
    ;   throw(refused('format/3 may only write to atom(_), string(_), codes(_) or chars(_)'))
    ),
    %  read as format/2 reads it, directive by directive: ~1@, ~*@ and ~`x@ call their argument as ~@ does
    %  (a search for the text "~@" let them through), and a column stop or a repeat count
    %  (~t~999999999|, ~999999999c) makes a text of gigabytes in one inference
    (   \+ ( atom(Fmt) ; string(Fmt) )
    ->  throw(refused('the format of format/3 must be a literal text (an atom or a string)'))
    ;   format_problem(Fmt, M)
    ->  format(atom(W), 'format/3: ~w', [M]), throw(refused(W))
    ;   true
    ).
builtin_args_ok(_, _).

allowed_builtin(_, N/A) :- pure_builtin(N, A), !.
allowed_builtin(_, PI) :- sentinel_rt_export(PI), !.
allowed_builtin(rulebase, PI) :- rulebase_only_builtin(PI).

rulebase_only_builtin(!/0).
rulebase_only_builtin(format/3).
rulebase_only_builtin(confirmed/2).
rulebase_only_builtin(confirmed/3).
rulebase_only_builtin(confirmed_items/2).
rulebase_only_builtin(confirmed_items/3).

%  Pure builtins: they compute over their arguments and touch nothing else. Every one is bounded by the
%  query's inference, time and memory limits.
pure_builtin(true, 0). pure_builtin(fail, 0). pure_builtin(false, 0).
% unification, comparison, types
pure_builtin((=), 2). pure_builtin((\=), 2). pure_builtin((==), 2). pure_builtin((\==), 2).
pure_builtin((@<), 2). pure_builtin((@>), 2). pure_builtin((@=<), 2). pure_builtin((@>=), 2).
pure_builtin(compare, 3). pure_builtin(unify_with_occurs_check, 2).
pure_builtin(var, 1). pure_builtin(nonvar, 1). pure_builtin(atom, 1). pure_builtin(number, 1).
pure_builtin(integer, 1). pure_builtin(float, 1). pure_builtin(atomic, 1). pure_builtin(compound, 1).
pure_builtin(callable, 1). pure_builtin(is_list, 1). pure_builtin(string, 1). pure_builtin(ground, 1).
% arithmetic (no user-defined arithmetic functions exist for it to reach)
pure_builtin((is), 2). pure_builtin((=:=), 2). pure_builtin((=\=), 2). pure_builtin((<), 2).
pure_builtin((>), 2). pure_builtin((=<), 2). pure_builtin((>=), 2). pure_builtin(succ, 2). pure_builtin(plus, 3).
pure_builtin(between, 3).
% terms
pure_builtin(functor, 3). pure_builtin(arg, 3). pure_builtin((=..), 2). pure_builtin(copy_term, 2).
pure_builtin(term_variables, 2).
% text
pure_builtin(atom_length, 2). pure_builtin(atom_concat, 3). pure_builtin(sub_atom, 5).
pure_builtin(atom_number, 2). pure_builtin(atom_string, 2). pure_builtin(atom_chars, 2).
pure_builtin(atom_codes, 2). pure_builtin(char_code, 2). pure_builtin(number_codes, 2).
pure_builtin(number_string, 2). pure_builtin(atomic_list_concat, 2). pure_builtin(atomic_list_concat, 3).
pure_builtin(upcase_atom, 2). pure_builtin(downcase_atom, 2). pure_builtin(string_concat, 3).
pure_builtin(string_length, 2). pure_builtin(sub_string, 5). pure_builtin(string_chars, 2).
pure_builtin(string_codes, 2). pure_builtin(string_to_atom, 2). pure_builtin(string_lower, 2).
pure_builtin(string_upper, 2). pure_builtin(split_string, 4). pure_builtin(string_code, 3).
pure_builtin(sub_atom_icasechk, 3). pure_builtin(code_type, 2). pure_builtin(char_type, 2).
% lists and pairs
pure_builtin(length, 2). pure_builtin(member, 2). pure_builtin(memberchk, 2). pure_builtin(append, 3).
pure_builtin(append, 2). pure_builtin(nth0, 3). pure_builtin(nth1, 3). pure_builtin(last, 2).
pure_builtin(reverse, 2). pure_builtin(msort, 2). pure_builtin(sort, 2). pure_builtin(sort, 4).
pure_builtin(keysort, 2). pure_builtin(sum_list, 2). pure_builtin(sumlist, 2). pure_builtin(max_list, 2).
pure_builtin(min_list, 2). pure_builtin(max_member, 2). pure_builtin(min_member, 2).
pure_builtin(list_to_set, 2). pure_builtin(numlist, 3). pure_builtin(subtract, 3).
pure_builtin(intersection, 3). pure_builtin(union, 3). pure_builtin(delete, 3).
pure_builtin(select, 3). pure_builtin(selectchk, 3). pure_builtin(permutation, 2). pure_builtin(flatten, 2).
pure_builtin(pairs_keys_values, 3). pure_builtin(pairs_keys, 2). pure_builtin(pairs_values, 2).
pure_builtin(nextto, 3).

%  Run-time check of a builtin reached by the meta-interpreter (defence in depth: goals were checked
%  before they ran; this catches anything built at run time that the static walk could not see).
runtime_allowed(RB, G) :- functor(G, N, A), ( allowed_builtin(rulebase, N/A) ; goal_parts(rulebase, G, _) ), !,
    catch(check_goal(rulebase, RB, G), refused(_), fail).

% ---------------------------------------------------------------- texts that are format/2 templates

%  A question's or a confirmation's text is a format/2 template filled with values that may come from a
%  caller. Only directives that print their argument are allowed: ~@ calls its argument as a goal (a value
%  "halt" would stop the gateway), and a column stop or a repeat count (~t~999999999|, ~999999999c) makes a
%  text of any size. Checked when the rulebase loads and again before each use.
format_problem(F, M) :-
    \+ ( atom(F) ; string(F) ), !,
    format(atom(M), 'the text must be written in the rulebase (an atom or a string), not computed: ~q', [F]).
format_problem(F, M) :-
    atom_codes(F, Cs), unsafe_directive(Cs, D), !,
    format(atom(M), 'the directive ~s is not allowed in a text (only ~~w ~~a ~~q ~~p ~~d ~~D ~~s ~~e ~~f ~~g ~~n ~~i ~~~~, with a count of at most 20 for ~~d ~~D ~~e ~~f ~~g): ~q', [D, F]).

safe_format(F) :- \+ format_problem(F, _).

unsafe_directive([0'~|Cs], D) :- !,
    directive(Cs, Count, Letter, Rest, Used),
    (   \+ allowed_directive(Count, Letter)
    ->  D = [0'~|Used]
    ;   unsafe_directive(Rest, D)
    ).
unsafe_directive([_|Cs], D) :- unsafe_directive(Cs, D).

%  directive(+Codes, -Count, -Letter, -Rest, -Used): ~ then an optional count (digits, * or `c) and a letter
directive(Cs, Count, Letter, Rest, Used) :-
    (   Cs = [0'*|Cs1] -> Count = star
    ;   Cs = [0'`, _|Cs1] -> Count = fill
    ;   digits(Cs, Ds, Cs1), Ds \== [] -> number_codes(Count, Ds)
    ;   Cs1 = Cs, Count = none
    ),
    (   Cs1 = [Letter|Rest] -> true ; Letter = end, Rest = [] ),
    append(Used, Rest, Cs), !.

digits([C|Cs], [C|Ds], Rest) :- code_type(C, digit), !, digits(Cs, Ds, Rest).
digits(Cs, [], Cs).

allowed_directive(none, L) :- memberchk(L, `wapqdDsefgni~`).
allowed_directive(N, L) :- integer(N), N =< 20, memberchk(L, `dDefg`).
