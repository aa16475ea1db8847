/*  Part of sentinel_core (included): a head that takes a name the rulebase language reserves (guard/3,
    binding/4, context/1,3, ...: decl_indicator/1) at an arity the language does not define.

    guard(cancel, Args, A, B) (a top-level comma without brackets) or guard(T, Args) :- Body loaded as guard/4
    or guard/2, a predicate of its own that nothing reads: the author believed the tool guarded by what they
    wrote, and the tool had no such guard. So each is an error at load (the rulebase is refused), naming the
    arity meant. Decided by name and arity, whatever the spelling: a fact, a rule, a DCG rule (its head takes
    two more arguments), or a dynamic, discontiguous, multifile or public declaration of it.
*/

%  reserved_arity_problems(+Term, +File, +Line, -Problems): the problems of a term as read.
reserved_arity_problems(T, File, Line, Ps) :-
    findall(P, ( wrong_head(T, PI, Hint), reserved_arity_problem(PI, Hint, File, Line, P) ), Ps).

wrong_head(T, _, _) :- var(T), !, fail.
wrong_head((:- D), PI, '') :- !, declared_indicator(D, PI), wrong_arity(PI).
wrong_head((?- D), PI, '') :- !, declared_indicator(D, PI), wrong_arity(PI).
wrong_head((H --> _), N/A, '') :- !,
    ( nonvar(H), H = (H0, _) -> true ; H0 = H ),  % a pushback list after the head
    callable(H0), H0 \= _:_, functor(H0, N, A0), A is A0 + 2, wrong_arity(N/A).
wrong_head((H :- B), N/A, Hint) :- !, callable(H), H \= _:_, functor(H, N, A), wrong_arity(N/A),
    rule_hint(H, B, Hint).
wrong_head(H, N/A, Hint) :- callable(H), H \= _:_, functor(H, N, A), wrong_arity(N/A), fact_hint(H, Hint).

%  the indicators a dynamic/discontiguous/multifile/public directive names (Name//Arity a DCG's, module-qualified or
%  not); anything else it holds is not a declaration of a predicate
declared_indicator(D, PI) :- compound(D), D =.. [K, Spec], declaring(K),
    spec_indicator(Spec, PI).
declared_indicator((A, B), PI) :- ( declared_indicator(A, PI) ; declared_indicator(B, PI) ).

spec_indicator(V, _) :- var(V), !, fail.
spec_indicator((A, B), PI) :- !, ( spec_indicator(A, PI) ; spec_indicator(B, PI) ).
spec_indicator([X|Xs], PI) :- !, ( spec_indicator(X, PI) ; spec_indicator(Xs, PI) ).
spec_indicator(_:S, PI) :- !, spec_indicator(S, PI).
spec_indicator(S as _, PI) :- !, spec_indicator(S, PI).
spec_indicator(N/A, N/A) :- !.
spec_indicator(N//A0, N/A) :- integer(A0), A is A0 + 2.

wrong_arity(N/A) :- atom(N), integer(A), once(decl_indicator(N/_)), \+ decl_indicator(N/A).

%  a fact with more arguments than the declaration: its last ones were a conjunction without brackets
fact_hint(H, Hint) :-
    functor(H, N, A), aggregate_all(max(E), decl_indicator(N/E), Max), Max >= 2, A > Max, !,
    H =.. [N|Args], K is Max - 1, length(Keep, K), append(Keep, Rest, Args), comma_list(Conj, Rest),
    append(Keep, [Conj], Args1), G =.. [N|Args1], meant(G, Hint).
fact_hint(_, '').

%  a rule one argument short of a declaration: its body was meant as that declaration's goal
rule_hint(H, B, Hint) :-
    functor(H, N, A), A1 is A + 1, decl_indicator(N/A1), !,
    H =.. [N|Args], append(Args, [B], Args1), G =.. [N|Args1], meant(G, Hint).
rule_hint(_, _, '').

comma_list(G, [G]) :- !.
comma_list((G, Gs), [G|Rest]) :- comma_list(Gs, Rest).

meant(G, Hint) :-
    copy_term(G, G1), numbervars(G1, 0, _),
    format(atom(Hint), '; did you mean ~W?', [G1, [quoted(true), numbervars(true), max_depth(12)]]).

reserved_arity_problem(N/A, Hint, File, Line, json([severity=error, file=File, line=Line, message=M,
                                                    code=reserved_arity])) :-
    findall(T, ( decl_indicator(N/E), declaration_form(N/E, T) ), Ts), atomic_list_concat(Ts, ' or ', Forms),
    format(atom(M), '~w/~w is not a ~w: a ~w is ~w~w (a name the rulebase language reserves, read at \c
                     that arity only: at any other it would be a predicate of its own that nothing reads)',
           [N, A, N, N, Forms, Hint]).

declaration_form(PI, T) :- form(PI, F), !, format(atom(T), '~w, ~w', [PI, F]).
declaration_form(PI, T) :- format(atom(T), '~w', [PI]).

form(guard/3, 'guard(Tool, Args, Goal)').
form(binding/4, 'binding(Head, tool(Name, Args), extract([Var = Pointer, ...]), Options)').
form(askable/4, 'askable(Head, Question, Type, Options)').
form(context/1, 'context(Name)').
form(context/3, 'context(Name, Value, Goal)').
form(seed/1, 'seed(Fact)').
form(effect/3, 'effect(Tool, Args, Actions)').
form(option/1, 'option(Option)').
form(read_only/1, 'read_only(Tool)').
form(symbolic_exempt/2, 'symbolic_exempt(Tool, [Arg, ...])').
form(fact/1, 'fact(Name/Arity)').
form(policy_document/2, 'policy_document(Name, Path)').
form(cites/2, 'cites(Name/Arity, policy_ref(Document, Anchor))').
