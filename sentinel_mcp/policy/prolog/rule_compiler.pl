/*  Part of sentinel_core (included): rules compiled into native clauses that prove exactly what prove/2
    proves, in the same order, and build the same proof tree.

    prove/2 interprets a rule by clause/2 and one dispatch per goal (base? cut? rule? declaration? builtin?).
    Those answers are fixed once a rulebase is loaded, so the load settles them: every rule N/A of the
    rulebase gets a compiled twin RB:'$r:N'/(A+1) (its last argument is the proof tree rule(Goal, Tree)),
    whose bodies are the rule bodies with each goal replaced by what prove/2 would do with it:

      - control constructs (',' ';' '->' '*->' \+ once ignore true) become the same native construct
        building the same tree node, setting the polarity an unsure fact is seen under as prove/2 does
        (fact_terms.pl);
      - a base predicate calls base_solve/3 or its indexed form (the same needs, assumptions and provenance as prove/2);
      - a rule calls its compiled twin; a predicate with a cut, a declaration or an allowed builtin is
        called natively, as prove/2 calls them;
      - anything else - the policy constructs (require, confirmed, ...: every goal prove/2 has a clause of
        its own for), variables, module-qualified goals, builtins the allow list refuses - is handed to
        prove/2 itself at run time. So the policy constructs have one definition, and whatever is unusual
        behaves exactly as before (prove/2 raises the same errors).

    prove/2 enters the compiled twin for a rule goal (compiled_rule/4) unless the interpreted mode is on
    (sn_decide_interpreted/9: the reference the differential tests and the benchmark compare with).
    A rule that cannot be compiled is left to the interpreter.

    The bindings and askables are indexed by predicate too ('$binding'/5, '$askable'/6): every base goal
    of every proof asks for them, and used to try every binding and askable of the rulebase in turn.
*/

%  compiled_rule(+RB, +G, ?T, -Call): G is a rule of RB with a compiled twin; Call proves it with tree T.
compiled_rule(RB, G, T, RB:Call) :-
    \+ nb_current(sn_interpreted, true),
    compound(G), !,
    compound_name_arguments(G, N, As), length(As, A),
    undefined_fails(RB:'$compiled'(N, A, CN)),
    append(As, [T], As1), Call =.. [CN|As1].
compiled_rule(RB, G, T, RB:Call) :-
    atom(G), \+ nb_current(sn_interpreted, true),
    undefined_fails(RB:'$compiled'(G, 0, CN)),
    Call =.. [CN, T].

%  sn_decide_interpreted(...): sn_decide/9 with every rule interpreted by prove/2 (the reference path).
sn_decide_interpreted(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    setup_call_cleanup(nb_setval(sn_interpreted, true),
                       sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out),
                       nb_setval(sn_interpreted, false)).

% ---------------------------------------------------------------- compiling a rulebase

compile_rulebase(RB) :-
    index_bindings(RB),
    settle_base_wrappers(RB),
    dynamic(RB:'$compiled'/3),
    retractall(RB:'$compiled'(_, _, _)),
    findall(N/A, ( RB:'$src'(rule, T, _, _), clause_head(T, H), functor(H, N, A) ), PIs0),
    list_to_set(PIs0, PIs1),
    include(compilable_rule(RB), PIs1, PIs),
    % all or nothing: a compiled body calls the twins of other rules directly
    catch(maplist(compiled_clauses(RB), PIs, Css), E, true),
    (   var(E)
    ->  forall(( member(N/A, PIs), atom_concat('$r:', N, CN), A1 is A + 1 ), dynamic(RB:CN/A1)),
        forall(( member(Cs, Css), member(T-C, Cs) ), assert_compiled(RB, T, C)),
        forall(( member(N/A, PIs), atom_concat('$r:', N, CN) ), assertz(RB:'$compiled'(N, A, CN)))
    ;   print_message(warning, format('rules of ~w left to the interpreter: ~q', [RB, E])) % E: why
    ).

compiled_clauses(RB, N/A, Cs) :-
    atom_concat('$r:', N, CN),
    findall(T-C, ( rule_clause(RB, N, A, T), inline_lookups_for(T),
                       ( compile_clause(RB, CN, T, C) -> true ; throw(cannot_compile(T)) ) ), Cs).

clause_head((H :- _), H) :- !.
clause_head(H, H).

