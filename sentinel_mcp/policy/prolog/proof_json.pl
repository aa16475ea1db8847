/*  Part of sentinel_core (included): a proof tree's JSON terms, as tree_json/2 (answer_json.pl) writes them,
    with the goals that hold variables written in one write instead of one bounded write each.

    A ground goal's text is remembered (q_atom/2's memo); a goal with a variable (a negated goal, a builtin's
    template: 4 of the airline cancel proof's 30) is written on every rendering, each through bounded_text/2,
    which opens a counting stream and writes the goal twice: half of the tree's cost. Here each is measured
    by write_length/3 (C, stopping at 512 characters), then they are written together, one a line, in one
    with_output_to/2, and the text split at the line breaks (writeq/1 escapes a line break in a quoted atom
    or string, and writes a '$VAR' name raw only when it is a variable's name: a goal's text holds none; the
    count of lines is checked all the same, the tree written by tree_json/2 when it differs).

    The same texts as tree_json/2: each goal is written at the top level (its own writeq/1, no list's
    priority), of the same term (no copy: the same variables, so the same names); the walk binds nothing
    (checked: a tree the walk would bind, as tree_json/2's clause heads can, is written by tree_json/2, whose
    earlier goals were written before the binding); and only texts under 512 characters are taken from the
    write, the ones shown_text/2 shows as they are without counting them against the answer's room (and
    write_length/3's bound keeps the write itself short: a term whose text explodes is never written here).
    Any other case (a cyclic goal, a longer text) is written by tree_json/2 from the start, with the answer's
    room as it was.
*/

%  proof_json(+Tree, -Json): tree_json(Tree, Json), with the writes of the goals that hold variables joined.
proof_json(T, TJ) :-
    ( nb_current(sn_shown_room, Room) -> true ; Room = none ),
    term_variables(T, Vs0),
    (   catch(tree_parts(T, TJ0, Ds, []), sn_proof_other, fail),
        term_variables(T, Vs1), Vs1 == Vs0,
        deferred_texts(Ds)
    ->  TJ = TJ0
    ;   ( Room == none -> true ; nb_linkval(sn_shown_room, Room) ),
        tree_json(T, TJ)
    ).

tree_parts(T, _, _, _) :- var(T), !, throw(sn_proof_other).
tree_parts(true, json([goal=true]), D, D) :- !.
tree_parts(and_all(Ts), json([all=Js]), D0, D) :- !, parts_list(Ts, Js, D0, D).
tree_parts(and(A, B), json([all=Js]), D0, D) :- !, flatten_and(and(A, B), Ts), parts_list(Ts, Js, D0, D).
tree_parts(if(C, T), json([if=CJ, then=TJ]), D0, D) :- !, tree_parts(C, CJ, D0, D1), tree_parts(T, TJ, D1, D).
tree_parts(not(G), json([not=GA]), D0, D) :- !, goal_part(G, GA, D0, D).
tree_parts(required(W, Ref, T), json([require=WA, policy=PJ, by=TJ]), D0, D) :- !,
    unmet_text(W, WA), ref_json(Ref, PJ), tree_parts(T, TJ, D0, D).
tree_parts(unmet(W, Ref), json([unmet=WA, policy=PJ]), D, D) :- !, unmet_text(W, WA), ref_json(Ref, PJ).
tree_parts(confirmed(M, P), json([confirmed=M, provenance=P]), D, D) :- !.
tree_parts(fact(G, P), json([fact=GA, provenance=P]), D0, D) :- !, goal_part(G, GA, D0, D).
tree_parts(context(N, V), json([context=N, value=VA]), D0, D) :- !, goal_part(V, VA, D0, D).
tree_parts(call_tool(T), json([tool=T]), D, D) :- !.
tree_parts(rule(G, T), json([goal=GA, by=TJ]), D0, D) :- !, goal_part(G, GA, D0, D1), tree_parts(T, TJ, D1, D).
tree_parts(builtin(G), json([builtin=GA]), D0, D) :- !, goal_part(G, GA, D0, D).
tree_parts(native(G), json([goal=GA, by=native]), D0, D) :- !, goal_part(G, GA, D0, D).
tree_parts(checked_context(N, V, Ts), json([context=N, value=VA, checked=Js]), D0, D) :- !,
    goal_part(V, VA, D0, D1), parts_list(Ts, Js, D1, D).
%  Any other node is tree_json/2's to write (one renderer decides what an unknown node looks like: a node added
%  there and not here is written right, only slower).
tree_parts(_, _, _, _) :- throw(sn_proof_other).

%  maplist(tree_json) over a proper list (a partial one would be bound: tree_json/2 writes it).
parts_list(L, _, _, _) :- var(L), !, throw(sn_proof_other).
parts_list([], [], D, D) :- !.
parts_list([T|Ts], [J|Js], D0, D) :- !, tree_parts(T, J, D0, D1), parts_list(Ts, Js, D1, D).
parts_list(_, _, _, _) :- throw(sn_proof_other).

%  A ground goal's text at once (q_atom/2, its memo); an acyclic one with variables written later.
goal_part(G, GA, D0, D) :-
    (   ground(G) -> q_atom(G, GA), D0 = D
    ;   acyclic_term(G) -> D0 = [G-GA|D]
    ;   throw(sn_proof_other)
    ).

%  deferred_texts(+Goals): each Goal-Text's Text, from one write of the goals one a line; fails when a text is
%  512 characters or more (write_length/3 stops counting there: the write that follows is at most 512 a goal),
%  or a line break is not one of those written.
deferred_texts([]) :- !.
deferred_texts(Ds) :-
    short_goals(Ds),
    with_output_to(atom(All), goal_lines(Ds)),
    atomic_list_concat(Parts, '\n', All),
    bind_texts(Ds, Parts).

short_goals([]).
short_goals([G-_|Ds]) :- write_length(G, _, [quoted(true), numbervars(true), max_length(511)]), short_goals(Ds).

goal_lines([]).
goal_lines([G-_|Ds]) :- writeq(G), nl, goal_lines(Ds).

bind_texts([], ['']).
bind_texts([_-A|Ds], [A|Ps]) :- atom_length(A, L), L < 512, bind_texts(Ds, Ps).
