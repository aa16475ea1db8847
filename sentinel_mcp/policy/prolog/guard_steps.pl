/*  Part of sentinel_core (included): a guard's top-level conjuncts, and a failure that no answer can mend.

    A pass that assumes a fact (it is fetched, asked or confirmed) goes on with its unknown values, and a
    later goal that fails then says nothing for sure: W == health fails while W is unknown. So a failed pass
    that assumed anything has asked its questions: the person was asked why they cancel a booking the
    guard then denied on its status, which was known all along. Asking for a call that cannot succeed costs
    the person and tells nothing.

    So the top level of a guard's body, A1, ..., An, is proved conjunct by conjunct (guard_body/2; the same
    goals, order, solutions and tree as prove/2's conjunction), each conjunct seen as *clean* or not. A
    conjunct is clean when nothing in it comes from an assumption - no unknown value (an attributed variable),
    no value an unclean conjunct bound (an open value, noted) or an assumed variable took (a tainted value) -
    and its proof assumed nothing (sn_assume_seq did not move): its solutions are exactly what the stored
    facts say, whatever the answers will be. An unclean conjunct's new bindings are open (its outputs may
    differ once the answers are known). An unclean conjunct with no solution may have some once the answers
    are known: the rest of the body is then tried on (speculative/1, its outputs left open, no question
    recorded, the clean conjuncts' look-ups recorded: tools before questions), and if every way on fails at a
    clean conjunct, that failure holds whatever the answers. A pass whose body fails with every failure so
    settled (no open_failure noted) cannot succeed on any answer: its questions, confirmations and look-ups
    are dropped (settled_failure/0), and the call is denied as a plain failure is.

    Only the guard's top level is walked (the compiled rules and prove/2 inside it are unchanged, so the
    compiled and interpreted paths agree); a top-level conjunction nested on the left, ((A, B), C), is one
    conjunct. A top-level requirement that fails on clean inputs without an assumption is unmet, as it is in
    a pass that assumed nothing (tentative only when the assumed values may be why).
*/

%  guard_body(+Goal, -Tree): prove(Goal, Tree), its top-level conjuncts watched.
guard_body(G, T) :- walk_conjuncts(G, T).

walk_conjuncts((A, B), and(TA, TB)) :- !, step(A, TA, B), walk_conjuncts(B, TB).
walk_conjuncts(G, T) :- step(G, T, true).

%  step(+G, -T, +Rest): one conjunct, Rest the conjuncts after it.
step(G, T, Rest) :-
    assume_seq(S0), unmet_seq(U0), clean_term(G, Clean), term_variables(G, Vs), F = found(false),
    (   prove(G, T), nb_setarg(1, F, true),
        (   Clean == true, assume_seq(S0)
        ->  settle_tentative(U0)
        ;   open_vars(Vs)
        )
    ;   arg(1, F, false), cur(assumed, true), \+ ( Clean == true, assume_seq(S0) ),
        ( speculations_left, \+ speculative((G, Rest)) -> true ; note_open_failure ),
        fail
    ).

%  clean_term(+G, -Clean): true when nothing in G comes from an assumption (before any, all is clean).
clean_term(G, Clean) :-
    (   \+ cur(assumed, true) -> Clean = true
    ;   term_attvars(G, []), \+ ( sub_term(A, G), atomic(A), ( cur(tainted, A) ; cur(open_value, A) ) )
    ->  Clean = true
    ;   Clean = false
    ).

assume_seq(S) :- ( nb_current(sn_assume_seq, S0) -> S = S0 ; S = 0 ).
unmet_seq(S) :- ( cur(unmet_seq, S0) -> S = S0 ; S = 0 ).
bump_assume_seq :- assume_seq(S), S1 is S + 1, nb_setval(sn_assume_seq, S1).

%  A top-level requirement of a clean conjunct that failed after an assumption: not tentative, since
%  nothing assumed reached it; unmet, and the pass denied, as in a pass that assumed nothing.
settle_tentative(U0) :-
    forall(( unmet(u(0, S, tentative(W))), S > U0 ),
           ( retract(unmet(u(0, S, tentative(W)))), assertz(unmet(u(0, S, W))), mark_denied )).

%  open_vars(+Vs): what an unclean conjunct bound is open; what it left unbound stays unknown.
open_vars(Vs) :- maplist(open_var, Vs).
open_var(V) :- ( var(V) -> open_unbound(V) ; note_open(V) ).
open_unbound(V) :- ( get_attr(V, sentinel_core, _) -> true ; put_attr(V, sentinel_core, open) ).
note_open(T) :-
    forall(( sub_term(A, T), atomic(A) ), ( cur(open_value, A) -> true ; assertz(cur(open_value, A)) )),
    term_variables(T, Vs), maplist(open_unbound, Vs).

note_open_failure :- ( cur(open_failure, true) -> true ; assertz(cur(open_failure, true)) ).

%  speculations_left: at most 32 speculations a pass (each tries the rest of the body; a body that enumerates
%  many solutions before an unknown would try it once for each): past them a failure stays open, as before.
speculations_left :-
    ( cur(speculations, N) -> true ; N = 0 ), N < 32,
    retractall(cur(speculations, _)), N1 is N + 1, assertz(cur(speculations, N1)).

