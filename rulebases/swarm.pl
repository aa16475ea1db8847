% rulebases/swarm.pl — guards for the swarm built-in (sentinel_mcp/swarm), mounted as `swarm`.
%
% The built-in enforces its own hard caps (80 model calls, 200,000 tokens, 90 minutes, 25 steps,
% 3 retries, 50 KB per file), breakers, path safety and one build at a time. This rulebase adds what
% the gateway demands before a build even starts: the user confirms it, and the caps the caller asks
% for stay within policy. To tighten the policy, add a lower swarm_cap/2 in a site rulebase, after
% `:- multifile swarm_cap/2.` (the lowest cap of a name wins, so files compose): a call that asks for
% more is denied; a call that names no cap gets the built-in's own configured caps
% (sentinel.swarm.limits, also lowerable only).

% --- the local model ---------------------------------------------------------------------------------

% With sentinel.swarm.backend = local, every agent's model call goes through the gateway as
% llm__llm_generate (origin builtin, session builtin:swarm). Generating text changes nothing, so the
% fail-safe default must not ask the user about each of the up to 80 calls of a build.
read_only('llm__llm_generate').

% --- policy caps ------------------------------------------------------------------------------------

% open to site rulebases (each file that adds a cap declares it so too): the lowest cap of a name wins, so
% another file's caps can only tighten these
:- multifile swarm_cap/2.
swarm_cap(max_steps, 25).
swarm_cap(max_model_calls, 80).
swarm_cap(max_tokens, 200000).
swarm_cap(max_minutes, 90).

% the effective cap of a name: the lowest one any loaded rulebase declares
cap_of(Name, Cap) :-
    findall(C, swarm_cap(Name, C), Caps),
    min_list(Caps, Cap).

% what a build may use when the call leaves a cap out: the built-in's own hard caps (limits.py)
builtin_cap(max_steps, 25).
builtin_cap(max_model_calls, 80).
builtin_cap(max_tokens, 200000).
builtin_cap(max_minutes, 90).

% a cap argument is a number at most the policy's cap; left out (null), it is the built-in's own, so a
% site's lower cap holds for a call that does not name it (that call must name it, within the cap)
within_cap(A, Name) :-
    cap_of(Name, Cap),
    option_value(A, Name, null, V),
    ( V == null -> builtin_cap(Name, Own), Own =< Cap ; number(V), V =< Cap ).

% a cap argument the call names is within policy; the reason says which cap, and its value
cap_ok(A, Name) :-
    cap_of(Name, Cap),
    format(atom(Reason), '~w must be at most ~w (policy cap)', [Name, Cap]),
    require(within_cap(A, Name), Reason).

% --- swarm_build ------------------------------------------------------------------------------------

% The swarm checks a spec itself (swarm_validate is read-only, so the solver calls it before anything is
% asked): an invalid spec is refused with every problem, and the user is never asked to confirm it.
binding(swarm_spec_check(Spec, Valid, Summary), tool('swarm__swarm_validate', [spec = Spec]),
        extract([Valid = '/valid', Summary = '/summary']), [ttl(600)]).

guard('swarm__swarm_build', [spec = Spec, args(A)],
      ( cap_ok(A, max_steps),
        cap_ok(A, max_model_calls),
        cap_ok(A, max_tokens),
        cap_ok(A, max_minutes),
        swarm_spec_check(Spec, Valid, Summary),
        require(Valid == true, Summary),
        require(json_get(Spec, app_name, Name), 'the spec needs an app_name'),
        require(json_get(Spec, package_name, Package), 'the spec needs a package_name'),
        asked_cap(A, max_steps, Steps), asked_cap(A, max_model_calls, Calls),
        asked_cap(A, max_tokens, Tokens), asked_cap(A, max_minutes, Minutes),
        confirmed('Build the Android app ~w (~w)? It may take up to ~D steps, ~D model calls, ~D tokens and ~w \
minutes.', [Name, Package, Steps, Calls, Tokens, Minutes]) )).

% what the person is told a build may use: the cap the call names, else the built-in's own (which the
% operator's sentinel.swarm.limits can only lower): the most it may use, never a figure of another build's
asked_cap(A, Name, V) :-
    option_value(A, Name, null, V0),
    ( V0 == null -> builtin_cap(Name, V) ; V = V0 ).

% --- swarm_cancel -----------------------------------------------------------------------------------

% Cancelling ends the build FAILED (its files and audit trail are kept): the user says so.
guard('swarm__swarm_cancel', [task_id = T],
      confirmed('Cancel the swarm build ~w? It ends as FAILED and keeps what it made so far.', [T])).

% --- state of a build, for rules and symbolic queries ---------------------------------------------

% swarm_status and swarm_list are read-only (MCP readOnlyHint) and need no guard.
binding(swarm_task_state(T, S), tool('swarm__swarm_status', [task_id = T]),
        extract([S = '/state']), [ttl(5)]).
binding(swarm_task_app(T, N), tool('swarm__swarm_status', [task_id = T]),
        extract([N = '/spec/app_name']), [ttl(600)]).

:- public swarm_task_finished/1.  % no guard calls it: symbolic queries do
swarm_task_finished(T) :- swarm_task_state(T, 'COMPLETED').
swarm_task_finished(T) :- swarm_task_state(T, 'FAILED').
