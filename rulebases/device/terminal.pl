% Part of rulebases/device.pl (included by it: docs/rulebase-language.md, include_rules/1): the
% terminal_run commands, the shapes of their arguments, what they may read of the phone and which paths
% are private.

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
