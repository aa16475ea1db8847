/*  Part of sentinel_core (included): deciding a tool call. sn_decide/9 and its capped, compact and
    inline forms, a tool's guards and their argument patterns, the outcome of a pass, proofs kept for later.
*/

%  sn_decide(+RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Limit, -Out)
%
%  Within a wall-clock budget as well as the inference limit: one inference may be long work (msort/2 of a
%  list of a million, in a loop), and a decision on the caller's thread holds its event loop. A pass there
%  (sn_decide_capped/10) has decision_seconds/1's short budget, over which it errs and is decided again on
%  the engine's thread; there the budget is that of a guard (PolicySettings.guard_timeout's default): the
%  caller has given up by then, and every other decision waits for the engine. (within_budget/2: a watching
%  thread keeps the budget, decision_watch.pl; call_with_time_limit/2 cost two thread wake-ups a decision.)
sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    decision_seconds(S),
    catch(within_budget(S, decide_within(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out0)),
          E, over_budget_answer(E, Out0)),
    Out = Out0.

%  A decision over its time or memory (anywhere: its pass, its proof's text; the stack limit is its thread's,
%  engine_thread.py) answers so, an error a guard denies on (a capped pass's is decided again on the engine
%  thread), and the engine goes on: SWI-Prolog has freed the stacks by the time it is caught. Any other error
%  is raised, as before.
over_budget_answer(time_limit_exceeded, Out) :- !, timed_out_answer(Out).
over_budget_answer(error(resource_error(_), _), Out) :- !, out_of_memory_answer(Out).
over_budget_answer(E, _) :- throw(E).

decision_seconds(S) :-
    guard_seconds(G),
    ( nb_current(sn_capped, true) -> S is min(0.5, G) ; S = G ).

%  The guard's budget (sentinel.policy.guard_timeout, set once by the gateway at start; 10 s until then).
:- dynamic sn_guard_seconds/1.
guard_seconds(S) :- ( sn_guard_seconds(S0) -> S = S0 ; S = 10.0 ).

%  sn_set_guard_seconds(+S): a positive number of seconds, or the call fails (nothing changed).
sn_set_guard_seconds(S) :-
    number(S), S > 0, S =< 3600,
    S1 is float(S),
    retractall(sn_guard_seconds(_)),
    assertz(sn_guard_seconds(S1)).

timed_out_answer('{"status":"error","message":"the guard ran longer than its time budget","needs":[],"unmet":[],"tentative":[],"violations":[]}').
out_of_memory_answer('{"status":"error","message":"the guard needed more memory than its budget","needs":[],"unmet":[],"tentative":[],"violations":[]}').

