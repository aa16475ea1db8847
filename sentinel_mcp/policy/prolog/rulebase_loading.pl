/*  Part of sentinel_core (included): reading rulebase files into a module and checking them together
    (the checks of each declaration: declaration_checks.pl; describing a rulebase: rulebase_info.pl). */

% ---------------------------------------------------------------- loading

%  sn_load(+RB, +FilesJson, -OutJson): read every file into module RB; report problems with file+line.
sn_load(RB, FilesJson, Out) :-
    from_json_atom(FilesJson, Spec),
    sn_load_files(RB, Spec, Out).

%  sn_load_bounded(+RB, +FilesJson, +Limit, -OutJson): sn_load/3 and, when the files have no errors,
%  sn_finish_load/1, within Limit inferences for the whole: a load that would not end (or not soon) is an
%  error naming the file being read (or every file, when it ran out while checking them together), and never
%  holds the engine.
sn_load_bounded(RB, FilesJson, Limit, Out) :-
    from_json_atom(FilesJson, Spec),
    load_spec(Spec, Files, _),
    nb_setval(sn_loading_file, []),
    (   catch(call_with_inference_limit(load_and_finish(RB, Spec, Out0), Limit, R), E, true)
    ->  true
    ;   R = failed
    ),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M0), format(atom(M), 'loading stopped: ~w', [M0])
    ;   R == failed
    ->  M = 'loading failed'
    ;   R == inference_limit_exceeded
    ->  format(atom(M), 'loading did not finish within ~D inferences (a clause that makes the load run \c
                         without end, or far too large a rulebase)', [Limit])
    ;   true
    ),
    (   var(M)
    ->  Out = Out0
    ;   nb_getval(sn_loading_file, At),
        ( At == [] -> Named = Files ; Named = [At] ),
        findall(P, ( member(F, Named), problem(error, F, 0, M, P) ), Errors),
        to_json_atom(json([errors=Errors, warnings=[]]), Out)
    ),
    nb_setval(sn_loading_file, []).

load_and_finish(RB, Spec, Out) :-
    load_problems(RB, Spec, Errors, Warnings),
    ( Errors == [] -> sn_finish_load(RB) ; true ),
    to_json_atom(json([errors=Errors, warnings=Warnings]), Out).

%  Spec: the files, or json([files=Files, includes=..., refused=...]) (rulebase_includes.pl)
sn_load_files(RB, Spec, Out) :-
    load_problems(RB, Spec, Errors, Warnings),
    to_json_atom(json([errors=Errors, warnings=Warnings]), Out).

load_problems(RB, Spec, Errors, Warnings) :-
    load_spec(Spec, Files, Includes),
    ( current_module(RB) -> sn_unload(RB) ; true ),
    add_import_module(RB, sentinel_rt, start),
    strict_arithmetic(RB),  % strict_arithmetic.pl: before any clause, so every call in RB is the strict one
    forall(decl_indicator(N/A), dynamic(RB:N/A)),
    dynamic([RB:'$src'/4, RB:'$rule_of'/3]),
    include_table(RB, Includes, Refused),  % rulebase_includes.pl
    findall(E, (member(F, Files), load_file_terms(RB, F, E)), Es0),
    append([Refused|Es0], Errors0),
    nb_setval(sn_loading_file, []),  % the checks of every file together
    index_base(RB),
    findall(E, post_load_problem(RB, E), Es1),
    findall(E, unread_include(RB, E), Es2),
    append([Errors0, Es1, Es2], Problems),
    partition([P]>>(P = json(L), memberchk(severity=error, L)), Problems, Errors, Warnings).

sn_unload(RB) :-
    forall(( current_predicate(RB:N/A), functor(H, N, A), \+ predicate_property(RB:H, imported_from(_)) ),
           ( strict_indicator(N/A) -> true ; abolish(RB:N/A) )).  % strict_arithmetic.pl's stay

%  walked(+RB, +Walk, +What, -Errors): call(Walk, RB, Errors), a load-time walk's errors (e(File, Line, M)); a
%  walk that fails (a case it does not know) is an error itself, at the rulebase's first term: it loaded
%  before, unchecked (a check that fails denies)
walked(RB, Walk, What, Es) :-
    (   call(Walk, RB, Es0)
    ->  Es = Es0
    ;   once(( RB:'$src'(_, _, F, L) ; F = '', L = 0 )),
        format(atom(M), 'the rulebase could not be checked: ~w did not finish; it is not loaded (a check \c
                         that cannot decide refuses)', [What]),
        Es = [e(F, L, M)]
    ).

