% rulebases/device.pl — guards for the Android device built-in (device_tools), mounted as `device`.
%
% Division of labour. The device server refuses stale actions, rates every action with its firewall and
% RiskRules on what is actually on the screen, and asks the person (elicitation or Volume Up) once before
% every risky one; a refusal there means nothing reached the phone. Its tools declare this in _meta
% ("sentinel/confirms"), and the gateway, trusting the built-in by config (sentinel.policy.self_confirming),
% lets tools this rulebase does not guard through without a question of its own: navigation asks nothing,
% a risky tap asks once. This rulebase adds what the gateway can decide before a call reaches the phone and
% what no confirmation may lift (a guard here decides first, and its questions are its own):
%   * sms_send: a bounded body, and never forwarding a one-time code (the classic account takeover);
%   * terminal_run: the allow list again (defence in depth), no reads of private app data nor of the sensor,
%     input and network state the sensors built-in guards, and ls only with allow-listed options (never
%     recursive);
%   * type_text into a password field: the user grants it per app (asked once, valid 10 minutes),
%     on top of the device's own per-action confirmation, and the agent cannot answer for the user;
%   * the text typed anywhere is never a one-time code or a payment card number;
%   * every argument that reaches the phone has its allow-listed shape (device_tools/arg_shapes.py, mirrored
%     here by name): terminal arguments, packages, coordinates, numbers, labels and texts, enum choices.

% --- what the screen says about an element (read-only, no device access) ---------------------------

binding(device_element_password(S, E, P),
        tool('device__element_info', [snapshot_id = S, element_id = E]),
        extract([P = '/password']), [ttl(60)]).
binding(device_element_package(S, E, Pkg),
        tool('device__element_info', [snapshot_id = S, element_id = E]),
        extract([Pkg = '/package']), [ttl(60)]).

askable(password_entry_allowed(Pkg),
        "Allow the agent to type a password into the app ~w (for the next 10 minutes)?",
        yes_no, [from([user]), ttl(600)]).

% --- type_text ---------------------------------------------------------------------------------------

guard('device__type_text', [snapshot_id = S, element_id = E, text = T],
      ( require(\+ one_time_code_text(T), 'the text looks like a one-time code; codes are typed by the user'),
        require(\+ card_number_text(T), 'the text contains a payment card number'),
        % checked under a double negation: the proof keeps the text whole (masked: the device declares it
        % sensitive), never its characters (secret_flows.pl)
        require(\+ \+ ( text_arg(T, 2000, line), atom_length(T, N), N > 0 ),
                'text: 1..2000 characters, no control character (type lines one at a time)'),
        password_rule(S, E) )).

password_rule(S, E) :-
    device_element_password(S, E, false).
password_rule(S, E) :-
    device_element_password(S, E, true),
    device_element_package(S, E, Pkg),
    require(password_entry_allowed(Pkg), 'the user has not allowed password entry in this app').

% --- sms_send ----------------------------------------------------------------------------------------

guard('device__sms_send', [to = To, body = Body],
      ( require(text_arg(To, 100, line), 'to must be a phone number or a contact name (at most 100 characters on one line)'),
        require(text_arg(Body, 1600, lines), 'the message body is at most 1600 characters, no control character but line breaks and tabs'),
        atom_length(Body, N),
        require(N > 0, 'the message body is empty'),
        require(N =< 1600, 'the message body is longer than 1600 characters'),
        require(\+ sms_carries_code(Body), 'forwarding a one-time code by SMS is never allowed') )).

sms_carries_code(Body) :- one_time_code_text(Body).
sms_carries_code(Body) :-  % a bare code: 4-8 digits of any script, maybe joined by spaces or hyphens
    atom(Body), atom_codes(Body, Cs0), code_fold(Cs0, Cs1), without_joiners(Cs1, Cs),
    length(Cs, N), N >= 4, N =< 8, all_digits(Cs).

% --- the other tools' arguments: the shapes of device_tools/arg_shapes.py ------------------------------------

guard('device__open_app', [package = P],
      require(package_name(P), 'not an Android package name: dot-separated segments of ASCII letters, digits and _, the first starting with a letter, at most 255 characters')).

