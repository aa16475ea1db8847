/*  Part of sentinel_core (included): each predicate the rulebase defines that no entry point
    reaches. Its clauses decide nothing: a guard meant to call it calls another name (a typo that happens to
    name a defined predicate, a helper renamed on one side), or it is the leftover of a guard written under a
    name the language does not read. The entry points are the goals the language proves: a guard's goal, a
    context/3's goal, an askable's choice_of goal (body_of/3), and a predicate declared `:- public Name/Arity.`
    (Prolog's own word for "called from outside": here, by symbolic queries); whatever they call, through
    rules and control constructs, is reached. All files of the rulebase are walked together (a rule in one
    file may serve another's guard). Linear in the rules: each predicate is visited once.
*/

:- use_module(library(assoc)).
:- use_module(library(pairs)).  % group_pairs_by_key/2

%  sn_unreached_rules(+RB, -Out): the first clause of each such predicate, for the checker (checker.py; asked
%  of a rulebase that loaded: where a clause was refused, the predicates only it called would read unreached),
%  and each `:- public` of a predicate the rulebase does not define (its queries would find nothing: a typo
%  of the name, or of its arity). In a check (sn_check_walk/3), on the check's one budget (check_budget.pl):
%  a walk it cuts is said (unfinished: the reason), never an empty list that reads as "all reached".
sn_unreached_rules(RB, Out) :-
    walk_outcome(unreached_rows(RB, Rows, Public), 10000000, O),
    outcome_reason(O, Why),
    (   O == done
    ->  to_json_atom(json([unreached=Rows, undefined_public=Public, unfinished=Why]), Out)
    ;   to_json_atom(json([unreached=[], undefined_public=[], unfinished=Why]), Out)
    ).

unreached_rows(RB, Rows, Public) :-
    reached_predicates(RB, Reached),
    findall(N/A-File-Line, ( RB:'$src'(rule, T, File, Line), rule_head(T, H), functor(H, N, A) ), Defs),
    defined_first(Defs, Firsts),
    findall(json([predicate=PA, file=File, line=Line]),
            ( member(N/A-File-Line, Firsts), \+ get_assoc(N/A, Reached, _), format(atom(PA), '~w/~w', [N, A]) ),
            Rows),
    findall(json([predicate=PA, file=File, line=Line]),
            ( RB:'$src'(public, N/A, File, Line), \+ public_defined(RB, N/A), format(atom(PA), '~w/~w', [N, A]) ),
            Public).

%  what a public declaration may name: a rule, a base fact (a query reads it) or a declaration's own name
public_defined(RB, N/A) :- once(rule_clause(RB, N, A, _)).
public_defined(RB, PI) :- once(base_indicator(RB, PI)).
public_defined(_, PI) :- decl_indicator(PI).

%  the first clause of each predicate (where the warning points), in the order they were read
defined_first(Defs, Firsts) :- empty_assoc(S), defined_first(Defs, S, Firsts).
defined_first([], _, []).
defined_first([PI-F-L|Ds], Seen, Out) :-
    (   get_assoc(PI, Seen, _)
    ->  Out = Rest, Seen1 = Seen
    ;   Out = [PI-F-L|Rest], put_assoc(PI, Seen, true, Seen1)
    ),
    defined_first(Ds, Seen1, Rest).

%  reached_predicates(+RB, -Reached): an assoc of the Name/Arity of every goal an entry point reaches
reached_predicates(RB, Reached) :-
    findall(PI, ( RB:'$src'(decl, D, _, _), body_of(decl, D, B), called_indicator(B, PI) ), Start0),
    findall(PI, RB:'$src'(public, PI, _, _), Public),
    append(Public, Start0, Start),
    % what each predicate's clauses call, read in one pass (a look-up per predicate would scan every rule)
    findall(N/A-C, ( RB:'$src'(rule, (H :- B), _, _), functor(H, N, A), called_indicator(B, C) ), Pairs0),
    keysort(Pairs0, Pairs), group_pairs_by_key(Pairs, Groups), list_to_assoc(Groups, Calls),
    empty_assoc(R0),
    reach(Start, Calls, R0, Reached).

reach([], _, R, R).
reach([PI|PIs], Calls, R0, R) :-
    (   get_assoc(PI, R0, _)
    ->  reach(PIs, Calls, R0, R)
    ;   put_assoc(PI, R0, true, R1),
        ( get_assoc(PI, Calls, Next) -> append(Next, PIs, Todo) ; Todo = PIs ),
        reach(Todo, Calls, R1, R)
    ).

called_indicator(B, N/A) :- leaf_goal(B, G), callable(G), G \= _:_, functor(G, N, A).