problem(Sev, File, Line, Msg, json([severity=Sev, file=File, line=Line, message=Msg])).
%  one at a place in its line: its column as a field too (the message says it in words, as it did)
problem(Sev, File, Line, Col, Msg, json([severity=Sev, file=File, line=Line, column=Col, message=Msg])).

load_file_terms(RB, File, Errors) :-
    nb_setval(sn_loading_file, File),
    % UTF-8 whatever the locale: SWI-Prolog's default follows LANG/LC_ALL, and under C it read 'café' as
    % other characters than a caller's café (a deny list that never matched); the bytes were checked to be
    % UTF-8 before (clause_bounds.py), and a BOM is skipped
    catch(open(File, read, S, [encoding(utf8)]), E, true),
    (   nonvar(E)
    ->  message_to_codes_safe(E, M), problem(error, File, 0, M, P), Errors = [P]
    ;   % no quasi-quotations: the reader calls a {|Syntax||Text|}'s syntax as a goal while it reads (any one a
        % loaded library declares), before the clause is checked; refused as a syntax error instead
        current_prolog_flag(quasi_quotations, QQ),
        setup_call_cleanup(set_prolog_flag(quasi_quotations, false), read_terms(RB, File, S, Errors),
                           ( set_prolog_flag(quasi_quotations, QQ), close(S) ))
    ).

read_terms(RB, File, S, Errors) :-
    % error(_, _) only: the inference limit's own exception (sn_load_bounded/4) must end the load
    catch(read_term(S, T, [term_position(Pos), syntax_errors(error)]), error(E0, C0), E = error(E0, C0)),
    (   nonvar(E), E \= error(syntax_error(_), _)
    ->  % out of a resource (a term nested too deep for the C stack): the file stops here, not read on
        % from the middle of that term
        line_count(S, Line), resource_words(E, read, M), problem(error, File, Line, M, P), Errors = [P]
    ;   nonvar(E)
    ->  syntax_problem(File, E, P), Errors = [P|Rest], read_terms(RB, File, S, Rest)
    ;   T == end_of_file
    ->  Errors = []
    ;   stream_position_data(line_count, Pos, Line),
        (   catch(add_term(RB, File, Line, T, Ps0), error(F2, C2), E2 = error(F2, C2))
        ->  (   var(E2)
            ->  Ps = Ps0
            ;   % a clause that cannot be stored (a body nested too deep for the C stack, or no goal: a :- 1,
                % a --> 1): an error at its line, and the file is read on (clause_shapes.pl)
                clause_words(E2, M2), problem(error, File, Line, M2, P0), Ps = [P0]
            )
        ;   problem(error, File, Line, 'cannot load this clause', P0), Ps = [P0]
        ),
        append(Ps, Rest, Errors),
        read_terms(RB, File, S, Rest)
    ).

syntax_problem(File, error(syntax_error(end_of_file_in_block_comment), stream(_, 0, _, _)), P) :-
    unclosed_comment_at(File, Line, Col), !,  % syntax_words.pl: SWI-Prolog gives no position for it
    syntax_words(end_of_file_in_block_comment, W), format(atom(M), 'syntax error: ~w (column ~w)', [W, Col]),
    problem(error, File, Line, Col, M, P).
syntax_problem(File, error(syntax_error(What), stream(_, Line, Col, _)), P) :- !,
    syntax_words(What, W), format(atom(M), 'syntax error: ~w (column ~w)', [W, Col]), problem(error, File, Line, Col, M, P).
syntax_problem(File, error(syntax_error(What), file(_, Line, Col, _)), P) :- !,
    syntax_words(What, W), format(atom(M), 'syntax error: ~w (column ~w)', [W, Col]), problem(error, File, Line, Col, M, P).
syntax_problem(File, error(syntax_error(What), string(_, _)), P) :- !,
    syntax_words(What, W), format(atom(M), 'syntax error: ~w', [W]), problem(error, File, 0, M, P).
syntax_problem(File, E, P) :- message_to_codes_safe(E, M), problem(error, File, 0, M, P).

