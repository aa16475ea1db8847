/*  Part of sentinel_core (included): the JSON terms of an answer. Needs, unmet conditions and
    violations, the values of terms and the proof tree.
*/

add_needs(json(L), json(L2)) :-  % nothing needed nor unmet (every allow): no findall over empty tables
    \+ need(_), \+ unmet(_), !,
    append(L, [needs=[], unmet=[], tentative=[], violations=[]], L2).
add_needs(json(L), json(L2)) :-
    findall(N, ( need(N0), need_json(N0, N) ), Needs),
    findall(k(D1, S)-U0, ( unmet(u(D, S, U0)), U0 \= tentative(_), D1 is -D ), Us0), keysort(Us0, Us),
    findall(U, ( member(_-U0, Us), unmet_text(U0, U) ), Unmet),
    findall(V, ( member(_-U0, Us), violation_json(U0, V) ), Violations),
    findall(U, ( unmet(tentative(U0)), unmet_text(U0, U) ), Tentative),
    append(L, [needs=Needs, unmet=Unmet, tentative=Tentative, violations=Violations], L2).

unmet_text(declined(M), U) :- !, format(atom(U), 'declined: ~w', [M]).
unmet_text(cited(W, _), U) :- !, unmet_text(W, U).
unmet_text(dont_know(Q, Next, _), U) :- !,
    ( Next == '' -> format(atom(U), 'You answered "I don\'t know" to: ~w', [Q]) ; text_to_atom(Next, U) ).
unmet_text(no_choices(_, Q), U) :- !, format(atom(U), 'There is nothing to choose from for the question: ~w', [Q]).
unmet_text(not_a_choice(_, V, Q), U) :- !,
    readable(V, VT), format(atom(U), '~w is not one of the choices for: ~w', [VT, Q]).
unmet_text(unknown_outcome(G), U) :- !,  % unknown_outcomes.pl
    readable(G, GT), format(atom(U), 'the outcome of an earlier call is unknown: ~w may have been written', [GT]).
unmet_text(W, U) :- ( atom(W) -> U = W ; string(W) -> atom_string(U, W) ; format(atom(U), '~q', [W]) ).

%  A broken rule with its citation (the policy document and the anchor of the sentence it formalises).
%  A "don't know" names the answer it forgets (the call ends with its next step; the next call asks again).
violation_json(U0, json(J)) :-
    unmet_text(U0, R),
    (   U0 = cited(_, policy_ref(Doc, Anchor)) -> text_to_atom(Anchor, AA), PJ = json([document=Doc, anchor=AA])
    ;   PJ = @(null)
    ),
    unmet_kind(U0, K),
    (   U0 = dont_know(_, _, F) -> format(atom(FA), '~q', [F]), J = [reason=R, kind=K, policy=PJ, forget=FA]
    ;   J = [reason=R, kind=K, policy=PJ]
    ).
unmet_kind(cited(_, _), rule) :- !.
unmet_kind(dont_know(_, _, _), dont_know) :- !.
unmet_kind(declined(_), declined) :- !.
unmet_kind(unknown_outcome(_), unknown_outcome) :- !.
unmet_kind(_, condition).

need_json(fetch(T, Args, G), json([kind=fetch, tool=T, arguments=json(JArgs), fact=GA])) :-
    maplist([N=V, N=J]>>pl_json(V, J), Args, JArgs), format(atom(GA), '~q', [G]).
need_json(ask(G0, Q, Ty, From), json([kind=ask, fact=GA, predicate=N, inputs=JIns, question=Msg, type=TyA, from=From])) :-
    \+ \+ ( numbervars(G0, 0, _), format(atom(GA0), '~W', [G0, [quoted(true), numbervars(true)]]), nb_setval(sn_tmp, GA0) ),
    nb_getval(sn_tmp, GA), functor(G0, N, _),
    G0 =.. [_|As], ( Ty == yes_no -> Ins = As ; append(Ins, [_], As) ),
    maplist(pl_json, Ins, JIns), text_to_atom(Q, QA),
    question_text(QA, Ins, Msg), type_json(Ty, TyA).
need_json(confirm(Msg, Shown, Changed, From),
          json([kind=confirm, question=Msg, shown=Shown, changed=Changed, from=From])).

%  a choice's value as the form offers it (the engine's JSON of it: a number, a text, true or false) and the term
%  the rulebase wrote (its text, as writeq writes it): the answer is stored as that term, "1" a string, '1' an
%  atom, 1 a number, whatever JSON makes of them
type_json(choice(L), json([choice=Js, labels=Ls, terms=Ts])) :- !,
    maplist(choice_value_label, L, Vs, Ls), maplist(pl_json, Vs, Js), maplist(q_atom, Vs, Ts).
