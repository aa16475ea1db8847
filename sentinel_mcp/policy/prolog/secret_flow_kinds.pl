/*  Part of sentinel_core (included): what each goal a rulebase may call makes of a secret it is given, for
    the walk of secret_flows.pl. Every goal the allow list admits (goal_check.pl: pure_builtin/2,
    rulebase_only_builtin/1, sentinel_rt's exports, the control constructs and meta-calls) has a row:
    tests/policy/test_secret_derived_flows.py fails for one admitted without it, so a builtin added to the
    allow list is decided here on purpose, never by a default.

    check:   succeeds or fails, binds nothing (a comparison, a type test): a secret may be given it; which way
             it went is one bit, the rulebase's choice (a branch's bindings are followed: secret_branches/7)
    measure: binds a number or an order of it (a length, compare/3): allowed, what it binds is computed from
             the secret (of(Name)): kept in the proof as the measure is, never shown
    alias:   =/2 and its twin: a comparison with a written value, or an alias
    makes:   computes its outputs from its inputs: given a secret (or a piece of one), a goal whose values
             the proof keeps (refused, but under a negation); given a measure, a measure
    collect: an all-solutions or aggregation: what it collects is computed from the secret when its template
             holds it, or when its goal is given it (which solutions exist, how many, which is largest)
    control: a control construct or require/2,3 (walked through)
    site:    shows its arguments to a person (secret_sites/4)
*/

secret_flow_kind(N/A, K) :- secret_kind_row(N, A, K0), !, K = K0.

secret_kind_of(G, K) :- callable(G), functor(G, N, A), secret_flow_kind(N/A, K).

% control and sites
secret_kind_row(',', 2, control). secret_kind_row(;, 2, control). secret_kind_row(->, 2, control).
secret_kind_row(*->, 2, control). secret_kind_row(\+, 1, control). secret_kind_row(once, 1, control).
secret_kind_row(ignore, 1, control). secret_kind_row(forall, 2, control). secret_kind_row(require, 2, control).
secret_kind_row(require, 3, control). secret_kind_row(!, 0, check).
secret_kind_row(confirmed, 2, site). secret_kind_row(confirmed, 3, site).
secret_kind_row(confirmed_items, 2, site). secret_kind_row(confirmed_items, 3, site).
secret_kind_row(findall, 3, collect). secret_kind_row(findall, 4, collect). secret_kind_row(aggregate_all, 3, collect).
secret_kind_row(bagof, 3, collect). secret_kind_row(setof, 3, collect).
% comparisons and type tests
secret_kind_row(N, A, check) :- memberchk(N/A, [true/0, fail/0, false/0, (\=)/2, (==)/2, (\==)/2, (@<)/2, (@>)/2,
    (@=<)/2, (@>=)/2, var/1, nonvar/1, atom/1, number/1, integer/1, float/1, atomic/1, compound/1, callable/1,
    is_list/1, string/1, ground/1, (=:=)/2, (=\=)/2, (<)/2, (>)/2, (=<)/2, (>=)/2, iso_date_before/2,
    speaks_of_a_code/1, calendar_date/1, calendar_time/1, person_name/1]).
secret_kind_row(N, A, measure) :- memberchk(N/A, [atom_length/2, string_length/2, length/2, compare/3]).
secret_kind_row(N, A, alias) :- memberchk(N/A, [(=)/2, unify_with_occurs_check/2]).
% everything else computes: arithmetic, terms, text, lists, sentinel_rt's lookups and formats
secret_kind_row(N, A, makes) :- memberchk(N/A, [(is)/2, succ/2, plus/3, between/3, functor/3, arg/3, (=..)/2,
    copy_term/2, term_variables/2, atom_concat/3, sub_atom/5, atom_number/2, atom_string/2, atom_chars/2,
    atom_codes/2, char_code/2, number_codes/2, number_string/2, atomic_list_concat/2, atomic_list_concat/3,
    upcase_atom/2, downcase_atom/2, string_concat/3, sub_string/5, string_chars/2, string_codes/2,
    string_to_atom/2, string_lower/2, string_upper/2, split_string/4, string_code/3, sub_atom_icasechk/3,
    code_type/2, char_type/2, member/2, memberchk/2, append/3, append/2, nth0/3, nth1/3, last/2, reverse/2,
    msort/2, sort/2, sort/4, keysort/2, sum_list/2, sumlist/2, max_list/2, min_list/2, max_member/2,
    min_member/2, list_to_set/2, numlist/3, subtract/3, intersection/3, union/3, delete/3, select/3,
    selectchk/3, permutation/2, flatten/2, pairs_keys_values/3, pairs_keys/2, pairs_values/2, nextto/3,
    format/3, now/1, iso_hours_between/3, option_value/4, json_get/3, fact_provenance/2, context_value/2,
    call_tool_name/1, answer_label/3, humanized/2, unicode_category/2, person_name_key/2]).

