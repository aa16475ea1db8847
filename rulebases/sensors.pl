% rulebases/sensors.pl — guards for the sensors built-in (device_tools/sensors), mounted as `sensors`.
%
% The built-in itself enforces consent (per sensor and requester), scope redaction, rate limits,
% retention and its own audit. This rulebase adds what the gateway should demand before a call even
% reaches it: every read names why it needs the data, and a precise position needs the user's yes each time.

% --- sensor_read ------------------------------------------------------------------------------------

guard('sensors__sensor_read', [args(A)],
      ( option_value(A, policy_tag, '', Tag),
        require(Tag \== '', 'a policy_tag saying why the data is needed is required'),
        option_value(A, sensor, '', Sensor),
        option_value(A, scope, minimal, Scope),
        require(sensor_read(Sensor, Scope),
                'not a sensor and scope the sensors built-in reads (sensor_list names them, in lower case)'),
        precise_location_confirmed(Sensor, Scope, Tag) )).

% The sensors and scopes exactly as the built-in spells them (sentinel_mcp/core/sensor_kinds.py: an exact
% enum value, no case folding, no trimming); any other spelling is refused here, before the built-in.
sensor_read(Sensor, Scope) :- sensor_kind(Sensor), scope_name(Scope).

sensor_kind(location).
sensor_kind(battery).
sensor_kind(motion).
sensor_kind(compass).
sensor_kind(ambient_light).
sensor_kind(barometer).
sensor_kind(nearby_devices).
sensor_kind(camera).
sensor_kind(microphone).

scope_name(minimal).
scope_name(standard).
scope_name(detailed).

% A read that places the phone precisely: the user confirms this exact call, whatever consent is stored.
% Detailed location is the GPS fix; detailed nearby devices are the access points' names and hardware
% addresses, which public Wi-Fi maps turn into a position as precise. Only the reads listed as coarse skip the
% question (an allow list: a pair not listed is asked about or refused, never let through).
precise_location_confirmed(Sensor, Scope, _) :-
    coarse_read(Sensor, Scope).
precise_location_confirmed(location, detailed, Tag) :-
    confirmed('Share your precise GPS location (detailed scope) for ~w?', [Tag]).
precise_location_confirmed(nearby_devices, detailed, Tag) :-
    confirmed('Share the names and addresses of the Wi-Fi networks around you (they locate you precisely) for ~w?',
              [Tag]).

coarse_read(Sensor, minimal) :- sensor_kind(Sensor).
coarse_read(Sensor, standard) :- sensor_kind(Sensor).
coarse_read(Sensor, detailed) :- detail_locates_nothing(Sensor).

% detailed scope adds nothing that places the phone: the battery's health, temperature and voltage; the
% sensors whose scope changes nothing (sensor_kinds.py SCOPED_SENSORS)
detail_locates_nothing(battery).
detail_locates_nothing(motion).
detail_locates_nothing(compass).
detail_locates_nothing(ambient_light).
detail_locates_nothing(barometer).
detail_locates_nothing(camera).
detail_locates_nothing(microphone).

% --- sensor_consent ---------------------------------------------------------------------------------

% list and revoke only read or narrow access. A grant must name a sensor; the tool then asks the user
% through an MCP elicitation (which the agent cannot answer), so the gateway does not ask a second time.
guard('sensors__sensor_consent', [args(A)],
      ( option_value(A, action, list, Action),
        consent_action_ok(Action, A) )).

consent_action_ok(list, _).
consent_action_ok(revoke, _).
consent_action_ok(grant, A) :-  % left out or null (the tool's declared default, filled before the guard)
    option_value(A, sensor, '', Given),
    ( Given == null -> Sensor = '' ; Sensor = Given ),
    require(Sensor \== '', 'a grant must name the sensor').

% --- sensor_list, sensor_retained -------------------------------------------------------------------

% Inventory and one's own retained readings are read-only (MCP readOnlyHint) and need no guard.
