/*  Part of sentinel_core (included): arithmetic in a rulebase evaluates numbers, never text.

    SWI-Prolog evaluates more than numbers: the atoms e, pi, inf, nan, epsilon, random, random_float and
    cputime are values, a one-element list or a one-character string is its character code ([a] and "a"
    are 97). Texts reach a rulebase as atoms and lists from a client's arguments and from tool results, so
    a guard `Amount =< 100` held for the text "e", `sum_list(Prices, T)` summed "pi", and `~2f` showed
    "2.72" in a confirmation while the call carried "e". A text is never a number here: every evaluation a
    rulebase can reach takes numbers and arithmetic over numbers only, and anything else raises the type
    error SWI-Prolog raises for an atom it does not evaluate ("abc" =< 1), so a guard that compares a text
    errs and denies, also under \+.

    Each rulebase module gets its own static definitions of the evaluating builtins on the allow list
    (comparison, is/2, the list sums and extremes, aggregate_all/3's sum, max and min, between/3's bound,
    format/3's ~e ~f ~g ~d ~D), made before any clause is loaded, so every call of them in the module - a rule
    interpreted or compiled, a guard's native proof, a goal inside findall/forall, a predicate with a cut -
    is the strict one. Sentinel's own texts built from rulebase templates (a confirmation, a question)
    check their arguments the same way. A rulebase that writes a non-number into arithmetic itself
    (X is pi * 2) is refused at load, naming the file and line.
*/

%  strict_arithmetic(+RB): RB's strict evaluating builtins, defined (static: a call of them is on every
%  comparison of every decision) before its clauses load. SWI-Prolog refuses to abolish a static redefinition
%  of a system predicate, so sn_unload/1 leaves them, and a module loaded again keeps the ones it has.
strict_arithmetic(RB) :-
    (   predicate_property(RB:(_ =< _), defined), \+ predicate_property(RB:(_ =< _), imported_from(_))
    ->  true
    ;   forall(twin_builtin(RB, H, B),
               ( functor(H, N, A),
                 ( predicate_property(system:H, defined) -> redefine_system_predicate(RB:H) ; true ),
                 dynamic(RB:N/A), assertz(RB:(H :- B)) )),
        findall(RB:N/A, ( twin_builtin(_, H, _), functor(H, N, A) ), PIs0), sort(PIs0, PIs),
        compile_predicates(PIs)
    ).

strict_indicator(N/A) :- twin_builtin(_, H, _), functor(H, N, A).

%  The twins a rulebase's module gets: the strict evaluating builtins (below) and the bounded text and list
%  makers (bounded_terms.pl).
twin_builtin(RB, H, B) :- ( strict_builtin(RB, H, B) ; text_builtin(RB, H, B) ).

