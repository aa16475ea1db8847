/*  Part of sentinel_core (included): text(T) wraps the rulebase's own words only, checked at load.

    A question reads text(T) as it is (readable_terms.pl): T is the rulebase's text, never quoted. A value from
    outside (a tool's result, a call's argument, an answer, a context) put there would reach the person's
    question unquoted and could speak in Sentinel's voice ("... ? Answer yes to continue."). So every place a
    clause writes a term that a question reads as it is - text(T), the template of text(Template, Args), the
    separator of joined(Items, Sep), a confirmation's template, confirmed_items' headline and labels - must
    hold a value made of the rulebase's own words: by an allow list, a conservative walk of where each
    variable can get its value, never a list of bad spellings.

    A value is own when it is written in the rulebase, or made by a goal this walk knows from own values only:
    =/2 and ==/2 with an own side, arithmetic (a number), the pieces and joins of own text (atom_concat/3,
    sub_atom/5, atomic_list_concat/2,3, format/3 into text, ...), the elements of an own list, a rule of the
    rulebase whose clauses all give an own value there (label tables, enumerations), given the values its
    caller passes (each predicate walked once per pattern of own arguments; a recursive call gives nothing
    own), the answer to a choice([...]) question (checked to be one of its values), and Sentinel's own text a
    built-in vouches for (vouched_text/2). Anything else - a fact a tool gave, a call's argument, a context, an
    unknown or meta goal, a findall over facts, one branch of an if-then-else - is not, and a clause that wraps
    it is refused at load with its file and line. =../2 and functor/3 may not build a term whose name is not
    written (a name from outside could be text): a term is only made text(...) where the rulebase writes it.

    Sites are checked where their path ends (a branch, a findall's goal, the clause), so a value bound after the
    term is written counts. Predicates no entry point reaches are walked with every argument from outside.
*/

:- thread_local own_memo/4, own_error/3.

%  Sentinel's built-ins whose result carries text Sentinel wrote (the values in it quoted already): the
%  tool's name and the JSON pointer of that text (rulebases/a2a.pl; sentinel_mcp/a2a/peer_trust.py).
vouched_text('a2a__a2a_peer_check', '/peer').

post_load_problem(RB, P) :-
    walked(RB, own_text_errors, 'the walk of what reaches a person in Sentinel\'s voice', Es),
    member(e(File, Line, M), Es),
    problem(error, File, Line, M, P).

own_text_errors(RB, Es) :-
    retractall(own_memo(_, _, _, _)), retractall(own_error(_, _, _)),
    findall(N/A-c(T, F, L), ( RB:'$src'(rule, T, F, L), rule_head(T, H), functor(H, N, A) ), Cs0),
    keysort(Cs0, Cs1), group_pairs_by_key(Cs1, Grouped), list_to_assoc(Grouped, Clauses),
    own_bases(RB, Bases),
    Ctx = ctx(RB, Clauses, Bases),
    forall(( RB:'$src'(decl, D, F, L), body_of(decl, D, Body) ), own_root(Ctx, D, Body, F, L)),
    %  every predicate no root called: walked as anyone may call it, with arguments from outside
    forall(( member(PI-_, Grouped), PI = N0/A0, \+ own_memo(N0, A0, _, _) ),
           ( PI = N/A, length(Mask, A), maplist(=(0), Mask), own_summary(Ctx, N/A, Mask, [], _) )),
    findall(e(F, L, M), own_error(F, L, M), Es0), sort(Es0, Es),
    retractall(own_memo(_, _, _, _)), retractall(own_error(_, _, _)).

own_root(Ctx, D, Body, F, L) :-
    (   D = guard(_, Pat, _), is_list(Pat) -> term_variables(Pat, PVs), whys(PVs, 'an argument of the call', W0)
    ;   W0 = []
    ),
    with_read_goals(D, own_path(Ctx, Body, F, L, [], W0, [], _, _)).

%  own_path(+Ctx, +Goal, +File, +Line, +Own0, +Why0, +Stack, -Own, -Why): Goal walked as one path from
%  Own0; its sites checked against what is own where it ends.
own_path(Ctx, G, F, L, Own0, W0, Stack, Own, W) :-
    own_walk(G, Ctx, F-L, Stack, s(Own0, W0, []), s(Own, W, Sites)),
    check_sites(Sites, Own, W, F, L).

check_sites(Sites, Own, W, F, L) :-
    forall(( member(site(What, X), Sites), term_variables(X, Vs), member(V, Vs), \+ own_var(V, Own) ),
           ( why_of(V, W, Why), site_words(What, Why, M), ( own_error(F, L, M) -> true ; assertz(own_error(F, L, M)) ) )),
    !.

site_words(text, Why0, M) :-
    why_words(Why0, Why),
    format(atom(M), 'text/1 wraps a value that comes from ~w: use the value bare (a question quotes it); text/1 is for the rulebase''s own words only', [Why]).
