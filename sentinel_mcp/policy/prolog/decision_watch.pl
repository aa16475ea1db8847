/*  Part of sentinel_core (included): a decision's wall-clock budget, kept by one watching thread.

    call_with_time_limit/2 installs an alarm with library(time)'s scheduler thread and removes it again: two
    wake-ups of that thread and a contended mutex per decision, ~20 us of a ~90 us decision (and the
    scheduler's CPU besides). A decision instead writes its deadline where a watching thread (started on
    first use) reads it every few milliseconds; the watcher raises time_limit_exceeded in the deciding thread
    (thread_signal/2, the mechanism library(time)'s alarms use) once that deadline has passed. A decision costs
    a few flag writes and no wake-up; the watcher sleeps for good after a second with no decision, and the
    next decision wakes it.

    One decision runs at a time in the process (engine_thread.py's lock), so one deadline is kept. The signal's
    goal checks in the target thread that its own decision is the one overdue: a signal that arrives late (the
    decision over, another begun) does nothing. Where the watcher cannot be started, the decision takes
    call_with_time_limit/2, as before.

    Flags (get_flag/2 and set_flag/2: one inference each; flag/3 runs under the '$flag' mutex, four):
    '$sn_deadline' (0: no decision running), '$sn_decider' (the deciding thread's id), '$sn_watch' (the
    watcher's state: 0 asleep or not started, 1 awake, 2 awake and a decision began since its last look).
    The decider's mark and the watcher's going to sleep are both made under the '$flag' mutex, so one of them
    sees the other: the watcher never sleeps through a decision.
*/

%  within_budget(+Seconds, :Goal): once(Goal), throwing time_limit_exceeded if it runs past Seconds of wall time.
%  (Its steps written in line: each call is an inference a decision counts, work_counts.py.)
within_budget(S, Goal) :-
    ( nb_current('$sn_thread_no', I) -> true ; thread_no(I) ),
    get_time(T0), D is T0 + S,
    set_flag('$sn_decider', I),
    set_flag('$sn_deadline', D),  % before the mark: a watcher that sees the mark sees the deadline
    flag('$sn_watch', W, 2),
    (   ( W =\= 0 -> true ; watcher_woken )
    ->  setup_call_cleanup(true, once(Goal), set_flag('$sn_deadline', 0))
    ;   set_flag('$sn_deadline', 0),
        call_with_time_limit(S, Goal)
    ).

thread_no(I) :-
    (   nb_current('$sn_thread_no', I0)
    ->  I = I0
    ;   thread_self(T), thread_property(T, id(I)), nb_setval('$sn_thread_no', I)
    ).

%  watcher_woken: the watcher, asleep (or not started), woken or started; fails, its state 0 again, when it
%  cannot be started (the decision then takes call_with_time_limit/2).
watcher_woken :-
    (   catch(thread_send_message(sn_decision_watch, wake), _, fail)
    ->  true
    ;   catch(thread_create(watch_main, _, [alias(sn_decision_watch), detached(true)]), _, fail)
    ->  true
    ;   set_flag('$sn_watch', 0), fail
    ).

%  sn_decision_overdue: the watcher's signal, run in the deciding thread: time_limit_exceeded when this thread's
%  decision is running past its deadline; nothing otherwise (a late signal).
sn_decision_overdue :-
    (   get_flag('$sn_deadline', D), D > 0, get_time(Now), Now >= D,
        thread_no(I), get_flag('$sn_decider', I0), I0 == I
    ->  throw(time_limit_exceeded)
    ;   true
    ).

watch_poll(0.02).  % seconds between looks while decisions run: how late past its budget a decision may stop
watch_idle(1.0).   % seconds with no decision begun before the watcher sleeps until the next one

watch_main :-
    catch(( get_time(T0), watch(T0, none) ), _, true),
    set_flag('$sn_watch', 0).  % gone (at exit): the next decision starts another

%  watch(+Since, +Signalled): no decision began since Since; Signalled is the deadline-thread pair already
%  told (told once: the signal waits in that thread until it is handled; told again if the pair changes).
watch(T0, Sig0) :-
    flag('$sn_watch', W, 1),
    get_flag('$sn_deadline', D), get_flag('$sn_decider', I),
    get_time(Now),
    (   D > 0, Now >= D, Sig0 \== D-I
    ->  catch(thread_signal(I, sentinel_core:sn_decision_overdue), _, true), Sig = D-I
    ;   Sig = Sig0
    ),
    ( W =:= 2 -> T1 = Now ; T1 = T0 ),
    watch_idle(Idle),
    (   Now - T1 > Idle, watch_sleeps
    ->  thread_get_message(_),
        get_time(T2),
        watch(T2, Sig)
    ;   watch_poll(P),
        ( D > Now -> Wait is min(P, D - Now + 0.001) ; Wait = P ),
        sleep(Wait),
        watch(T1, Sig)
    ).

%  watch_sleeps: the watcher marked asleep, if no decision began since its last look and none runs (under the
%  mutex a decider marks under: a decider after this sees 0 and wakes it).
watch_sleeps :-
    with_mutex('$flag', ( get_flag('$sn_watch', 1), get_flag('$sn_deadline', D), D =:= 0,
                          set_flag('$sn_watch', 0) )).
