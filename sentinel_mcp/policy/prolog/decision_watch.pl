/*  Part of sentinel_core (included): a decision's wall-clock budget, kept by one watching thread.

    call_with_time_limit/2 installs an alarm with library(time)'s scheduler thread and removes it again: two
    wake-ups of that thread and a contended mutex per decision, ~20 us of a ~90 us decision (and the
    scheduler's CPU besides). A decision instead writes its deadline where a watching thread (started on
    first use) reads it every few milliseconds; the watcher raises time_limit_exceeded in the deciding thread
    (thread_signal/2, the mechanism library(time)'s alarms use) once that deadline has passed. A decision costs
    a few flag/3 writes and no wake-up; the watcher sleeps for good after a second with no decision, and the
    next decision wakes it.

    One decision runs at a time in the process (engine_thread.py's lock), so one deadline is kept. The signal's
    goal checks in the target thread, under its own state, that its decision is the one overdue: a signal that
    arrives late (the decision over, another begun) does nothing. Where the watcher cannot be started, the
    decision takes call_with_time_limit/2, as before.

    flag/3 keys (all flags share one lock in SWI-Prolog, so the watcher's and a decider's reads and writes are
    in one order): '$sn_decision_seq' (decisions begun), '$sn_decider' (the deciding thread's id),
    '$sn_deadline' (0: no decision running), '$sn_watch_awake' (1 while the watcher polls).
*/

%  within_budget(+Seconds, :Goal): once(Goal), throwing time_limit_exceeded if it runs past Seconds of wall time.
within_budget(S, Goal) :-
    flag('$sn_decision_seq', Q, Q + 1),  % before the watcher is looked at (see watch_idle/2)
    (   watcher_awake
    ->  get_time(T0), D is T0 + S, thread_no(I),
        flag('$sn_decider', _, I),
        setup_call_cleanup(flag('$sn_deadline', _, D), once(Goal), flag('$sn_deadline', _, 0))
    ;   call_with_time_limit(S, Goal)
    ).

thread_no(I) :-
    (   nb_current('$sn_thread_no', I0)
    ->  I = I0
    ;   thread_self(T), thread_property(T, id(I)), nb_setval('$sn_thread_no', I)
    ).

%  watcher_awake: the watcher polls (woken, or started, when it was not); fails when it cannot be started.
watcher_awake :-
    flag('$sn_watch_awake', A, 1),
    (   A == 1
    ->  true
    ;   catch(thread_send_message(sn_decision_watch, wake), _, fail)
    ->  true
    ;   catch(thread_create(watch_main, _, [alias(sn_decision_watch), detached(true)]), _, fail)
    ->  true
    ;   flag('$sn_watch_awake', _, 0), fail
    ).

%  sn_decision_overdue: the watcher's signal, run in the deciding thread: time_limit_exceeded when this thread's
%  decision is running past its deadline; nothing otherwise (a late signal).
sn_decision_overdue :-
    (   flag('$sn_deadline', D, D), D > 0, get_time(Now), Now >= D,
        thread_no(I), flag('$sn_decider', I0, I0), I0 == I
    ->  throw(time_limit_exceeded)
    ;   true
    ).

watch_poll(0.02).  % seconds between looks while decisions run: how late past its budget a decision may stop
watch_idle(1.0).   % seconds with no decision before the watcher sleeps until the next one

watch_main :-
    catch(( get_time(T0), flag('$sn_decision_seq', Q, Q), watch(Q, T0, none) ), _, true),
    flag('$sn_watch_awake', _, 0).  % gone (at exit): the next decision starts another

%  watch(+Seq, +SeqSince, +Signalled): Seq was the count of decisions begun, unchanged since SeqSince;
%  Signalled the decision already told it is overdue (told once: the signal waits until it is handled).
watch(Q0, T0, Sig0) :-
    flag('$sn_decision_seq', Q1, Q1), flag('$sn_deadline', D, D), flag('$sn_decider', I, I),
    flag('$sn_decision_seq', Q2, Q2),
    get_time(Now),
    (   Q1 =:= Q2, D > 0, Now >= D, Sig0 \== Q1  % D is decision Q1's: it is written after Q1 begins
    ->  catch(thread_signal(I, sentinel_core:sn_decision_overdue), _, true), Sig = Q1
    ;   Sig = Sig0
    ),
    ( Q2 =\= Q0 -> T1 = Now ; T1 = T0 ),
    watch_idle(Idle),
    (   D =:= 0, Now - T1 > Idle
    ->  watch_sleep(Q2),
        get_time(T2), flag('$sn_decision_seq', Q3, Q3),
        watch(Q3, T2, Sig)
    ;   watch_poll(P),
        ( D > Now -> W is min(P, D - Now + 0.001) ; W = P ),
        sleep(W),
        watch(Q2, T1, Sig)
    ).

%  watch_sleep(+Seq): marked asleep, then, unless a decision began meanwhile, blocked until one wakes it. A
%  decider counts its decision before it reads the mark, and the watcher marks before it reads the count, so
%  one of them sees the other: the watcher never sleeps through a decision.
watch_sleep(Q) :-
    flag('$sn_watch_awake', _, 0),
    flag('$sn_decision_seq', Q1, Q1),
    (   Q1 =:= Q
    ->  thread_get_message(_)
    ;   flag('$sn_watch_awake', _, 1)
    ).