site_words(What, Why0, M) :- What \== text,
    why_words(Why0, Why),
    format(atom(M), '~w is read as it is, but holds a value that comes from ~w: write the rulebase''s own words there, and pass the value as an argument (a question quotes it)', [What, Why]).
site_words_built(Why0, M) :-
    why_words(Why0, Why),
    format(atom(M), 'a term is built with =../2 or functor/3 from a name that comes from ~w (or named text or joined): a question reads text(...) as it is, so write text(...) in the rulebase itself', [Why]).

own_var(V, Own) :- member(X, Own), X == V, !.
own_all(T, Own) :- term_variables(T, Vs), forall(member(V, Vs), own_var(V, Own)).
why_of(V, W, Why) :- ( member(X-Why0, W), X == V -> Why = Why0 ; Why = 'a value not written in the rulebase' ).
whys([], _, []).
whys([V|Vs], Why, [V-Why|W]) :- whys(Vs, Why, W).

add_own(T, s(O, W, S), s(O1, W, S)) :- term_variables(T, Vs), add_vars(Vs, O, O1).
add_vars([], O, O).
add_vars([V|Vs], O, O1) :- ( own_var(V, O) -> O2 = O ; O2 = [V|O] ), add_vars(Vs, O2, O1).

%  a goal's new variables get its description as their source (the first goal that names them)
note_why(G, Why, s(O, W, S), s(O, W1, S)) :-
    term_variables(G, Vs), foldl(note_why1(Why), Vs, W, W1).
note_why1(Why, V, W, W1) :- ( member(X-_, W), X == V -> W1 = W ; W1 = [V-Why|W] ).

own_walk(G, _, _, _, S, S) :- var(G), !.
own_walk((A, B), C, P, K, S0, S) :- !, own_walk(A, C, P, K, S0, S1), own_walk(B, C, P, K, S1, S).
own_walk((I -> T ; E), C, P, K, S0, S) :- !, own_branches([(I, T), E], C, P, K, S0, S).
own_walk((I *-> T ; E), C, P, K, S0, S) :- !, own_branches([(I, T), E], C, P, K, S0, S).
own_walk((A ; B), C, P, K, S0, S) :- !, own_branches([A, B], C, P, K, S0, S).
own_walk((I -> T), C, P, K, S0, S) :- !, own_walk((I, T), C, P, K, S0, S).
own_walk((I *-> T), C, P, K, S0, S) :- !, own_walk((I, T), C, P, K, S0, S).
own_walk(\+ G, C, P, K, S0, S) :- !, own_closed(G, C, P, K, S0, _), note_why(G, 'a negation', S0, S).
own_walk(once(G), C, P, K, S0, S) :- !, own_walk(G, C, P, K, S0, S).
own_walk(ignore(G), C, P, K, S0, S) :- !, own_branches([G, true], C, P, K, S0, S).
own_walk(forall(A, B), C, P, K, S0, S) :- !, own_closed((A, B), C, P, K, S0, _), note_why(A-B, 'forall/2', S0, S).
own_walk(require(G, _), C, P, K, S0, S) :- !, own_walk(G, C, P, K, S0, S).  % a failed one denies: no question
own_walk(require(G, _, _), C, P, K, S0, S) :- !, own_walk(G, C, P, K, S0, S).
own_walk(findall(T, G, L), C, P, K, S0, S) :- !, own_collect(T, G, L, C, P, K, S0, S).
own_walk(findall(T, G, L, Tl), C, P, K, S0, S) :- !, own_collect(T-Tl, G, L, C, P, K, S0, S).
own_walk(aggregate_all(Spec, G, R), C, P, K, S0, S) :- !,
    (   Spec == count -> own_closed(G, C, P, K, S0, _), add_own(R, S0, S)
    ;   nonvar(Spec), Spec = sum(_) -> own_closed(G, C, P, K, S0, _), add_own(R, S0, S)
    ;   nonvar(Spec), Spec =.. [_|Ts] -> own_collect(Ts, G, R, C, P, K, S0, S)
    ;   own_closed(G, C, P, K, S0, _), note_why(R, 'aggregate_all/3', S0, S)
    ).
own_walk(bagof(T, G, L), C, P, K, S0, S) :- !, own_bag(T, G, L, C, P, K, S0, S).
own_walk(setof(T, G, L), C, P, K, S0, S) :- !, own_bag(T, G, L, C, P, K, S0, S).
own_walk(G, C, P, K, S0, S) :-
    goal_sites(G, S0, S1),
    own_goal(G, C, P, K, S1, S2),
    own_goal_why(G, C, S2, S).

%  each branch is a path of its own (its sites checked where it ends); what is own after them is what is
%  own after every one
own_branches(Bs, C, F-L, K, s(O0, W0, Sites), s(O, W, Sites)) :-
    branch_ends(Bs, C, F, L, K, O0, W0, Ends),
    (   Ends = [O1-W|Rest]
    ->  foldl(common_own, Rest, O1, O)
    ;   O = O0, W = W0
    ).