type_json(choices(Cs), json([choice_of=Cs])) :- !.
type_json(choice_of(_, _, _), json([choice_of=[]])) :- !.
type_json(T, T).

choice_value_label(V - L, V, LA) :- !, own_text(L, LA).  % the rulebase's label of its option
choice_value_label(V, V, @(null)).

% ---------------------------------------------------------------- JSON of terms

pl_json(V, null) :- var(V), !.
pl_json(json(KVs), json(J)) :- is_list(KVs), !, maplist(pl_json_pair, KVs, J).
pl_json(L, J) :- is_list(L), !, maplist(pl_json, L, J).
pl_json(true, @(true)) :- !.
pl_json(false, @(false)) :- !.
pl_json(null, @(null)) :- !.
%  a float JSON has no number for (1.0Inf, 1.5NaN: a client's goal may bind one) as its text, never written as
%  a number Python's JSON reader refuses
pl_json(F, A) :- float(F), \+ ( F =:= F, abs(F) =\= inf ), !, q_atom(F, A).
pl_json(A, A) :- atomic(A), \+ string(A), !.
pl_json(S, A) :- string(S), !, atom_string(A, S).
pl_json(T, A) :- q_atom(T, A).

pl_json_pair(K = V, K = J) :- pl_json(V, J).  % not a lambda: yall copies a lambda's term on every call

%  q_atom(+Term, -Atom): Term as writeq/1 writes it (as format's ~q: the same text), through a memory stream,
%  which costs SWI-Prolog about a third less than format/3 does; a proof tree writes some 30 goals, and the same
%  ones from call to call (the user, the reservation's facts): the texts of the last few thousand ground,
%  acyclic terms written short are kept, found by the term's hash (writeq's text is a function of the term:
%  no rulebase can change the operator table or the flags). A variable's name differs from write to write, so
%  a term with one is always written.
:- dynamic q_memo/3.
q_atom(T, A) :-
    (   ground(T), acyclic_term(T), term_hash(T, H)
    ->  (   q_memo(H, T0, A0), T0 == T
        ->  A = A0
        ;   shown_text(T, A),
            (   atom_length(A, L), L =< 512, \+ too_large_shown(A)  % (its term is no small one to keep)
            ->  keep_memo(sn_q_memo, q_memo(H, T, A))
            ;   true
            )
        )
    ;   shown_text(T, A)
    ).

tree_json(true, json([goal=true])) :- !.
tree_json(and_all(Ts), json([all=Js])) :- !, maplist(tree_json, Ts, Js).
tree_json(and(A, B), json([all=Js])) :- !, flatten_and(and(A, B), Ts), maplist(tree_json, Ts, Js).
tree_json(if(C, T), json([if=CJ, then=TJ])) :- !, tree_json(C, CJ), tree_json(T, TJ).
tree_json(not(G), json([not=GA])) :- !, q_atom(G, GA).
tree_json(required(W, Ref, T), json([require=WA, policy=PJ, by=TJ])) :- !, unmet_text(W, WA), ref_json(Ref, PJ),
    tree_json(T, TJ).
tree_json(unmet(W, Ref), json([unmet=WA, policy=PJ])) :- !, unmet_text(W, WA), ref_json(Ref, PJ).
tree_json(confirmed(M, P), json([confirmed=M, provenance=P])) :- !.
tree_json(fact(G, P), json([fact=GA, provenance=P])) :- !, q_atom(G, GA).
tree_json(context(N, V), json([context=N, value=VA])) :- !, q_atom(V, VA).
tree_json(checked_context(N, V, Ts), json([context=N, value=VA, checked=Js])) :- !, q_atom(V, VA),
    maplist(tree_json, Ts, Js).
tree_json(call_tool(T), json([tool=T])) :- !.
tree_json(rule(G, T), json([goal=GA, by=TJ])) :- !, q_atom(G, GA), tree_json(T, TJ).
tree_json(builtin(G), json([builtin=GA])) :- !, q_atom(G, GA).
tree_json(native(G), json([goal=GA, by=native])) :- !, q_atom(G, GA).
tree_json(T, json([other=TA])) :- q_atom(T, TA).

ref_json(policy_ref(Doc, Anchor), json([document=Doc, anchor=AA])) :- !, text_to_atom(Anchor, AA).
ref_json(_, @(null)).

flatten_and(and(A, B), L) :- !, flatten_and(A, LA), flatten_and(B, LB), append(LA, LB, L).
flatten_and(true, []) :- !.
flatten_and(T, [T]).
