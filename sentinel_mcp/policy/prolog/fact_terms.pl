/*  Part of sentinel_core (included): facts from tool results, effects, and the session mirror
    of the fact store. */

% ---------------------------------------------------------------- the session's facts

%  A session module holds its facts as '$fact'(Name, Key, Fact, Expires, Provenance): Name is the fact's
%  predicate name and Key its first argument ([] for an atom). A lookup binds what it knows of both, so
%  SWI-Prolog's plain argument indexes find a reservation's facts among 100k others; with the fact alone as
%  the first argument it relied on a deep index whose argument the JIT picks once, from the first calls, and
%  a later lookup by another argument scanned every fact of the predicate.
%  The facts of each name are stored in a table of their own ('$fact <i>'/4: Key, Fact, Expires, Provenance),
%  and '$fact'/5 is one clause per name calling its table. With every fact in '$fact'/5, a look-up by name
%  alone (current_time(T): no key) went through the JIT's index of names, a hash of ~32 buckets however many
%  facts, and walked every fact of any name in its bucket: current_time 76 us against 0.4 when it shared one
%  with 50k reservation_leg facts, and which names share a bucket follows the order atoms were made, so any
%  source change could flip it (guard_ab.py). Now such a walk passes the other names' calling clauses only.
stored_fact(S, G, Exp, P) :- fact_key(G, N, K), S:'$fact'(N, K, G, Exp, P).

assert_fact(S, F, Exp, P) :-
    fact_key(F, N, K),
    ( N == '$unsure', \+ S:'$unsure_held' -> assertz(S:'$unsure_held') ; true ),  % the mark first
    (   fact_table(S, N, T)
    ->  C =.. [T, K, F, Exp, P], assertz(S:C)
    ;   assertz(S:'$fact'(N, K, F, Exp, P))  % past the bound of tables: in '$fact'/5 itself, read as every fact
    ).

%  A session's tables are bounded: a table stays until its session is dropped, so names a rulebase makes from
%  what it reads (a fact's functor taken from a tool's result), taught and removed in turn, would otherwise
%  add predicates without end while the facts themselves stay within their bounds.
max_fact_tables(1024).

%  fact_table(+S, +N, -T): the table of S's facts named N, made (with its clause of '$fact'/5) on first use,
%  once whatever threads store at the same time; fails past max_fact_tables/1. Tables are numbered, not named
%  after N: 5 and '5' are two names.
fact_table(S, N, T) :-
    (   fact_table_of(S, N, T0)
    ->  T = T0
    ;   with_mutex(sn_fact_tables, new_fact_table(S, N, T))
    ).

new_fact_table(S, N, T) :-
    (   fact_table_of(S, N, T0)
    ->  T = T0
    ;   dynamic(S:'$fact_table'/2),  % a module given '$fact'/5 by anything but new_session_module/1
        aggregate_all(count, S:'$fact_table'(_, _), I), max_fact_tables(Max), I < Max,
        format(atom(T), '$fact ~d', [I]),
        dynamic(S:T/4), Body =.. [T, K, G, Exp, P],
        assertz(S:('$fact'(N, K, G, Exp, P) :- Body)),  % before the table is listed: a reader finds it empty
        assertz(S:'$fact_table'(N, T))
    ).

%  fact_table_of(+S, ?N, ?T): the tables S has (none in a module not made a session's by new_session_module/1
%  that holds no fact stored by assert_fact/4).
fact_table_of(S, N, T) :- current_predicate(S:'$fact_table'/2), S:'$fact_table'(N, T).

%  retract_stored(+S, ?N, ?K, ?G, ?P): retractall/1 of the matching facts, in every table when N is unbound,
%  and of any in '$fact'/5 itself (put there by nothing of Sentinel's; retract/1 of a head leaves the calling
%  clauses, which have bodies).
retract_stored(S, N, K, G, P) :-
    forall(fact_table_of(S, N, T), ( C =.. [T, K, G, _, P], retractall(S:C) )),
    forall(retract(S:'$fact'(N, K, G, _, P)), true).

retract_facts(S, G) :- fact_key(G, N, K), retract_stored(S, N, K, G, _), unsure_held_after(S, N).

