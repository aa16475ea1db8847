/*  Part of sentinel_core (included): the checks of a rulebase's declarations as they are read (binding/4,
    askable/4, guard/3, effect/3, option/1, ...): an error at load for each shape or option Sentinel does
    not read, never a declaration quietly ignored. */

system_pred(N/A) :- functor(H, N, A), predicate_property(system:H, defined), \+ declaration(H).

check_declaration(T, File, Line, Ps) :-
    findall(P, (decl_problem(T, Sev, M), problem(Sev, File, Line, M, P)), Ps).
decl_problem(D, error, M) :- shape_problem(D, M).  % clause_shapes.pl: the shapes Sentinel reads

decl_problem(binding(H, _, _, _), error, M) :- \+ callable(H), format(atom(M), 'binding head must be a predicate term: ~q', [H]).
decl_problem(binding(_, Tool, _, _), error, M) :- \+ Tool = tool(_, _),
    format(atom(M), 'binding tool must be tool(Name, [Arg = Value, ...]), got ~q', [Tool]).
decl_problem(binding(_, tool(N, Args), _, _), error, M) :- ( \+ atom(N) ; \+ is_list(Args) ),
    format(atom(M), 'binding tool must be tool(Name, [Arg = Value, ...]) with an atom name, got ~q', [tool(N, Args)]).
decl_problem(binding(_, _, X, _), error, M) :- \+ ( X = extract(L), is_list(L) ),
    format(atom(M), 'binding extraction must be extract([Var = Pointer, ...]), got ~q', [X]).
decl_problem(binding(H, _, extract(L), _), error, M) :- is_list(L), member(E, L),
    \+ ( E = (V = Ptr), var(V), valid_pointer(Ptr), term_variables(H, HV), member(V1, HV), V1 == V ),
    format(atom(M), 'extraction ~q must be Var = Pointer (or key(Pointer)) with Var a variable of the head', [E]).
decl_problem(binding(_, _, _, O), error, M) :- \+ is_list(O), format(atom(M), 'binding options must be a list, got ~q', [O]).
decl_problem(binding(_, _, _, O), error, M) :- is_list(O), member(X, O), \+ binding_option(X),
    format(atom(M), 'binding option ~q is not one of ttl(Seconds), ttl(session), required, fresh_for_writes, absent_on_error, absent_on_error([Text, ...])', [X]).
decl_problem(askable(_, Q, _, _), error, M) :- \+ ( (string(Q) ; atom(Q)), Q \== '', Q \== "" ),
    format(atom(M), 'askable without a question (a non-empty string is needed), got ~q', [Q]).
decl_problem(askable(_, Q, _, _), error, M) :- ( atom(Q) ; string(Q) ), Q \== '', format_problem(Q, M).
decl_problem(askable(_, _, T, _), error, M) :- \+ valid_type(T),
    format(atom(M), 'askable type must be yes_no, choice([...]), choice_of(Value, Label, Goal), text or number, got ~q', [T]).
decl_problem(askable(H, _, T, _), error, M) :- T \== yes_no, callable(H), functor(H, _, 0),
    format(atom(M), 'askable ~q of type ~q needs an answer argument (its last argument)', [H, T]).
%  The answer argument is where the answer goes: a variable of its own. Fixed (approved(small, yes)) or tied to
%  an input (same(X, X)), no answer fits the head, so the question was asked and every answer refused.
decl_problem(askable(H, _, T, _), error, M) :- T \== yes_no, callable(H), H =.. [_|As], append(Ins, [A], As),
    \+ ( var(A), term_variables(Ins, Vs), \+ ( member(V, Vs), V == A ) ),
    format(atom(M), 'the answer argument (the last) of askable ~q must be a variable that occurs nowhere else in its head (a ~q question\'s answer goes there; for a question whose arguments are all given, use yes_no)', [H, T]).
decl_problem(askable(_, _, _, O), error, M) :- \+ is_list(O), format(atom(M), 'askable options must be a list, got ~q', [O]).
decl_problem(askable(_, _, _, O), error, M) :- is_list(O), member(X, O), \+ askable_option(X),
    format(atom(M), 'askable option ~q is not one of from([user]), from([user, agent]), ttl(Seconds), ttl(session), unknown(as(Value)), unknown(Text)', [X]).
