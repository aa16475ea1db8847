/*  Part of sentinel_core (included): base facts as a proof meets them. A stored one, one a binding
    must fetch first, one the user (or the agent) is asked; what an assumed fact leaves unknown is marked
    tainted, so that no question is asked about it in the same pass.
*/

%  base_native(+N, +A, ?G): a base goal of predicate N/A called natively (the wrapper rulebase_loading.pl's
%  install_base_wrappers/1 gives each base predicate), looked up as base_solve/3 does; once the query's rulebase
%  is indexed (its '$binding'/5 and '$askable'/6 are made together), by the indexes at once.
base_native(N, A, G) :-
    query_rb(RB),
    ( current_predicate(RB:'$binding'/5) -> indexed_base_solve(RB, N, A, G, _) ; base_solve(RB, G, _) ).

%  base_solve(+RB, ?G, -Prov): a valid stored fact, else record what would establish it and fail.
base_solve(RB, G, P) :-
    (   ensure_fetched(RB, G)
    ->  (   askable_of(RB, G, Q)
        ->  askable_solve(RB, G, Q, P)
        ;   valid_fact(G, P)
        )
    ;   assume(G), P = assumed
    ).

%  indexed_base_solve(+RB, +N, +A, ?G, -Prov): base_solve/3 for G of predicate N/A in a rulebase whose bindings
%  and askables are indexed (the compiled rules: rule_compiler.pl's base_code/4, after index_bindings/1): the
%  same look-ups, without asking again on every goal whether the indexes exist and what G's functor is
%  (6 inferences of each of a cancel decision's 8 base goals with an askable).
indexed_base_solve(RB, N, A, G, P) :-
    (   fetched(RB, N, A, G)
    ->  (   RB:'$askable'(N, A, H, Q, Ty, O), subsumes_term(H, G)  % the first that covers G (askable_of/3)
        ->  askable_solve(RB, G, a(H, Q, Ty, O), P)
        ;   valid_fact(G, P)
        )
    ;   assume(G), P = assumed
    ).

%  A fact that is being fetched (or asked) is assumed for the rest of this pass (its unknown arguments
%  left unbound), so one pass collects the needs of every later goal too and they are fetched together;
%  a pass that assumed anything never proves.
assume(G) :- native_event, ( cur(assumed, true) -> true ; assertz(cur(assumed, true)) ), bump_assume_seq, taint_vars(G).

%  What an assumed fact leaves unknown must not become the subject of a question in the same pass: its
%  variables are marked, and a value one of them is later bound to (e.g. by enumerating stored facts) is
%  noted as tainted. A question about a tainted value waits for the next round, when the value is known.
taint_vars(G) :- term_variables(G, Vs), maplist(taint_var, Vs).
taint_var(V) :- ( get_attr(V, sentinel_core, assumed) -> true ; put_attr(V, sentinel_core, assumed) ).
attr_unify_hook(assumed, Other) :- ( var(Other) -> taint_var(Other) ; note_tainted(Other) ).
attr_unify_hook(open, Other) :- ( var(Other) -> open_unbound(Other) ; note_open(Other) ).  % guard_steps.pl
note_tainted(T) :- forall(( sub_term(A, T), atomic(A) ), ( cur(tainted, A) -> true ; assertz(cur(tainted, A)) )).
tainted(T) :- sub_term(A, T), atomic(A), cur(tainted, A), !.

%  If a binding covers G, its inputs are ground, and it was not fetched (or expired): record a need.
ensure_fetched(RB, G) :-
    (   current_predicate(RB:'$binding'/5)
    ->  functor(G, N, A), fetched(RB, N, A, G)
    ;   \+ ( bindings_of(RB, G, G1, T, Args1), G1 = G, ground(Args1),
             \+ ( fetched_marker(G, T, Args1, M), valid_fact(M, _) ),
             record_need(fetch(T, Args1, G)) )
    ).

%  fetched(+RB, +N, +A, +G): ensure_fetched/2 for G of predicate N/A, by the bindings index (rule_compiler.pl).
fetched(RB, N, A, G) :-
    \+ ( RB:'$binding'(N, A, G1, T, Args1), G1 = G, ground(Args1),
         \+ valid_fact_of('$fetched', '$fetched'(N, A, T, json(Args1)), _),
         record_need(fetch(T, Args1, G)) ).

fetched_marker(G, T, Args, '$fetched'(N, A, T, json(Args))) :- functor(G, N, A).

askable_of(RB, G, a(H, Q, Ty, O)) :- askables_of(RB, G, H, Q, Ty, O), subsumes_term(H, G), !.

askable_solve(RB, G, a(H, Q, Ty, O), P) :-
    askable_from(O, From),
    askable_inputs(G, Ty, G0),
    G0 =.. [N|Ins0], ( Ty == yes_no -> Ins = Ins0 ; append(Ins, [_], Ins0) ),
    (   valid_fact(G0, P0), memberchk(P0, [seed|From])
    ->  valid_fact(G, P), memberchk(P, [seed|From]), answer_is_a_choice(G, a(H, Q, Ty, O))
    ;   askable_unanswered(RB, G, G0, N, Ins, From, a(H, Q, Ty, O), P)
    ).

%  askable_settled(+RB, +N, ?G, ?G0, ?Ins, +SeedFrom, +From, +AQ, -P): askable_solve/4 for a goal of predicate
%  N/A (A > 0) whose one askable AQ covers any goal of N/A, with what askable_solve/4 works out on every call
%  (G0, Ins, the answers' sources, [seed|From]) worked out when the rule was compiled (rule_compiler.pl's
%  base_code/4): the same look-ups in the same order, ~15 inferences fewer a goal.
askable_settled(RB, N, G, G0, Ins, SF, From, AQ, P) :-
    (   valid_fact_of(N, G0, P0), memberchk(P0, SF)
    ->  valid_fact_of(N, G, P), memberchk(P, SF), answer_is_a_choice(G, AQ)
    ;   askable_unanswered(RB, G, G0, N, Ins, From, AQ, P)
    ).

%  An askable goal with no answer to use: answered no, not known, asked, or assumed.
askable_unanswered(RB, G, G0, N, Ins, From, a(H, Q, Ty, O), P) :-
    (   Ty == yes_no, valid_fact('$answered_no'(N, Ins), P0), memberchk(P0, From)
    ->  fail
    ;   valid_fact('$dont_know'(N, Ins), P0), memberchk(P0, From)
    ->  dont_know(G, a(H, Q, Ty, O), P0, P)
    ;   ground_inputs(G, Ty), \+ denied, \+ tainted(Ins), \+ speculating  % guard_steps.pl
    ->  ask_need(RB, G0, a(H, Q, Ty, O), From), assume(G), P = assumed
    ;   assume(G), P = assumed
    ).

ask_need(_, G0, a(H, Q, Ty, _), From) :-
    (   Ty = choice_of(_, _, _)
    ->  copy_term(H-Ty, H1-choice_of(V, L, Goal)), H1 = G0, choices_of(V, L, Goal, Choices),
        (   Choices == []
        ->  record_unmet(no_choices(G0, Q)), fail
        ;   record_need(ask(G0, Q, choices(Choices), From))
        )
    ;   record_need(ask(G0, Q, Ty, From))
    ).

%  The choices of a question about an entity: every Value (with its Label) its goal proves, fetched like any
%  other fact (tools before questions: the round is asked only once nothing is left to fetch). At most 50.
choices_of(V, L, Goal, Choices) :-
    findall(V-L, limit(50, ( prove(Goal, _), atomic(V), V \== i_dont_know )), Ps0),
    findall(json([value=J, label=LT, term=T]),  % a label as written; the value as offered, and its term
            ( member(V1-L1, Ps0), own_text(L1, LT), pl_json(V1, J), q_atom(V1, T) ), Cs0),
    list_to_set(Cs0, Choices).

%  A stored answer to a question about an entity must still be one of its choices (an agent's answer, or
%  one given before the facts changed): otherwise the condition is unmet, in words.
answer_is_a_choice(G, a(H, Q, Ty, _)) :-
    (   Ty = choice_of(_, _, _)
    ->  copy_term(H-Ty, H1-choice_of(V, _, Goal)), H1 = G,
        (   once(prove(Goal, _)) -> true
        ;   record_unmet(not_a_choice(G, V, Q), 50), fail
        )
    ;   true
    ).

%  "I don't know": what the rulebase says it means (unknown(as(Value))), or a refusal that names the next step.
dont_know(G, a(_, Q, Ty, O), P0, P) :-
    (   memberchk(unknown(as(V)), O)
    ->  ( Ty == yes_no -> V == yes ; G =.. As, last(As, V) ), P = P0
    ;   ( memberchk(unknown(Next), O), Next \= as(_) -> true ; Next = '' ),
        askable_inputs(G, Ty, G0), G0 =.. [_|As0], ( Ty == yes_no -> Ins = As0 ; append(Ins, [_], As0) ),
        G =.. [N|_], question_text(Q, Ins, QT),
        record_unmet(dont_know(QT, Next, '$dont_know'(N, Ins)), 100), fail  % names what the call forgets
    ).

%  A question with its inputs (a question may use fewer of them than it has: the first ones).
question_text(Q, Ins, Msg) :-
    text_to_atom(Q, QA), readable_args(Ins, T),
    (   safe_format(QA), append(Used, _, T), catch(( formatted_numbers(QA, Used), bounded_format(atom(Msg), QA, Used) ),
                                                   error(_, _), fail) -> true
    ;   Msg = QA
    ).

%  G0: G with the answer argument free (the whole G for yes_no).
askable_inputs(G, yes_no, G) :- !.
askable_inputs(G, _, G0) :- G =.. [N|As], append(Ins, [_], As), append(Ins, [_], As0), G0 =.. [N|As0].
ground_inputs(G, yes_no) :- !, ground(G).
ground_inputs(G, _) :- G =.. [_|As], append(Ins, [_], As), ground(Ins).
inputs_of_askable(_, H, Ins) :- H =.. [_|As], ( As == [] -> Ins = [] ; append(Ins, [_], As) ).