/*  What a goal that computes (makes, measure) binds ground, for the walk's bindings (secret_bindings.pl): a
    term built with holes (length(L, 1), functor(T, f, 1), copy_term/2, T =.. [f, X], append([a], X, L),
    findall(_, G, L)) is no bound value: a goal given a secret later fills its holes (login_ok(U, P, L):
    each element is the tool's answer for the password). secret_ground_row(Name, Arity, From, Always): the
    goal binds every variable of it ground when each argument of one set in From was known bound before
    it; else only those of the positions in Always (a text, a number, an order), the others staying open.
    A computing goal without a row binds nothing known ground (its variables stay open: more outputs, never
    fewer).
*/
secret_ground_row(N, A, [[]], []) :- memberchk(N/A, [(is)/2, succ/2, plus/3, between/3, atom_concat/3, sub_atom/5,
    atom_number/2, atom_string/2, atom_chars/2, atom_codes/2, char_code/2, number_codes/2, number_string/2,
    atomic_list_concat/2, atomic_list_concat/3, upcase_atom/2, downcase_atom/2, string_concat/3, sub_string/5,
    string_chars/2, string_codes/2, string_to_atom/2, string_lower/2, string_upper/2, split_string/4,
    string_code/3, sub_atom_icasechk/3, code_type/2, char_type/2, sum_list/2, sumlist/2, max_list/2,
    min_list/2, numlist/3, format/3, now/1, iso_hours_between/3, call_tool_name/1, unicode_category/2,
    person_name_key/2, atom_length/2, string_length/2, compare/3, context_value/2, fact_provenance/2]).
secret_ground_row(length, 2, [[1]], [2]).
secret_ground_row(functor, 3, [[1]], [2, 3]).
secret_ground_row(arg, 3, [[2]], [1]).
secret_ground_row((=..), 2, [[1], [2]], []).
secret_ground_row(copy_term, 2, [[1]], []).
secret_ground_row(term_variables, 2, [[1]], []).
secret_ground_row(N, A, [[2]], []) :- memberchk(N/A, [member/2, memberchk/2, max_member/2, min_member/2]).
secret_ground_row(N, A, [[1]], []) :- memberchk(N/A, [append/2, last/2, reverse/2, msort/2, sort/2, keysort/2,
    list_to_set/2, subtract/3, intersection/3, delete/3, flatten/2, pairs_keys/2, pairs_values/2, humanized/2,
    json_get/3]).
secret_ground_row(append, 3, [[1, 2], [3]], []).
secret_ground_row(N, 3, [[2]], [1]) :- memberchk(N, [nth0, nth1]).
secret_ground_row(sort, 4, [[3]], []).
secret_ground_row(union, 3, [[1, 2]], []).
secret_ground_row(N, 3, [[2], [1, 3]], []) :- memberchk(N, [select, selectchk]).
secret_ground_row(permutation, 2, [[1], [2]], []).
secret_ground_row(pairs_keys_values, 3, [[1], [2, 3]], []).
secret_ground_row(nextto, 3, [[3]], []).
secret_ground_row(option_value, 4, [[1, 3]], []).
secret_ground_row(answer_label, 3, [[2]], []).