%  speculative(+Goals): Goals may succeed for all the facts say - the failed conjunct itself, then the rest of
%  the body (the conjunct is tried again, not taken as holding: what it would bind is then open, never a free
%  variable a later W == health fails on, and a question inside a rule it calls, or in one branch of its
%  disjunction, is seen for what it is). A clean goal is proved (its look-ups recorded, as the pass after the
%  answers makes them: its inputs are the same); a rule, a conjunction, a disjunction or an if-then-else is
%  unfolded, each of its goals taken in turn the same way (speculate_step/1); anything else unclean - a negation, a
%  base fact read through an unknown value, a meta-call - is taken as holding, unproved (its outputs open: a
%  look-up it would make may be for a value the answers change). No question recorded (speculating/0), and
%  what failed on the way only after an assumption is not kept (tentative); an error is "may".
speculative(Goals) :-
    unmet_seq(U0),
    setup_call_cleanup(( nb_linkval(sn_speculating, true), nb_setval(sn_unfolds, 0) ),
                       catch(\+ \+ speculate(Goals), E, ( limit_signal(E) -> throw(E) ; true )),
                       nb_linkval(sn_speculating, false)),
    forall(( unmet(u(D, S, tentative(W))), S > U0 ), retract(unmet(u(D, S, tentative(W))))).

speculating :- nb_current(sn_speculating, true).

speculate(true) :- !.
speculate((A, B)) :- !, speculate_step(A), speculate(B).
speculate(G) :- speculate_step(G).

speculate_step(G) :- var(G), !, open_vars([G]).
speculate_step((A, B)) :- !, speculate((A, B)).
speculate_step((C -> T ; E)) :- \+ fails_branch(T), !, speculate_ite(C, T, E).
speculate_step((C -> T)) :- !, speculate((C, T)).
speculate_step((A ; B)) :- \+ A = (_ -> _), \+ A = (_ *-> _), !, ( speculate(A) ; speculate(B) ).
speculate_step(G) :- unfolded_rule(G, RB), !, clause(RB:G, Body), speculate(Body).  % each clause in turn
speculate_step(G) :-
    clean_term(G, Clean), term_variables(G, Vs),
    (   Clean == true
    ->  assume_seq(S0), F = found(false),
        (   prove(G, _), nb_setarg(1, F, true), ( assume_seq(S0) -> true ; open_vars(Vs) )
        ;   arg(1, F, false), \+ assume_seq(S0), open_vars(Vs)
        )
    ;   open_vars(Vs)
    ).

%  The condition of ( C -> T ; E ): when it is clean and its proof assumes nothing, its outcome is what the
%  facts say and only that branch may hold; otherwise either may.
speculate_ite(C, T, E) :-
    clean_term(C, Clean), assume_seq(S0),
    (   Clean == true, ( prove(C, _) -> Held = true ; Held = false ), assume_seq(S0)
    ->  ( Held == true -> speculate(T) ; speculate(E) )
    ;   speculate((C, T)) ; speculate(E)
    ).

%  Below the top level, what proving a goal proves is speculated goal by goal (speculate_step/1): a
%  conjunction as it is, a disjunction as either branch, an if-then-else as the branch its condition picks, a
%  rule as each of its clauses' bodies in turn. unfolded_rule(+G, -RB): G is a rule prove/2 interprets by
%  clause/2 (no cut, not a base predicate, not a declaration), unfolded at most 256 times a speculation (a
%  recursive rule unfolds without end, a rule of many clauses multiplies them), and never called with an
%  unknown value (its clause heads would bind it: noted tainted, it would hold a later question back); past
%  them the goal is taken as holding. A negation, once/1, a soft cut, a requirement are not unfolded: taken as
%  what they are (proved when clean, holding when not).
unfolded_rule(G, RB) :-
    callable(G), \+ control_goal(G),
    query_rb(RB), \+ base(RB, G), functor(G, N, A),
    \+ catch(RB:'$has_cut'(N/A), _, fail), user_pred(RB, G),
    \+ ( term_attvars(G, AVs), member(V, AVs), get_attr(V, sentinel_core, assumed) ),
    nb_getval(sn_unfolds, K), K < 256, K1 is K + 1, nb_setval(sn_unfolds, K1).

control_goal(G) :- functor(G, N, A), memberchk(N/A, [(',')/2, (;)/2, (->)/2, (*->)/2, (\+)/1, call/_]).

%  settled_failure: the pass failed, assumed something, and no failure on the way may be mended by an answer.
settled_failure :- cur(assumed, true), \+ cur(open_failure, true).

%  drop_pending: what a settled failure would have asked or looked up is not needed, and what failed only
%  after an assumption (tentative) may not be why.
drop_pending :- retractall(need(_)), retractall(unmet(u(_, _, tentative(_)))).

%  drop_questions: a denied pass (a top-level requirement broken on facts alone) is denied whatever the answers:
%  what it asked before the denial is not asked (nor offered as the way to unblock it).
drop_questions :- retractall(need(ask(_, _, _, _))), retractall(need(confirm(_, _, _, _))).
