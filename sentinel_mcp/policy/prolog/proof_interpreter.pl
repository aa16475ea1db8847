/*  Part of sentinel_core (included): the meta-interpreter. prove/2 proves a guard's goal and builds
    its proof tree: requirements, confirmations (their texts and digests), a goal looked up once for the
    kind it is (base fact, compiled rule, rule, declaration, allowed builtin).
*/

prove(V, _) :- var(V), !, throw(error(instantiation_error, prove/2)).
prove(true, true) :- !.
prove((A, B), and(TA, TB)) :- !, prove(A, TA), prove(B, TB).
%  A condition is of mixed polarity (fact_terms.pl): its success picks a branch, its first solution binds
%  what follows. Only ( C -> fail ; E ) is a negation of C.
prove((C -> T ; E), Tr) :- fails_branch(T), !, ( negate, prove(C, _) -> fail ; prove(E, Tr) ).
prove((C -> T ; E), Tr) :- !, ( within(mixed, prove(C, TC)) -> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((C *-> T ; E), Tr) :- !, ( within(mixed, prove(C, TC)) *-> prove(T, TT), Tr = if(TC, TT) ; prove(E, Tr) ).
prove((A ; B), T) :- !, ( prove(A, T) ; prove(B, T) ).
prove((C -> T), if(TC, TT)) :- !, ( within(mixed, prove(C, TC)) -> prove(T, TT) ).
prove(\+ G, not(G)) :- !, \+ ( negate, prove(G, _) ).
prove(once(G), T) :- !, once(within(mixed, prove(G, T))).
prove(ignore(G), T) :- !, ( within(mixed, prove(G, T)) -> true ; T = true ).
prove(require(G, Why), T) :- !, prove(require(G, Why, none), T).
prove(require(G, Why, Ref), Tree) :- !,
    aggregate_all(count, need(_), N0), cur(unmet_seq, S0), cur(req_depth, D),
    (   D =:= 0
    ->  % at the top of a guard, a requirement that cannot be evaluated because an earlier one failed or a fact
        % is still unknown (an unbound value reaching arithmetic) is skipped: the pass cannot prove anyway
        catch(with_depth(D, G, T, Ok), E, skipped_on(E, Ok))
    ;   with_depth(D, G, T, Ok)
    ),
    (   Ok == true
    ->  forget_unmet_after(S0), Tree = required(Why, Ref, T)
    ;   Ok == skipped
    ->  Tree = unmet(Why, Ref)
    ;   % a requirement that failed only for want of a fact or an answer is pending, not unmet;
        % after an assumption it may fail only because of the assumed (unknown) values: tentative
        aggregate_all(count, need(_), N1),
        (   N1 =\= N0 -> taint_vars(G)  % what it would have established is unknown, as an assumed fact's values
        ;   cur(assumed, true) -> record_unmet(tentative(cited(Why, Ref)))
        ;   record_unmet(cited(Why, Ref)), ( D =:= 0 -> mark_denied ; true )
        ),
        % at the top of a guard, go on: the other requirements are checked too, so a denial lists every
        % rule the call breaks (a denied pass, or one with something pending, never proves the call)
        D =:= 0, Tree = unmet(Why, Ref)
    ).
prove(confirmed(F, A), T) :- !, prove(confirmed(F, A, [user]), T).
prove(confirmed(F, A, From), T) :- !,
    % the message reads as plain text: JSON values and lists rendered, free text quoted (readable_terms.pl),
    % pending answers named as such
    copy_term(A, A0), readable_args(A0, A1),
    confirmation_text(F, A1, Msg), confirm_text(Msg, From, T).
prove(confirmed_items(H, Items), T) :- !, prove(confirmed_items(H, Items, [user]), T).
prove(confirmed_items(H, Items, From), T) :- !,
    % the text is made here (its values already readable): not read again as one quoted value
    items_text(H, Items, Text), confirm_text(Text, From, T).
prove(fact_provenance(G, P), fact(G, P)) :- !, fact_provenance(G, P).
prove(context_value(N, V), T) :- !, checked_context(N, V, T).  % bound_contexts.pl: while its check holds
prove(call_tool_name(T), call_tool(T)) :- !, cur(call, T, _, _).
prove(G, T) :- query_rb(RB), prove_goal(RB, G, T).

confirm_text(Msg, From, confirmed(Msg, P)) :-
    ( cur(call, Tool, Digest, Version) -> true ; throw(error(domain_error(guard_context, confirmed/3), _)) ),
    % a yes counts only for the very text it was given to: what the user is shown is what will happen
    shown_digest(Msg, Shown),
    (   valid_fact('$confirmed'(Tool, Digest, Version, Shown, Ans), P), memberchk(P, From)
    ->  ( Ans == yes -> true ; record_unmet(declined(Msg)), fail )
    ;   ( cur(assumed, true) ; denied )
    ->  % a confirmation is asked only once everything it shows is established and nothing is refused:
        % never together with the questions whose answers it would state
        assume(Msg), P = assumed
    ;   % a yes of this call to another text (what it shows changed since): asked again, saying so
        (   valid_fact('$confirmed'(Tool, Digest, Version, Other, yes), OP), memberchk(OP, From), Other \== Shown
        ->  Changed = @(true)
        ;   Changed = @(false)
        ),
        record_need(confirm(Msg, Shown, Changed, From)), assume(Msg), P = assumed
    ).

%  A goal that is no control construct: the rulebase is looked up once for all the kinds it may be.
prove_goal(RB, G, fact(G, P)) :- base(RB, G), !, base_solve(RB, G, P).
prove_goal(RB, G, native(G)) :- functor(G, N, A), undefined_fails(RB:'$has_cut'(N/A)), !, within(mixed, RB:G).
prove_goal(RB, G, T) :- compiled_rule(RB, G, T, Call), !, call(Call).  % rule_compiler.pl
prove_goal(RB, G, rule(G, T)) :- user_pred(RB, G), !, clause(RB:G, Body), prove(Body, T).
prove_goal(RB, G, decl(G)) :- functor(G, N, A), decl_indicator(N/A), !, call(RB:G).
prove_goal(RB, G, builtin(G)) :-
    (   runtime_allowed(RB, G)
    ->  builtin_call(RB, G)
    ;   functor(G, N, A), throw(error(permission_error(call, builtin, N/A), _))
    ).

%  builtin_call(+RB, +G): an allowed builtin. A meta-call that holds exactly when a goal has no solution is
%  proved as that negation (forall(C, A) is SWI-Prolog's \+ (C, \+ A)), its goals under the other polarity;
%  any other meta-call runs natively, of mixed polarity (its result may be used either way). The compiled
%  rules call it too (rule_compiler.pl), so both paths agree.
builtin_call(RB, G) :- unfollowed, !, call(RB:G).  % no unsure fact to see (fact_terms.pl)
builtin_call(_, G) :- absence_form(G, A), !, prove(\+ A, _).
builtin_call(RB, G) :- meta_builtin(G), !, within(mixed, RB:G).
builtin_call(RB, G) :- call(RB:G).

%  absence_form(+G, -A): G succeeds exactly when A has no solution (and binds nothing).
absence_form(forall(C, A), (C, \+ A)).
absence_form(findall(_, G, L), G) :- L == [].
absence_form(aggregate_all(count, G, N), G) :- N == 0.
absence_form(aggregate_all(bag(_), G, L), G) :- L == [].
absence_form(aggregate_all(set(_), G, L), G) :- L == [].

meta_builtin(G) :- functor(G, N, A), memberchk(N/A, [forall/2, findall/3, findall/4, aggregate_all/3, bagof/3, setof/3]).

fails_branch(T) :- T == fail.
fails_branch(T) :- T == false.

%  undefined_fails(:G): G, failing if its predicate is not defined (a module loaded without sn_finish_load/1);
%  a catch of that error only, so that a limit reached in a proof is never caught on the way.
undefined_fails(G) :- catch(G, error(existence_error(procedure, _), _), fail).

cur(call, T, D, V) :- nb_getval(sn_query, q(_, _, _, c(T, D, V), _)).

%  shown_digest(+Msg, -Hex): SHA-256 of a confirmation's text (UTF-8), in hex: what a '$confirmed' fact names
%  (questions.py keys the question by it, answer_facts.py stores it). Every decision of a confirmed call digests
%  its text again, and library(sha)'s hex conversion runs in Prolog (~35 us a text): the digests of the last
%  few thousand texts (atoms, at most 2,048 characters) are kept, found by the text itself (a pure function).
:- dynamic shown_memo/2.
shown_digest(Msg, Hex) :- atom(Msg), shown_memo(Msg, Hex0), !, Hex = Hex0.
shown_digest(Msg, Hex) :-
    sha_hash(Msg, H, [algorithm(sha256), encoding(utf8)]), hash_atom(H, Hex),
    ( atom(Msg), atom_length(Msg, L), L =< 2048 -> keep_memo(sn_shown_memo, shown_memo(Msg, Hex)) ; true ).

%  keep_memo(+Flag, +Entry): assert Entry into its memo (a dynamic predicate of this module), emptied when it
%  has held 4,096 entries since the last time (Flag counts them): q_memo/3, shown_memo/2, segments_memo/2.
keep_memo(Flag, Entry) :-
    flag(Flag, N, N + 1),
    (   N >= 4096
    ->  functor(Entry, Name, Arity), functor(Any, Name, Arity), retractall(Any), flag(Flag, _, 1)
    ;   true
    ),
    assertz(Entry).

%  The text a confirmation shows: format/3 of its template, which for '~w' and one text (confirmed_items/3:
%  readable/2 gives atoms) is that text itself, the same atom without format/3 (a cost on every allow).
confirmation_text(F, A, Msg) :- F == '~w', A = [T], atom(T), !, Msg = T.
confirmation_text(F, A, Msg) :-  % a template checked at load; never run unchecked (goal_check.pl)
    (   safe_format(F) -> formatted_numbers(F, A), bounded_format(atom(Msg), F, A)
    ;   throw(error(domain_error(safe_text_template, F), _))
    ).

%  An error in a requirement after the pass was denied or assumed something skips it; not in a capped pass
%  (sn_decide_capped/10), where an error may be one the cap caused: that pass is decided again with the whole
%  limit. A limit reached is never skipped: SWI-Prolog raises it once, and a pass that caught it would go on
%  with no limit at all (a later looping requirement then never ended, and the engine with it).
skipped_on(E, Ok) :-
    (   \+ limit_signal(E), ( denied ; cur(assumed, true) )
    ->  ( nb_current(sn_capped, true) -> throw(sn_over_cap) ; Ok = skipped )
    ;   throw(E)
    ).

limit_signal(E) :- atom(E), memberchk(E, [inference_limit_exceeded, time_limit_exceeded, sn_over_cap, sn_native_abort]).

%  Prove G one requirement deeper (nesting tells how specific a broken rule is); Ok is true or false.
with_depth(D, G, T, Ok) :-
    D1 is D + 1, set_depth(D1),
    catch(( prove(G, T) -> Ok = true ; Ok = false ), E, ( set_depth(D), throw(E) )),
    set_depth(D).
set_depth(D) :- retractall(cur(req_depth, _)), assertz(cur(req_depth, D)).

user_pred(RB, G) :- predicate_property(RB:G, dynamic), \+ predicate_property(RB:G, imported_from(_)),
    functor(G, N, A), \+ decl_indicator(N/A).
