/*  Part of sentinel_core (included): the secret arguments the rulebase itself names for a declaration's
    tool, for the walk of secret_flows.pl at load.

    At load the loader does not know a tool's arguments, so the whole argument list (args(A)) is no secret
    (secret_lenient/1: a device guard reads every argument so). But when the rulebase says the tool has a
    secret argument, a guard showing the whole list (a question, a denial's reason, an askable, a fact)
    shows that secret to a person, and the loader can name it: the declaration is walked with the list as
    strict as at a listing whose schema declares those names (secret_extra/1). The rulebase names one by a
    secret-named argument in the declaration's own pattern, in another guard's or effect's of the same tool
    (by its name or a prefix*), in a binding's tool arguments, or as a key the declaration reads from the
    list (member(password = P, A), option_value(A, pin, _, P)). A guard of a tool no rule names a secret
    argument of may show the list: what it holds of a secret is known only from the tool's schema, and the
    listing walk (sn_schema_secret_flows/5) refuses it then.
*/

%  secret_list_names(+RB, +Decl, -Names): the secret argument names the rulebase gives Decl's tool, sorted
secret_list_names(RB, D, Names) :-
    (   D =.. [_, T, Pat|Rest], atom(T), is_list(Pat), memberchk(args(_), Pat)
    ->  findall(N, secret_named_for(RB, T, Pat, Rest, N), Ns), sort(Ns, Names)
    ;   Names = []
    ).

secret_named_for(_, _, Pat, _, N) :- secret_pattern_name(Pat, N).
secret_named_for(RB, T, _, _, N) :- RB:'$src'(decl, D, _, _), ( D = guard(T2, Pat, _) ; D = effect(T2, Pat, _) ),
    atom(T2), secret_tools_meet(T, T2), is_list(Pat), secret_pattern_name(Pat, N).
secret_named_for(RB, T, _, _, N) :- RB:'$src'(decl, binding(_, tool(T2, Args), _, _), _, _), atom(T2),
    secret_tools_meet(T, T2), is_list(Args), secret_pattern_name(Args, N).
secret_named_for(_, _, _, Body, N) :- sub_term(X, Body), compound(X),
    ( X = (K = _) ; X = option_value(_, K, _, _) ), atom(K), secret_argument_name(K), N = K.

secret_pattern_name(Pat, N) :- member(E, Pat), nonvar(E), E = (N0 = _), text_to_atom_safe(N0, N),
    secret_argument_name(N).

%  two declarations' tools meet: the same name, or a prefix* covering the other
secret_tools_meet(T, T) :- !.
secret_tools_meet(T1, T2) :- ( secret_prefix_covers(T1, T2) ; secret_prefix_covers(T2, T1) ), !.

secret_prefix_covers(P, T) :- atom_concat(Prefix, '*', P), sub_atom(T, 0, _, _, Prefix).

/*  A declaration reading the list by a key the rulebase does not write as a clean name also says the tool may
    have a secret argument: a key a helper rule, a fact, atom_concat/3 or sub_atom/5 gives (key_of(K),
    member(K = V, A)), a secret-named key a helper rule reads (get(A, password, V)), or a read by position or
    by shape (nth0/3, A = [_ = V|_]). Only reads by a written key that names no secret (option_value(A, user,
    '', U)), the list's length and passing it whole are clean (an allow list): after any other read, the
    declaration is walked again as strictly, the secret named by how it was read (secret_unclean_name/1).
    What a rule's walk found is kept with its summary (secret_memo_unclean/2), so a rule met again says so.
*/

%  the walk of one declaration: as strict as the secret names the rulebase gives its tool, or, at load when
%  it names none, strict after an unclean read of the list
secret_walk_declaration(RB, D, Extra, Body, Ctx, P, Ts) :-
    secret_walk_extra(RB, D, Extra), D =.. [_, _, Pat|_],
    retractall(secret_unclean), secret_seen_from(Pat), secret_walk(Body, Ctx, P, [], Ts, _),
    (   secret_unclean, secret_extra([])
    ->  retractall(secret_unclean), secret_unclean_name(U),
        retractall(secret_extra(_)), assertz(secret_extra([U])),
        secret_seen_from(Pat), secret_walk(Body, Ctx, P, [], Ts, _)
    ;   true
    ).

%  at load, a declaration whose tool the rulebase names a secret argument of reads the whole argument list
%  as strictly as a listing declaring it would
secret_walk_extra(RB, D, []) :- !, secret_list_names(RB, D, X),
    retractall(secret_extra(_)), assertz(secret_extra(X)).
secret_walk_extra(_, _, _).

secret_unclean_name('an argument it reads by a key that is no written, non-secret name').

%  a read of the list at load other than by a clean written key (the walk is lenient then)
secret_list_unclean :- ( secret_lenient('args(_)'), \+ secret_unclean -> assertz(secret_unclean) ; true ).
