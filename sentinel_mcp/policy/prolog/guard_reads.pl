/*  Part of sentinel_core (included): what each guard's decision may read that another conversation's write
    can change, for the turns writes take (gateway/session_writes.py).

    A guard reads bound facts (each fetched from a tool: an upstream's store, which writes to that upstream
    change) and kept facts (option(kept(...)): established by writes of every conversation). A write is
    decided holding the turn of every upstream its guard may read from, so a write elsewhere that could change
    what it is decided on waits, or is waited for. Walked like unreachable_rules.pl: from the guard's goal,
    through the rulebase's rules and control constructs. Every context/3's and askable's goal is walked with
    every guard (a binding's checks and a context_value/2 read them). A goal the walk cannot follow (a variable,
    a module-qualified goal, fact_provenance/2 of any fact) makes the guard read every bound tool and the kept
    facts: the turn is then wider, never narrower, than what is read.
*/

%  guard_reads(+RB, -Rows): per guard declaration's tool (a name or pattern), the tools of the bindings its
%  decision may read and whether it may read a kept fact
guard_reads(RB, Rows) :-
    findall(N/A-C, ( RB:'$src'(rule, (H :- B), _, _), functor(H, N, A), called_indicator(B, C) ), Pairs0),
    keysort(Pairs0, Pairs), group_pairs_by_key(Pairs, Groups), list_to_assoc(Groups, Calls),
    findall(G, ( decl(RB, context(_, _, G)) ; decl(RB, askable(_, _, choice_of(_, _, G), _)) ), Shared),
    findall(T, decl(RB, guard(T, _, _)), Ts0), sort(Ts0, Ts),
    findall(json([tool=T, reads=Reads, kept=Kept]),
            ( member(T, Ts), findall(G, decl(RB, guard(T, _, G)), Gs0), append(Gs0, Shared, Gs),
              goals_read(RB, Gs, Calls, Reads, Kept) ),
            Rows).

goals_read(RB, Gs, Calls, Reads, Kept) :-
    findall(PI, ( member(G, Gs), called_indicator(G, PI) ), Start),
    empty_assoc(R0), reach(Start, Calls, R0, Reached),
    (   ( member(G, Gs) ; reached_rule_body(RB, Reached, G) ), unfollowed(G)
    ->  findall(BT, decl(RB, binding(_, tool(BT, _), _, _)), Bs), Kept = true
    ;   findall(BT, ( decl(RB, binding(H, tool(BT, _), _, _)), callable(H), functor(H, N, A),
                      get_assoc(N/A, Reached, _) ), Bs),
        ( decl(RB, option(kept(N/A))), get_assoc(N/A, Reached, _) -> Kept = true ; Kept = false )
    ),
    sort(Bs, Reads).

reached_rule_body(RB, Reached, B) :- RB:'$src'(rule, (H :- B), _, _), functor(H, N, A), get_assoc(N/A, Reached, _).

unfollowed(G) :- leaf_goal(G, L), ( var(L) -> true ; L = _:_ -> true ; L = fact_provenance(_, _) ), !.