%  Exactly the goals prove/2 takes to its clause/2 branch: not base, no cut, dynamic in RB, not a declaration.
compilable_rule(RB, N/A) :-
    \+ decl_indicator(N/A),
    functor(G, N, A),
    \+ base(RB, G),
    \+ catch(RB:'$has_cut'(N/A), _, fail),
    user_pred(RB, G).

%  compile_clause(+RB, +CN, +Clause, -Compiled): one rule clause and its twin (variables shared on purpose:
%  the tree holds the goal instances, as prove/2's does).
compile_clause(RB, CN, Clause, (CH :- Code)) :-
    ( Clause = (H :- B) -> true ; H = Clause, B = true ),
    H =.. [_|As], append(As, [rule(H, TB)], CAs), CH =.. [CN|CAs],
    hoisted_lookups(body_code(B, RB, TB, Code0), Code0, Code).

%  body_code(+Goal, +RB, ?Tree, -Code): Code proves Goal as prove(Goal, Tree) would. Tree is only ever bound
%  by Code at run time (a branch binding it here would constrain the other branches).
body_code(G, RB, T, Code) :- body_code(rule, G, RB, T, Code).

%  body_code(+Mode, +Goal, +RB, ?Tree, -Code): Mode rule (the twins: every policy construct is prove/2's) or
%  guard (a guard's native proof, native_guards.pl: a requirement is proved in place).
body_code(_, V, _, T, sentinel_core:prove(V, T)) :- var(V), !.
body_code(_, true, _, T, T = true) :- !.
body_code(M, (A, B), RB, T, (T = and(TA, TB), CA, CB)) :- !,
    body_code(M, A, RB, TA, CA), body_code(M, B, RB, TB, CB).
body_code(M, (C -> Th ; E), RB, T, ( NC -> fail ; CE )) :- fails_branch(Th), !,
    body_code(M, C, RB, _, CC), body_code(M, E, RB, T, CE), negated_code(CC, NC).  % a negation of C (proof_interpreter.pl)
body_code(M, (C -> Th ; E), RB, T, ( MC -> CTh, T = if(TC, TTh) ; CE )) :- !,
    body_code(M, C, RB, TC, CC), body_code(M, Th, RB, TTh, CTh), body_code(M, E, RB, T, CE), mixed_code(CC, MC).
body_code(M, (C *-> Th ; E), RB, T, ( MC *-> CTh, T = if(TC, TTh) ; CE )) :- !,
    body_code(M, C, RB, TC, CC), body_code(M, Th, RB, TTh, CTh), body_code(M, E, RB, T, CE), mixed_code(CC, MC).
body_code(M, (A ; B), RB, T, ( CA ; CB )) :- !,
    body_code(M, A, RB, T, CA), body_code(M, B, RB, T, CB).
body_code(M, (C -> Th), RB, T, ( T = if(TC, TTh), ( MC -> CTh ) )) :- !,
    body_code(M, C, RB, TC, CC), body_code(M, Th, RB, TTh, CTh), mixed_code(CC, MC).
body_code(M, \+ G, RB, T, ( T = not(G), \+ NG )) :- !,
    body_code(M, G, RB, _, CG), negated_code(CG, NG).
body_code(M, once(G), RB, T, once(MG)) :- !,
    body_code(M, G, RB, T, CG), mixed_code(CG, MG).
body_code(M, ignore(G), RB, T, ( MG -> true ; T = true )) :- !,
    body_code(M, G, RB, T, CG), mixed_code(CG, MG).
body_code(guard, G, RB, T, Code) :- native_requirement(G, RB, T, Code), !.  % native_guards.pl
body_code(_, G, _, T, sentinel_core:prove(G, T)) :- \+ callable(G), !.
body_code(_, G, _, T, sentinel_core:prove(G, T)) :- G = _:_, !.
body_code(_, G, _, T, sentinel_core:prove(G, T)) :- special_form(G), !.
body_code(_, G, RB, T, ( T = fact(G, P), Code )) :- base(RB, G), !, base_code(RB, G, P, Code).
body_code(_, G, RB, T, ( T = native(G), ( nb_current(sn_negated, off) -> RB:G ; sentinel_core:within(mixed, RB:G) ) ))
    :-
    functor(G, N, A), catch(RB:'$has_cut'(N/A), _, fail), !.
body_code(_, G, RB, T, RB:Call) :- compiled_twin(RB, G, T, Call), !.
body_code(_, G, RB, T, sentinel_core:prove(G, T)) :- user_pred(RB, G), !.  % a rule left to the interpreter
body_code(_, G, RB, T, ( T = decl(G), RB:G )) :- functor(G, N, A), decl_indicator(N/A), !.
body_code(_, G, RB, T, ( T = builtin(G), Code )) :- catch(runtime_allowed(RB, G), _, fail), !,
    (   meta_builtin(G)  % as prove/2 calls it; natively, as builtin_call/2 would, with the polarity off
    ->  Code = ( nb_current(sn_negated, off) -> RB:G ; sentinel_core:builtin_call(RB, G) )
    ;   Code = RB:G
    ).
body_code(_, G, _, T, sentinel_core:prove(G, T)).  % refused at run time, as prove/2 refuses it

%  mixed_code(+Code, -Mixed): Code under mixed polarity, as fact_terms.pl's within(mixed, Code) proves it, but
%  inline (Code is not meta-called): with the polarity off (a session without unsure facts, begin_query/4) it
%  costs one nb_current/2. b_setval/2 is undone on backtracking, so backtracking into Code sees mixed again.
mixed_code(Code, ( ( nb_current(sn_negated, P0) -> true ; P0 = false ),
                   ( P0 == off -> true ; b_setval(sn_negated, mixed) ),
                   Code,
                   ( P0 == off -> true ; b_setval(sn_negated, P0) ) )).

%  negated_code(+Code, -Negated): Code after entering a negation (fact_terms.pl's negate/0), the call left
%  out when the polarity is off (negate/0 does nothing then).
negated_code(Code, ( ( nb_current(sn_negated, off) -> true ; sentinel_core:negate ), Code )).

%  base_code(+RB, +G, ?P, -Code): base_solve(RB, G, P), with what the rulebase declares about G's predicate
%  settled now: a predicate without an askable skips the askable look-up (askable_of/3 finds nothing for it),
%  one without a binding the fetch check too (ensure_fetched/2 holds for it, whatever its arguments).
base_code(RB, G, P, Code) :-
    functor(G, N, A),
    (   RB:'$askable'(N, A, _, _, _, _)
    ->  (   settled_askable(RB, N, A, G, P, Ask)
        ->  fetched_code(RB, N, A, G, Fetched),
            ( Fetched == true -> Code = Ask ; Code = ( Fetched -> Ask ; sentinel_core:assume(G), P = assumed ) )
        ;   Code = sentinel_core:indexed_base_solve(RB, N, A, G, P)
        )
    ;   RB:'$binding'(N, A, _, _, _)
    ->  fact_code(N, A, G, P, Found), fetched_code(RB, N, A, G, Fetched),
        Code = ( Fetched -> Found ; sentinel_core:assume(G), P = assumed )
    ;   fact_code(N, A, G, P, Code)
    ).

%  settled_askable(+RB, +N, +A, ?G, ?P, -Code): indexed_base_solve/5's askable solve for G of N/A (A > 0) when
%  N/A has one askable and its head's arguments are distinct variables (it covers every goal of N/A, so
%  indexed_base_solve/5 would find it on every call): askable_settled/9 with G's answer-free form, its inputs
%  and the answers' sources made here (G0 shares G's variables: the same values at run time).
settled_askable(RB, N, A, G, P, sentinel_core:askable_settled(RB, N, G, G0, Ins, [seed|From], From,
                                                               a(H, Q, Ty, O), P)) :-
    A > 0,
    findall(a(H0, Q0, Ty0, O0), RB:'$askable'(N, A, H0, Q0, Ty0, O0), [a(H, Q, Ty, O)]),
    nonvar(Ty), H =.. [_|Hs], maplist(var, Hs), sort(Hs, Distinct), length(Distinct, A),
    askable_from(O, From),
    askable_inputs(G, Ty, G0),
    G0 =.. [_|Ins0], ( Ty == yes_no -> Ins = Ins0 ; append(Ins, [_], Ins0) ).

%  fetched_code(+RB, +N, +A, +G, -Code): sentinel_core:fetched(RB, N, A, G) with the bindings of N/A written
%  out in their order (each one's look-up done here, once): for each, a binding whose inputs the goal grounds
%  and whose fetch marker is not valid records the fetch and fails the check.
fetched_code(RB, N, A, G, Code) :-
    findall(H-T-Args, RB:'$binding'(N, A, H, T, Args), Bs),
    maplist(binding_check(N, A, G), Bs, Checks0),
    exclude(==(true), Checks0, Checks),
    conjunction(Checks, Code).

%  (The head H is matched with G here when that can bind only H's variables - H as general as G, as a binding's
%  head of distinct variables is - which it would at run time whatever G's values: one call of =/2 fewer a
%  check, ~17 an allowed airline cancel. A head G can never match needs no check: none of G's instances does.)
binding_check(N, A, G, H-T-Args, Check) :-
    (   \+ H = G
    ->  Check = true
    ;   subsumes_term(H, G)
    ->  H = G, marker_code(N, A, T, Args, Marked),
        Check = ( \+ ( ground(Args), \+ Marked, sentinel_core:record_need(fetch(T, Args, G)) ) )
    ;   marker_code(N, A, T, Args, Marked),
        Check = ( \+ ( H = G, ground(Args), \+ Marked, sentinel_core:record_need(fetch(T, Args, G)) ) )
    ).

conjunction([], true).
conjunction([C], C) :- !.
conjunction([C|Cs], (C, Rest)) :- conjunction(Cs, Rest).

fact_code(N, A, G, P, Code) :-
    (   A =:= 0 -> Code = sentinel_core:valid_fact(G, P)
    ;   nb_current(sn_inline_lookups, true) -> lookup_code(N, G, P, Code)
    ;   Code = sentinel_core:valid_fact_of(N, G, P)
    ).

%  lookup_code(+N, +G, ?P, -Code): sentinel_core:valid_fact_of(N, G, P) written out in the clause (its key, G's
%  first argument, taken here): the same look-ups in the same order, one call fewer each (~40 an allowed
%  airline cancel), where the clause is compiled under the optimise flag (assert_compiled/3): without it
%  ==/2 and >/2 are calls too, and the look-up cost one more than the call of valid_fact_of/3.
lookup_code(N, G, P, Code) :-
    arg(1, G, K),
    Look = (   U == off
           ->  S:'$fact'(N, K, G, Exp, P), Exp > Now
           ;   S:'$fact'(N, K, G, Exp, P), Exp > Now
           ;   S:'$fact'('$unsure', G, '$unsure'(G), Exp, P), Exp > Now, sentinel_core:negated
           ),
    (   nb_current(sn_lookup_state, s(S, Now, U, Used))
    ->  Used = true, Code = Look
    ;   Code = ( system:nb_getval(sn_query, q(_, S, Now, _, U)), Look )
    ).

%  hoisted_lookups(:Compile, ?Code0, -Code): Code0 made by Compile, its look-ups written out (lookup_code/4)
%  reading the query's session, time and polarity mode once, at the start of the clause, not once each (~20
%  nb_getval/2 calls an allowed airline cancel): they are one query's constants, set by begin_query/4 alone
%  (and to the same values by reset_query/0).
hoisted_lookups(Compile, Code0, Code) :-
    (   nb_current(sn_inline_lookups, true)
    ->  b_setval(sn_lookup_state, s(S, Now, U, Used)),
        call(Compile),
        b_setval(sn_lookup_state, none),
        ( Used == true -> Code = ( system:nb_getval(sn_query, q(_, S, Now, _, U)), Code0 ) ; Code = Code0 )
    ;   call(Compile), Code = Code0
    ).

marker_code(N, A, T, Args, Code) :-
    M = '$fetched'(N, A, T, json(Args)),
    (   nb_current(sn_inline_lookups, true) -> lookup_code('$fetched', M, _, Code)
    ;   Code = sentinel_core:valid_fact_of('$fetched', M, _)
    ).

%  inline_lookups_for(+Source): the code compiled next from Source (a rule clause, a guard, a base wrapper)
%  writes its look-ups out when Source may be compiled under the optimise flag (assert_compiled/3). Undone on
%  backtracking; unset (look-ups called) in any other compilation.
inline_lookups_for(Source) :-
    ( optimisable(Source) -> b_setval(sn_inline_lookups, true) ; b_setval(sn_inline_lookups, false) ).

%  assert_compiled(+RB, +Source, +Clause): Clause, compiled from Source, added to RB. SWI-Prolog compiles
%  arithmetic in line (no call, no inference) only under the optimise flag (local to this thread), which
%  would also compile the rulebase's own arithmetic so, and its errors would then name another context than
%  the interpreter's: a clause is compiled under it only when Source holds no term so named (read
%  conservatively, goal or not).
assert_compiled(RB, Source, Clause) :-
    (   optimisable(Source)
    ->  current_prolog_flag(optimise, O),
        setup_call_cleanup(set_prolog_flag(optimise, true), assertz(RB:Clause), set_prolog_flag(optimise, O))
    ;   assertz(RB:Clause)
    ).

optimisable(Source) :-
    \+ ( sub_term(S, Source), compound(S), compound_name_arity(S, N, A), inline_arithmetic(N, A) ).

inline_arithmetic(is, 2).
inline_arithmetic(<, 2).
inline_arithmetic(>, 2).
inline_arithmetic(=<, 2).
inline_arithmetic(>=, 2).
inline_arithmetic(=:=, 2).
inline_arithmetic(=\=, 2).
inline_arithmetic(succ, 2).
inline_arithmetic(plus, 3).
inline_arithmetic(assertion, 1).  % (library(debug) drops these under optimise, at load time only)
inline_arithmetic(debug, 3).

%  The twin of a rule being compiled now or already (all rules of the rulebase are compiled together).
compiled_twin(RB, G, T, Call) :-
    functor(G, N, A), compilable_rule(RB, N/A),
    atom_concat('$r:', N, CN), G =.. [_|As], append(As, [T], As1), Call =.. [CN|As1].

%  A goal prove/2 has a clause of its own for (require/2, confirmed/2, ...), other than the control
%  constructs compiled above: read off prove/2 itself, so a new policy construct is never compiled wrongly.
special_form(G) :-
    functor(G, N, A), functor(G0, N, A),
    clause(sentinel_core:prove(H, _), _), nonvar(H), H = G0, !.

% ---------------------------------------------------------------- bindings and askables by predicate

%  '$binding'(N, A, Head, Tool, Args) and '$askable'(N, A, Head, Question, Type, Options): the bindings and
%  askables of RB in their order, by the name and arity of the head.
index_bindings(RB) :-
    dynamic(RB:'$binding'/5),
    retractall(RB:'$binding'(_, _, _, _, _)),
    forall(( decl(RB, binding(B, tool(T, Args), _, _)), callable(B), functor(B, N, A) ),
           assertz(RB:'$binding'(N, A, B, T, Args))),
    dynamic(RB:'$askable'/6),
    retractall(RB:'$askable'(_, _, _, _, _, _)),
    forall(( decl(RB, askable(H, Q, Ty, O)), callable(H), functor(H, N, A) ),
           assertz(RB:'$askable'(N, A, H, Q, Ty, O))).

%  settle_base_wrappers(+RB): once the bindings and askables are indexed, each base predicate's wrapper
%  (rulebase_loading.pl's install_base_wrappers/1: base_native/3) is that look-up with the predicate's
%  declarations settled, as a compiled rule's base goal is (base_code/4): the same look-ups, solutions and
%  order, without asking on every call which rulebase the query is in, whether it is indexed, and what the
%  goal's bindings and askables are (a base goal called natively, inside findall/forall/aggregate_all: 45 of
%  the 683 inferences of an allowed airline cancel).
settle_base_wrappers(RB) :-
    forall(( catch(RB:'$wrapped'(N/A), _, fail), functor(H, N, A), inline_lookups_for(H),
             hoisted_lookups(base_code(RB, H, _, Code0), Code0, Code) ),
           ( retract(RB:(H :- sentinel_core:base_native(N, A, H))) -> assert_compiled(RB, H, (H :- Code)) ; true )).

%  askables_of(+RB, +G, -H, -Q, -Ty, -O): the askables whose head has G's name and arity.
askables_of(RB, G, H, Q, Ty, O) :-
    functor(G, N, A),
    (   current_predicate(RB:'$askable'/6)
    ->  RB:'$askable'(N, A, H, Q, Ty, O)
    ;   RB:askable(H, Q, Ty, O)  % a module loaded without sn_finish_load
    ).

%  bindings_of(+RB, +G, -B, -T, -Args): the bindings whose head has G's name and arity (others cannot unify).
bindings_of(RB, G, B, T, Args) :-
    functor(G, N, A),
    (   current_predicate(RB:'$binding'/5)
    ->  RB:'$binding'(N, A, B, T, Args)
    ;   RB:binding(B, tool(T, Args), _, _)
    ).
