% rulebases/sensors.pl — guards for the sensors built-in (device_tools/sensors), mounted as `sensors`.
%
% The built-in itself enforces consent (per sensor and requester), scope redaction, rate limits,
% retention and its own audit. This rulebase adds what the gateway should demand before a call even
% reaches it: every read names why it needs the data, and precise GPS needs the user's yes each time.

% --- sensor_read ------------------------------------------------------------------------------------

guard('sensors__sensor_read', [args(A)],
      ( option_value(A, policy_tag, '', Tag),
        require(Tag \== '', 'a policy_tag saying why the data is needed is required'),
        option_value(A, sensor, '', Sensor),
        option_value(A, scope, minimal, Scope),
        precise_location_confirmed(Sensor, Scope, Tag) )).

% Detailed location is GPS precision: the user confirms this exact call, whatever consent is stored.
precise_location_confirmed(Sensor, Scope, _) :-
    \+ ( Sensor == location, Scope == detailed ).
precise_location_confirmed(location, detailed, Tag) :-
    confirmed('Share your precise GPS location (detailed scope) for "~w"?', [Tag]).

% --- sensor_consent ---------------------------------------------------------------------------------

% list and revoke only read or narrow access. A grant must name a sensor; the tool then asks the user
% through an MCP elicitation (which the agent cannot answer), so the gateway does not ask a second time.
guard('sensors__sensor_consent', [args(A)],
      ( option_value(A, action, list, Action),
        consent_action_ok(Action, A) )).

consent_action_ok(list, _).
consent_action_ok(revoke, _).
consent_action_ok(grant, A) :-
    option_value(A, sensor, '', Sensor),
    require(Sensor \== '', 'a grant must name the sensor').

% --- sensor_list, sensor_retained -------------------------------------------------------------------

% Inventory and one's own retained readings are read-only (MCP readOnlyHint) and need no guard.