decl_problem(askable(_, _, _, O), error, M) :- is_list(O), append(_, [X|Rest], O), askable_option(X),
    functor(X, N, 1), functor(Y, N, 1), memberchk(Y, Rest),
    format(atom(M), 'askable option ~w/1 is given twice (~q and ~q)', [N, X, Y]).
decl_problem(askable(H, _, choice_of(V, _, _), _), error, M) :- callable(H), H =.. As, last(As, A), A \== V,
    format(atom(M), 'the value of choice_of(Value, Label, Goal) must be the answer (last) argument of ~q', [H]).
decl_problem(askable(_, _, choice(L), _), error, M) :- is_list(L), member(X, L), ( X = (V - _) -> true ; V = X ),
    choice_json(V, text(i_dont_know)),  % the atom, and the text "i_dont_know": one JSON value, the answer's
    format(atom(M), 'i_dont_know is the answer "I don''t know" of every question; it cannot be a choice', []).
decl_problem(askable(_, _, choice(L), _), error, M) :- once(valid_type(choice(L))),
    once(choice_list_problem(L, M)).
decl_problem(policy_document(N, P), error, M) :- \+ ( atom(N), ( atom(P) ; string(P) ) ),
    format(atom(M), 'policy_document(Name, Path) needs an atom name and a path, got ~q', [policy_document(N, P)]).
decl_problem(cites(PI, Ref), error, M) :- \+ ( PI = N/A, atom(N), integer(A), valid_ref(Ref) ),
    format(atom(M), 'cites(Name/Arity, policy_ref(Document, Anchor)) expected, got ~q', [cites(PI, Ref)]).
decl_problem(guard(T, _, _), error, M) :- \+ atom(T), format(atom(M), 'guard tool name must be an atom, got ~q', [T]).
decl_problem(guard(_, A, _), error, M) :- var(A), variable_pattern(M0), format(atom(M), 'guard ~w', [M0]).
decl_problem(guard(_, A, _), error, M) :- nonvar(A), \+ is_list(A), format(atom(M), 'guard argument pattern must be a list of Name = Term, got ~q', [A]).
decl_problem(seed(F), error, M) :- \+ ( callable(F), ground(F) ), format(atom(M), 'seed must be a ground fact, got ~q', [F]).
decl_problem(context(N), error, M) :- \+ atom(N), format(atom(M), 'context name must be an atom, got ~q', [N]).
decl_problem(context(N, _, _), error, M) :- \+ atom(N), format(atom(M), 'context name must be an atom, got ~q', [N]).
decl_problem(effect(_, _, A), error, M) :- \+ is_list(A), format(atom(M), 'effect actions must be a list, got ~q', [A]).
decl_problem(effect(_, _, A), error, M) :- is_list(A), member(X, A), \+ effect_action(X),
    format(atom(M), 'unknown effect action ~q (expected invalidate(Head), establish(Head) or establish(Head, Cond))', [X]).
