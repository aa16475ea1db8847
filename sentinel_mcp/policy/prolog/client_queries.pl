/*  Part of sentinel_core (included): what a client asks outside a decision. A symbolic query (in the
    query worker), a session's facts written out, whether a context may be bound to a value.
*/

%  sn_client_query(+RB, +Session, +Now, +GoalText, +Max, +Limit, +Seconds, -Out): a goal typed by a client
%  (run only in the query worker process, never in the engine that decides calls). The text is read with
%  the standard operators, contexts are resolved, the whole goal is checked against the allow list, and it
%  runs under an inference limit and a wall-clock limit (the worker's stack limit bounds its memory).
sn_client_query(RB, Session, Now, GoalText, Max, Limit, Seconds, Out) :-
    begin_query(RB, Session, Now),
    catch(client_query_outcome(RB, GoalText, Max, Limit, Seconds, Out0), E, client_failure(E, Out0)),
    catch(( add_needs(Out0, Out1), to_json_atom(Out1, Out) ), E2,
          ( client_failure(E2, Out2), to_json_atom(Out2, Out) )).

client_query_outcome(RB, GoalText, Max, Limit, Seconds, Out) :-
    catch(client_goal(GoalText, Goal0, Vs), E, true),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M), Out = json([status=error, message=M])
    ;   resolve_contexts(RB, Goal0, Goal, Named),
        checked_client_goal(RB, Goal0, Goal, Why),
        (   nonvar(Why)
        ->  format(atom(M), 'refused: ~w', [Why]), Out = json([status=refused, message=M])
        ;   call_with_time_limit(Seconds,
                call_with_inference_limit(
                    findall(Vs-T, limit(Max, ( named_contexts_hold(Named), prove(Goal, T) )), Sols),
                    Limit, R)),
            (   R == inference_limit_exceeded
            ->  Out = json([status=inference_limit, message='the query exceeded its inference budget'])
            ;   maplist(solution_json, Sols, SJ), shown_text(Goal, GA),
                ( Sols == [] -> St = failed ; cur(assumed, true) -> St = incomplete ; St = proved ),
                Out = json([status=St, goal=GA, solutions=SJ])
            )
        )
    ).

%  checked_client_goal(+RB, +Goal0, +Goal, -Why): Why unbound when Goal (Goal0 with its context names read as
%  their values) passes the allow list, else why not. A refusal writes the goal back, so it is told of the
%  client's own text (Goal0): written after the reading, it named a binding's value that the query withholds
%  (a binding whose check does not hold). Goal is checked too (a value that stands where a goal is called),
%  and refused in words that name no value.
checked_client_goal(RB, Goal0, Goal, Why) :-
    catch(check_goal(client, RB, Goal0), refused(Why), true),
    (   nonvar(Why)
    ->  true
    ;   catch(check_goal(client, RB, Goal), refused(_), Refused = true),
        (   Refused == true
        ->  Why = 'a bound context\'s value cannot be called as a goal (read a context with context_value/2)'
        ;   true
        )
    ).

%  client_goal(+Text, -Goal, -VariableNames): the one goal Text holds. term_string/3 reads the first term and
%  drops the rest: "a(X). b(X)" was answered for a(X) alone, "proved" for a goal never proved.
client_goal(Text, Goal, Vs) :-
    term_string(Goal, Text, [variable_names(Vs), syntax_errors(error)]),
    setup_call_cleanup(open_string(Text, S), after_first_term(S, After), close(S)),
    (   After == none
    ->  true
    ;   throw(error(syntax_error('a query is one goal (join goals with ","): text follows the "." that ends it'),
                    _))
    ).

%  after_first_term(+Stream, -After): none when only layout and comments follow the first term, else text.
%  (A stream's reader wants the final "." that term_string/3 does without: a first term it cannot end ran to
%  the end of the text, which term_string/3 read whole.)
after_first_term(S, After) :-
    (   catch(read_term(S, _, []), error(syntax_error(_), _), fail)
    ->  catch(read_term(S, T, []), error(syntax_error(_), _), T = text),
        ( T == end_of_file -> After = none ; After = text )
    ;   After = none
    ).

%  What a client is told when its goal hit a limit or failed: no internal goals, only what happened.
client_failure(time_limit_exceeded, json([status=time_limit, message='the query ran longer than its time budget'])) :- !.
client_failure(error(resource_error(_), _), json([status=memory_limit, message='the query needed more memory than its budget'])) :- !.
client_failure(error(permission_error(call, builtin, N/A), _), json([status=refused, message=M])) :- !,
    format(atom(M), 'refused: ~w/~w is not allowed in a query', [N, A]).
client_failure(error(Formal, _), json([status=error, message=M])) :- !, client_error_words(Formal, M).
client_failure(_, json([status=error, message='the query could not be evaluated'])).