resource_words(E, Doing, M) :-
    message_to_codes_safe(E, M0),
    (   sub_atom(M0, _, _, _, 'C-stack')
    ->  format(atom(M), 'a term nested too deep to ~w (it would exhaust SWI-Prolog''s C stack): split it',
               [Doing])
    ;   Doing == read
    ->  format(atom(M), 'cannot read on: ~w', [M0])
    ;   format(atom(M), 'cannot load this clause: ~w', [M0])
    ).

message_to_codes_safe(E, M) :-
    catch(( '$messages':translate_message(E, Lines, []),
            with_output_to(string(S), print_message_lines(current_output, '', Lines)) ), _, fail), !,
    split_string(S, "", " \n", [S1]), atom_string(M, S1).
message_to_codes_safe(E, M) :- format(atom(M), '~q', [E]).

add_term(_, File, Line, T, Ps) :- reserved_arity_problems(T, File, Line, Ps), Ps \== [], !.  % reserved_heads.pl
add_term(RB, File, Line, (:- include_rules(Name)), Ps) :- !,
    include_terms(RB, File, Line, Name, Ps).  % rulebase_includes.pl: the file's terms, read here
add_term(RB, File, Line, (:- D), Ps) :- compound(D), D =.. [K, Spec], declaring(K), !,
    % multifile: other files may add clauses (as Prolog's own); public: symbolic queries call it
    % (unreachable_rules.pl); dynamic, discontiguous: nothing to do (no rule asserts, clauses are read as a whole).
    % Each names predicates a clause of the file could define, by the heads' allow list (head_problem/2)
    (   \+ multifile_indicators(Spec, _)
    ->  format(atom(M), '~w needs Name/Arity indicators, got ~q', [K, Spec]),
        problem(error, File, Line, M, P), Ps = [P]
    ;   multifile_indicators(Spec, PIs),
        findall(P, ( member(PI, PIs), indicator_problem(PI, M0), format(atom(M), '~w ~q: ~w', [K, PI, M0]),
                     problem(error, File, Line, M, P) ), Ps),
        (   Ps == [], memberchk(K, [multifile, public])
        ->  forall(member(PI, PIs), assertz(RB:'$src'(K, PI, File, Line)))
        ;   true
        )
    ).
add_term(RB, File, Line, (?- D), Ps) :- !,  % consult runs it as :- D: never a clause of ?-/1, silently
    add_term(RB, File, Line, (:- D), Ps).
add_term(_, File, Line, (:- D), [P]) :- sub_term(S, D), compound(S), compound_name_arity(S, include_rules, _), !,
    % not run, as any directive: but its file's rules would be missing unsaid, so an error
    format(atom(M), 'include_rules/1 is the whole declaration, never part of one: ~q', [D]),
    problem(error, File, Line, M, P).
add_term(_, File, Line, (:- D), [json([severity=warning, file=File, line=Line, message=M, code=directive])]) :- !,
    format(atom(M), 'directive not executed (only dynamic/discontiguous/multifile/public are accepted): ~q', [D]).
add_term(RB, File, Line, (H --> B), Ps) :- !,
    dcg_translate_rule((H --> B), Clause), add_term(RB, File, Line, Clause, Ps).
add_term(RB, File, Line, T, Ps) :-
    ( T = (H :- _) -> true ; H = T ),
    (   \+ callable(H)
    ->  format(atom(M), 'not a clause: ~q', [T]), problem(error, File, Line, M, P), Ps = [P]
    ;   H = Mod:_
    ->  format(atom(M), 'a rulebase defines its own predicates only, not ~q in module ~q', [H, Mod]),
        problem(error, File, Line, M, P), Ps = [P]
    ;   head_problem(H, M)
    ->  problem(error, File, Line, M, P), Ps = [P]
    ;   declaration(H), T = (_ :- _)
    ->  % a declaration is read as data (its '$src' term), never called: a body would be a second meaning
        % nothing checks (or a loop, if anything called it); a guard's condition is its third argument
        functor(H, N, A),
        format(atom(M), 'the declaration ~w/~w is a fact, not a rule: it cannot have a body', [N, A]),
        problem(error, File, Line, M, P), Ps = [P]
    ;   declaration(H), T \= (_ :- _)
    ->  check_declaration(T, File, Line, Ps),  % one of a shape no later step reads is not kept
        ( shape_problem(T, _) -> true ; assertz(RB:T), assertz(RB:'$src'(decl, T, File, Line)) )
    ;   store_rule(RB, T, File, Line), Ps = []  % rule_index.pl
    ).

% ---------------------------------------------------------------- base predicates and checks

%  base(+RB, +G): G is a base predicate of RB (looked up in an index built once per load: it is asked for
%  every goal of every proof).
base(RB, G) :- functor(G, N, A), RB:'$base'(N, A), !.

index_base(RB) :-
    dynamic(RB:'$base'/2),
    forall(( base_indicator(RB, N/A), \+ RB:'$base'(N, A) ), assertz(RB:'$base'(N, A))).

%  What the loader knows of a rulebase it reads off the declarations as they were read ('$src'/4), never by
%  calling the module's predicates: nothing a file defines runs while it loads.
decl(RB, D) :- RB:'$src'(decl, D, _, _).

base_indicator(RB, N/A) :- decl(RB, binding(H, _, _, _)), callable(H), functor(H, N, A).
base_indicator(RB, N/A) :- decl(RB, askable(H, _, _, _)), callable(H), functor(H, N, A).
base_indicator(RB, N/A) :- decl(RB, seed(H)), callable(H), functor(H, N, A).
base_indicator(RB, N/A) :- decl(RB, fact(N/A)), atom(N), integer(A).

post_load_problem(RB, P) :-
    RB:'$src'(decl, effect(_, _, Acts), File, Line), is_list(Acts), member(X, Acts),
    ( X = establish(H) ; X = establish(H, _) ), callable(H), \+ base(RB, H), functor(H, N, A),
    format(atom(M), 'an effect establishes ~w/~w, which is not a base predicate (declare it: fact(~w/~w))', [N, A, N, A]),
    problem(error, File, Line, M, P).
%  option(kept(Name/Arity)): facts an effect establishes kept for every conversation (kept_effects.py); only a
%  predicate fact/1 declares is written by effects alone (a binding's or askable's facts are a conversation's)
post_load_problem(RB, P) :-
    RB:'$src'(decl, option(kept(X)), File, Line), \+ ( X = N/A, atom(N), integer(A), decl(RB, fact(N/A)) ),
    format(atom(M), 'option kept(~q) must name a predicate declared with fact(Name/Arity)', [X]),
    problem(error, File, Line, M, P).
post_load_problem(RB, P) :-
    RB:'$src'(rule, T, File, Line), ( T = (H :- _) -> true ; H = T ), base(RB, H), functor(H, N, A),
    format(atom(M), '~w/~w is a base predicate (binding, askable, seed or fact); it cannot also have clauses', [N, A]),
    problem(error, File, Line, M, P).
%  A predicate belongs to one file: clauses another file adds would widen every rule that calls it (a
%  helper's admin(_) beside another file's admin(root)), so adding a file could weaken a guard. Unless
%  every file with clauses of it declares it `:- multifile Name/Arity.` (swarm_cap/2, whose lowest value
%  wins): a file's consent covers its own clauses only, so a second file cannot open the first's.
%  A file and those it includes are one text (owner_file/3, rulebase_includes.pl).
post_load_problem(RB, P) :-
    findall(N/A-O, ( RB:'$src'(rule, T, File, _), owner_file(RB, File, O), rule_head(T, H), functor(H, N, A) ),
            L0),
    sort(L0, L),  % by name, then file: a predicate in two files is two neighbours (linear, never pairwise:
                  % 20,000 rules took 200 million inferences pairwise)
    setof(PI, in_two_files(L, PI), Shared), member(N/A, Shared),
    \+ forall(member(N/A-O, L), owned_multifile(RB, N/A, O)),
    once(( RB:'$src'(rule, T1, F1, L1), rule_head(T1, H1), functor(H1, N, A) )),  % the first file loaded
    owner_file(RB, F1, O1),
    findall(O, member(N/A-O, L), Os), member(O2, Os), O2 \== O1,
    once(( RB:'$src'(rule, T2, F2, L2), owner_file(RB, F2, O2), rule_head(T2, H2), functor(H2, N, A) )),
    format(atom(M), '~w/~w also has clauses in ~w (line ~w): a predicate belongs to one file (clauses from \c
                     another file would widen every rule that calls it); rename one of them, or declare \c
                     :- multifile ~w/~w. in each file that has its clauses', [N, A, F1, L1, N, A]),
    problem(error, F2, L2, M, P).

%  A base predicate belongs to one file too, by the same consent: each source of its facts (fact/1, seed/1,
%  binding/4, askable/4, an effect's establish) widens every guard that reads it, so another file's
%  seed(admin(eve)), or an askable of it the agent answers, let eve through the first file's admin(U).
post_load_problem(RB, P) :-
    findall(N/A-O, ( base_source(RB, N/A, File, _), owner_file(RB, File, O) ), L0),
    sort(L0, L),
    setof(PI, in_two_files(L, PI), Shared), member(N/A, Shared),
    \+ forall(member(N/A-O, L), owned_multifile(RB, N/A, O)),
    once(base_source(RB, N/A, F1, L1)),  % the first file loaded
    owner_file(RB, F1, O1),
    findall(O, member(N/A-O, L), Os), member(O2, Os), O2 \== O1,
    once(( base_source(RB, N/A, F2, L2), owner_file(RB, F2, O2) )),
    format(atom(M), 'the base predicate ~w/~w also has a declaration in ~w (line ~w): its facts come from one \c
                     file (a seed, binding, askable or effect from another would widen every guard that \c
                     reads it); rename one of them, or declare :- multifile ~w/~w. in each file that has \c
                     one', [N, A, F1, L1, N, A]),
    problem(error, F2, L2, M, P).

%  And an option a rule reads is that rule's file's: another file's option(open) turned a guard's
%  ( option(open) -> true ; ... ) open (Sentinel's own options, which no rule reads, come from any file).
post_load_problem(RB, P) :-
    RB:'$src'(decl, option(O), F2, L2), owner_file(RB, F2, W2),
    once(( RB:'$src'(Kind, T, F1, L1), owner_file(RB, F1, W1), W1 \== W2, body_of(Kind, T, Body),
           leaf_goal(Body, G), nonvar(G), G = option(O1), \+ O1 \= O,
           \+ ( owned_multifile(RB, option/1, W1), owned_multifile(RB, option/1, W2) ) )),
    format(atom(M), 'option ~q is read by a rule of ~w (line ~w): an option a rule reads is declared in that \c
                     rule''s file (from another it would change the rule); move it, or declare :- multifile \c
                     option/1. in both files', [O, F1, L1]),
    problem(error, F2, L2, M, P).

base_source(RB, PI, File, Line) :- RB:'$src'(decl, D, File, Line), base_head(D, PI).
base_source(RB, N/A, File, Line) :-
    RB:'$src'(decl, effect(_, _, Acts), File, Line), is_list(Acts), member(X, Acts),
    ( X = establish(H) ; X = establish(H, _) ), callable(H), functor(H, N, A).

rule_head(T, H) :- ( T = (H :- _) -> true ; H = T ).
in_two_files(Sorted, PI) :- append(_, [PI-_, PI-_|_], Sorted).

%  A confirmation's text is a template written in the rulebase, with safe directives only (goal_check.pl).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_goal(Body, G), nonvar(G), confirmation_goal(G, F), format_problem(F, M0),
    format(atom(M), 'the text of ~w: ~w', [G, M0]),
    problem(error, File, Line, M, P).

confirmation_goal(confirmed(F, _), F).  % confirmed_items/2,3 show their heading as it is: no template
confirmation_goal(confirmed(F, _, _), F).

%  Every goal a rule, guard or context check calls must be on the allow list (goal_check.pl).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_goal(Body, G), catch(check_goal(rulebase, RB, G), refused(M), true), nonvar(M),
    problem(error, File, Line, M, P).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_or_require(Body, require(_, _, Ref)), \+ valid_ref(Ref),
    format(atom(M), 'the citation of require/3 must be policy_ref(Document, Anchor), got ~q', [Ref]),
    problem(error, File, Line, M, P).
%  A context read by a name no file of the rulebase declares (checked after all files: one declares it,
%  another reads it) is never bound: the goal never holds, a typo the guard quietly denies on.
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), body_of(Kind, T, Body),
    leaf_goal(Body, context_value(N, _)), atom(N),
    \+ RB:'$src'(decl, context(N), _, _), \+ RB:'$src'(decl, context(N, _, _), _, _),
    format(atom(M), 'context_value(~q, _) names no context/1 or context/3 any file of the rulebase declares: \c
it is never bound, so the goal never holds', [N]),
    problem(error, File, Line, M, P).
post_load_problem(RB, P) :-
    RB:'$src'(decl, askable(H, Q, Ty, _), File, Line), ( atom(Q) ; string(Q) ), callable(H), valid_type(Ty),
    safe_format(Q),  % an unsafe one is an error already (decl_problem), and is never run
    askable_input_count(H, Ty, NI), length(Args, NI), maplist(=(x), Args),
    \+ ( append(Used, _, Args), catch(format(atom(_), Q, Used), _, fail) ),
    format(atom(M), 'askable question ~q does not fit the ~w input argument(s) of ~q', [Q, NI, H]),
    problem(warning, File, Line, M, P).

askable_input_count(H, yes_no, N) :- !, functor(H, _, N).
askable_input_count(H, _, N) :- functor(H, _, A), N is max(0, A - 1).

body_of(rule, (_ :- B), B).
body_of(decl, guard(_, _, G), G).
body_of(decl, context(_, _, G), G).
body_of(decl, askable(_, _, choice_of(_, _, G), _), G).

%  leaf_goal(+Body, -Goal): every goal Body calls that is not itself a control construct or allowed
%  meta-call (variables and module-qualified goals included, so that the allow list sees them).
leaf_goal(V, V) :- var(V), !.
leaf_goal(M:G, M:G) :- !.
leaf_goal(G, L) :- callable(G), catch(goal_parts(rulebase, G, Parts), refused(_), fail), !,
    member(Part, Parts), leaf_goal(Part, L).
leaf_goal(G, G).

%  every require/2,3 a body calls, at any depth of its control constructs and meta-calls
leaf_or_require(B, R) :- nonvar(B), B = require(G, _, _), ( R = B ; leaf_or_require(G, R) ).
leaf_or_require(B, R) :- nonvar(B), B = require(G, _), leaf_or_require(G, R).
leaf_or_require(B, R) :- nonvar(B), B \= require(_, _), B \= require(_, _, _), callable(B),
    catch(goal_parts(rulebase, B, Parts), refused(_), fail), member(X, Parts), leaf_or_require(X, R).

sentinel_builtin(G) :- functor(G, N, A), sentinel_rt_export(N/A).
sentinel_builtin(confirmed(_, _)).
sentinel_builtin(confirmed(_, _, _)).
sentinel_builtin(require(_, _)).
sentinel_builtin(require(_, _, _)).
sentinel_builtin(confirmed_items(_, _)).
sentinel_builtin(confirmed_items(_, _, _)).
sentinel_rt_export(PI) :- module_property(sentinel_rt, exports(L)), memberchk(PI, L).

% Make base predicates callable natively (inside findall/forall/...): each looks itself up in the store.
install_base_wrappers(RB) :-
    forall(( base_indicator(RB, N/A), \+ wrapped(RB, N/A) ),
           ( functor(H, N, A), assertz(RB:(H :- sentinel_core:base_native(N, A, H))), assertz(RB:'$wrapped'(N/A)) )).
wrapped(RB, PI) :- catch(RB:'$wrapped'(PI), _, fail).

sn_finish_load(RB) :- dynamic(RB:'$wrapped'/1), install_base_wrappers(RB), mark_cuts(RB), compile_rulebase(RB),
    note_guard_wildcards(RB), compile_guards(RB), define_library_goals(RB).

%  Every library predicate the rulebase's bodies call is loaded now, with no inference limit, not autoloaded
%  by the first decision that calls it (a decision under a small cap, sn_decide_capped/10, could not).
define_library_goals(RB) :-
    forall(( RB:'$src'(Kind, T, _, _), body_of(Kind, T, Body), leaf_goal(Body, G), callable(G), G \= _:_ ),
           ignore(catch('$define_predicate'(RB:G), _, true))).

% Clauses with a cut run natively (the meta-interpreter does not model cut); their base facts are still
% looked up (and needs recorded) through the base wrappers.
mark_cuts(RB) :-
    dynamic(RB:'$has_cut'/1),
    forall(( RB:'$src'(rule, (H :- B), _, _), body_has_cut(B), functor(H, N, A), \+ RB:'$has_cut'(N/A) ),
           assertz(RB:'$has_cut'(N/A))).

body_has_cut(B) :- leaf_goal(B, G), G == !, !.
