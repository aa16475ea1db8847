/*  Part of sentinel_core (included): the names a rulebase may define: its own predicates, never another
    module's, Sentinel's internals ('$'), the system's, a builtin a body may call, or Sentinel's runtime and
    policy constructs (each told by the code that defines it, not by a list of names). A clause's head and
    each indicator a declaration (dynamic, discontiguous, multifile, public) names are held to the same: a
    declaration took any term, or '$fact'/3, member/2, now/1, silently before.
*/

%  head_problem(+Head, -Message): Head is not one a rulebase may define (its own predicates only, never the
%  engine's, the system's or Sentinel's)
head_problem(H, M) :- functor(H, N, _), sub_atom(N, 0, 1, _, '$'), !,
    format(atom(M), 'predicate names starting with $ are internal to Sentinel: ~q', [N]).
head_problem(H, M) :- functor(H, N, A), system_pred(N/A), !,
    format(atom(M), 'cannot redefine the built-in ~w/~w', [N, A]).
head_problem(H, M) :- functor(H, N, A), \+ sentinel_builtin(H), allowed_builtin(rulebase, N/A), !,
    % a library predicate a body may call (member/2, append/3, ...): a local clause would replace it for
    % every file's guards, as a system one would
    format(atom(M), 'cannot redefine the built-in ~w/~w', [N, A]).
head_problem(H, M) :- ( sentinel_builtin(H) ; special_form(H) ), !,
    % a local clause would replace Sentinel's own for every file's guards (now/1, require/3, ...)
    functor(H, N, A),
    format(atom(M), 'cannot redefine Sentinel''s ~w/~w (its runtime and policy constructs are its own)', [N, A]).

%  indicator_problem(+Name/Arity, -Message): as head_problem/2 for the head it names. An arity above any the
%  system's or Sentinel's predicates have is only read for its name: its head would be a term of that many
%  arguments, made to be looked at (dynamic(p/100000000) is 800 MB).
indicator_problem(N/A, M) :- A > 64, !, sub_atom(N, 0, 1, _, '$'), head_problem(N, M).
indicator_problem(N/A, M) :- functor(H, N, A), head_problem(H, M).

%  the declarations a rulebase may make (anything else a directive says is not run)
declaring(multifile). declaring(public). declaring(dynamic). declaring(discontiguous).
