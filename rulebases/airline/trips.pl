% Part of rulebases/airline.pl (included by it: docs/rulebase-language.md, include_rules/1): the rules
% derived from the facts (reservations, passengers, bags, payments, trips and their prices) the guards read.

own_reservation(R) :- reservation_id_of(R, R), current_user(U), reservation_user(R, U).
% an active reservation has no status at all (tau2's data: "cancelled" is the only one it is given); any
% status, in any spelling, is not active
reservation_active(R) :- \+ reservation_status(R, _).

% Statuses are checked against the ones known to mean "not flown yet" (an allow list; flying and landed are
% flown): a status this policy does not know ('Flying', a list, a renamed value) counts as flown.
not_flown_status(S) :- memberchk(S, [available, delayed, cancelled, 'on time']).
% the cabins whose flights may be changed (an allow list: a cabin this policy does not know may not)
flights_changeable_cabin(R) :- reservation_cabin(R, C), memberchk(C, [economy, business]).
leg_not_flown(F, Date) :- flight_status(F, Date, S), atom(S), not_flown_status(S).
no_flight_flown(R) :- forall(reservation_leg(R, F, Date, _, _), leg_not_flown(F, Date)).
airline_cancelled_flight(R) :- reservation_leg(R, F, Date, _, _), flight_status(F, Date, cancelled).
delayed_flight(R) :- reservation_leg(R, F, Date, _, _), flight_status(F, Date, delayed).

% Booked at most 24 hours before now and not after it: a created_at after now (an airline clock ahead, a broken
% record) gave a negative number of hours, and counted. Only a time of the airline's own format counts (no date
% alone, no zone against a current time of none, nothing parse_time/3 stretches to a calendar): what cannot be
% read so is no booking time, and the rule fails, as every unknown in this policy does.
booked_within_24h(R) :-
    reservation_created(R, T), airline_time(T), current_time(Now), airline_time(Now),
    iso_hours_between(T, Now, H), H >= 0, H =< 24.