%  S:'$unsure_held' is there while the session may hold an unsure fact (set by assert_fact/4, the only way one
%  is stored; dropped when a removal leaves none): begin_query/4 asks it instead of '$fact'('$unsure', ...),
%  whose look-up by the first argument alone went through the JIT's few-bucket index of fact names and, when
%  '$unsure' shared a bucket with a name of 50k facts, walked them all on every decision (71 us against 0.8,
%  guard_ab.py: which names share a bucket follows the order atoms were made, so any new source file could
%  flip it). A mark left over only makes a decision look for unsure facts it will not find; a missing one would
%  hide them, so it is set with the fact and dropped only after a look shows none is left.
unsure_held_after(S, N) :-
    (   ( var(N) ; N == '$unsure' ), S:'$unsure_held', \+ S:'$fact'('$unsure', _, _, _, _)
    ->  retractall(S:'$unsure_held')
    ;   true
    ).

fact_key(G, N, K) :-
    (   var(G) -> true
    ;   compound(G) -> compound_name_arity(G, N, _), arg(1, G, K)
    ;   N = G, K = []
    ).

% ---------------------------------------------------------------- facts a write may have established

%  What a write whose outcome is unknown would have established is stored as '$unsure'(Fact): it may have
%  happened, or not. Such a fact counts only where its presence can only deny: a goal of negative polarity,
%  under an odd number of negations (retail.pl's "items modified only once"); elsewhere it is absent, so it
%  never grants (airline.pl's certificate after a change). The polarity of the goal being proved is the
%  global sn_negated: false (positive), true (negative) or mixed (neither: an if-then-else's condition, a
%  collection whose result is used later, a goal run natively - where more solutions may grant as well as
%  deny; it stays mixed under any negation). The negations are \+ G, ( G -> fail ; E ), forall(C, A)
%  (\+ (C, \+ A)), findall(_, G, []) and aggregate_all(count, G, 0) (proof_interpreter.pl).
unsure_fact(S, G, Now, P) :- S:'$fact'('$unsure', G, '$unsure'(G), Exp, P), Exp > Now.

negated :- nb_current(sn_negated, true).

%  Entering a negation: its goal is proved under the other polarity (backtrackable: \+ undoes it on the way
%  out; within/2 restores it after a goal that succeeded).
negate :-
    ( nb_current(sn_negated, P) -> true ; P = false ),
    ( P == off -> true ; flipped(P, Q), b_setval(sn_negated, Q) ).

flipped(false, true).
flipped(true, false).
flipped(mixed, mixed).

%  within(+Polarity, :G): G proved under Polarity (mixed: an unsure fact is absent there, whatever encloses
%  it), the polarity around it restored after each solution and on backtracking into it.
%  (off: a session without unsure facts, begin_query/4; G runs as it is.)
within(P, G) :-
    ( nb_current(sn_negated, P0) -> true ; P0 = false ),
    (   P0 == off
    ->  call(G)
    ;   b_setval(sn_negated, P), call(G), b_setval(sn_negated, P0)
    ).

%  unfollowed: the polarity is off (begin_query/4), so a meta-call runs natively, as it did before polarity.
unfollowed :- nb_current(sn_negated, off).

% ---------------------------------------------------------------- facts from tool results

%  sn_extract(+RB, +Tool, +ArgsJson, +ResultJson, -Out): facts (and fetched markers) the bindings of
%  Tool yield for this call and result; Out's "unreadable" names (Name/Arity) the bindings it could not
%  be read for. Such a binding gets no fetched marker: its facts stay unknown, never "looked up, nothing
%  there" (which a negation would turn into a permission), and the fetch counts as failed (solver.py).
sn_extract(RB, Tool, ArgsJson, ResultJson, Out) :-
    from_result_json(ResultJson, Result),  % JSON null apart from "null", a text "true" apart from true
    sn_extract_term(RB, Tool, ArgsJson, Result, Term),
    to_json_atom(Term, Out).

%  sn_extract_term(+RB, +Tool, +ArgsJson, +Result, -Term): sn_extract/5 given the result as the term its JSON
%  text reads as, answering the term of its JSON (PrologCall.json_call builds the one and reads the other in C
%  from and into Python's values: no text written and parsed on either side).
%  A result whose reading takes more than extract_limit/2 inferences (by default an upstream's answer of some
%  20,000 items; the airline reservation takes ~2,400) is not read at all: every binding of the call is
%  unreadable (its facts stay unknown, the fetch fails) and Term says too_large=Limit. The engine thread reads
%  for every session; an answer of any size must not hold the guard's decisions up for seconds.
sn_extract_term(RB, Tool, ArgsJson, Result, Term) :-
    from_call_json(ArgsJson, json(CallArgs)),
    extract_limit(RB, Limit),
    call_with_inference_limit(
        findall(I, ( RB:binding(H, tool(Tool, BArgs), extract(Ex), O), same_args(BArgs, CallArgs),
                     binding_items(H, BArgs, Ex, O, Tool, Result, Is), member(I, Is) ),
                Items),
        Limit, R),
    (   R \== inference_limit_exceeded
    ->  findall(J, member(fact(J), Items), Facts0),
        list_to_set(Facts0, Facts),
        findall(NA, member(unreadable(NA), Items), Unreadable0),
        list_to_set(Unreadable0, Unreadable),
        Term = json([facts=Facts, unreadable=Unreadable])
    ;   findall(NA, ( RB:binding(H, tool(Tool, BArgs), _, _), same_args(BArgs, CallArgs),
                      binding_name(H, NA) ), Unreadable0),
        list_to_set(Unreadable0, Unreadable),
        Term = json([facts=[], unreadable=Unreadable, too_large=Limit])
    ).

%  sn_absent(+RB, +Tool, +ArgsJson, +Text, -Out): for a call of Tool answered with an error whose text is Text,
%  the fetched markers (and no fact) of its bindings for which that error says "nothing there" (a user not
%  found), so a proof goes on to its next source: absent_on_error takes any error so, absent_on_error(Texts)
%  only an error whose text is one of Texts (the upstream's own "not found", as its API writes it; any other
%  error, the store busy or failing, says nothing about what is there). The error's text is only compared,
%  never read into a fact (a hostile upstream's error establishes no fact); the other bindings of Tool get
%  nothing (their facts stay unknown: a failed look-up).
sn_absent(RB, Tool, ArgsJson, Text, Out) :-
    from_call_json(ArgsJson, json(CallArgs)),
    findall(I, ( RB:binding(H, tool(Tool, BArgs), _, O), absent_on(O, Text), same_args(BArgs, CallArgs),
                 fetched_marker(H, Tool, BArgs, M), ground(M), ttl_opt(O, TTL), fact_item(TTL, M, I) ), Items),
    findall(J, member(fact(J), Items), Facts0), list_to_set(Facts0, Facts),
    to_json_atom(json([facts=Facts, unreadable=[]]), Out).

absent_on(O, _) :- memberchk(absent_on_error, O), !.
absent_on(O, Text) :-
    memberchk(absent_on_error(Ts), O), is_list(Ts), atom_string(Text, S), member(T, Ts), atom_string(T, S), !.

%  extract_limit(+RB, -Limit): the rulebase's option(extract_inference_limit(N)) (for tools whose answers
%  are long lists: its loader refuses anything but a positive integer), else 1,000,000 inferences.
extract_limit(RB, Limit) :-
    (   RB:option(extract_inference_limit(N)), integer(N), N > 0
    ->  Limit = N
    ;   extract_inference_limit(Limit)
    ).

extract_inference_limit(1000000).

%  binding_items(+Head, +BArgs, +Extractions, +Options, +Tool, +Result, -Items): what one binding yields, each
%  read once: fact(Json) for its fetched marker and each ground fact extracted, or unreadable(Name/Arity).
%  A pointer into something needs a JSON object or array to walk (a plain text, a bare string or number, or
%  no content holds no field: its absence says nothing); with the option required, the result must also
%  yield at least one fact for it (a field renamed, missing or null is then unknown, not absent).
binding_items(H, BArgs, Ex, O, Tool, Result, Items) :-
    (   walkable(Ex, Result),
        findall(F, ( extract_fact(H, Ex, Result, F), ground(F) ), Fs),
        ( memberchk(required, O) -> Fs \== [] ; true )
    ->  ttl_opt(O, TTL),
        ( fetched_marker(H, Tool, BArgs, M), ground(M) -> All = [M|Fs] ; All = Fs ),
        maplist(fact_item(TTL), All, Items)
    ;   binding_name(H, NA), Items = [unreadable(NA)]
    ).

binding_name(H, NA) :- functor(H, N, A), format(atom(NA), '~w/~w', [N, A]).

walkable(Ex, Result) :-
    (   ( Result = json(_) ; is_list(Result) ) -> true
    ;   forall(member(_ = P, Ex), ( P = key(P1) -> root_pointer(P1) ; root_pointer(P) ))
    ).

fact_item(TTL, F, fact(json([fact=FA, predicate=N, args=JArgs, ttl=TTL]))) :-
    F =.. [N|As], maplist(pl_json, As, JArgs), format(atom(FA), '~q', [F]).

root_pointer(P) :- pointer_segments(P, []).

same_args(BArgs, CallArgs) :-
    length(BArgs, N), length(CallArgs, N),
    forall(member(K = _, CallArgs), memberchk(K = _, BArgs)),
    bind_args(BArgs, CallArgs).

%  each of the binding's K = V takes the call's value of K (a helper, not a lambda: yall copies a lambda's
%  term on every call)
bind_args([], _).
bind_args([K = V|T], CallArgs) :- memberchk(K = V, CallArgs), bind_args(T, CallArgs).

%  A field that is JSON null yields no fact (null is "not there", as an absent field).
extract_fact(H, Ex, Result, H) :- foldl(extract_one(Result), Ex, [], _), \+ ( arg(_, H, V), V == @(null) ).

extract_one(Result, V = key(Ptr), Env0, Env) :- !,
    pointer_segments(Ptr, Segs), walk(Segs, [], Result, Env0, Env, _, LastKey), key_value(LastKey, V).
extract_one(Result, V = Ptr, Env0, Env) :-
    pointer_segments(Ptr, Segs), walk(Segs, [], Result, Env0, Env, V, _).

%  A member's name is a text the upstream wrote (kept an atom in the term, where pointers find it): one
%  spelling a literal is a string, as a value spelling it is (from_result_json/2).
key_value(K, V) :- ( atom(K), literal_text(K) -> atom_string(K, V) ; V = K ).

%  A binding's pointers are a rulebase's few atoms, split on every extraction (a result's ~40 walks): their
%  segments are kept (keep_memo/2 bounds the memo).
:- dynamic segments_memo/2.
pointer_segments(Ptr, Segs) :-
    (   atom(Ptr), segments_memo(Ptr, S0)
    ->  Segs = S0
    ;   atomic_list_concat(Parts, '/', Ptr), exclude(==(''), Parts, Segs),
        ( atom(Ptr) -> keep_memo(sn_segments_memo, segments_memo(Ptr, Segs)) ; true )
    ).

%  walk(+Segs, +Prefix, +Json, +Env0, -Env, -Value, -LastStarKey); Env maps star prefixes to the key and the
%  element chosen there (zip). A prefix is the list of the segments walked, last first (no atom made for each
%  step); with the stars before it fixed it names one place in the result, so a second pointer through the
%  same star takes the element found by the first: finding it again by its index (nth0/3) made an array of n
%  items cost n^2/2 steps (100,000 items: two minutes of the engine thread).
walk([], _, V, Env, Env, V, none).
walk(['*'|Segs], Prefix, J, Env0, Env, V, Key) :- !,
    P2 = ['*'|Prefix],
    (   memberchk(P2 - K0 - E0, Env0)
    ->  E = E0, Env1 = Env0
    ;   element(J, K0, E), Env1 = [P2 - K0 - E|Env0]
    ),
    walk(Segs, P2, E, Env1, Env, V, Key1),
    ( Key1 == none -> Key = K0 ; Key = Key1 ).
walk([S|Segs], Prefix, J, Env0, Env, V, Key) :-
    child(J, S, E),
    walk(Segs, [S|Prefix], E, Env0, Env, V, Key).

element(L, I, E) :- is_list(L), !, nth0(I, L, E).
element(json(KVs), K, V) :- member(K = V, KVs).

child(json(KVs), S, V) :- !, memberchk(S = V, KVs).
child(L, S, V) :- is_list(L), atom_number(S, I), integer(I), nth0(I, L, V).

% ---------------------------------------------------------------- effects, facts, matching

%  sn_effects(+RB, +Tool, +ArgsJson, -Out): patterns (as text) to invalidate after a completed call.
sn_effects(RB, Tool, ArgsJson, Out) :-
    from_call_json(ArgsJson, json(CallArgs)),
    findall(PA, ( RB:effect(T, Pat, Acts), tool_matches(T, Tool), match_args_quiet(Pat, CallArgs),
                  member(invalidate(P), Acts), format(atom(PA), '~q', [P]) ), L),
    to_json_atom(json([invalidate=L]), Out).

%  sn_effect_actions(+RB, +Session, +Tool, +ArgsJson, +Now, -Out): the patterns to invalidate and the facts
%  to establish after a completed call. establish(Head) stores Head once the call's arguments ground it;
%  establish(Head, Cond) stores Head for each way the conjunction Cond of base facts holds in the session
%  *before* this call's invalidations (so a write can record what it is about to replace).
sn_effect_actions(RB, Session, Tool, ArgsJson, Now, Out) :-
    ensure_session(Session), from_call_json(ArgsJson, json(CallArgs)),
    findall(Acts, ( RB:effect(T, Pat, Acts), tool_matches(T, Tool), match_args_quiet(Pat, CallArgs) ), ActLists),
    append(ActLists, All),
    findall(PA, ( member(invalidate(P), All), format(atom(PA), '~q', [P]) ), Inv),
    findall(FA, ( member(X, All), establish_instance(X, Session, Now, H), ground(H), format(atom(FA), '~q', [H]) ), Est0),
    list_to_set(Est0, Est),
    to_json_atom(json([invalidate=Inv, establish=Est]), Out).

establish_instance(establish(H), _, _, H).
establish_instance(establish(H, Cond), Session, Now, H) :- effect_cond(Cond, Session, Now).

effect_cond((A, B), S, Now) :- !, effect_cond(A, S, Now), effect_cond(B, S, Now).
effect_cond(L, S, Now) :- callable(L), stored_fact(S, L, Exp, _), Exp > Now.

match_args_quiet(Pat, CallArgs) :- catch(( retractall(unmet(_)), match_args(Pat, CallArgs) ), _, fail).

%  sn_assert(+Session, +FactAtom, +Expires, +Prov)
sn_assert(Session, FactAtom, Exp, Prov) :-
    ensure_session(Session), term_to_atom(F, FactAtom), mirrored_fact(F),
    retract_facts(Session, F), assert_fact(Session, F, Exp, Prov).

%  mirrored_fact(+F): F may be kept in a session's mirror: a ground fact, or an error (the whole mirror of the
%  texts given is refused, none of them kept). Guards, the secret walk and the store's look-ups take every fact
%  to be ground: admin(_) held for anyone (and its retract_facts/2 first removed every admin fact).
mirrored_fact(F) :- callable(F), ground(F), !.
mirrored_fact(F) :- format(atom(M), '~k', [F]), domain_error(ground_fact, M).

%  ground_fact_text(+F, -Text): the text the store keeps of the ground fact F (writeq's), only where it reads
%  back ground: writeq writes '$VAR'(N) as a variable's name, so admin('$VAR'(1)) was kept as admin(B) and
%  mirrored as admin(_).
ground_fact_text(F, C) :- format(atom(C), '~q', [F]), term_to_atom(F2, C), ground(F2).

%  written_as_variable(+T): T holds a term writeq writes as a variable (for the loader's errors)
written_as_variable(T) :- sub_term(S, T), compound(S), compound_name_arity(S, '$VAR', 1), !.

%  sn_assert_all(+Session, +Facts): sn_assert of each f(FactAtom, Expires, Prov) of the list, in order, in one
%  call (a read tool's result teaches a few dozen facts at once: one query, not one each).
sn_assert_all(Session, Facts) :-
    ensure_session(Session),
    maplist(given_fact, Facts, Fs),
    forall(member(f(F, _, _), Fs), mirrored_fact(F)),  % every one first: none kept of a list that has one not
    forall(member(f(F, Exp, Prov), Fs), ( retract_facts(Session, F), assert_fact(Session, F, Exp, Prov) )).

given_fact(f(FactAtom, Exp, Prov), f(F, Exp, Prov)) :- term_to_atom(F, FactAtom).

%  sn_retract_observed(+Session, +FactAtoms): remove each fact (exact text) where it is an observed one (a newer
%  answer of the read that taught it no longer says it: read_sources.py).
sn_retract_observed(Session, FactAtoms) :-
    ensure_session(Session),
    forall(member(FA, FactAtoms),
           ( term_to_atom(F, FA), fact_key(F, N, K), retract_stored(Session, N, K, F, observed),
             unsure_held_after(Session, N) )).

%  sn_retract(+Session, +PatternAtom, -Out): remove matching facts, return them (as text).
sn_retract(Session, PatternAtom, Out) :-
    ensure_session(Session), term_to_atom(P, PatternAtom),
    findall(FA, ( stored_fact(Session, P, _, _), format(atom(FA), '~q', [P]) ), L0), list_to_set(L0, L),
    retract_facts(Session, P),
    to_json_atom(json([removed=L]), Out).

%  sn_take_confirmation(+Session, +Tool, +Digest, +Version, -Out): remove the confirmations of this very call,
%  whatever text each was given to (Out: {"taken": their fact texts, [] when none}). Every one goes: the proof
%  stood on one of them, and retract/1 is atomic, so of two calls proved on one confirmation exactly one takes
%  it (guard.py: the other decides again); a call never takes a yes it did not stand on and leaves its own.
sn_take_confirmation(Session, Tool, Digest, Version, Out) :-
    ensure_session(Session),
    G = '$confirmed'(Tool, Digest, Version, _, yes),
    findall(T, ( confirmation_taken(Session, Tool, G), format(atom(T), '~q', [G]) ), Ts),
    to_json_atom(json([taken=Ts]), Out).

confirmation_taken(S, Tool, G) :-
    (   fact_table_of(S, '$confirmed', Table), C =.. [Table, Tool, G, _, _], retract(S:C)
    ;   retract(S:'$fact'('$confirmed', Tool, G, _, _))  % as retract_stored/5
    ).

sn_drop_session(Session) :-
    (   current_predicate(Session:'$fact'/5)
    ->  retract_stored(Session, _, _, _, _), retractall(Session:'$fact'(_, _, _, _, _)),
        ( current_predicate(Session:'$fact_table'/2) -> retractall(Session:'$fact_table'(_, _)) ; true ),
        retractall(Session:'$unsure_held'),
        (   module_property(Session, class(temporary))  % made by new_session_module/1
        ->  flag(sn_sessions_dropped, N, N + 1),  % before it goes: no thread trusts its memory of it after
            '$destroy_module'(Session)
        ;   true
        )
    ;   true
    ).

%  sn_fact_json(+FactAtom, -Out): predicate name and JSON args of a fact text (for the store).
sn_fact_json(FactAtom, Out) :-
    term_to_atom(F, FactAtom), callable(F), ground(F), F =.. [N|As], maplist(pl_json, As, J),
    ground_fact_text(F, C), to_json_atom(json([fact=C, predicate=N, args=J]), Out).

%  sn_purge(+Session, +Now): drop expired facts from the mirror.
sn_purge(Session, Now) :- ensure_session(Session),
    forall(( fact_table_of(Session, _, T), C =.. [T, _, _, Exp, _], Session:C, Exp =< Now ), retract(Session:C)),
    forall(( clause(Session:'$fact'(N, K, F, Exp, P), true), Exp =< Now ), retract(Session:'$fact'(N, K, F, Exp, P))),
    unsure_held_after(Session, _).

%  sn_fact_from_json(+N, +ArgsJson, -FactAtom): rebuild a fact text from predicate + JSON args (a text spelling
%  a literal a string, as sn_fact_json/2 wrote it).
sn_fact_from_json(N, ArgsJson, FactAtom) :-
    from_call_json(ArgsJson, As), F =.. [N|As], format(atom(FactAtom), '~q', [F]).


%  sn_mirror(+Session, +Text, -Out): sn_assert_lines/2 answering an empty JSON object, for a direct call
%  (PrologCall).
sn_mirror(Session, Text, '{}') :- sn_assert_lines(Session, Text).

%  sn_assert_lines(+Session, +Text): one fact per line, "FactText<TAB>Expires<TAB>Prov" (bulk loading).
sn_assert_lines(Session, Text) :-
    ensure_session(Session),
    split_string(Text, "\n", "", Lines),
    exclude(==(""), Lines, Given),
    maplist(fact_line, Given, Fs),  % a line that is no fact fails the whole, as before: never skipped
    forall(member(f(F, _, _), Fs), mirrored_fact(F)),
    forall(member(f(F, E, P), Fs), ( retract_facts(Session, F), assert_fact(Session, F, E, P) )).
fact_line(L, f(F, E, P)) :-
    split_string(L, "\t", "", [FS, ES, PS]), term_string(F, FS), number_string(E, ES), atom_string(P, PS).

%  sn_invalidate(+RB, +Session, +PatternAtom, -Out): remove matching facts and the fetch markers of the
%  bindings that establish them, so the next proof fetches them again.
sn_invalidate(RB, Session, PatternAtom, Out) :-
    ensure_session(Session), term_to_atom(P, PatternAtom),
    findall(M, ( RB:binding(B, tool(T, Args), _, _), copy_term(B-Args, P1-Args1), P1 = P,
                 fetched_marker(P, T, Args1, M) ), Markers),
    findall(FA, ( ( F = P ; member(F, Markers) ), stored_fact(Session, F, _, _), format(atom(FA), '~q', [F]) ), L0),
    list_to_set(L0, L),
    retract_facts(Session, P),
    forall(member(M, Markers), retract_facts(Session, M)),
    to_json_atom(json([removed=L]), Out).