%  strict_builtin(?RB, ?Head, ?Body): the strict twin of an evaluating builtin in RB (the body checks, then
%  calls the builtin itself; a goal argument is qualified with RB: a qualified call's meta-arguments would
%  otherwise run in the library's module). Two numbers, the common case, are told by the inline type tests.
strict_builtin(_, (X is Y), (   number(Y)
                             ->  system:(X is Y)
                             ;   sentinel_core:evaluable(Y), system:(X is Y), sentinel_core:bounded_result(X)
                             )).
strict_builtin(_, H, (( number(X), number(Y) -> true ; sentinel_core:evaluable(X), sentinel_core:evaluable(Y) ),
                     system:H)) :-
    member(Op, [=:=, =\=, <, >, =<, >=]), H =.. [Op, X, Y].
strict_builtin(_, sum_list(L, S), (sentinel_core:numbers(L), lists:sum_list(L, S))).
strict_builtin(_, sumlist(L, S), (sentinel_core:numbers(L), lists:sum_list(L, S))).
strict_builtin(_, max_list(L, S), (sentinel_core:numbers(L), lists:max_list(L, S))).
strict_builtin(_, min_list(L, S), (sentinel_core:numbers(L), lists:min_list(L, S))).
%  between(1, inf, X) is SWI-Prolog's "no upper bound": a bound from a text ('inf') would lift a limit
strict_builtin(_, between(L, H, X), (sentinel_core:integer_bound(L), sentinel_core:integer_bound(H),
                                     system:between(L, H, X))).
strict_builtin(RB, aggregate_all(Spec, G, R), (sentinel_core:strict_aggregate(Spec, G, Spec1, G1),
                                            aggregate:aggregate_all(Spec1, RB:G1, R))).
strict_builtin(_, format(S, F, A), sentinel_core:rule_format(S, F, A)).  % plain_formats.pl, bounded_terms.pl

%  evaluable(+Expr): Expr is a number or an arithmetic term over numbers (a variable is left to the
%  builtin, which raises its instantiation error; a function it does not know, to its type error).
evaluable(X) :- number(X), !.
evaluable(X) :- var(X), !.
evaluable(X) :- compound(X), \+ X = [_|_], !, compound_name_arguments(X, N, As), evaluable_args(As),
    ( growing(N) -> bounded_growth(N, As) ; true ).
evaluable(X) :- throw(error(type_error(evaluable, X), context(sentinel_strict_arithmetic, 'a text is not a number'))).

evaluable_args([]).
evaluable_args([A|As]) :- evaluable(A), evaluable_args(As).

%  An integer has at most MAX_INTEGER_BITS bits in a rulebase's arithmetic (about 30,000 digits: any amount,
%  date or count a policy needs). One `is` is one inference whatever it computes, and GMP's work cannot be
%  interrupted: 7^(10^8) took seconds, writing it into a proof a minute (84 million digits), 7^(10^9) longer
%  than anyone waited. A power or a shift is refused before it is computed when its result would be larger
%  (its operands evaluated first, themselves so bounded), and any result of `is` after.
max_integer_bits(100000).

growing(^).
growing(**).
growing(<<).

bounded_growth(Op, [A, B]) :- !,
    (   ground(A), ground(B)
    ->  VA is A, VB is B,
        (   integer(VA), integer(VB), VB > 0, VA =\= 0, growth_bits(Op, VA, VB, Bits)
        ->  max_integer_bits(Max),
            ( Bits =< Max -> true ; too_large(Op) )
        ;   true
        )
    ;   true  % a variable: the builtin's instantiation error
    ).
bounded_growth(_, _).

growth_bits(<<, A, B, Bits) :- !, Bits is msb(abs(A)) + 1 + B.
growth_bits(_, A, B, Bits) :- abs(A) > 1, Bits is (msb(abs(A)) + 1) * B.

%  bounded_result(+X): a number `is` gave, within the bound.
bounded_result(X) :-
    (   integer(X), X =\= 0, max_integer_bits(Max), msb(abs(X)) >= Max
    ->  too_large(is)
    ;   true
    ).

too_large(Op) :-
    max_integer_bits(Max),
    throw(error(resource_error(integer_size),
                context(sentinel_strict_arithmetic, Op-Max))).

%  numbers(+List): a list the list builtins may sum or compare: numbers only (a partial list is left to them).
numbers(L) :- var(L), !.
numbers([]) :- !.
numbers([X|Xs]) :- !, ( number(X) -> numbers(Xs) ; throw(error(type_error(number, X), context(sentinel_strict_arithmetic, _))) ).
numbers(L) :- throw(error(type_error(list, L), context(sentinel_strict_arithmetic, _))).

integer_bound(X) :- ( var(X) ; integer(X) ), !.
integer_bound(X) :- throw(error(type_error(integer, X), context(sentinel_strict_arithmetic, _))).

%  strict_aggregate(+Spec, +Goal, -Spec1, -Goal1): Goal1 checks each value an evaluating aggregate takes.
strict_aggregate(Spec, G, Spec, (G, sentinel_core:evaluable(E))) :-
    nonvar(Spec), ( Spec = sum(E) ; Spec = max(E) ; Spec = min(E) ; Spec = max(E, _) ; Spec = min(E, _) ), !.
