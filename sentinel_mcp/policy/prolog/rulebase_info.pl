/*  Part of sentinel_core (included): a loaded rulebase described to Python (its guards, bindings,
    askables, contexts, citations and the tools it names), read off its declarations. */

sn_info(RB, Out) :-
    findall(json([tool=T]), decl(RB, guard(T, _, _)), Guards),
    findall(json([predicate=PN, arity=PA, tool=T, ttl=TTL, fresh_for_writes=F]),
            ( decl(RB, binding(H, tool(T, _), _, O)), functor(H, PN, PA), ttl_opt(O, TTL),
              ( memberchk(fresh_for_writes, O) -> F = true ; F = false ) ), Bindings),
    findall(json([predicate=PN, arity=PA, question=QA, type=TyJ, from=From, ttl=TTL, file=F, line=L]),
            ( RB:'$src'(decl, askable(H, Q, Ty, O), F, L), functor(H, PN, PA), text_to_atom(Q, QA),
              type_json(Ty, TyJ), askable_from(O, From), askable_ttl(O, TTL) ),
            Askables),
    findall(C, ( decl(RB, context(C)) ; decl(RB, context(C, _, _)) ), Cs0), sort(Cs0, Contexts),
    findall(C, decl(RB, context(C, _, _)), Cs1), sort(Cs1, Checked),
    findall(FA, ( decl(RB, seed(F)), term_to_atom(F, FA) ), Seeds),
    findall(OA, ( decl(RB, option(O)), term_to_atom(O, OA) ), Options),
    findall(T, decl(RB, read_only(T)), ReadOnly),
    findall(json([tool=T, args=As]), decl(RB, symbolic_exempt(T, As)), Exempt),
    findall(T, decl(RB, effect(T, _, _)), Effects),
    findall(T, ( decl(RB, effect(T, _, Acts)), is_list(Acts), member(X, Acts), ( X = establish(H) ; X = establish(H, _) ),
                 callable(H), functor(H, N, A), decl(RB, option(kept(N/A))) ), Kept0),
    sort(Kept0, KeptEffects),
    findall(json([name=N, path=PA, file=F, line=L]), ( RB:'$src'(decl, policy_document(N, P), F, L), text_to_atom(P, PA) ),
            Docs),
    guard_reads(RB, GuardReads),
    to_json_atom(json([guards=Guards, bindings=Bindings, askables=Askables, contexts=Contexts,
                       checked_contexts=Checked, seeds=Seeds,
                       options=Options, read_only=ReadOnly, symbolic_exempt=Exempt, effects=Effects,
                       kept_effects=KeptEffects, documents=Docs,
                       guard_reads=GuardReads]), Out).

%  sn_citations(+RB, -Out): every citation (require/3, cites/2) and every requirement without one, with file
%  and line (for the checker's coverage report).
sn_citations(RB, Out) :-
    findall(json([document=D, anchor=AA, reason=WA, file=F, line=L]),
            ( RB:'$src'(Kind, T, F, L), body_of(Kind, T, Body), leaf_or_require(Body, require(_, W, policy_ref(D, A))),
              text_to_atom(A, AA), unmet_text(W, WA) ), Reqs),
    findall(json([document=D, anchor=AA, reason=PA, file=F, line=L]),
            ( RB:'$src'(decl, cites(N/Ar, policy_ref(D, A)), F, L), text_to_atom(A, AA), format(atom(PA), '~w/~w', [N, Ar]) ),
            Cites),
    findall(json([reason=WA, file=F, line=L]),
            ( RB:'$src'(Kind, T, F, L), body_of(Kind, T, Body), leaf_or_require(Body, R),
              ( R = require(_, W) ; R = require(_, W, none) ), unmet_text(W, WA) ), Uncited),
    append(Reqs, Cites, All),
    to_json_atom(json([citations=All, uncited=Uncited]), Out).

text_to_atom(Q, A) :- string(Q), !, atom_string(A, Q).
text_to_atom(Q, Q).

ttl_opt(O, TTL) :- ( memberchk(ttl(T), O) -> ( T == session -> TTL = @(null) ; TTL = T ) ; TTL = 60 ).
askable_from(O, From) :- ( memberchk(from(F), O) -> From = F ; From = [user, agent] ).
%  an answer's time to live: ttl(Seconds), else the session's (null: no expiry)
askable_ttl(O, TTL) :- ( memberchk(ttl(T), O), number(T) -> TTL = T ; TTL = @(null) ).


%  sn_tool_sites(+RB, -Out): where each binding, guard, effect and read_only/1 names a tool (for catalog checks).
sn_tool_sites(RB, Out) :-
    findall(json([kind=binding, tool=T, file=F, line=L]), RB:'$src'(decl, binding(_, tool(T, _), _, _), F, L), Bs),
    findall(json([kind=guard, tool=T, file=F, line=L]), RB:'$src'(decl, guard(T, _, _), F, L), Gs),
    findall(json([kind=effect, tool=T, file=F, line=L]), RB:'$src'(decl, effect(T, _, _), F, L), Es),
    findall(json([kind=read_only, tool=T, file=F, line=L]), RB:'$src'(decl, read_only(T), F, L), Rs),
    append([Bs, Gs, Es, Rs], All), to_json_atom(json([sites=All]), Out).
