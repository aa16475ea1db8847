/*  Part of sentinel_core (included): a guard proved natively first, the meta-interpreter only when that
    cannot decide.

    Most calls a guard sees are allowed with every fact at hand, and such a proof needs none of what the
    full pass keeps for the other outcomes: needs, assumptions, the unmet conditions with their depth and
    order, the denial. So each guard of a rulebase is compiled, when it is loaded, into a native clause
    RB:'$guard_native'(I, CallArgs, Tree) (the I-th guard clause), whose body is the guard's body as the
    rule compiler writes rule bodies (rule_compiler.pl, the same tree), and whose requirements
    (require/2,3) are proved in place: once, the tree required(Why, Ref, T).

    A decision first runs the native guards of the tool (sn_decide/9), with native mode on. In that mode
    the first event that makes a pass anything but a plain proof - a need recorded, a fact assumed, a
    condition found unmet, the call denied, a requirement failed - throws sn_native_abort; so does any error,
    and exceeding the inference limit ends it too. Then the full pass runs from a fresh query state, exactly
    as before. So a native proof is a run of the full pass in which none of those events happened: the same
    goals in the same order (the compiled code is the interpreter's, goal for goal), the same first
    solution, the same tree; and the outcome of such a run of the full pass is "proved" with nothing
    needed. Every other outcome - a denial, a question, a fetch, an error, a limit - comes from the full pass.
*/

%  compile_guards(+RB): the native clauses of RB's guards, '$guard_of'(Tool, I) for each in clause order,
%  and '$native_guards'(true), or '$native_guards'(false) when a guard could not be compiled (then every
%  decision of RB runs the full pass only).
compile_guards(RB) :-
    dynamic(RB:'$guard_native'/3), retractall(RB:'$guard_native'(_, _, _)),
    dynamic(RB:'$guard_of'/2), retractall(RB:'$guard_of'(_, _)),
    dynamic(RB:'$native_guards'/1), retractall(RB:'$native_guards'(_)),
    findall(guard(T, P, G), decl(RB, guard(T, P, G)), Gs),  % as read, never by calling the module
    catch(native_guard_clauses(Gs, RB, 1, Cs), E, true),
    (   var(E)
    ->  forall(member(Src-C, Cs), assert_compiled(RB, Src, C)), assertz(RB:'$native_guards'(true))
    ;   assertz(RB:'$native_guards'(false)),
        print_message(warning, format('guards of ~w left to the interpreter: ~q', [RB, E]))
    ).

native_guard_clauses([], _, _, []).
native_guard_clauses([guard(T, P, G)|Gs], RB, I,
                     [G-('$guard_native'(I, CallArgs, Tree) :- sentinel_core:match_args(P, CallArgs), Code),
                      '$guard_of'(T, I)-'$guard_of'(T, I)|Cs]) :-
    (   inline_lookups_for(G), hoisted_lookups(body_code(guard, G, RB, Tree, Code0), Code0, Code)
    ->  true
    ;   throw(cannot_compile(guard(T, P, G)))
    ),
    I1 is I + 1, native_guard_clauses(Gs, RB, I1, Cs).

%  native_requirement(+Goal, +RB, ?Tree, -Code): a requirement in a guard's native proof: its goal proved
%  once, in place (a failed one is an unmet condition: the full pass says which).
native_requirement(require(G, Why), RB, T, Code) :- native_requirement(require(G, Why, none), RB, T, Code).
native_requirement(require(G, Why, Ref), RB, T, ( CG -> T = required(Why, Ref, TG) ; throw(sn_native_abort) )) :-
    body_code(guard, G, RB, TG, CG).

%  native_event: the pass is about to record something only the full pass reports (see above).
native_event :- ( nb_current(sn_native, true) -> throw(sn_native_abort) ; true ).

%  native_decision(+RB, +Tool, +CallArgs, +Limit, -Out0): the tool's guards proved natively, Out0 the JSON
%  terms of that proof (status proved); fails when the full pass must decide (its query state is then reset).
native_decision(RB, Tool, CallArgs, Limit, json([status=proved, tree=TJ])) :-
    \+ nb_current(sn_interpreted, true),
    catch(RB:'$native_guards'(true), _, fail),
    native_guards_of(RB, Tool, Is), Is \== [],
    (   setup_call_cleanup(nb_linkval(sn_native, true),  % an atom: nothing to copy (call_decisions.pl)
                           catch(call_with_inference_limit(prove_native(Is, RB, CallArgs, Trees), Limit, R),
                                 E, ( E == time_limit_exceeded -> throw(E) ; fail )),  % (sn_decide/9's budget)
                           nb_linkval(sn_native, false)),
        R \== inference_limit_exceeded
    ->  proved_tree(and_all(Trees), TJ)
    ;   reset_query, fail
    ).

%  The guard clauses of Tool, in clause order: by the first-argument index unless a guard names its tools by
%  a prefix (as tool_guards/3).
native_guards_of(RB, Tool, Is) :-
    (   catch(RB:'$guard_wildcards'(false), _, fail)
    ->  findall(I, RB:'$guard_of'(Tool, I), Is)
    ;   findall(I, ( RB:'$guard_of'(T, I), tool_matches(T, Tool) ), Is)
    ).

prove_native([], _, _, []).
prove_native([I|Is], RB, CallArgs, [T|Ts]) :- once(RB:'$guard_native'(I, CallArgs, T)), prove_native(Is, RB, CallArgs, Ts).

%  A fresh query state for the full pass, as begin_query/3 and sn_decide/9 left it.
reset_query :- nb_getval(sn_query, q(RB, S, Now, C, _)), begin_query(RB, S, Now, C).
