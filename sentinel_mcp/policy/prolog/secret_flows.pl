/*  Part of sentinel_core (included): nothing made from a secret argument reaches what a person reads.

    A guard's argument whose name says secret (secret_argument_name/1: the words of redactor.secret_name) may
    only be compared, measured, tested by type, and passed whole to a tool (a binding's input) or to a rule of
    the rulebase (walked the same way): an allow list, by each goal's kind (secret_flow_kinds.pl: check,
    measure; what a measure binds is followed as a value computed from it). Any other goal given it (a part:
    sub_atom/5; a case change; its characters or codes; arithmetic; format/3; a hash) is refused at load with
    its file and line: a proof records every goal with its values (the audit keeps it, the console and
    sentinel_why_not show it), and the masking at run time (core/secret_values.py) finds the value only as it
    was sent, never a piece, a transform or a hash of it (the hash of a 4-digit PIN is read back in 10,000
    tries). The whole value may not reach a question either (confirmed/2,3's arguments, confirmed_items/2,3,
    an askable's arguments), a denial's reason (require/2,3) or a fact an effect writes (establish/1,2); what
    it is unified into, a rule gives back of it, or a collection holds of it, counts as it; what is computed
    from it (a measure, a count or collection of solutions its goal decides, a branch it chose, a value a
    test of it let through: secret_choices.pl) may not reach them either (of(Name): kept in the proof, never
    shown). A question spelling the whole value is refused at run time too (policy/questions.secrets_spelled).
    An argument a tool declares secret only in its schema (writeOnly, format password, its sensitive list:
    redactor.secret_arguments_of) is not known at load: sn_schema_secret_flows/4 walks the guards and effects
    bound to that tool with those names secret too, once per (tool, names) (policy/schema_secret_flows.py).
*/

:- thread_local secret_memo/3, secret_error/3, secret_extra/1, secret_unclean/0, secret_memo_unclean/2,
    secret_single_memo/3.

post_load_problem(RB, P) :-
    walked(RB, secret_flow_errors, 'the walk of what its secrets reach', Es),
    member(e(File, Line, M), Es),
    problem(error, File, Line, M, P).

secret_flow_errors(RB, Es) :- secret_flow_errors(RB, any, [], Es).