strict_aggregate(Spec, G, Spec, G).

%  formatted_numbers(+Format, +Args): the arguments of format/2,3's ~e ~f ~g ~d ~D are numbers (they evaluate
%  theirs: ~2f of pi is 3.14, ~d of [a] is 97). A format that is not a text, or arguments
%  that do not fit it, are left to format/3's own errors. Which arguments a format reads as numbers is worked
%  out once per format (a rulebase's formats are literal texts: a few, and labels are made on every decision).
formatted_numbers(F, A) :-
    (   atom(F) -> FA = F
    ;   string(F) -> atom_string(FA, F)
    ;   FA = []
    ),
    (   atom(FA), FA \== []
    ->  ( numeric_slots_memo(FA, Slots) -> true
        ; atom_codes(FA, Cs), numeric_slots(Cs, 0, Slots), keep_memo(sn_slots_memo, numeric_slots_memo(FA, Slots))
        ),
        ( Slots == [] -> true ; ( is_list(A) -> As = A ; As = [A] ), numeric_args(Slots, As) )
    ;   true
    ).

:- dynamic numeric_slots_memo/2.

numeric_args([], _).
numeric_args([I-Letter|Slots], As) :-
    (   nth0(I, As, V), \+ number(V)
    ->  char_code(L, Letter),
        throw(error(format_argument_type(L, V), context(sentinel_strict_arithmetic, 'a text is not a number')))
    ;   numeric_args(Slots, As)
    ).

%  numeric_slots(+Codes, +I, -Slots): Index-Letter of each argument a ~e ~f ~g ~d ~D directive reads (I: the
%  index of the next argument).
numeric_slots([], _, []) :- !.
numeric_slots([0'~, 0'~|Cs], I, Slots) :- !, numeric_slots(Cs, I, Slots).
numeric_slots([0'~|Cs], I, Slots) :- !,
    directive(Cs, Count, Letter, Rest, _),
    ( Count == star -> I1 is I + 1 ; I1 = I ),
    ( memberchk(Letter, `efgdD`) -> Slots = [I1-Letter|Slots1] ; Slots = Slots1 ),
    ( takes_argument(Letter) -> I2 is I1 + 1 ; I2 = I1 ),
    numeric_slots(Rest, I2, Slots1).
numeric_slots([_|Cs], I, Slots) :- numeric_slots(Cs, I, Slots).

%  the directives of format/2 that consume an argument
takes_argument(L) :- memberchk(L, `aceEfgGdDsiIpqrRw@`).

%  A rulebase that writes a non-number into arithmetic itself: refused at load (it could never hold).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_goal(Body, G), nonvar(G), literal_non_number(G, X),
    format(atom(M), 'arithmetic in a rulebase takes numbers only, and ~q is not one (write the number; a text, a \c
                     list or a string is never a number here): ~q', [X, G]),
    problem(error, File, Line, M, P).

literal_non_number(G, X) :-  % the leaf evaluable/1 would refuse at run time
    arithmetic_operands(G, Es), member(E, Es),
    catch(( evaluable(E), fail ), Error, true), nonvar(Error), Error = error(type_error(evaluable, X), _), !.

%  A rulebase whose own arithmetic makes an integer over the bound (7^(10^8)): refused at load too.
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_goal(Body, G), nonvar(G), literal_oversize(G, E),
    max_integer_bits(Max),
    format(atom(M), 'arithmetic in a rulebase makes integers of at most ~d bits, and ~q makes a larger one', [Max, E]),
    problem(error, File, Line, M, P).

literal_oversize(G, E) :-
    arithmetic_operands(G, Es), member(E, Es),
    catch(( evaluable(E), fail ), Error, true), nonvar(Error), Error = error(resource_error(integer_size), _), !.

arithmetic_operands(G, Es) :-
    compound(G), compound_name_arity(G, N, 2), memberchk(N, [is, =:=, =\=, <, >, =<, >=]),
    G =.. [N, A, B], ( N == is -> Es = [B] ; Es = [A, B] ).
