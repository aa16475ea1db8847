% Test rulebase for tests/policy/blind_write_server.py (mounted as "u"): each write of `o` establishes
% changed(O), and its guard says "not yet changed" in one spelling; after a write whose outcome is unknown,
% changed(O) is unsure. `\+` sees it (u__change_neg); the others read it where an unsure fact is not seen.
fact(changed/1). fact(open/1). fact(elsewhere/1).  % elsewhere/1: read by no guard
seed(open(k)).
effect('u__change_once', [o = O], [establish(changed(O))]).
effect('u__change_ite', [o = O], [establish(changed(O))]).
effect('u__change_findall', [o = O], [establish(changed(O))]).
effect('u__change_count', [o = O], [establish(changed(O))]).
effect('u__change_cut', [o = O], [establish(changed(O))]).
effect('u__change_chain', [o = O], [establish(changed(O))]).
effect('u__change_neg', [o = O], [establish(changed(O))]).
guard('u__change_once', [o = O], ( open(O), once(\+ changed(O)) )).
guard('u__change_ite', [o = O], ( open(O), ( changed(O) -> X = no ; X = yes ), X == yes )).
guard('u__change_findall', [o = O], ( open(O), findall(x, changed(O), L), L == [] )).
guard('u__change_count', [o = O], ( open(O), aggregate_all(count, changed(O), N), N =:= 0 )).
guard('u__change_cut', [o = O], ( open(O), fresh(O) )).
fresh(O) :- changed(O), !, fail.
fresh(_).
guard('u__change_chain', [o = O], may_change(O)).
may_change(O) :- open(O), not_yet(O).
not_yet(O) :- step(O).
step(O) :- require(once(\+ changed(O)), 'changed only once').
guard('u__change_neg', [o = O], ( open(O), \+ changed(O) )).
% reads open/1 blind, changed/1 not at all: an unsure changed(k) is nothing to it
guard('u__note', [o = O], once(open(O))).
% (in-process only: no such upstream tool) "not yet" blind ten rules down: deeper than the walk follows, so
% what the rest reads is not known, and an unsure fact refuses it all the same (fail closed)
guard('u__change_deep', [o = O], d1(O)).
d1(O) :- open(O), d2(O).
d2(O) :- d3(O).
d3(O) :- d4(O).
d4(O) :- d5(O).
d5(O) :- d6(O).
d6(O) :- d7(O).
d7(O) :- d8(O).
d8(O) :- d9(O).
d9(O) :- d10(O).
d10(O) :- once(\+ changed(O)).