%  sn_schema_secret_flows(+RB, +Tool, +NamesJson, +Limit, -Out): the walk of the guards and effects bound to
%  Tool (by its name or a prefix*), the arguments NamesJson lists (its schema's secrets) secret as well as
%  those named secret; Out {errors: [{file, line, message}]}, or {unfinished: Why} past Limit inferences
sn_schema_secret_flows(RB, Tool, NamesJson, Limit, Out) :-
    from_json_atom(NamesJson, Names0), include(atom, Names0, Names),
    (   catch(call_with_inference_limit(secret_flow_errors(RB, tool(Tool), Names, Es), Limit, R), E, true)
    ->  true
    ;   R = failed
    ),
    (   nonvar(E)
    ->  secret_forget,
        message_to_codes_safe(E, M0), format(atom(M), '~w', [M0]), to_json_atom(json([unfinished=M]), Out)
    ;   R == failed
    ->  to_json_atom(json([unfinished='the walk failed']), Out)
    ;   R == inference_limit_exceeded
    ->  secret_forget,
        to_json_atom(json([unfinished='the walk did not end within its inference limit']), Out)
    ;   findall(json([file=F, line=L, message=M]), member(e(F, L, M), Es), Js),
        to_json_atom(json([errors=Js]), Out)
    ).

%  which declarations a walk reads: every one (at load), or those bound to one tool
secret_bound(any, _).
secret_bound(tool(Tool), D) :- ( D = guard(T, _, _) ; D = effect(T, _, _) ), atom(T),
    ( T == Tool -> true ; atom_concat(P, '*', T), atom_concat(P, _, Tool) ), !.

secret_flow_errors(RB, Which, Extra, Es) :-
    secret_forget, retractall(secret_extra(_)), assertz(secret_extra(Extra)),
    findall(N/A-c(T, F, L), ( RB:'$src'(rule, T, F, L), rule_head(T, H), functor(H, N, A) ), Cs0),
    keysort(Cs0, Cs1), group_pairs_by_key(Cs1, Grouped), list_to_assoc(Grouped, Clauses),
    own_bases(RB, Bases),
    Ctx = sctx(Clauses, Bases, kept),
    forall(( RB:'$src'(decl, D, F, L), secret_bound(Which, D), secret_root(D, Extra, Ts, Body) ),
           secret_walk_declaration(RB, D, Extra, Body, Ctx, F-L, Ts)),
    findall(e(F, L, M), secret_error(F, L, M), Es0), sort(Es0, Es),
    secret_forget, retractall(secret_extra(_)).

secret_forget :- retractall(secret_memo(_, _, _)), retractall(secret_error(_, _, _)), retractall(secret_unclean),
    retractall(secret_memo_unclean(_, _)), retractall(secret_single_memo(_, _, _)).


%  the secret variables of a declaration (each with its argument's name) and what is walked from them; an
%  effect's writes are sites of their own (no findall: the walk follows the clause's own variables)
%  (Extra: the names a tool's schema declares secret, [] at load)
secret_root(guard(_, Pat, Body), X, Ts, Body) :- is_list(Pat), secret_pattern(Pat, X, Ts), Ts \== [].
secret_root(effect(_, Pat, Acts), X, Ts, Writes) :- is_list(Pat), is_list(Acts), secret_pattern(Pat, X, Ts),
    Ts \== [], secret_writes(Acts, Writes).

secret_writes([], true).
secret_writes([X|Xs], G) :-
    secret_writes(Xs, G0),
    ( nonvar(X), ( X = establish(H) ; X = establish(H, _) ) -> G = ('$secret_writes'(H), G0) ; G = G0 ).

secret_pattern([], _, []).
secret_pattern([E|Es], X, Ts) :-
    secret_pattern(Es, X, Ts0),
    (   nonvar(E), E = (N0 = V0), text_to_atom_safe(N0, N), ( memberchk(N, X) -> true ; secret_argument_name(N) )
    ->  term_variables(V0, Vs), secret_named(Vs, N, Ts1), append(Ts1, Ts0, Ts)
    ;   nonvar(E), E = args(A)  % the whole argument list: what it holds of a secret is read by its name
    ->  term_variables(A, Vs), secret_named(Vs, 'args(_)', Ts1), append(Ts1, Ts0, Ts)
    ;   Ts = Ts0
    ).

%  A read of the whole argument list (args/1) by a key (option_value/4; member/2, memberchk/2, select/3,
%  selectchk/3 of Key = Value): the value of that argument, secret when the argument is; a key the rule does
%  not write (a variable: read from a list, a fact, an alias the walk does not run) may be any, a secret's
%  too, so its value counts as one (secret_unkeyed/1). For a tool whose schema's secrets are known, any other
%  goal given the list is one given every secret it holds; at load, when no tool's arguments are known, the
%  list is no secret (secret_lenient/1: a guard of the device's reads every argument so), but what another
%  goal reads or makes of it is (secret_goal/6)
secret_list_read(G, T0, T) :-
    secret_list_shape(G, L, E, Rest), var(L), member(S-'args(_)', T0), S == L, !,
    ( nonvar(E), E = (K = V) -> true ; V = E ),
    secret_add(Rest, 'args(_)', T0, T1),
    (   atom(K), \+ ( secret_extra(X), memberchk(K, X) ), \+ secret_argument_name(K)
    ->  T = T1
    ;   atom(K)
    ->  secret_list_unclean, secret_add(V, K, T1, T)
    ;   secret_lenient('args(_)')
    ->  secret_list_unclean, secret_unkeyed(U), secret_add(V, U, T1, T)
    ;   secret_add(V, 'args(_)', T1, T)
    ).

secret_list_shape(option_value(L, K, _, V), L, K = V, []).
secret_list_shape(member(E, L), L, E, []).
secret_list_shape(memberchk(E, L), L, E, []).
secret_list_shape(select(E, L, R), L, E, R).
secret_list_shape(selectchk(E, L, R), L, E, R).

secret_unkeyed('an argument of args(_) read by a key the rule does not write').

secret_lenient('args(_)') :- secret_extra([]).

%  secret_of(+X, +T, -N): X holds a secret variable (a piece of the secret first, else a value computed from
%  it: of(Name)); secret_piece/3 the first kind only; secret_in/3 either, or the argument list at load
secret_of(X, T, N) :- secret_piece(X, T, N), !.
secret_of(X, T, of(N)) :- secret_vars(X, Vs), member(V, Vs), member(S-of(N), T), S == V, !.

secret_piece(X, T, N) :- secret_vars(X, Vs), member(V, Vs), member(S-N, T), S == V, N \= of(_), N \= branch(_),
    \+ secret_lenient(N), !.

secret_in(X, T, N) :- secret_of(X, T, N), !.
secret_in(X, T, 'args(_)') :- secret_vars(X, Vs), member(V, Vs), member(S-'args(_)', T), S == V, !.

%  the name a measure of a secret goes by, and the name a message shows
secret_measured(of(N), of(N)) :- !.
secret_measured(N, of(N)).

secret_shown(of(N), S) :- !, format(atom(S), '~w (a value computed from it: a count, a length, what a \c
comparison of it chose)', [N]).
secret_shown('args(_)', S) :- secret_extra([X|Xs]), !, atomic_list_concat([X|Xs], ', ', Names),
    format(atom(S), 'args(_) (every argument of the call, the secret ~w among them)', [Names]).
secret_shown(N, N).

secret_named([], _, []).
secret_named([V|Vs], N, [V-N|Ts]) :- secret_named(Vs, N, Ts).

text_to_atom_safe(X, A) :- ( atom(X) -> A = X ; string(X) -> atom_string(A, X) ; fail ).

%  redactor.secret_name: a word of the name (camelCase and digits apart) is a secret word, or the words
%  glued, or two words side by side a secret pair (tests/policy/test_secret_flows.py holds them equal)
secret_argument_name(N) :-
    name_words(N, Ws),
    (   member(W, Ws), secret_word(W) -> true
    ;   atomic_list_concat(Ws, Glued), secret_word(Glued) -> true
    ;   append(_, [A, B|_], Ws), secret_pair(A, B)
    ).

name_words(N, Ws) :-
    atom_codes(N, Cs0), camel_spaced(Cs0, Cs1), atom_codes(A, Cs1), downcase_atom(A, Lower),
    atom_codes(Lower, Cs), code_runs(Cs, Ws).

camel_spaced([A, B|Cs], [A, 0' |Out]) :- ( code_type(A, lower) ; code_type(A, digit) ), code_type(B, upper), !,
    camel_spaced([B|Cs], Out).
camel_spaced([C|Cs], [C|Out]) :- !, camel_spaced(Cs, Out).
camel_spaced([], []).

%  runs of ASCII letters or of digits (_NAME_WORDS: [a-z]+|[0-9]+)
code_runs([], []) :- !.
code_runs([C|Cs], Ws) :- run_kind(C, K), !, run_of(K, Cs, Run, Rest), atom_codes(W, [C|Run]), Ws = [W|Ws1],
    code_runs(Rest, Ws1).
code_runs([_|Cs], Ws) :- code_runs(Cs, Ws).
run_kind(C, letter) :- C >= 0'a, C =< 0'z, !.
run_kind(C, digit) :- C >= 0'0, C =< 0'9.
run_of(K, [C|Cs], [C|Run], Rest) :- run_kind(C, K), !, run_of(K, Cs, Run, Rest).
run_of(_, Cs, [], Cs).

secret_word(W) :- memberchk(W, [password, passwd, passphrase, pwd, secret, token, apikey, credential,
                                credentials, authorization, cvv, cvc, cvv2, otp, pin, passcode, totp, mfa]).
secret_pair(A, B) :- memberchk(A-B, [api-key, card-number, verification-code, security-code, one-time,
                                     auth-code, private-key, access-key, session-key, sms-code, login-code,
                                     card-pan]).

%  secret_walk(+Goal, +Ctx, +File-Line, +Stack, +Secret0, -Secret): Secret0 the secret variables (V-Name)
%  before Goal, Secret after it; the sites Goal writes checked on the way
secret_walk(G, _, _, _, T, T) :- var(G), !.
secret_walk((A, B), C, P, K, T0, T) :- !, secret_walk(A, C, P, K, T0, T1), secret_walk(B, C, P, K, T1, T).
secret_walk((I -> Th ; E), C, P, K, T0, T) :- !, secret_branches(I, [(I, Th), E], C, P, K, T0, T).
secret_walk((I *-> Th ; E), C, P, K, T0, T) :- !, secret_branches(I, [(I, Th), E], C, P, K, T0, T).
secret_walk((A ; B), C, P, K, T0, T) :- !, secret_state(St0), secret_branches(A, [A, B], C, P, K, T0, T),
    secret_chose((A ; B), no, St0).
secret_walk((I -> Th), C, P, K, T0, T) :- !, secret_walk((I, Th), C, P, K, T0, T).
secret_walk((I *-> Th), C, P, K, T0, T) :- !, secret_walk((I, Th), C, P, K, T0, T).
%  a negation's proof keeps only not(G), G as it was called (prove/2): what G's goals make of a secret is
%  not kept, so they may (hidden); what G shows a person (a question, a denial's reason) is checked still
secret_walk(\+ G, C, P, K, T0, T) :- !, secret_hidden(C, CH), secret_state(St0), secret_walk(G, CH, P, K, T0, _),
    secret_unbinding(St0), secret_choose(G, T0, T0, T).
secret_walk(once(G), C, P, K, T0, T) :- !, secret_walk(G, C, P, K, T0, T).
secret_walk(ignore(G), C, P, K, T0, T) :- !, secret_branches(G, [G, true], C, P, K, T0, T).
secret_walk(forall(A, B), C, P, K, T0, T) :- !, secret_hidden(C, CH), secret_state(St0),
    secret_walk((A, B), CH, P, K, T0, _), secret_unbinding(St0), secret_choose(A-B, T0, T0, T).
secret_walk(require(G, R), C, P, K, T0, T) :- !, secret_walk(G, C, P, K, T0, T), secret_site('a denial''s reason', R, T, P).
secret_walk(require(G, R, _), C, P, K, T0, T) :- !, secret_walk(G, C, P, K, T0, T),
    secret_site('a denial''s reason', R, T, P).
secret_walk(findall(X, G, L), C, P, K, T0, T) :- !, secret_collect(X, G, L, C, P, K, T0, T).
secret_walk(findall(X, G, L, Tl), C, P, K, T0, T) :- !, secret_collect(X-Tl, G, L, C, P, K, T0, T).
secret_walk(aggregate_all(S, G, R), C, P, K, T0, T) :- !, secret_collect(S, G, R, C, P, K, T0, T).
secret_walk(bagof(X, G, L), C, P, K, T0, T) :- !, strip_carets(G, G1), secret_state(St0),
    secret_collect(X, G1, L, C, P, K, T0, T), secret_chose(bagof(X, G, L), no, St0).
secret_walk(setof(X, G, L), C, P, K, T0, T) :- !, strip_carets(G, G1), secret_state(St0),
    secret_collect(X, G1, L, C, P, K, T0, T), secret_chose(setof(X, G, L), no, St0).
secret_walk('$secret_writes'(H), _, P, _, T, T) :- !, secret_site('a fact an effect writes', H, T, P).
secret_walk(G, C, P, K, T0, T) :-
    secret_sites(G, C, T0, P), secret_state(St0), secret_single(G, C, Single),
    secret_goal(G, C, P, K, T0, T1),
    secret_saw(G, C),
    secret_choose(G, T0, T1, T), secret_chose(G, Single, St0).  % (secret_choices.pl)

%  (which variables the walk knows bound, what a goal binds: secret_bindings.pl)

%  Branches (an if-then-else, a disjunction, ignore/1) whose choice a secret decides (Cond is given one): what
%  they bind first is computed from it (H in ( P @< m -> H = a ; H = b )), of(Name). Which branch ran is
%  otherwise one bit the rulebase chose to show (a written question in one of them). A variable met before
%  (a rule's head: its caller's, given or to be bound) is marked branch(Name): no secret in the rule, but
%  a caller's variable bound by the call comes out computed from it (secret_out/4).
%  (no lambdas over the clause's variables: yall copies a lambda's free variables, and the walk follows the
%  clause's own variables)
secret_branches(Cond, Bs, C, P, K, T0, T) :-
    secret_state(St0),
    secret_branch_ends(Bs, St0, C, P, K, T0, T1, Ends), secret_unique(T1, T2),
    (   secret_of(Cond, T0, N)
    ->  b_setval(sn_secret_state, St0), secret_vars(Bs, Vs), secret_fresh(Vs, St0, New, Old),
        secret_measured(N, M), secret_add(New, M, T2, T3), secret_add(Old, branch(M), T3, T)
    ;   T = T2
    ),
    secret_branch_state(St0, Ends).

%  each branch walked from what was known before them all: a variable one branch binds is fresh in the next
secret_branch_ends([], _, _, _, _, T0, T0, []).
secret_branch_ends([B|Bs], St0, C, P, K, T0, T, [St|Ends]) :-
    b_setval(sn_secret_state, St0), secret_walk(B, C, P, K, T0, TB), secret_state(St),
    secret_branch_ends(Bs, St0, C, P, K, T0, T1, Ends), append(TB, T1, T).

secret_unique([], []).
secret_unique([V-N|Ts], Out) :- ( member(X-_, Ts), X == V -> Out = Out1 ; Out = [V-N|Out1] ), secret_unique(Ts, Out1).

%  a collection holds secrets when its template does, once its goal ran; and what it collects is computed
%  from a secret its goal is given (which solutions there are, how many, the largest: the count of the
%  letters sorting before a password)
secret_collect(X, G, L, C, P, K, T0, T) :-
    secret_state(St0), secret_walk(G, C, P, K, T0, TG),
    ( secret_all_bound(X) -> How = bound ; How = open ),  % a template with holes collects holes
    secret_unbinding(St0), secret_met(X-G, open),
    (   secret_of(X, TG, N) -> secret_add(L, N, T0, T)
    ;   secret_of(G, T0, N) -> secret_measured(N, M), secret_add(L, M, T0, T)
    ;   T = T0
    ),
    secret_met(L, How).

%  what a goal binds, the variables of it the walk had not met (its inputs were), tainted with N: a measure
%  given a secret and the user (compare(O, P, U)) makes nothing of the user. One met before is marked
%  branch(N): a rule's head (len(P, N) :- atom_length(P, N)) binds its caller's variable (secret_out/4)
secret_add_bound(G, N, T0, T) :-
    secret_state(St), secret_vars(G, Vs), secret_fresh(Vs, St, New, Old),
    secret_add(New, N, T0, T1), secret_add(Old, branch(N), T1, T).

%  X's variables tainted with N, a piece's name replacing a measure's (of(_))
secret_add(X, N, T0, T) :- secret_vars(X, Vs), foldl(secret_add_one(N), Vs, T0, T).

secret_add_one(N, V, A0, A) :-
    (   secret_entry(A0, V, N0)
    ->  ( secret_rank(N, R), secret_rank(N0, R0), R > R0 -> secret_drop(A0, V, A1), A = [V-N|A1] ; A = A0 )
    ;   A = [V-N|A0]
    ).

secret_rank(branch(_), 0) :- !.
secret_rank(of(_), 1) :- !.
secret_rank(_, 2).

secret_entry([S-N0|Ts], V, N) :- ( S == V -> N = N0 ; secret_entry(Ts, V, N) ).

secret_drop([], _, []).
secret_drop([S-N|Ts], V, Out) :- ( S == V -> Out = Ts ; Out = [S-N|Out1], secret_drop(Ts, V, Out1) ).

%  where a goal shows what it is given: a question's arguments, an askable's
secret_sites(G, sctx(_, Bases, _), T, P) :-
    (   compound(G), ( G = confirmed(_, Args) ; G = confirmed(_, Args, _) )
    ->  secret_site('a confirmation''s question', G-Args, T, P)
    ;   compound(G), ( G = confirmed_items(H, Is) ; G = confirmed_items(H, Is, _) )
    ->  secret_site('a confirmation''s question', H-Is, T, P)
    ;   callable(G), functor(G, N, A), get_assoc(N/A, Bases, base(askable, _))
    ->  format(atom(What), 'the question of ~w/~w', [N, A]), secret_site(What, G, T, P)
    ;   true
    ).

secret_site(What, X, T, F-L) :-
    (   secret_of(X, T, N0)
    ->  secret_shown(N0, N),
        format(atom(M), '~w holds a value made from the secret argument ~w: a secret may be compared, measured, \c
hashed or passed whole to a tool, never shown or anything made from it (a piece, a case change, its \c
characters, a sum, a count, its length); the person would read it', [What, N]),
        ( secret_error(F, L, M) -> true ; assertz(secret_error(F, L, M)) )
    ;   true
    ).

%  What a goal given a secret makes of it, by its kind (secret_flow_kinds.pl): a check binds nothing, a
%  measure binds a value computed from it (allowed: kept in the proof as the measure is), any other goal's
%  values are pieces of it (refused, but under a negation), or measures when it was given only measures.
%  (a proof shows the value whole, which is masked)
secret_goal(G, _, _, _, T0, T) :- secret_list_read(G, T0, T), !.
secret_goal(G, _, _, _, T, T) :- \+ secret_in(G, T, _), !.
secret_goal(G, _, _, _, T, T) :- secret_kind_of(G, K), memberchk(K, [check, site]), !.
secret_goal(X = Y, _, _, _, T, T) :- ( ground(X) ; ground(Y) ), !.  % a comparison with a written value
%  a base fact looked up by it (a tool's input, a stored fact's key) compares it, and what the tool or the
%  fact answers for it is computed from it (a tool hashing it, the fact kept for that token); an askable's
%  question is a site (secret_sites/4)
secret_goal(G, sctx(_, Bases, _), _, _, T0, T) :- callable(G), functor(G, N, A), get_assoc(N/A, Bases, base(_, _)), !,
    ( secret_of(G, T0, S) -> secret_measured(S, M), secret_add_bound(G, M, T0, T) ; T = T0 ).
secret_goal(G, C, P, K, T0, T) :- callable(G), C = sctx(Cls, _, _), functor(G, N, A), get_assoc(N/A, Cls, _), !,
    G =.. [_|As], secret_mask(As, T0, Mask0), secret_written(As, Mask0, Mask), maplist(secret_open_flag, As, Opens),
    secret_summary(C, N/A, Mask-Opens, [P|K], Out),
    foldl(secret_out, As, Out, T0, T).
%  an alias: of the argument list itself, the list (at load no secret); a part of it, an argument by a key
%  the rule does not write
secret_goal(X = Y, _, _, _, T0, T) :- !, secret_in(X = Y, T0, N0),
    ( N0 == 'args(_)', \+ ( var(X), var(Y) ) -> secret_list_unclean, secret_unkeyed(N) ; N = N0 ),
    secret_add(X = Y, N, T0, T).
%  (the argument list's own length at load: how many arguments the caller sent, no secret)
secret_goal(G, _, _, _, T0, T) :- secret_kind_of(G, measure), !, secret_in(G, T0, N0),
    ( N0 == 'args(_)' -> T = T0 ; secret_measured(N0, N), secret_add_bound(G, N, T0, T) ).
%  the argument list at load, given to any other goal: what it reads or makes of the list may be any argument
secret_goal(G, _, _, _, T0, T) :- \+ secret_of(G, T0, _), !, secret_list_unclean, secret_unkeyed(N),
    secret_add_bound(G, N, T0, T).
secret_goal(G, sctx(_, _, hidden), _, _, T0, T) :- !, secret_of(G, T0, N), secret_add(G, N, T0, T).
secret_goal(G, _, _, _, T0, T) :- \+ secret_piece(G, T0, _), !, secret_of(G, T0, N), secret_add_bound(G, N, T0, T).
secret_goal(G, _, _, _, T0, T) :- secret_piece(G, T0, 'args(_)'), secret_extra([X]), secret_unclean_name(X), !,
    secret_add_bound(G, 'args(_)', T0, T).  % (walked again for its sites: its reads were walked leniently)
secret_goal(G, _, F-L, _, T0, T) :- secret_piece(G, T0, N), secret_add(G, N, T0, T),
    ( callable(G) -> functor(G, Nm, A) ; Nm = G, A = 0 ),
    format(atom(M), '~w/~w is given the secret argument ~w (or a value holding it): a secret may only be \c
compared (==, \\==, <, ...), measured (atom_length/2) or passed whole to a tool or a rule; what a goal makes \c
of it (a piece, a case change, its characters, a sum, a hash) is kept in the proof and could be shown', [Nm, A, N]),
    ( secret_error(F, L, M) -> true ; assertz(secret_error(F, L, M)) ).

%  a rule given the argument list is walked with the written values its call gives (w(Value)): the key its
%  caller names (asked_cap(A, max_steps, V) :- option_value(A, Name, ...)) is known there
secret_written(As, Mask0, Mask) :-
    ( memberchk('args(_)', Mask0) -> maplist(secret_written_one, As, Mask0, Mask) ; Mask = Mask0 ).

secret_written_one(X, M0, M) :- ( M0 == 0, atomic(X) -> M = w(X) ; M = M0 ).

secret_mask([], _, []).
secret_mask([X|Xs], T, [B|Bs]) :- ( secret_in(X, T, N) -> B = N ; B = 0 ), secret_mask(Xs, T, Bs).

secret_out(X, O, A0, A) :-
    (   O == 0
    ->  A = A0
    ;   O = branch(N)  % bound by the call in a branch a secret chose: when the caller had not met it
    ->  secret_state(St), secret_vars(X, Vs), secret_fresh(Vs, St, New, _),
        secret_add(New, N, A0, A)
    ;   secret_add(X, O, A0, A)
    ).

%  secret_summary(+Ctx, +PI, +Mask-Opens, +Stack, -Out): which arguments of a call of PI come out secret,
%  given those its caller passes (Mask: 0, or the secret's name) and those it leaves unbound (Opens: 1, a
%  goal of the rule given a secret binds it); each clause walked, its sites checked
secret_summary(C, N/A, Mask-Opens, _, Out) :- secret_key(C, Mask, Opens, Key), secret_memo(N/A, Key, Out0), !,
    ( secret_memo_unclean(N/A, Key) -> secret_list_unclean ; true ), Out = Out0.
secret_summary(C, N/A, Mask-Opens, K, Out) :- secret_key(C, Mask, Opens, Key),
    memberchk(rec(N/A, Key), K), !,
    ( member(S, Mask), S \== 0, S \= w(_) -> maplist(=(S), Out) ; maplist(=(0), Out) ).
secret_summary(C, N/A, Mask-Opens, K, Out) :-
    secret_key(C, Mask, Opens, Key),
    (   maplist(==(0), Mask)
    ->  Out = Mask
    ;   C = sctx(Cls, _, _), get_assoc(N/A, Cls, Clauses),
        ( retract(secret_unclean) -> Before = yes ; Before = no ),
        same_length(Mask, Out0), maplist(=(0), Out0),
        foldl(secret_clause(C, Mask, Opens, [rec(N/A, Key)|K]), Clauses, Out0, Out1),
        secret_chosen(Clauses, Mask, Out1, Out),
        assertz(secret_memo(N/A, Key, Out)),
        ( secret_unclean -> assertz(secret_memo_unclean(N/A, Key)) ; true ),  % kept for the memo's next use
        ( Before == yes -> secret_list_unclean ; true )
    ).

%  a summary is kept per mask, the arguments left unbound and mode (a rule walked under a negation reports
%  no goal given a secret); the mask keeps each secret's name: a walk's errors and what it gives back name
%  the argument of the guard being checked, not of the first guard that called the rule
secret_key(sctx(_, _, Mode), Mask, Opens, Mode-List-Key-Opens) :- maplist(secret_key_of, Mask, Key),
    ( secret_lenient('args(_)') -> List = lenient ; List = strict ).

secret_key_of(X, Y) :- ( X == 0 -> Y = 0 ; Y = X ).

secret_open_flag(X, F) :- ( secret_open_term(X) -> F = 1 ; F = 0 ).

secret_hidden(sctx(Cls, Bases, _), sctx(Cls, Bases, hidden)).

secret_clause(C, Mask, Opens, K, c(Cl, F, L), Out0, Out) :-
    \+ \+ ( rule_head(Cl, H), ( Cl = (_ :- B) -> true ; B = true ), H =.. [_|As],
            (   maplist(secret_specialised, As, Mask)
            ->  secret_opened(As, Opens, Open), secret_seen_from(H, Open),
                foldl(secret_head_in, As, Mask, [], T0),
                secret_walk(B, C, F-L, K, T0, T),
                maplist(secret_head_out(T), As, Got)
            ;   maplist(=(0), Got)  % a clause the call's written values do not match
            ),
            nb_setval(sn_secret_out, Got) ),
    nb_getval(sn_secret_out, Got),
    maplist(secret_merged, Got, Out0, Out).

secret_opened([], [], []).
secret_opened([X|Xs], [F|Fs], Out) :- ( F == 1 -> Out = [X|Out1] ; Out = Out1 ), secret_opened(Xs, Fs, Out1).

%  a rule of several clauses given a secret: which clause answers may depend on it (a head's written value,
%  a comparison in a body), so what the call binds is computed from it, as a branch's (secret_out/4)
secret_chosen([_, _|_], Mask, Out0, Out) :- member(S, Mask), S \== 0, S \= w(_), \+ secret_lenient(S), !,
    secret_measured(S, M), maplist(secret_chosen_one(branch(M)), Out0, Out).
secret_chosen(_, _, Out, Out).

secret_chosen_one(B, O0, O) :- ( O0 == 0 -> O = B ; O = O0 ).

secret_specialised(X, M) :- ( M = w(V) -> X = V ; true ).

secret_head_in(X, M, A0, A) :- ( ( M == 0 ; M = w(_) ) -> A = A0 ; secret_add(X, M, A0, A) ).

%  what a head's argument comes out as: a secret, a value computed from one, or a branch(Name) mark
secret_head_out(T, X, B) :-
    (   secret_in(X, T, N) -> B = N
    ;   secret_vars(X, Vs), member(V, Vs), secret_entry(T, V, branch(N)) -> B = branch(N)
    ;   B = 0
    ).

secret_merged(G, O0, O) :-
    ( G == 0 -> O = O0 ; O0 == 0 -> O = G ; secret_rank(G, R), secret_rank(O0, R0), ( R > R0 -> O = G ; O = O0 ) ).