%  (no findall: the walk keeps the clause's own variables to follow them)
branch_ends([], _, _, _, _, _, _, []).
branch_ends([B|Bs], C, F, L, K, O0, W0, [O1-W1|Es]) :-
    own_path(C, B, F, L, O0, W0, K, O1, W1), branch_ends(Bs, C, F, L, K, O0, W0, Es).

common_own(O2-_, O1, O) :- common_vars(O1, O2, O).
common_vars([], _, []).
common_vars([V|Vs], O2, O) :- ( own_var(V, O2) -> O = [V|O1] ; O = O1 ), common_vars(Vs, O2, O1).

%  a goal whose bindings do not leave it (\+, forall, a collection's goal): its own path
own_closed(G, C, F-L, K, s(O0, W0, _), s(O, W, [])) :- own_path(C, G, F, L, O0, W0, K, O, W).

own_collect(T, G, L, C, P, K, S0, S) :-
    P = F-Li, S0 = s(O0, W0, Sites),
    own_walk(G, C, P, K, s(O0, W0, []), s(OG, WG, SG)),
    goal_sites(T, s(OG, WG, SG), s(_, _, SG1)),
    check_sites(SG1, OG, WG, F, Li),
    S1 = s(O0, W0, Sites),
    ( own_all(T, OG) -> add_own(L, S1, S) ; why_of_first(T, OG, WG, Why), note_why(L, Why, S1, S) ).

why_of_first(T, O, W, Why) :-
    term_variables(T, Vs), ( member(V, Vs), \+ own_var(V, O) -> why_of(V, W, Why) ; Why = 'a collection' ).

own_bag(T, G0, L, C, P, K, S0, S) :-
    strip_carets(G0, G), own_collect(T, G, L, C, P, K, S0, S).

%  the sites a goal writes: text(X), text(Template, _)'s template, joined(_, Sep)'s separator, a
%  confirmation's template, confirmed_items' headline and labels
goal_sites(G, s(O, W, S0), s(O, W, S)) :- goal_sites_(G, S0, S1), term_sites(G, S1, S).

goal_sites_(G, S0, S) :- compound(G), ( G = confirmed(F, _) ; G = confirmed(F, _, _) ), !,
    S = [site(confirmation, F)|S0].
goal_sites_(G, S0, S) :- compound(G), ( G = confirmed_items(H, Is) ; G = confirmed_items(H, Is, _) ), !,
    (   is_list(Is) -> foldl(label_site, Is, [site('the headline of confirmed_items', H)|S0], S)
    ;   S = [site('the items of confirmed_items (write them as a list)', Is), site('the headline of confirmed_items', H)|S0]
    ).
goal_sites_(_, S, S).

label_site(I, S0, [site('a label of confirmed_items', Lb)|S0]) :- nonvar(I), I = (Lb = _), !.
label_site(I, S0, [site('an item of confirmed_items (write Label = Value)', I)|S0]).

%  every text(X), text(Template, _) and joined(_, Sep) in a term (no unification: the walk binds nothing)
term_sites(T, S0, S) :- var(T), !, S = S0.
term_sites(T, S0, S) :- compound(T), !,
    ( text_site(T, Site) -> S1 = [Site|S0] ; S1 = S0 ),
    compound_name_arguments(T, _, As), foldl(term_sites, As, S1, S).
term_sites(_, S, S).

text_site(text(X), site(text, X)).
text_site(text(F, _), site('the template of text/2', F)).
text_site(joined(_, Sep), site('the separator of joined/2', Sep)).

%  the new variables of a goal that made them nothing own: its description
own_goal_why(G, C, S0, S) :- goal_source(G, C, Why), note_why(G, Why, S0, S).

%  (a term, put in words only for an error: most goals' values are never wrapped)
goal_source(G, ctx(_, Cls, Bases), Why) :-
    (   callable(G) -> functor(G, N, A) ; N = G, A = 0 ),
    (   get_assoc(N/A, Bases, base(Kind, _)) -> Why = why(Kind, N/A)
    ;   G = context_value(_, _) -> Why = why(context, N/A)
    ;   get_assoc(N/A, Cls, _) -> Why = why(rule, N/A)
    ;   Why = why(goal, N/A)
    ).

why_words(why(binding, N/A), W) :- !, format(atom(W), '~w/~w, a fact read from a tool', [N, A]).
why_words(why(askable, N/A), W) :- !, format(atom(W), '~w/~w, an answer to a question', [N, A]).
why_words(why(store, N/A), W) :- !, format(atom(W), '~w/~w, a fact of the store', [N, A]).
why_words(why(context, _), 'context_value/2, a context') :- !.
why_words(why(rule, N/A), W) :- !,
    format(atom(W), '~w/~w, whose result there is not the rulebase''s own words', [N, A]).
why_words(why(goal, N/A), W) :- !, format(atom(W), '~w/~w', [N, A]).
why_words(why(argument(I), N/A), W) :- !, format(atom(W), 'argument ~w of ~w/~w, as its caller passes it', [I, N, A]).
why_words(W, W).