decl_problem(fact(X), error, M) :- \+ X = _/_, format(atom(M), 'fact declaration must be Name/Arity, got ~q', [X]).
%  A base predicate named like a builtin a body may call, a construct or Sentinel's own (member/2, humanized/2,
%  fact_provenance/2, ...): its look-up wrapper replaces the library's predicate in the module, so every call
%  of that name in every file's rules would look up facts instead. A draft named a binding after a hostile
%  upstream's tool get_member, and `\+ member(X, Blocked)` then held for a blocked X (no fact matched).
decl_problem(D, error, M) :- base_head(D, N/A), reserved_base_name(N/A),
    format(atom(M), 'a base predicate cannot be named ~w/~w: that is a builtin or Sentinel''s own, and every \c
                     call of it in the rules would look up facts instead (rename it)', [N, A]).

decl_problem(option(O), error, M) :- \+ ground(O),
    format(atom(M), 'an option must be ground (a variable in it would turn on every option), got ~q', [O]).
%  A budget is the engine's time, which every principal's decisions wait for: at most max_counted_option/1
%  (a proof of 100,000,000 inferences takes seconds; an option past it held the engine as long as it said).
decl_problem(option(O), error, M) :- ground(O), counted_option(O, N), max_counted_option(Max),
    \+ ( integer(N), N > 0, N =< Max ),
    functor(O, Name, _),
    format(atom(M), 'option ~w(N) needs a positive integer N, at most ~d (the engine every decision waits for \c
                     runs it), got ~q', [Name, Max, O]).

%  the name of the base predicate a declaration makes, and the names no base predicate may take (above)
base_head(binding(H, _, _, _), N/A) :- callable(H), functor(H, N, A).
base_head(askable(H, _, _, _), N/A) :- callable(H), functor(H, N, A).
base_head(seed(H), N/A) :- callable(H), functor(H, N, A).
base_head(fact(PI), N/A) :- nonvar(PI), PI = N/A, atom(N), integer(A), A >= 0.

reserved_base_name(N/_) :- sub_atom(N, 0, 1, _, '$'), !.
reserved_base_name(PI) :- decl_indicator(PI), !.
reserved_base_name(PI) :- system_pred(PI), !.
reserved_base_name(PI) :- allowed_builtin(rulebase, PI), !.
reserved_base_name(N/A) :- functor(H, N, A), ( sentinel_builtin(H) ; special_form(H) ), !.
reserved_base_name(N/A) :- functor(H, N, A), catch(goal_parts(rulebase, H, _), _, true), !.

%  Sentinel's own options that take a count; any other option is a flag of the rulebase's own, which its rules
%  may read (loud :- option(verbose)).
max_counted_option(100000000).
counted_option(inference_limit(N), N).
counted_option(extract_inference_limit(N), N).

effect_action(invalidate(H)) :- callable(H).
effect_action(establish(H)) :- callable(H).
effect_action(establish(H, C)) :- callable(H), callable(C).

valid_pointer(key(P)) :- !, atom(P).
valid_pointer(P) :- atom(P).
valid_type(yes_no). valid_type(text). valid_type(number).
valid_type(choice(L)) :- is_list(L), maplist(choice_item, L).  % (an empty one: choice_list_problem/2)
valid_type(choice_of(_, _, G)) :- callable(G).
choice_item(V - L) :- !, atomic(V), ( atomic(L) ; string(L) ).
choice_item(V) :- atomic(V).
valid_ref(policy_ref(D, A)) :- atom(D), ( atom(A) ; string(A) ).

binding_option(X) :- var(X), !, fail.
binding_option(ttl(N)) :- !, ( N == session -> true ; number(N), N > 0, N < inf ).  % finite; ttl(X) no session
binding_option(required).
binding_option(fresh_for_writes).  % read again before each write is decided (write_rereads.py)
binding_option(absent_on_error).  % an error answer is "nothing there" (fact_terms.pl, sn_absent/5)
binding_option(absent_on_error(Ts)) :-  % only an error of one of these texts (each given, at most 4,096 long)
    is_list(Ts), Ts \== [], forall(member(T, Ts), ( ( atom(T) ; string(T) ), T \== '', T \== "" )).

%  askable_option(+X): what an askable's options may say (anything else is an error at load, never ignored:
%  a misspelt ttl would keep an answer for the whole conversation).
askable_option(X) :- var(X), !, fail.
askable_option(from(L)) :- !, is_list(L), L \== [], forall(member(W, L), ( atom(W), memberchk(W, [user, agent]) )).
askable_option(ttl(N)) :- !, ( N == session -> true ; number(N), N > 0, N < inf ).  % finite: 1.0Inf is a number
askable_option(unknown(as(V))) :- !, ground(V).
askable_option(unknown(T)) :- ( atom(T) ; string(T) ), T \== '', T \== "".