% YYYY-MM-DDTHH:MM:SS (models.py: "Timestamp when reservation was created, YYYY-MM-DDTHH:MM:SS"), a real
% calendar day and time of day in ASCII digits (sentinel_rt's calendar_time/1)
airline_time(T) :- calendar_time(T).

covered_by_insurance(W) :- memberchk(W, [health, weather]).

cancellable(R, _) :- booked_within_24h(R).
cancellable(R, _) :- airline_cancelled_flight(R).
cancellable(R, _) :- reservation_cabin(R, business).
cancellable(R, W) :- reservation_insurance(R, yes), covered_by_insurance(W).

passenger_count(R, N) :- aggregate_all(count, reservation_passenger(R, _, _, _, _), N).

bag_fee(50).
insurance_fee(30).

% policy.md's table: a regular member's passengers have 0, 1 and 2 free bags in basic economy, economy and
% business; a silver member's one more in each cabin, a gold member's two more
free_bags_per_passenger(M, C, N) :-
    nth0(I, [regular, silver, gold], M), nth0(J, [basic_economy, economy, business], C), N is I + J.

free_bags(U, Cabin, Passengers, Free) :-
    user_membership(U, M), free_bags_per_passenger(M, Cabin, Per), Free is Per * Passengers.

% At booking: every bag beyond the allowance is paid, and no bag within it.
booking_bags_ok(U, Cabin, Passengers, Total, Nonfree) :-
    integer(Total), integer(Nonfree), Total >= 0, Nonfree >= 0,
    free_bags(U, Cabin, Passengers, Free), Nonfree =:= max(0, Total - Free).

% Adding bags to a reservation: the new bags use what is left of the allowance first; only the rest is paid.
added_bags_ok(U, R, Total, Nonfree) :-
    reservation_baggage(R, T0, N0), integer(Total), integer(Nonfree), Total >= T0, Nonfree >= N0,
    reservation_cabin(R, C), passenger_count(R, PN), free_bags(U, C, PN, Free),
    FreeLeft is max(0, Free - (T0 - N0)), Nonfree - N0 =:= max(0, (Total - T0) - FreeLeft).

% every passenger with a first name, a last name and a date of birth (YYYY-MM-DD)
passenger_details_ok(Ps) :-
    forall(member(P, Ps), ( P = json(L), memberchk(first_name = F, L), memberchk(last_name = N, L), memberchk(dob = B, L),
                            name_text(F), name_text(N), birth_date(B) )).

% Each passenger a different person (a date of birth and a name, in any case, accents or separators:
% person_name_key/2): one person listed twice paid two seats for one traveller, and a reservation of two was
% "modified" to one person twice, the number of people changed while the list's length did not.
distinct_passengers(Ps) :-
    findall(K-B, ( member(json(L), Ps), memberchk(first_name = F, L), memberchk(last_name = N, L),
                   memberchk(dob = B, L), atomic_list_concat([F, N], ' ', FN), person_name_key(FN, K) ), Keys),
    sort(Keys, Distinct), length(Keys, Len), length(Distinct, Len).

% A name is a person's name as sentinel_rt's person_name/1 reads it (policy/prolog/person_names.pl): letters of
% any script with their marks, and blanks, hyphens, apostrophes, periods or middle dots between them, at most 80
% characters. A confirmation shows the names among its items, and a name of any text wrote items of the agent's
% own into what the user read before the real ones ('Li. Charged now: $104 from gift card ...'): an allow list
% of what a name is made of, never a list of words it may not say.
name_text(X) :- person_name(X).

% A date of birth is a calendar day written YYYY-MM-DD in ASCII digits (sentinel_rt's calendar_date/1), not
% after today: ten characters of anything passed before ('1990-02-30', '2099-01-01', full-width digits).
birth_date(B) :- calendar_date(B), today(T), B @=< T.
cites(birth_date/1, policy_ref(airline, 'collect the first name, last name, and date of birth for each passenger')).

payment_in_profile(U, P) :- user_payment(U, P, _).
card_payment(U, P) :- user_payment(U, P, S), memberchk(S, [credit_card, gift_card]).

% A gift card pays at most its balance (a credit card has no balance here).
covers(U, P, Amount) :-
    (   user_payment(U, P, gift_card) -> user_payment_balance(U, P, B), Amount =< B ; true ).

% Every payment an object naming a method once, with a positive amount in whole dollars (the tool's schema says
% integer: fractions that add up to the price are no payment of it): a method listed twice would pass each
% balance check alone and together take more than its balance, and a negative or missing amount makes the rest
% add up to the price while paying something else (a negative gift card payment would raise its balance).
payments_well_formed(Payments) :-
    is_list(Payments), Payments \== [],
    forall(member(P, Payments), ( P = json(L), memberchk(payment_id = Id, L), atom(Id),
                                  memberchk(amount = A, L), integer(A), A > 0 )),
    findall(Id, ( member(json(L), Payments), memberchk(payment_id = Id, L) ), Ids),
    sort(Ids, Distinct), length(Ids, N), length(Distinct, N).
cites(payments_well_formed/1, policy_ref(airline, 'at most one travel certificate, at most one credit card, and at most three gift cards')).

payments_in_profile(U, Payments) :-
    forall(member(json(P), Payments), ( memberchk(payment_id = Id, P), payment_in_profile(U, Id) )).
payment_counts_ok(U, Payments) :-
    count_source(U, Payments, certificate, C), C =< 1,
    count_source(U, Payments, credit_card, K), K =< 1,
    count_source(U, Payments, gift_card, G), G =< 3.
payment_balances_ok(U, Payments) :-
    forall(( member(json(P), Payments), memberchk(payment_id = Id, P), memberchk(amount = A, P),
             user_payment(U, Id, S), memberchk(S, [gift_card, certificate]) ),
           ( user_payment_balance(U, Id, Balance), A =< Balance )).
payments_total(Payments, Sum) :-
    aggregate_all(sum(A), ( member(json(P), Payments), memberchk(amount = A, P), number(A) ), Sum).

count_source(U, Payments, Source, N) :-
    aggregate_all(count, ( member(json(P), Payments), memberchk(payment_id = Id, P), user_payment(U, Id, Source) ), N).

% A leg from O to D: a leg the reservation already has (kept), or a direct flight the search finds.
leg(R, S, O, D, leg(F, Date, O, D)) :-
    segment(S, F, Date),
    (   R \== none, reservation_leg(R, F, Date, O, D)
    ->  true
    ;   direct_flight(O, D, Date, F)
    ).

% A path O -> D of one or two legs.
path(R, O, D, [S], [L]) :- leg(R, S, O, D, L).
path(R, O, D, [S1, S2], [leg(F1, Date1, O, M), leg(F2, Date2, M, D)]) :-
    segment(S1, F1, Date1), segment(S2, F2, Date2),
    onestop_flight(O, D, Date1, F1, Date1, M, F2, Date2).
path(R, O, D, [S1, S2], [L1, L2]) :- R \== none, reservation_leg(R, _, _, O, M), leg(R, S1, O, M, L1), leg(R, S2, M, D, L2).

% The trip keeps its origin, destination and trip type; Legs are its legs with their airports.
route_ok(R, O, D, one_way, Flights, Legs) :- path(R, O, D, Flights, Legs).
route_ok(R, O, D, round_trip, Flights, Legs) :-
    append(Out, Back, Flights), Out \== [], Back \== [], path(R, O, D, Out, L1), path(R, D, O, Back, L2), !,
    append(L1, L2, Legs).

same_flights(R, Flights) :-
    findall(F-D, reservation_leg(R, F, D, _, _), Old0), msort(Old0, Old),
    findall(F-D, ( member(S, Flights), segment(S, F, D) ), New0), msort(New0, New),
    Old == New.

% What a flight change changes (a no-op is none a delay certificate may follow): the cabin, or a flight held or
% new, on the legs as the airline's records name them (route_ok/6 found each there), never the client's spelling.
flights_changed(R, C, _) :- memberchk(C, [basic_economy, economy, business]), reservation_cabin(R, C0), C0 \== C.
flights_changed(R, _, Legs) :- reservation_leg(R, F, Date, _, _), \+ memberchk(leg(F, Date, _, _), Legs).
flights_changed(R, _, Legs) :- member(leg(F, Date, _, _), Legs), \+ reservation_leg(R, F, Date, _, _).

flight_not_flown(S) :- segment(S, F, Date), leg_not_flown(F, Date).
flight_available(S) :- segment(S, F, Date), flight_status(F, Date, available).

% Price of a leg in a cabin: a kept leg in an unchanged cabin keeps the price paid; any other is priced now.
leg_price(R, C, leg(F, Date, O, D), P) :-
    (   R \== none, reservation_cabin(R, C), reservation_leg_price(R, F, Date, P0)
    ->  P = P0
    ;   direct_flight_price(O, D, Date, F, C, P)
    ).
legs_price(R, C, Legs, Passengers, Total) :-
    is_list(Legs),
    findall(P, ( member(L, Legs), leg_price(R, C, L, P) ), Ps), length(Ps, N), length(Legs, N),
    sum_list(Ps, Sum), Total is Sum * Passengers.
% a flight the reservation keeps in its cabin keeps its passengers' seats (the airline checks seats of new flights
% only): a kept flight full now does not stop changing another one
seats_ok(R, C, Passengers, Legs) :-
    is_list(Legs),
    forall(( member(leg(F, Date, O, D), Legs), \+ kept_leg(R, C, F, Date) ),
           ( direct_flight_seats(O, D, Date, F, C, N), N >= Passengers )).
kept_leg(R, C, F, Date) :- R \== none, reservation_cabin(R, C), reservation_leg(R, F, Date, _, _).

reservation_paid(R, Total) :- aggregate_all(sum(A), reservation_payment(R, _, _, A), Total).
old_flights_price(R, Total) :-
    passenger_count(R, PN), aggregate_all(sum(P), reservation_leg_price(R, _, _, P), Sum), Total is Sum * PN.

refund_text(R, T) :- reservation_paid(R, A), T = text('$~w to the original payment methods within 5 to 7 business days', [A]).