client_error_words(instantiation_error, 'the query is not instantiated enough (an argument is unbound where a value is needed)') :- !.
client_error_words(type_error(T, _), M) :- !, format(atom(M), 'a value has the wrong type (expected ~w)', [T]).
client_error_words(domain_error(D, _), M) :- !, format(atom(M), 'a value is outside its domain (expected ~w)', [D]).
client_error_words(evaluation_error(E), M) :- !, format(atom(M), 'arithmetic error: ~w', [E]).
client_error_words(existence_error(procedure, N/A), M) :- !, format(atom(M), 'unknown predicate ~w/~w', [N, A]).
client_error_words(representation_error(W), M) :- !, format(atom(M), 'a value cannot be represented (~w)', [W]).
client_error_words(_, 'the query could not be evaluated').

%  sn_dump_session(+Session, -Text): the session's facts as "Fact<TAB>Expires<TAB>Prov" lines (the format
%  of sn_assert_lines), written canonically so that they read back identically elsewhere.
sn_dump_session(Session, Text) :- sn_dump_session(Session, [], [], Text).

%  sn_dump_session(+Session, +HiddenPreds, +HiddenTools, -Text): without the facts of the predicates in
%  HiddenPreds and the fetch markers of the tools in HiddenTools (personal data a principal may not see).
sn_dump_session(Session, HiddenPreds, HiddenTools, Text) :-
    sn_dump_session(Session, HiddenPreds, HiddenTools, [], Text).

%  sn_dump_session(+Session, +HiddenPreds, +HiddenTools, +HiddenFacts, -Text): and without the facts whose text
%  (as writeq writes it: a fact's text in the store) is in HiddenFacts (reads the principal may not make).
sn_dump_session(Session, HiddenPreds, HiddenTools, HiddenFacts, Text) :-
    ensure_session(Session),
    sort(HiddenFacts, Unread),
    with_output_to(string(Text),
        forall(( stored_fact(Session, F, E, P), \+ hidden_fact(F, HiddenPreds, HiddenTools),
                 \+ unread_fact(F, Unread) ),
               format('~k\t~w\t~w~n', [F, E, P]))).

hidden_fact('$fetched'(_, _, T, _), _, HiddenTools) :- !, memberchk(T, HiddenTools).
hidden_fact(F, HiddenPreds, _) :- functor(F, N, _), memberchk(N, HiddenPreds).

unread_fact(_, []) :- !, fail.
unread_fact(F, Unread) :- format(atom(A), '~q', [F]), ord_memberchk(A, Unread).


solution_json(Vs-T, json([bindings=json(B), proof=TJ])) :-
    findall(N=J, ( member(N=V, Vs), pl_json(V, J) ), B), tree_json(T, TJ).

%  resolve_contexts(+RB, +Goal0, -Goal, -Named): replace every atom that names a bound context by the
%  context's value; Named: the N-V pairs so read. The name a context_value/2 reads stays a name (it is read
%  there, with its checks). A binding counts only while its checks hold (bound_contexts.pl), so the query
%  proves them first, within its own limits (named_contexts_hold/1): a stale binding gives the name no value
%  in every spelling, as it gives a guard none.
resolve_contexts(RB, T0, T, Named) :- resolve_contexts(RB, T0, T, [], Named0), sort(Named0, Named).

resolve_contexts(_, T, T, N, N) :- var(T), !.
resolve_contexts(RB, context_value(C, V0), context_value(C, V), N0, N) :- atom(C), !,
    resolve_contexts(RB, V0, V, N0, N).
resolve_contexts(RB, A, V, N, [A-V|N]) :- atom(A), is_context(RB, A), valid_fact('$context'(A, V0), _), !,
    V = V0.
resolve_contexts(_, A, A, N, N) :- atomic(A), !.
resolve_contexts(RB, T, T2, N0, N) :- T =.. [F|As], foldl(resolve_contexts(RB), As, As2, N0, N), T2 =.. [F|As2].

named_contexts_hold([]).
named_contexts_hold([N-V|Ns]) :- once(checked_context(N, V, _)), named_contexts_hold(Ns).

is_context(RB, A) :- ( RB:context(A) ; RB:context(A, _, _) ), !.

%  sn_context_check(+RB, +Session, +Now, +Name, +ValueJson, +Limit, -Out): may Name be bound to Value? (the
%  context's checks are rules: within an engine pass's budget, as sn_decide/9)
sn_context_check(RB, Session, Now, Name, ValueJson, Limit, Out) :-
    guard_seconds(S),
    catch(call_with_time_limit(S, context_check(RB, Session, Now, Name, ValueJson, Limit, Out0)),
          time_limit_exceeded, timed_out_answer(Out0)),
    Out = Out0.

context_check(RB, Session, Now, Name, ValueJson, Limit, Out) :-
    begin_query(RB, Session, Now),
    from_call_json(ValueJson, V),  % as the bound '$context' fact holds it: a text "true" is a string
    (   \+ is_context(RB, Name)
    ->  Out0 = json([status=error, message='no such context'])
    ;   findall(C, RB:context(Name, V, C), Checks),
        catch(limited(prove_all(Checks, Trees), Limit, R), E, true),
        query_outcome(E, R, Trees, St, TJ), Out0 = json([status=St, tree=TJ])
    ),
    add_needs(Out0, Out1), to_json_atom(Out1, Out).

prove_all([], []).
prove_all([G|Gs], [T|Ts]) :- once(prove(G, T)), prove_all(Gs, Ts).