decide_within(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    begin_query(RB, Session, Now, c(Tool, Digest, Version)),
    call_args(ArgsJson, CallArgs),
    (   native_decision(RB, Tool, CallArgs, Limit, Out0)  % native_guards.pl
    ->  true
    ;   full_pass(RB, Tool, CallArgs, Limit, Out0)
    ),
    unknown_outcome_checked(RB, Tool, Out0, Out1),  % unknown_outcomes.pl: on every path
    answer_text(Out1, Out).

%  call_args(+Text, -Pairs): a call's arguments, from their JSON (an object), or from the form engine.py gives a
%  flat object of texts, integers, booleans and nulls: 0x1E, then each key and its tagged value (s Text,
%  i Integer, t, f, n; S Text for a text spelling a literal) after a 0x1F, in the object's order (the characters
%  0x1E and 0x1F never in a key or value). The same terms from_call_json/2 gives, split in C instead of parsed.
call_args(Text, Pairs) :-
    (   sub_atom(Text, 0, 1, _, '\x1e\')
    ->  atomic_list_concat(['\x1e\'|Parts], '\x1f\', Text), tagged_pairs(Parts, Pairs)
    ;   from_call_json(Text, json(Pairs))
    ).

tagged_pairs([], []).
tagged_pairs([K, TV|Parts], [K=V|Pairs]) :-
    sub_atom(TV, 0, 1, _, Tag), sub_atom(TV, 1, _, 0, VT), tagged_value(Tag, VT, V),
    tagged_pairs(Parts, Pairs).

tagged_value(s, T, T).
tagged_value('S', T, V) :- atom_string(T, V).  % "true", "false", "null": not the literals
tagged_value(i, T, V) :- atom_number(T, V), integer(V).
tagged_value(t, '', true).
tagged_value(f, '', false).
tagged_value(n, '', null).

%  The answer's JSON; an allow whose proof is kept (nothing needed or unmet) is one fixed text around its id
%  (joined, not formatted: format/3 costs ~5 us here, the join ~0.5 us; Id is an integer, so no quoting).
answer_text(json([status=proved, tree=json([kept=Id])]), Out) :- integer(Id), \+ need(_), \+ unmet(_), !,
    atomic_list_concat(['{"status":"proved","tree":{"kept":', Id,
                        '},"needs":[],"unmet":[],"tentative":[],"violations":[]}'], Out).
answer_text(Out0, Out) :- add_needs(Out0, Out1), to_json_atom(Out1, Out).

%  The pass that decides every outcome (the meta-interpreter, with the compiled rules unless interpreted).
full_pass(RB, Tool, CallArgs, Limit, Out0) :-
    tool_guards(RB, Tool, Guards),
    (   Guards == []
    ->  Out0 = json([status=no_guard])
    ;   catch(limited(prove_guards(Guards, CallArgs, Trees), Limit, R), E, true),
        ( var(E), R == failed, settled_failure -> drop_pending ; denied -> drop_questions ; true ),  % guard_steps.pl
        (   nb_current(sn_capped, true), ( R == inference_limit_exceeded ; E == sn_over_cap )
        ->  Out0 = json([status=over_limit])  % sn_decide_capped/10: decided again with the whole limit
        ;   query_outcome(E, R, Trees, Status, TreeJ),
            ( Status == error -> Out0 = json([status=Status, message=TreeJ]) ; Out0 = json([status=Status, tree=TreeJ]) ),
            ( Status == error -> ( shown_text(E, ET), print_message(warning, format('guard error: ~w', [ET])) ) ; true )
        )
    ).

%  sn_decide_capped(+Compact, +RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Cap, -Out): sn_decide/9
%  (sn_decide_compact/9 when Compact is true) under Cap inferences, fewer than the rulebase's limit, for a
%  caller that runs it on its own thread (engine.py): a pass that needs more answers {"status": "over_limit"}
%  instead of deciding, and is decided again on the engine's thread with the whole limit; so does a pass
%  that erred (the caller asks again), as an error may be one the cap caused.
%  (The flags of a decision are atoms, set by nb_linkval/2: nb_setval/2 copies its value first, two inferences
%  more each, and an atom has nothing to copy; sentinel_core.pl's begin_query/4, native_guards.pl likewise.)
sn_decide_capped(Compact, RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out) :-
    setup_call_cleanup(nb_linkval(sn_capped, true),
                       (   Compact == true
                       ->  sn_decide_compact(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out)
                       ;   sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out)
                       ),
                       nb_linkval(sn_capped, false)).

%  sn_decide_inline(+RB, +Session, +Now, +Tool, +ArgsJson, +Digest, +Version, +Cap, -Out): sn_decide_capped/10
%  with Compact true (a decision on the caller's thread, engine.py), its two flags set at once.
sn_decide_inline(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out) :-
    setup_call_cleanup(( nb_linkval(sn_capped, true), nb_linkval(sn_compact, true) ),
                       sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Cap, Out),
                       ( nb_linkval(sn_compact, false), nb_linkval(sn_capped, false) )).

%  sn_decide_compact(...): sn_decide/9 (the fast path), but a proved call's tree is kept, not written: its
%  JSON is {"kept": Id}, and sn_render_kept_proof/2 writes it when it is asked for.
sn_decide_compact(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out) :-
    setup_call_cleanup(nb_linkval(sn_compact, true),
                       sn_decide(RB, Session, Now, Tool, ArgsJson, Digest, Version, Limit, Out),
                       nb_linkval(sn_compact, false)).

%  sn_render_kept_proof(+Id, -Out): {"tree": ...} of a kept proof, which is then forgotten (an error if it
%  is not kept: already rendered, or dropped). Forgotten once written: a writing that ran out of a caller's
%  stacks (engine_thread.py) is done again on the engine thread.
sn_render_kept_proof(Id, Out) :-
    kept_proof(Id, T, Ref), new_shown_room, proof_json(T, TJ), to_json_atom(json([tree=TJ]), Out), erase_kept(Ref).

%  sn_kept_proof_term(+Id, -Out): the term json([tree=TJ]) of a kept proof, which stays kept: the caller reads
%  it as Python's value in C (prolog_call_native.c's call_json; no JSON text written and parsed, ~40 % of a
%  rendering), then forgets it with sn_forget_kept_proof/2, or, when it is not the C reader's common case
%  (a tree deeper than it reads), renders it with sn_render_kept_proof/2.
sn_kept_proof_term(Id, json([tree=TJ])) :-
    kept_proof(Id, T, _), new_shown_room, proof_json(T, TJ).

%  sn_forget_kept_proof(+Id, -Out): a kept proof read is forgotten, Out = ok (an error if it is not kept).
sn_forget_kept_proof(Id, ok) :-
    kept_proof(Id, _, Ref), erase_kept(Ref).

erase_kept(Ref) :- recorded(_, kept(_, Cells, _), Ref), erase(Ref), flag(sn_kept_cells, C, C - Cells).

kept_proof(Id, T, Ref) :-
    (   integer(Id), Key is Id mod 1024, recorded(Key, kept(Id, _, T), Ref)
    ->  true
    ;   throw(error(existence_error(kept_proof, Id), _))
    ).

%  tool_guards(+RB, +Tool, -Guards): the guards of Tool in clause order. Without a wildcard guard in the rulebase
%  (noted when it is loaded), the first-argument index finds them; otherwise every guard is matched in turn.
tool_guards(RB, Tool, Guards) :-
    (   catch(RB:'$guard_wildcards'(false), _, fail)
    ->  findall(g(Pat, Goal), RB:guard(Tool, Pat, Goal), Guards)
    ;   findall(g(Pat, Goal), ( RB:guard(T, Pat, Goal), tool_matches(T, Tool) ), Guards)
    ).

%  note_guard_wildcards(+RB): whether a guard of RB names its tools by a prefix ('server__*').
note_guard_wildcards(RB) :-
    dynamic(RB:'$guard_wildcards'/1),
    retractall(RB:'$guard_wildcards'(_)),
    (   decl(RB, guard(T, _, _)), atom(T), sub_atom(T, _, 1, 0, '*') -> W = true ; W = false ),
    assertz(RB:'$guard_wildcards'(W)).

tool_matches(T, T) :- !.
tool_matches(P, Tool) :- atom(P), sub_atom(P, B, 1, 0, '*'), sub_atom(P, 0, B, _, Prefix), sub_atom(Tool, 0, B, _, Prefix).

prove_guards([], _, []).
prove_guards([g(Pat, Goal)|Gs], CallArgs, [T|Ts]) :-
    match_args(Pat, CallArgs),
    once(guard_body(Goal, T)),  % guard_steps.pl
    prove_guards(Gs, CallArgs, Ts).

match_args([], _).
match_args([P|Ps], CallArgs) :-
    (   P = args(All) -> All = CallArgs
    ;   P = (Name = V) ->
        (   memberchk(Name = V0, CallArgs)
        ->  ( V = V0 -> true ; format(atom(W), 'argument ~w does not match ~q', [Name, V]), record_unmet(W), fail )
        ;   format(atom(W), 'missing argument ~w', [Name]), record_unmet(W), fail
        )
    ;   format(atom(W), 'bad guard argument pattern ~q', [P]), record_unmet(W), fail
    ),
    match_args(Ps, CallArgs).

% a pass that found a broken requirement fails, whatever later goals did with the values it left unknown
query_outcome(_, _, _, failed, @(null)) :- denied, !.
% a pass that assumed facts may err or run away on the unknown values: it only says "fetch first"
query_outcome(E, R, _, incomplete, @(null)) :- ( nonvar(E) ; R == inference_limit_exceeded ), cur(assumed, true), !.
query_outcome(E, _, _, error, Msg) :- nonvar(E), !, client_failure(E, json(L)), memberchk(message = Msg, L).
query_outcome(_, R, _, inference_limit, @(null)) :- R == inference_limit_exceeded, !.
query_outcome(_, R, Trees, St, TJ) :- R \== failed, !,
    (   cur(assumed, true) -> St = incomplete, tree_json(and_all(Trees), TJ)
    ;   St = proved, proved_tree(and_all(Trees), TJ)
    ).

query_outcome(_, _, _, failed, @(null)).

%  A proof's tree as JSON terms or, in sn_decide_compact/9, kept as it is (json([kept=Id])) until
%  sn_render_kept_proof/2 writes it: an allow does not pay for its proof's text, a third of a decision.
proved_tree(T, TJ) :-
    (   nb_current(sn_compact, true), catch(keep_proof(T, Id), _, fail) -> TJ = json([kept=Id])
    ;   proof_json(T, TJ)  % proof_json.pl: tree_json/2's terms
    ).

%  At most 1024 proofs are kept (the oldest is dropped: its reader is told it is gone), each recorded under its
%  id modulo 1024, an integer (no atom made per decision, which atom garbage collection would then sweep; and
%  not the id itself: a key stays in the record table once used, ~160 bytes, one per decision for good): a
%  copy, without compiling a clause of the tree and decompiling it again; in the recorded database, which
%  every engine shares (a proof kept by a decision on a caller's thread, engine.py's try_now, is written by
%  whichever engine reads it), and which garbage collection does not walk. Nothing else in the engine records
%  under an integer.
%  The recorded database is outside every stack limit: a proof is kept only while it and all those kept
%  hold at most max_kept_cells/2 cells (term_size/2: a rule's list of a million elements in a proof would
%  otherwise sit there, 1024 times over). One that does not fit is written at once (proved_tree/2), its
%  big terms shown by a marker (shown_text/2), never kept whole.
max_kept_cells(1048576, 16777216).  % one proof (8 MB), all kept proofs (128 MB)

keep_proof(T, Id) :-
    max_kept_cells(One, All),
    term_size(T, Cells), Cells =< One,
    forget_oldest_kept(Id0),
    flag(sn_kept_cells, C0, C0), C0 + Cells =< All,
    flag(sn_kept_proof, Id0, Id0 + 1), Id is Id0 + 1, Key is Id mod 1024,
    flag(sn_kept_cells, C1, C1 + Cells),
    recordz(Key, kept(Id, Cells, T)).

%  forget_oldest_kept(-Id0): the last id given; the proof to be kept next replaces the one kept 1024
%  decisions ago, if nobody read it.
forget_oldest_kept(Id0) :-
    flag(sn_kept_proof, Id0, Id0), Key is (Id0 + 1) mod 1024,
    forall(recorded(Key, kept(_, _, _), R), erase_kept(R)).

%  sn_drop_kept_proofs: forget every kept proof (unread ones: a benchmark's).
sn_drop_kept_proofs :-
    forall(( current_key(K), integer(K) ), forall(recorded(K, _, R), erase(R))),
    flag(sn_kept_cells, _, 0).

%  sn_kept_cells(-Cells): what the kept proofs hold in all (the tests' view of the bound).
sn_kept_cells(Cells) :- flag(sn_kept_cells, Cells, Cells).

%  sn_thread_stack_limit(+Bytes, -Old): the calling thread's stack limit set to Bytes (its own: the flag is per
%  thread), Old the limit it had, as an atom (engine_thread.py bounds a caller's thread by it).
sn_thread_stack_limit(Bytes, Old) :-
    current_prolog_flag(stack_limit, L),
    set_prolog_flag(stack_limit, Bytes),
    atom_number(Old, L).

limited(G, Limit, R) :- ( call_with_inference_limit(G, Limit, R) -> true ; R = failed ).