guard('device__swipe', [args(A)],
      ( require(forall(member(K, [x1, y1, x2, y2]), ( option_value(A, K, none, V), in_range(V, 0, 100000) )),
                'coordinates must be in 0..100000 (integers)'),
        option_value(A, duration_ms, 300, D),
        require(in_range(D, 1, 10000), 'duration_ms must be an integer in 1..10000') )).

% the choices the built-in's schema gives (Literal): the sms box is a content URI's last segment
guard('device__sms_list', [args(A)],
      ( option_value(A, box, inbox, B), require(memberchk(B, [inbox, sent]), 'box must be inbox or sent') )).

guard('device__scroll', [direction = D],
      require(memberchk(D, [up, down, left, right]), 'direction must be up, down, left or right')).

guard('device__screen_ocr', [args(A)],
      require(forall(member(K, [x1, y1, x2, y2]), ( option_value(A, K, null, V), ( V == null ; in_range(V, 0, 100000) ) )),
              'the corners must be in 0..100000 (integers)')).

guard('device__alarm_set', [args(A)],
      ( option_value(A, hour, none, H), option_value(A, minute, none, M),
        require(( in_range(H, 0, 23), in_range(M, 0, 59) ), 'hour must be 0..23 and minute 0..59'),
        option_value(A, label, '', L),
        require(text_arg(L, 200, line), 'label: at most 200 characters on one line, no control character'),
        option_value(A, days, [], Ds),
        require(( Ds == null ; is_list(Ds), forall(member(X, Ds), day_name(X)) ), 'days must be day names (mon, tue, ... or monday, ...)') )).

guard('device__timer_set', [args(A)],
      ( option_value(A, seconds, none, S),
        require(in_range(S, 1, 86400), 'seconds must be 1..86400'),
        option_value(A, label, '', L),
        require(text_arg(L, 200, line), 'label: at most 200 characters on one line, no control character') )).

guard('device__contact_create', [name = N],
      require(( text_arg(N, 200, line), atom_length(N, K), K > 0 ), 'name: 1..200 characters on one line, no control character')).

guard('device__calendar_create', [args(A)],
      ( option_value(A, title, '', T), option_value(A, location, '', L),
        require(( text_arg(T, 200, line), text_arg(L, 200, line) ), 'title and location: at most 200 characters on one line, no control character'),
        option_value(A, description, '', D),
        require(text_arg(D, 30000, lines), 'description: at most 30000 characters, no control character but line breaks and tabs'),
        option_value(A, calendar_id, 1, C),
        require(in_range(C, 1, 2147483647), 'calendar_id must be 1..2147483647'),
        option_value(A, duration_minutes, 60, M),
        require(in_range(M, 1, 527040), 'duration_minutes must be 1..527040') )).

% an integer (never a boolean, float or text) in Low..High
in_range(V, Low, High) :- integer(V), V >= Low, V =< High.

day_name(X) :-
    atom(X), downcase_atom(X, D),
    memberchk(D, [sun, mon, tue, wed, thu, fri, sat, sunday, monday, tuesday, wednesday, thursday, friday, saturday]).

% dot-separated segments of ASCII letters, digits and _, at least two, the first starting with a letter; at
% most 255 characters (arg_shapes.package_name)
package_name(P) :-
    atom(P), atom_length(P, N), N > 0, N =< 255, atomic_list_concat(Segs, '.', P), Segs = [First, _|_],
    atom_codes(First, [C0|_]), ascii_letter(C0),
    forall(member(S, Segs), ( atom_codes(S, Cs), Cs \== [], forall(member(C, Cs), package_char(C)) )).
package_char(C) :- ascii_alnum(C).
package_char(0'_).
ascii_letter(C) :- C >= 0'a, C =< 0'z.
ascii_letter(C) :- C >= 0'A, C =< 0'Z.

% --- terminal_run ------------------------------------------------------------------------------------
:- include_rules('device/terminal.pl').

% --- text classifiers --------------------------------------------------------------------------------
:- include_rules('device/texts.pl').