%  choice_list_problem(+Choices, -Message): why a choice([...]) list makes no question a form can ask, as
%  questions.py builds it: each choice is offered as its JSON value with a title (its label, else the value
%  humanized), and "I don't know" is one more. A value with no JSON value, a label that is no text, or two
%  choices an answer (one JSON value: '1' and "1", 1 and 1.0) or a person (one title, whatever its case and
%  spacing, "I don't know"'s too) could not tell apart: refused when asked, so refused here, at its line.
choice_list_problem([], 'choice([]) offers nothing to choose: a choice question needs at least one choice').
choice_list_problem(L, M) :- member(X, L), choice_parts(X, V, _), \+ choice_json(V, _),
    format(atom(M), 'the choice ~q has no value a form can offer (a text, a finite number, true, false or null)',
           [V]).
choice_list_problem(L, M) :- member(V - Lb, L), \+ ( ( atom(Lb) ; string(Lb) ), Lb \== '', Lb \== "" ),
    format(atom(M), 'the label of the choice ~q must be text (a non-empty string or atom), got ~q', [V, Lb]).
choice_list_problem(L, M) :- member(X, L), choice_title_key(X, T, K), dont_know_title_key(K),
    format(atom(M), 'the choice titled "~w" reads as the answer "I don''t know" every question has: a person \c
                     could not tell them apart', [T]).
choice_list_problem(L, M) :-
    findall(K-X, ( member(X, L), choice_parts(X, V, _), choice_json(V, K) ), Vs), same_key(Vs, X1, X2),
    format(atom(M), 'the choices ~q and ~q are one value in a form (JSON): an answer could not tell them apart',
           [X1, X2]).
choice_list_problem(L, M) :-
    findall(K-X, ( member(X, L), choice_title_key(X, _, K) ), Ts),
    same_key(Ts, X1, X2), choice_title_key(X1, T, _),
    format(atom(M), 'the choices ~q and ~q are both shown as "~w": a person could not tell them apart',
           [X1, X2, T]).

choice_parts(V - Lb, V, Lb) :- !.
choice_parts(V, V, @(none)).

%  the JSON value a choice is offered as (answer_json.pl's pl_json/2), as a key: a number by its value (1 and
%  1.0 are one JSON number), text by its characters (an atom and a string alike); none for a value JSON has
%  not (a float with no number, [] a list)
choice_json(V, bool(V)) :- ( V == true ; V == false ), !.
choice_json(V, null) :- V == null, !.
choice_json(V, text(V)) :- atom(V), !.
choice_json(V, text(A)) :- string(V), !, atom_string(A, V).
choice_json(V, num(V)) :- integer(V), !.
choice_json(V, num(K)) :- float(V), V =:= V, abs(V) =\= inf, ( V =:= truncate(V) -> K is truncate(V) ; K = V ).

%  the title a person reads (the label, else the value as questions.humanize shows its JSON value), and its
%  key: lower case, its words one space apart
choice_title_key(X, T, K) :- choice_parts(X, V, Lb), choice_title(V, Lb, T), folded_title(T, K).
choice_title(_, Lb, T) :- ( atom(Lb) ; string(Lb) ), Lb \== '', Lb \== "", !, atom_string(T, Lb).
choice_title(V, _, T) :- choice_json(V, J), !, json_title(J, V, T0),
    atomic_list_concat(Ws, '_', T0), atomic_list_concat(Ws, ' ', T).
json_title(bool(true), _, 'True').
json_title(bool(false), _, 'False').
json_title(null, _, 'None').
json_title(text(A), _, A).
json_title(num(_), V, T) :- format(atom(T), '~w', [V]).

folded_title(T, K) :-
    downcase_atom(T, D), split_string(D, " \t\n\r", " \t\n\r", Ws0), exclude(==(""), Ws0, Ws),
    atomic_list_concat(Ws, ' ', K).
dont_know_title_key('i don\'t know').

%  two elements of Keyed (Key-Choice pairs) of one key
same_key(Keyed, X1, X2) :- msort(Keyed, Sorted), append(_, [K1-X1, K2-X2|_], Sorted), K1 == K2, !.

%  '$VAR'(N) is a ground term that writeq writes as a variable's name (numbervars): the store keeps a fact as
%  that text and reads it back, so seed(admin('$VAR'(1))) was mirrored as admin(_), which held for anyone;
%  and a proof, an audit record or a question showing such a term reads otherwise than it decided. Refused in
%  every clause and declaration (the store refuses such a fact too: fact_terms.pl's ground_fact_text/2).
post_load_problem(RB, P) :-
    RB:'$src'(Kind, T, File, Line), memberchk(Kind, [rule, decl]), written_as_variable(T),
    format(atom(M), 'this clause holds the term ''$VAR''(_), which Sentinel writes as a variable (a fact \c
                     of it would hold for any value, a proof showing it reads otherwise): write the value \c
                     itself', []),
    problem(error, File, Line, M, P).
