/*  Part of sentinel_core (included): a decision's wall-clock budget without an alarm per decision.

    call_with_time_limit/2 installs an alarm and removes it; both wake SWI-Prolog's alarm scheduler, and
    around a decision's ~100 us of work that cost ~20-30 us of CPU on a 2-core host (issue 21: a quarter of
    the airline cancel guard's time in the engine). Here the deciding thread writes its deadline where one
    watchdog thread reads it (a flag of its own, one atomic write) and keeps it in its own global too; the
    watchdog looks every watch_every/1 seconds and, to a thread past its deadline, sends sn_overdue/0, which
    throws time_limit_exceeded (as the alarm did) only if that thread's own current deadline has passed: an
    interrupt that arrives after its decision ended, or during the next one, does nothing.

    Fail-safe: when the watchdog has not looked within the last half second (not started yet, could not be
    started, died, stuck or starved), within_budget/2 is call_with_time_limit/2, as before, and a watchdog is
    started if none runs. The watchdog signals each overdue deadline once; a thread busy in one
    long foreign call sees the interrupt when it returns to Prolog, as with the alarm.
*/

:- dynamic sn_watched/2.  % sn_watched(Thread, FlagKey): threads that decide, and where their deadline is

watch_every(0.01).

%  within_budget(+Seconds, :Goal): once(Goal), or time_limit_exceeded thrown when it runs past Seconds of
%  wall clock. Nested: the earlier deadline holds.
within_budget(S, Goal) :-
    get_time(T0),
    (   watch_fresh(T0)
    ->  deadline_key(Key),
        D1 is T0 + S,
        ( nb_current(sn_deadline, D0), number(D0), D0 > 0 -> D is min(D0, D1) ; D0 = 0, D = D1 ),
        setup_call_cleanup(set_deadline(Key, D), once(Goal), set_deadline(Key, D0))
    ;   start_watchdog,
        call_with_time_limit(S, Goal)
    ).

set_deadline(Key, D) :- nb_setval(sn_deadline, D), flag(Key, _, D).

%  The flag this thread's deadline is written to, made once per thread (and the thread made known to the
%  watchdog).
deadline_key(Key) :-
    (   nb_current(sn_deadline_key, K), atom(K)
    ->  Key = K
    ;   thread_self(Me), thread_property(Me, id(N)), atom_concat(sn_deadline_, N, Key),
        flag(Key, _, 0), assertz(sn_watched(Me, Key)), nb_setval(sn_deadline_key, Key)
    ).

%  Sent by the watchdog: the decision running now is past its own deadline (checked here, in the thread).
sn_overdue :-
    (   nb_current(sn_deadline, D), number(D), D > 0, get_time(Now), Now >= D
    ->  throw(time_limit_exceeded)
    ;   true
    ).

%  The watchdog is trusted only while it beats: it writes the time of each look (a thread that is alive but
%  stuck, starved, or not the watchdog at all under its name never is).
watch_fresh(Now) :- flag(sn_watch_beat, B, B), Now - B < 0.5.

watchdog_running :- get_time(Now), watch_fresh(Now).

%  A watchdog that ends, however (an error, an abort), is no longer trusted from that moment: its exit resets
%  the beat, so no decision starts trusting a watchdog that is gone.
start_watchdog :-
    catch(thread_create(watch_deadlines([]), _, [alias(sn_deadline_watch), detached(true),
                                                  at_exit(flag(sn_watch_beat, _, 0))]), _, true).

%  The watchdog: each look, every watched thread past its deadline is sent sn_overdue/0 once for that
%  deadline (Sent: the deadlines already signalled, by thread). A thread that is gone is forgotten.
watch_deadlines(Sent) :-
    watch_every(Every), sleep(Every),
    catch(look_once(Sent, Sent1), E, ( print_message(warning, format('decision budget watchdog: ~q', [E])),
                                       Sent1 = Sent )),
    watch_deadlines(Sent1).

look_once(Sent, Sent2) :-
    get_time(Now),
    flag(sn_watch_beat, _, Now),
    findall(T-D, ( sn_watched(T, K), flag(K, D, D), number(D), D > 0, Now >= D ), Due),
    foldl(signal_due, Due, Sent, Sent1),
    include(still_due(Due), Sent1, Sent2).

signal_due(T-D, Sent, Sent) :- memberchk(T-D, Sent), !.
signal_due(T-D, Sent, [T-D|Sent]) :-
    catch(thread_signal(T, sentinel_core:sn_overdue), _, retractall(sn_watched(T, _))).

still_due(Due, TD) :- memberchk(TD, Due).
