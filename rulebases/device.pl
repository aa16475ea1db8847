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
        require(( text_arg(T, 2000, line), atom_length(T, N), N > 0 ),
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

guard('device__terminal_run', [command = C, args(A)],
      ( require(terminal_command(C, Shape), 'not an allow-listed device command'),
        option_value(A, args, [], Args),
        require(text_list(Args), 'args must be a list of texts'),
        require(\+ ( member(X, Args), private_arg(X) ), 'private app data and databases are off limits'),
        require(\+ ( member(X, Args), sensor_state_arg(X) ),
                'the phone\'s sensor, input and network state (/sys, /dev, /proc/net) is read through the sensors built-in, under its consent; the boot\'s identifiers (/proc/cmdline, /proc/bootconfig, /proc/device-tree, /proc/cpuinfo) are not read; of /proc only the kernel\'s version, memory and load and a process\'s status'),
        terminal_shape_reason(Shape, Why),
        require(args_shape(Shape, Args), Why) )).

% The commands (the device's allow list again) and the shape their whole argument list must have: an allow
% list of what each argument may be, not a list of what it may not (device_tools/arg_shapes.py
% TERMINAL_SHAPES, the same names, character sets and bounds).
terminal_command(getprop, prop).
terminal_command(date, none).
terminal_command(uptime, none).
terminal_command(whoami, none).
terminal_command(id, none).
terminal_command(ls, listing).
terminal_command(df, disk).
terminal_command(ps, process).
terminal_command('pm list packages', packages).
terminal_command('wm size', none).
terminal_command('wm density', none).
terminal_command('settings get', setting).
terminal_command(echo, words).
terminal_command(cat, file).   % not the battery: the sensors' (consent)

terminal_shape_reason(none, 'the command takes no argument').
terminal_shape_reason(listing, 'ls takes at most 4 arguments, bundles of -1aAcdFhilnprsStu and paths only (no `..`, glob or long option); a recursive listing walks into private app data: list one directory at a time').
terminal_shape_reason(prop, 'getprop takes one property of the build, the model or a switch (ro.build.*, ro.product.*, ro.hardware, ...; see docs/device-tools.md): what names the phone or its owner (serial, IMEI, SIM, carrier, addresses, time zone) is not read through the terminal').
terminal_shape_reason(disk, 'df takes at most 2 arguments, bundles of -ahHikP and paths (no `..`)').
terminal_shape_reason(process, 'ps takes at most 3 arguments, bundles of -AadefLlnwZ and process names').
terminal_shape_reason(packages, 'pm list packages takes at most 2 arguments, one of -3 -d -e -f -i -l -s -u -U each, or a name filter').
terminal_shape_reason(setting, 'settings get takes a namespace (system, secure or global) and a key of a switch or a preference (airplane_mode_on, screen_off_timeout, ...; see docs/device-tools.md): what names the phone or its owner (Android ID, Bluetooth address and name, device name) is not read through the terminal').
terminal_shape_reason(words, 'echo takes at most 20 texts of up to 256 characters, no control character').
terminal_shape_reason(file, 'cat takes one path (no option, `..`, glob or control character)').

text_list(Args) :- is_list(Args), forall(member(X, Args), atom(X)).

args_shape(none, []).
args_shape(listing, Args) :- at_most(Args, 4), forall(member(X, Args), listing_arg(X)).
args_shape(prop, [X]) :- name_arg(X), readable_prop(X).
args_shape(disk, Args) :- at_most(Args, 2), forall(member(X, Args), ( option_bundle(X, 'ahHikP') ; path_arg(X) )).
args_shape(process, Args) :-
    at_most(Args, 3), forall(member(X, Args), ( option_bundle(X, 'AadefLlnwZ') ; name_arg(X) )).
args_shape(packages, Args) :- at_most(Args, 2), forall(member(X, Args), ( pm_option(X) ; name_arg(X) )).
args_shape(setting, [Ns, Key]) :- memberchk(Ns, [system, secure, global]), name_arg(Key), readable_setting(Ns, Key).
args_shape(words, Args) :- at_most(Args, 20), forall(member(X, Args), text_arg(X, 256, line)).
args_shape(file, Args) :- at_most(Args, 1), forall(member(X, Args), path_arg(X)).

at_most(L, N) :- length(L, K), K =< N.

% What getprop and settings get may read of the phone: its build, model and switches, never what names the
% phone or its owner (serials, IMEI, SIM and carrier, Android ID, addresses, device name, time zone), which
% radios and OEMs keep under names of their own: an allow list (device_tools/readable_state.py, the same).
readable_prop(X) :- readable_prop_names(Ns), memberchk(X, Ns), !.
readable_prop(X) :- readable_prop_prefixes(Ps), member(P, Ps), sub_atom(X, 0, _, After, P), After > 0, !.
readable_prop(X) :- device_readable_prop(X), configurable_prop(X), !.  % the operator's: below
readable_prop_prefixes(['ro.build.', 'ro.odm.build.', 'ro.product.', 'ro.system.build.', 'ro.vendor.build.']).
readable_prop_names(['ro.adb.secure', 'ro.board.platform', 'ro.boot.flash.locked',
    'ro.boot.verifiedbootstate', 'ro.crypto.state', 'ro.crypto.type', 'ro.debuggable', 'ro.hardware',
    'ro.kernel.qemu', 'ro.secure', 'ro.sf.lcd_density', 'ro.soc.manufacturer', 'ro.soc.model',
    'ro.treble.enabled', 'ro.zygote', 'sys.boot_completed']).
readable_setting(Ns, Key) :- readable_settings(Ns, Keys), memberchk(Key, Keys), !.
readable_setting(Ns, Key) :- configured_setting(Ns, Key), \+ identifying_name(Key), !.  % the operator's
% and what the operator adds (sentinel.device.readable, given as config seeds: device_tools/readable_config.py)
% above a floor no seed lifts: a read-only property (ro.*, not the bootloader's ro.boot.*), no name with a word
% of what identifies the phone or its owner (device_tools/readable_floor.py, the same words)
fact(device_readable_prop/1).
fact(device_readable_system/1).
fact(device_readable_secure/1).
fact(device_readable_global/1).
configured_setting(system, Key) :- device_readable_system(Key).
configured_setting(secure, Key) :- device_readable_secure(Key).
configured_setting(global, Key) :- device_readable_global(Key).
configurable_prop(X) :-
    sub_atom(X, 0, _, _, 'ro.'), \+ sub_atom(X, 0, _, _, 'ro.boot.'), \+ identifying_name(X).
identifying_name(X) :- downcase_atom(X, L), identifying_part(P), sub_atom(L, _, _, _, P), !.
identifying_name(X) :-
    atom_codes(X, Cs), word_breaks(Cs, 0, Ds), atom_codes(A, Ds), downcase_atom(A, L),
    atomic_list_concat(Ws, '.', L), member(W, Ws), identifying_word(W), !.
% words: split at . _ -, between a lower case and an upper case letter (UserId) and between letters and digits
word_breaks([], _, []).
word_breaks([C|Cs], P, Out) :-
    ( memberchk(C, [0'_, 0'-]) -> Out = [0'.|R] ; word_break(P, C) -> Out = [0'., C|R] ; Out = [C|R] ),
    word_breaks(Cs, C, R).
word_break(P, C) :- P >= 0'a, P =< 0'z, C >= 0'A, C =< 0'Z.
word_break(P, C) :- ascii_letter(P), ascii_digit(C).
word_break(P, C) :- ascii_digit(P), ascii_letter(C).
identifying_word(W) :- memberchk(W, [id, uuid, guid, name, owner, account, email, user, phone, number, mac,
    address, addr, key, pin, password, passwd, secret, token, sim, operator, carrier, country, zone, timezone,
    location, esn]).
identifying_part(P) :- member(P, [serial, imei, imsi, iccid, msisdn, meid, ssid, psk, token, passw, secret,
    bdaddr, btaddr, macaddr, android_id]).
readable_settings(global, ['adb_enabled', 'adb_wifi_enabled', 'airplane_mode_on', 'always_finish_activities',
    'animator_duration_scale', 'auto_time', 'auto_time_zone', 'bluetooth_on', 'development_settings_enabled',
    'heads_up_notifications_enabled', 'http_proxy', 'low_power', 'mobile_data', 'package_verifier_enable',
    'private_dns_mode', 'stay_on_while_plugged_in', 'transition_animation_scale',
    'verifier_verify_adb_installs', 'wifi_on', 'window_animation_scale', 'zen_mode']).
readable_settings(secure, ['accessibility_enabled', 'default_input_method', 'enabled_accessibility_services',
    'enabled_input_methods', 'install_non_market_apps', 'location_mode', 'screensaver_enabled',
    'sms_default_application', 'ui_night_mode']).
readable_settings(system, ['accelerometer_rotation', 'font_scale', 'haptic_feedback_enabled',
    'screen_brightness', 'screen_brightness_mode', 'screen_off_timeout', 'sound_effects_enabled',
    'time_12_24', 'user_rotation']).

% an option bundle: '-' and one or more of Letters (-la); never '--' or a long option
option_bundle(X, Letters) :-
    atom_codes(X, [0'-, L|Ls]), atom_codes(Letters, Os), forall(member(O, [L|Ls]), memberchk(O, Os)).

% ls: a bundle of short options without R (a recursive listing walks into app data from any directory above
% it), or a path
listing_arg(X) :- option_bundle(X, '1aAcdFhilnprsStu').
listing_arg(X) :- path_arg(X).

% a path: 1..256 of ASCII letters, digits and / . _ - + , @ = : and space, starting with a letter, digit, '/',
% '.' or '_' (never an option), no '..' segment: no glob, quote, backslash, control or non-ASCII character
path_arg(X) :-
    atom(X), atom_length(X, N), N > 0, N =< 256, atom_codes(X, [P|Cs]), path_start(P),
    forall(member(C, Cs), path_char(C)), atomic_list_concat(Segs, '/', X), \+ memberchk('..', Segs).

path_start(P) :- atom_codes('/._', Ps), memberchk(P, Ps).
path_start(P) :- ascii_alnum(P).
path_char(C) :- path_start(C).
path_char(C) :- atom_codes('-+,@=: ', Cs), memberchk(C, Cs).

ascii_alnum(P) :- P >= 0'a, P =< 0'z.
ascii_alnum(P) :- P >= 0'A, P =< 0'Z.
ascii_alnum(P) :- P >= 0'0, P =< 0'9.

% a property name, setting key, process name or package filter: 1..128 of letters, digits and . _ : @ -,
% starting with a letter or digit
name_arg(X) :-
    atom(X), atom_length(X, N), N > 0, N =< 128, atom_codes(X, [P|Cs]), ascii_alnum(P),
    forall(member(C, Cs), name_char(C)).
name_char(C) :- ascii_alnum(C).
name_char(C) :- atom_codes('._:@-', Cs), memberchk(C, Cs).

pm_option(X) :- atom_codes(X, [0'-, O]), atom_codes('3defilsuU', Os), memberchk(O, Os).

% a text of at most Max characters with no control character (C0, DEL, C1); `lines` lets a line break and a tab
% through (a message body), `line` does not (arg_shapes.text_arg)
text_arg(X, Max, Lines) :-
    atom(X), atom_length(X, N), N =< Max, atom_codes(X, Cs), forall(member(C, Cs), text_char(C, Lines)).
text_char(C, _) :- C >= 32, \+ ( C >= 127, C =< 159 ).
text_char(C, lines) :- memberchk(C, [0'\n, 0'\t]).

% Privacy stays a classifier on the path's normal forms, not an allow list of paths: every command's arguments
% are read as paths (getprop's ro.product.model, echo's words, cat /proc/version, any file in shared storage),
% and what is private inside public storage (Android/data, a .db file anywhere) cannot be listed by what is
% allowed. The client's spelling is not what is compared: both readings are the phone's own (case folded,
% '.', '..', '//' and '\\' resolved, the links followed), and a fullwidth or padded spelling names another file.
% A path is private when either reading of it is (the same rules as device_tools/device_paths.py): the
% normal form (resolved from / -- the adb shell's working directory --, empty and '.' segments dropped, '..'
% undoing the segment before it, aliases mapped) and the physical form (a link is followed the moment it is
% reached, as the kernel does, so a '..' after it climbs from its target). Both in lower case. An option's
% value (--opt=VALUE) is a path too.
private_arg(X) :- string(X), !, atom_string(A, X), private_arg(A).
private_arg(X) :-
    atom(X), path_operand(X, P), path_segments(P, Segs),
    ( path_reading(Segs, lexical, N) ; path_reading(Segs, physical, N) ), private_normal(N), !.

path_operand(X, X) :- \+ sub_atom(X, 0, _, _, '-').
path_operand(X, V) :- sub_atom(X, 0, _, _, '-'), sub_atom(X, B, 1, _, '='), !, B1 is B + 1, sub_atom(X, B1, _, 0, V).

path_segments(X, Segs) :-
    downcase_atom(X, L0), atomic_list_concat(Raw, '\\', L0), atomic_list_concat(Raw, '/', L),
    atomic_list_concat(Segs, '/', L).

path_reading(Segs, Mode, N) :-
    walk_path(Segs, Mode, [], Rev), reverse(Rev, Parts0),
    ( Mode == lexical -> follow_prefix(Parts0, Parts) ; Parts = Parts0 ),
    atomic_list_concat([''|Parts], '/', N0), ( N0 == '' -> N = '/' ; N = N0 ).

walk_path([], _, Acc, Acc).
walk_path([''|T], M, Acc, R) :- !, walk_path(T, M, Acc, R).
walk_path(['.'|T], M, Acc, R) :- !, walk_path(T, M, Acc, R).
walk_path(['..'|T], M, Acc, R) :- !, ( Acc == ['?'] -> Up = Acc ; Acc = [_|Up] -> true ; Up = [] ), walk_path(T, M, Up, R).
walk_path([S|T], lexical, Acc, R) :- !, walk_path(T, lexical, [S|Acc], R).
walk_path([S|T], physical, Acc, R) :-
    reverse([S|Acc], Parts), follow_link(Parts, F), reverse(F, Acc1), walk_path(T, physical, Acc1, R).

% a process's magic links, and a thread's (/proc/<pid>/task/<tid>/root): root leads to /, the others anywhere
follow_link(P, R) :- proc_link(P, [], R), !.
follow_link(P, R) :- path_link(P, R), !.
follow_link(P, P).

follow_prefix(P, R) :- proc_link(P, T, R0), !, append(R0, T, R).
follow_prefix(P, R) :- path_link(L, Real), append(L, T, P), !, append(Real, T, R).
follow_prefix(P, P).

proc_link([proc, _, W|T], T, To) :- proc_magic(W, To), !.
proc_link([proc, _, task, _, W|T], T, To) :- proc_magic(W, To).
proc_magic(root, []).
proc_magic(W, ['?']) :- memberchk(W, [cwd, fd, map_files]).

path_link([sdcard], [storage, emulated, '0']).
path_link([mnt, sdcard], [storage, emulated, '0']).
path_link([storage, self, primary], [storage, emulated, '0']).
path_link([cache], [data, cache]).
path_link([d], [sys, kernel, debug]).   % Android's short link to debugfs

private_normal(N) :- private_tree(T), ( N == T ; atom_concat(T, '/', P), sub_atom(N, 0, _, _, P) ), !.
private_normal(N) :- sub_atom(N, 0, _, _, '/?').
private_normal(N) :- sub_atom(N, _, _, _, '/android/data').
private_normal(N) :- sub_atom(N, _, _, _, '/android/obb').
private_normal(N) :- sub_atom(N, _, _, _, shared_prefs).
private_normal(N) :- member(E, ['.db', '.db-wal', '.db-shm', '.db-journal', '.sqlite', '.sqlite3']), sub_atom(N, _, _, 0, E).

% app data under other names (device_paths.py PRIVATE_TREES)
private_tree('/data'). private_tree('/data_mirror'). private_tree('/mnt/expand'). private_tree('/mnt/installer').
private_tree('/mnt/androidwritable').

% The kernel's view of what the sensors built-in guards (device_paths.py SENSOR_TREES), in either reading:
% /sys (battery temperature and voltage, iio sensors, the radios), /dev (the input devices: every touch and key).
sensor_state_arg(X) :- string(X), !, atom_string(A, X), sensor_state_arg(A).
sensor_state_arg(X) :-
    atom(X), path_operand(X, P), path_segments(P, Segs),
    ( path_reading(Segs, lexical, N) ; path_reading(Segs, physical, N) ),
    atomic_list_concat([''|Parts], '/', N), sensor_state_parts(Parts), !.

sensor_state_parts([sys|_]). sensor_state_parts([dev|_]).
% /proc by an allow list (device_paths.py READABLE_PROC, READABLE_PROCESS): the kernel's version, memory and load,
% of a process (a number, self, thread-self; its threads) what ps shows; not cpuinfo's Serial, boot_id, mounts.
sensor_state_parts([proc|T]) :- \+ readable_proc(T).
readable_proc([]).
readable_proc([F]) :- memberchk(F, [version, meminfo, uptime, loadavg]), !.
readable_proc([P|T]) :- proc_process(P), readable_process(T).
readable_process([]). readable_process([task]).
readable_process([F]) :- readable_process_file(F), !.
readable_process([task, T|F]) :- proc_process(T), ( F == [] -> true ; F = [File], readable_process_file(File) ).
readable_process_file(F) :- memberchk(F, [status, stat, statm, comm, cmdline, limits, oom_score, oom_score_adj, wchan]).
proc_process(P) :- ( memberchk(P, [self, 'thread-self']) -> true
                   ; atom_codes(P, Cs), Cs \== [], forall(member(C, Cs), (C >= 0'0, C =< 0'9)) ).

% --- text classifiers --------------------------------------------------------------------------------

% A one-time code (the SMS tool's reading too: device_tools/one_time_codes.py speaks_of_code, one list of words
% and one fold, tests/device/test_code_rule_parity.py): words of a code in any language the device knows
% (sentinel_rt's speaks_of_a_code/1, written from core/code_words.py: "Your code", "Tu código", "Ваш код",
% "验证码"), also with the digits inside a word read as letters ("c0de", "0TP", "v3rification"), or a "G-"
% style prefix; together with a run of 4-8 digits whose groups are joined by one space, hyphen, dot, _, / or \
% ("730 551", "73 - 05 - 51", "730.551"), all read through code_fold/2: "Your code is ٧٣٠٥٥١", "ＣＯＤＥ 730551",
% "code 730\u00a0551" and "code 730\u200b551" are codes too. (A bare number is only treated as a code in an SMS
% body: typed into a field it is usually an amount or a PIN prompt.)
one_time_code_text(T) :-
    atom(T), atom_codes(T, Cs0), code_fold(Cs0, Cs), code_run(Cs),
    ( speaks_of_a_code(T) -> true ; leet_words(Cs, L), speaks_of_a_code(L) -> true ; code_prefix(Cs) ), !.

%  leet_words(+FoldedCodes, -Text): the runs of letters and numbers, apart by one space, the digits of a run
%  with a letter in it as the letters they stand for
leet_words(Cs, L) :- word_runs(Cs, Rs), leet_runs(Rs, Ws), atomic_list_concat(Ws, ' ', L).

leet_runs([], []).
leet_runs([R|Rs], [W|Ws]) :- leet_run(R, W), leet_runs(Rs, Ws).

word_runs([], []).
word_runs([C|Cs], [[C|W]|Rs]) :- word_code(C), !, word_codes(Cs, W, Rest), word_runs(Rest, Rs).
word_runs([_|Cs], Rs) :- word_runs(Cs, Rs).

word_codes([C|Cs], [C|W], Rest) :- word_code(C), !, word_codes(Cs, W, Rest).
word_codes(Cs, [], Cs).

word_code(C) :- unicode_category(C, K), sub_atom(K, 0, 1, _, F), memberchk(F, ['L', 'N']).

leet_run(R, W) :-
    ( member(C, R), unicode_category(C, K), sub_atom(K, 0, 1, _, 'L') -> leet_codes(R, R1) ; R1 = R ),
    atom_codes(W, R1).

leet_codes([], []).
leet_codes([C|Cs], [L|Ls]) :- ( nth0(I, `013457`, C) -> nth0(I, `oieast`, L) ; L = C ), leet_codes(Cs, Ls).

%  code_prefix(+FoldedCodes): 1-3 capital ASCII letters apart from a word before them, a hyphen, a digit (one
%  pass: a long text costs its length)
code_prefix(Cs) :- prefix_from(Cs, 0' ).

prefix_from([C|Cs], Prev) :-
    (   \+ word_code(Prev), Prev =\= 0'_, capitals([C|Cs], 0, N, [0'-, D|_]), N >= 1, ascii_digit(D) -> true
    ;   prefix_from(Cs, C)
    ).

capitals([C|Cs], N0, N, R) :- C >= 0'A, C =< 0'Z, !, N1 is N0 + 1, N1 =< 3, capitals(Cs, N1, N, R).
capitals(R, N, N, R).

%  code_fold(+Codes, -Folded): one code for each: a decimal digit of any script as its ASCII digit, a
%  fullwidth form as its ASCII character, a mathematical styled letter (bold, italic, script, ...) as its
%  letter, an invisible character or any space as a space; the rest as it is
code_fold([], []).
code_fold([C|Cs], [F|Fs]) :- fold_code(C, F), code_fold(Cs, Fs).

fold_code(C, F) :- decimal_digit(C, D), !, F is 0'0 + D.
fold_code(C, F) :- C >= 0xFF01, C =< 0xFF5E, !, F is C - 0xFEE0.
fold_code(C, 0' ) :- invisible_code(C), !.
fold_code(C, 0' ) :- space_code(C), !.
fold_code(C, F) :- C >= 0x1D400, C =< 0x1D6A3, !,
    I is (C - 0x1D400) mod 52, ( I < 26 -> F is 0'A + I ; F is 0'a + I - 26 ).
fold_code(C, C).

invisible_code(C) :- memberchk(C, [0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFEFF, 0xFFA0]), !.
invisible_code(C) :- C >= 0x200B, C =< 0x200F, !.
invisible_code(C) :- C >= 0x202A, C =< 0x202E, !.
invisible_code(C) :- C >= 0x2060, C =< 0x206F, !.
invisible_code(C) :- C >= 0xFE00, C =< 0xFE0F, !.
invisible_code(C) :- C >= 0xE0000, C =< 0xE0FFF.

%  space_code(+Code): a space as Python's str.isspace has it (SWI-Prolog's code_type space lacks the no-break
%  spaces U+00A0, U+2007, U+202F, U+0085 and U+001C-001F: "code 730\u00a0551" was no run to the rule)
space_code(C) :- code_type(C, space), !.
space_code(C) :- memberchk(C, [0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0xA0, 0x2007, 0x202F]).

code_joiner(C) :- memberchk(C, [0' , 0'-]).  % not '.': "10.30", "12.50" are times and amounts

without_joiners([], []).
without_joiners([C|Cs], Ds) :- code_joiner(C), !, without_joiners(Cs, Ds).
without_joiners([C|Cs], [C|Ds]) :- without_joiners(Cs, Ds).

%  code_run(+FoldedCodes): a run of 4-8 ASCII digits with no digit right before or after it, its groups joined
%  by one joiner (run_joiner/2): some whole groups, in a row, of a chain of groups
code_run(Cs) :- digit_chains(Cs, Chains), member(Ns, Chains), append(_, [N|Rest], Ns), run_from(Rest, N), !.

run_from(_, S) :- S >= 4, S =< 8, !.
run_from([N|Ns], S0) :- S is S0 + N, S =< 8, run_from(Ns, S).

%  digit_chains(+FoldedCodes, -Chains): each chain of digit groups joined by one joiner, as its groups' lengths
digit_chains([], []).
digit_chains([C|Cs], [Ns|Chains]) :- ascii_digit(C), !, digit_chain([C|Cs], Ns, Rest), digit_chains(Rest, Chains).
digit_chains([_|Cs], Chains) :- digit_chains(Cs, Chains).

digit_chain(Cs, [N|Ns], Rest) :-
    count_digits(Cs, 0, N, R0),
    ( run_joiner(R0, R1) -> digit_chain(R1, Ns, Rest) ; Ns = [], Rest = R0 ).

%  run_joiner(+Codes, -FromTheNextDigit): one space; or a hyphen (any dash), dot, _, / or \, a space either side
%  or not (" - "); then a digit
run_joiner([0' , D|R], [D|R]) :- ascii_digit(D), !.
run_joiner(R0, R) :-
    ( R0 = [0' |R1] -> true ; R1 = R0 ), R1 = [J|R2], group_joiner(J),
    ( R2 = [0' |R3] -> R = R3 ; R = R2 ), R = [D|_], ascii_digit(D).

group_joiner(J) :- memberchk(J, [0'-, 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0'., 0'_, 0'/, 0'\\]).

count_digits([C|Cs], N0, N, R) :- ascii_digit(C), !, N1 is N0 + 1, count_digits(Cs, N1, N, R).
count_digits(R, N, N, R).

ascii_digit(C) :- integer(C), C >= 0'0, C =< 0'9.

% A card number anywhere in the text: 13-19 digits (of any script: "４１１１", "٤١١١") in runs joined by anything
% but a letter or a digit ("4111 1111", "4111.1111", "4111/1111", "4111_1111", "4111  --  1111", a line break,
% invisible characters), passing the Luhn check. Runs of one group are tried in every window of whole runs
% ("call 555 0100 4111 1111 1111 1111"). The same rule as sentinel_mcp/core/card_numbers.py.
card_number_text(T) :-
    atom(T), atom_codes(T, Cs), card_tokens(Cs, Ts), card_groups(Ts, [], 0, Gs), member(Runs, Gs),
    append(_, From, Runs), card_window(From, [], 0, Ds), luhn(Ds), !.

card_tokens([], []).
card_tokens([C|Cs], [d([D|Ds])|Ts]) :- decimal_digit(C, D), !, digit_chars(Cs, Ds, Rest), card_tokens(Rest, Ts).
card_tokens([C|Cs], [w|Ts]) :- code_type(C, alpha), C \== 0'_, !, card_tokens(Cs, Ts).  % a letter
card_tokens([_|Cs], [s|Ts]) :- card_tokens(Cs, Ts).

digit_chars([C|Cs], [D|Ds], Rest) :- decimal_digit(C, D), !, digit_chars(Cs, Ds, Rest).
digit_chars(Cs, [], Cs).

%  card_groups(+Tokens, +RunsSoFar, +SeparatorsSince, -Groups): each group's digit runs, in order
card_groups([], Cur, _, Gs) :- close_group(Cur, [], Gs).
card_groups([d(D)|Ts], Cur, _, Gs) :- !, card_groups(Ts, [D|Cur], 0, Gs).
card_groups([s|Ts], Cur, S, Gs) :- Cur \== [], !, S1 is S + 1, card_groups(Ts, Cur, S1, Gs).
card_groups([_|Ts], Cur, _, Gs) :- close_group(Cur, Gs1, Gs), card_groups(Ts, [], 0, Gs1).
close_group([], Gs, Gs) :- !.
close_group(Cur, Gs, [G|Gs]) :- reverse(Cur, G).

%  decimal_digit(+Code, -Value): a decimal digit of any script (Unicode's Nd characters come in runs of ten
%  from a zero; the zeros below are Unicode 14's, as Python's unicodedata has them)
decimal_digit(C, W) :- C =< 0x7F, !, C >= 0'0, C =< 0'9, W is C - 0'0.
decimal_digit(C, W) :- digit_zero(Z), C >= Z, C =< Z + 9, !, W is C - Z.
digit_zero(1632).
digit_zero(1776).
digit_zero(1984).
digit_zero(2406).
digit_zero(2534).
digit_zero(2662).
digit_zero(2790).
digit_zero(2918).
digit_zero(3046).
digit_zero(3174).
digit_zero(3302).
digit_zero(3430).
digit_zero(3558).
digit_zero(3664).
digit_zero(3792).
digit_zero(3872).
digit_zero(4160).
digit_zero(4240).
digit_zero(6112).
digit_zero(6160).
digit_zero(6470).
digit_zero(6608).
digit_zero(6784).
digit_zero(6800).
digit_zero(6992).
digit_zero(7088).
digit_zero(7232).
digit_zero(7248).
digit_zero(42528).
digit_zero(43216).
digit_zero(43264).
digit_zero(43472).
digit_zero(43504).
digit_zero(43600).
digit_zero(44016).
digit_zero(65296).
digit_zero(66720).
digit_zero(68912).
digit_zero(69734).
digit_zero(69872).
digit_zero(69942).
digit_zero(70096).
digit_zero(70384).
digit_zero(70736).
digit_zero(70864).
digit_zero(71248).
digit_zero(71360).
digit_zero(71472).
digit_zero(71904).
digit_zero(72016).
digit_zero(72784).
digit_zero(73040).
digit_zero(73120).
digit_zero(92768).
digit_zero(92864).
digit_zero(93008).
digit_zero(120782).
digit_zero(120792).
digit_zero(120802).
digit_zero(120812).
digit_zero(120822).
digit_zero(123200).
digit_zero(123632).
digit_zero(125264).
digit_zero(130032).

card_window([R|Rs], Acc, N0, Ds) :-
    length(R, L), N is N0 + L, N =< 19, append(Acc, R, Acc1),
    ( N >= 13, Ds = Acc1 ; card_window(Rs, Acc1, N, Ds) ).

all_digits([]).
all_digits([C|Cs]) :- ascii_digit(C), all_digits(Cs).

luhn(Ds) :-
    reverse(Ds, R), luhn_sum(R, 0, S), S mod 10 =:= 0.
luhn_sum([], _, 0).
luhn_sum([D|Ds], I, S) :-
    I1 is I + 1, luhn_sum(Ds, I1, S0),
    ( I mod 2 =:= 1 -> D2 is D * 2, ( D2 > 9 -> V is D2 - 9 ; V = D2 ) ; V = D ),
    S is S0 + V.
