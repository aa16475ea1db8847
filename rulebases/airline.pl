% Airline policy (tau2-bench airline, ../shared/data/tau2-airline/policy.md) for the airline example server
% (examples/airline), mounted as "airline". Facts come from its read tools; what only the user can say is
% askable. Every requirement cites the sentence of policy.md it formalises (policy_ref), so a refusal quotes
% the policy; the payment and baggage rules are all checked here, not left to the airline API.
% Language: docs/rulebase-language.md.

policy_document(airline, 'examples/airline/data/policy.md').

% ---------------------------------------------------------------- time and identity
seed(current_time('2024-05-15T15:00:00')).   % "The current time is 2024-05-15 15:00:00 EST."
seed(today('2024-05-15')).
fact(current_time/1).
fact(today/1).

% The user must give their own user id (a config seed may establish it for a logged-in user).
askable(current_user(U), "What is your user id?", text,
        [from([user]),
         unknown('I need your user id to act on a reservation: it is in your profile and in the e-mail that confirmed your booking. Please look it up, then ask again.')]).

% ---------------------------------------------------------------- bindings (read-only tools)
% What a write is decided on that a write can change (a payment method and its balance, a reservation's status,
% flights, passengers, bags and payments, a flight's seats left) is read again before each write is decided
% (fresh_for_writes): another conversation of the user may have spent the gift card or cancelled the
% reservation since this one read it, and a booking takes seats that the search read before it still shows.
% So is a flight's status, which the airline changes by itself: a flight read "available" a minute ago may be
% in the air now, and a cancel or change decided on the old read would refund a flown flight. So are the free
% bags' membership and the searches' flights and prices (what a write charges), at no call more (shared calls).
% required: a result without the field (missing, renamed, null) leaves the fact unknown and the look-up
% failed, never "looked up, nothing there" (docs/rulebase-language.md)
binding(user_membership(U, M), tool('airline__get_user_details', [user_id = U]),
        extract([M = '/membership']), [ttl(300), required, fresh_for_writes]).
binding(user_payment(U, Id, Source), tool('airline__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Source = '/payment_methods/*/source']), [ttl(300), fresh_for_writes]).
binding(user_payment_balance(U, Id, Amount), tool('airline__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Amount = '/payment_methods/*/amount']), [ttl(300), fresh_for_writes]).
binding(user_card(U, Id, Brand, Last4), tool('airline__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Brand = '/payment_methods/*/brand',
                 Last4 = '/payment_methods/*/last_four']), [ttl(300)]).
binding(user_reservation(U, R), tool('airline__get_user_details', [user_id = U]),
        extract([R = '/reservations/*']), [ttl(300), fresh_for_writes]).

% the id as the airline writes it: the API finds a reservation whatever the case or accents of the id it is
% given, but facts (and what a write's effects invalidate) are kept per spelling, so writes name it exactly
binding(reservation_id_of(R, Id), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([Id = '/reservation_id']), [ttl(60), required]).
binding(reservation_user(R, U), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([U = '/user_id']), [ttl(60), required]).
binding(reservation_cabin(R, C), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([C = '/cabin']), [ttl(60), required, fresh_for_writes]).
binding(reservation_route(R, O, D, T), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([O = '/origin', D = '/destination', T = '/flight_type']), [ttl(60)]).
binding(reservation_created(R, T), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([T = '/created_at']), [ttl(60), required]).
binding(reservation_leg(R, F, Date, O, D), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([F = '/flights/*/flight_number', Date = '/flights/*/date',
                 O = '/flights/*/origin', D = '/flights/*/destination']), [ttl(60), fresh_for_writes]).
binding(reservation_leg_price(R, F, Date, P), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([F = '/flights/*/flight_number', Date = '/flights/*/date', P = '/flights/*/price']), [ttl(60), fresh_for_writes]).
% one fact per place in the passenger list (K: its position), so a person listed twice counts twice: counted
% per distinct name and birth date, a reservation of one person booked twice counted one, and its passengers
% were "modified" to one
binding(reservation_passenger(R, K, First, Last, Dob), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([K = key('/passengers/*'), First = '/passengers/*/first_name', Last = '/passengers/*/last_name',
                 Dob = '/passengers/*/dob']),
        [ttl(60), fresh_for_writes]).
% one fact per entry of the payment history (K: its position): two bags paid $50 each by one card are two payments
binding(reservation_payment(R, K, Id, Amount), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([K = key('/payment_history/*'), Id = '/payment_history/*/payment_id', Amount = '/payment_history/*/amount']),
        [ttl(60), fresh_for_writes]).
binding(reservation_insurance(R, I), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([I = '/insurance']), [ttl(60), required]).
binding(reservation_baggage(R, Total, Nonfree), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([Total = '/total_baggages', Nonfree = '/nonfree_baggages']), [ttl(60), fresh_for_writes]).
binding(reservation_status(R, S), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([S = '/status']), [ttl(60), fresh_for_writes]).

binding(airport_city(Code, City), tool('airline__list_all_airports', []),
        extract([Code = '/result/*/iata', City = '/result/*/city']), [ttl(session)]).
binding(flight_status(F, Date, S), tool('airline__get_flight_status', [flight_number = F, date = Date]),
        extract([S = '/result']), [ttl(60), required, fresh_for_writes]).
binding(direct_flight(O, D, Date, F), tool('airline__search_direct_flight', [origin = O, destination = D, date = Date]),
        extract([F = '/result/*/flight_number']), [ttl(60), fresh_for_writes]).
binding(direct_flight_price(O, D, Date, F, Cabin, Price),
        tool('airline__search_direct_flight', [origin = O, destination = D, date = Date]),
        extract([F = '/result/*/flight_number', Cabin = key('/result/*/prices/*'), Price = '/result/*/prices/*']),
        [ttl(60), fresh_for_writes]).
binding(direct_flight_seats(O, D, Date, F, Cabin, Seats),
        tool('airline__search_direct_flight', [origin = O, destination = D, date = Date]),
        extract([F = '/result/*/flight_number', Cabin = key('/result/*/available_seats/*'),
                 Seats = '/result/*/available_seats/*']), [ttl(60), fresh_for_writes]).
binding(onestop_flight(O, D, Date, F1, D1, M, F2, D2),
        tool('airline__search_onestop_flight', [origin = O, destination = D, date = Date]),
        extract([F1 = '/result/*/0/flight_number', D1 = '/result/*/0/date', M = '/result/*/0/destination',
                 F2 = '/result/*/1/flight_number', D2 = '/result/*/1/date']), [ttl(60), fresh_for_writes]).

% ---------------------------------------------------------------- askables (only the user can say)
askable(cancel_reason(R, W), "Why do you want to cancel reservation ~w?",
        choice([change_of_plan - "My plans changed", airline_cancelled - "The airline cancelled a flight",
                health - "Health reasons", weather - "Bad weather", other - "Another reason"]),
        [from([user]), unknown(as(other))]).   % the user's reason: it decides whether they may cancel
askable(compensation_reservation(U, R), "Which of your reservations is this about?",
        choice_of(R, Label, ( user_reservation(U, R), reservation_label(R, Label) )),
        [from([user, agent]),
         unknown('Ask the user for the route and date of the trip, find it among their reservations (get_user_details, then get_reservation_details), and ask again.')]).
askable(compensation_reason(R, W), "What happened to the flights of your reservation ~w?",
        choice([cancelled_flight - "The airline cancelled a flight", delayed_flight - "A flight was delayed",
                other - "Something else"]),
        [from([user, agent]), unknown(as(other))]).

% ---------------------------------------------------------------- how things read for a person
cites(free_bags_per_passenger/3, policy_ref(airline, 'If the booking user is a regular member')).
cites(free_bags_per_passenger/3, policy_ref(airline, 'If the booking user is a silver member')).
cites(free_bags_per_passenger/3, policy_ref(airline, 'If the booking user is a gold member')).
cites(bag_fee/1, policy_ref(airline, 'Each extra baggage is 50 dollars.')).
cites(insurance_fee/1, policy_ref(airline, 'The travel insurance is 30 dollars per passenger')).
cites(not_flown_status/1, policy_ref(airline, 'If the status is flying, the flight has taken off')).
cites(refund_text/2, policy_ref(airline, 'The refund will go to original payment methods within 5 to 7 business days.')).

cites(cabin_text/2, policy_ref(airline, 'There are three cabin classes')).
cites(trip_text/2, policy_ref(airline, 'There are two types of trip')).
cites(source_text/2, policy_ref(airline, 'There are three types of payment methods')).
cites(free_bags_per_passenger/3, policy_ref(airline, 'There are three membership levels')).
cites(reservation_label/2, policy_ref(airline, "Modify flight › If the user doesn't know their reservation id, the agent should help locate it")).
cites(cancel_reason/2, policy_ref(airline, 'The agent must also obtain the reason for cancellation')).
cites(own_reservation/1, policy_ref(airline, 'Modify flight › First, the agent must obtain the user id and reservation id.')).
cites(own_reservation/1, policy_ref(airline, 'Cancel flight › First, the agent must obtain the user id and reservation id.')).
cites(reservation_label/2, policy_ref(airline, "Cancel flight › If the user doesn't know their reservation id, the agent should help locate it")).
cites(passenger_count/2, policy_ref(airline, 'Even a human agent cannot modify the number of passengers.')).
cites(flight_available/1, policy_ref(airline, 'If the status is delayed or on time')).
cites(leg_price/4, policy_ref(airline, 'Some flight segments can be kept, but their prices will not be updated')).
cites(cancellable/2, policy_ref(airline, 'The API does not check that cancellation rules are met')).
cites(route_ok/6, policy_ref(airline, 'The API does not check these for the agent')).
cites(compensation_eligible/2, policy_ref(airline, 'Do not compensate if the user is regular member')).
cites(compensation_amount/3, policy_ref(airline, 'If the user complains about cancelled flights')).
cites(same_flights/2, policy_ref(airline, 'including basic economy, can change cabin without changing the flights')).
cites(difference_text/3, policy_ref(airline, 'the user is should be refunded the difference')).
cites(booked_within_24h/1, policy_ref(airline, 'The current time is 2024-05-15 15:00:00 EST.')).
cites(booked_within_24h/1, policy_ref(airline, 'The booking was made within the last 24 hrs')).
cites(airline_time/1, policy_ref(airline, 'The current time is 2024-05-15 15:00:00 EST.')).
cites(passenger_details_ok/1, policy_ref(airline, 'collect the first name, last name, and date of birth for each passenger')).

cabin_text(basic_economy, text('basic economy')).
cabin_text(economy, economy).
cabin_text(business, business).
trip_text(one_way, text('one way')).
trip_text(round_trip, text('round trip')).

airport_text(Code, T) :- ( airport_city(Code, City) -> T = text('~w (~w)', [City, Code]) ; T = Code ).

% "59XX6W: New York (JFK) to Seattle (SEA), round trip, first flight 2024-05-20"
reservation_label(R, L) :-
    reservation_route(R, O, D, T), airport_text(O, OT), airport_text(D, DT), trip_text(T, TT),
    findall(Dt, reservation_leg(R, _, Dt, _, _), Dts), msort(Dts, [First|_]),
    ( reservation_status(R, cancelled) -> Note = text(' (cancelled)') ; Note = text('') ),
    L = text('~w: ~w to ~w, ~w, first flight ~w~w', [R, OT, DT, TT, First, Note]).

% "Visa card ending 9909", "gift card 8887175", "travel certificate 7504069"
payment_text(U, Id, T) :-
    (   user_card(U, Id, Brand, Last4) -> humanized(Brand, B), T = text('~w card ending ~w', [B, Last4])
    ;   user_payment(U, Id, Source) -> source_text(Source, ST), number_of(Id, N), T = text('~w ~w', [ST, N])
    ;   T = Id
    ).
source_text(gift_card, text('gift card')).
source_text(certificate, text('travel certificate')).
source_text(credit_card, text('credit card')).
number_of(Id, N) :- atomic_list_concat(Parts, '_', Id), last(Parts, N).

% "$250 from travel certificate 7504069, $280 from Visa card ending 1234"
payments_text(U, Pay, T) :-
    findall(X, ( member(json(P), Pay), memberchk(payment_id = Id, P), memberchk(amount = A, P),
                 payment_text(U, Id, PT), X = text('$~w from ~w', [A, PT]) ), Xs),
    T = joined(Xs, ', ').

% "Mia Li (born 1990-04-05), Omar Rossi (born 1985-02-11)"
passengers_text(Ps, T) :-
    findall(X, ( member(json(P), Ps), memberchk(first_name = F, P), memberchk(last_name = L, P),
                 ( memberchk(dob = B, P) -> X = text('~w ~w (born ~w)', [F, L, B])
                 ; X = text('~w ~w', [F, L]) ) ), Xs),
    T = joined(Xs, ', ').

% flights given as [json([flight_number = F, date = D]), ...]: "HAT083 on 2024-05-16, HAT221 on 2024-05-16"
segment(json(L), F, Date) :- memberchk(flight_number = F, L), memberchk(date = Date, L).
flights_text(Fs, Text) :-
    findall(X, ( member(S, Fs), segment(S, F, D), X = text('~w on ~w', [F, D]) ), Xs),
    Text = joined(Xs, ', ').

% ---------------------------------------------------------------- derived rules
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

% ---------------------------------------------------------------- guards of the write tools
guard('airline__cancel_reservation', [reservation_id = R],
      ( current_user(_),
        require(own_reservation(R), 'the reservation must belong to the user (named by its id exactly as the airline writes it)',
                policy_ref(airline, 'Cancel flight › The user must provide their user id.')),
        require(reservation_active(R), 'the reservation is already cancelled',
                policy_ref(airline, 'Otherwise, flight can be cancelled')),
        require(no_flight_flown(R), 'a flight of this reservation has already been flown; transfer to a human agent',
                policy_ref(airline, 'If any portion of the flight has already been flown')),
        cancel_reason(R, W),
        require(cancellable(R, W), 'not eligible for cancellation: only within 24 hours of booking, when the airline cancelled a flight, for business cabin, or with insurance and a health or weather reason',
                policy_ref(airline, 'flight can be cancelled if any of the following is true')),
        reservation_label(R, L), answer_label(cancel_reason, W, WL), refund_text(R, RT),
        confirmed_items('Cancel this reservation?', ['Reservation' = L, 'Reason' = text(WL), 'Refund' = RT]) )).

guard('airline__update_reservation_flights', [reservation_id = R, cabin = C, flights = Fs, payment_id = P],
      ( current_user(U),
        require(own_reservation(R), 'the reservation must belong to the user (named by its id exactly as the airline writes it)',
                policy_ref(airline, 'Modify flight › The user must provide their user id.')),
        require(reservation_active(R), 'the reservation is cancelled',
                policy_ref(airline, 'Other reservations can be modified')),
        require(payment_in_profile(U, P), 'the payment method must already be in the user profile',
                policy_ref(airline, 'The payment method must already be in user profile for safety reasons.')),
        require(card_payment(U, P), 'a change is paid (or refunded) with a single gift card or credit card, never a travel certificate',
                policy_ref(airline, 'the user needs to provide a single gift card or credit card')),
        require(is_list(Fs), 'flights must be a list', policy_ref(airline, 'Other reservations can be modified')),
        (   same_flights(R, Fs)
        ->  true
        ;   require(flights_changeable_cabin(R), 'basic economy flights cannot be modified',
                    policy_ref(airline, 'Basic economy flights cannot be modified.')),
            % the flights listed and the flights the reservation holds now: a flight left out of the list is
            % changed too (a flight in the air dropped for a later one was refunded and rebooked)
            require(( forall(member(S1, Fs), flight_not_flown(S1)), no_flight_flown(R) ),
                    'a flight that has already been flown cannot be changed',
                    policy_ref(airline, 'If any portion of the flight has already been flown'))
        ),
        require(( reservation_route(R, O, D, T), route_ok(R, O, D, T, Fs, Legs) ),
                'the flights must keep the origin, destination and trip type of the reservation, each available on its date',
                policy_ref(airline, 'without changing the origin, destination, and trip type')),
        require(( var(Legs) ; flights_changed(R, C, Legs) ), 'the change changes nothing: these are the flights and the cabin the reservation holds',
                policy_ref(airline, 'after confirming the facts and changing or cancelling the reservation')),
        (   reservation_cabin(R, C)
        ->  true
        ;   require(no_flight_flown(R), 'the cabin cannot be changed once a flight has been flown',
                    policy_ref(airline, 'Cabin cannot be changed if any flight in the reservation has already been flown.'))
        ),
        passenger_count(R, PN),
        require(( legs_price(R, C, Legs, PN, New), old_flights_price(R, Old), Diff is New - Old ),
                'every new flight must be priced in the cabin (available with a price on its date)',
                policy_ref(airline, 'If the price after cabin change is higher than the original price')),
        require(covers(U, P, Diff), 'the gift card balance does not cover the price difference',
                policy_ref(airline, 'the user is required to pay for the difference')),
        require(seats_ok(R, C, PN, Legs), 'a new flight has not enough seats left in the cabin for every passenger',
                policy_ref(airline, 'available seats and prices are listed')),
        reservation_label(R, RL), flights_text(Fs, FT), cabin_text(C, CT), payment_text(U, P, PT),
        difference_text(Diff, PT, DT),
        confirmed_items('Change the flights of this reservation?',
                        ['Reservation' = RL, 'New flights' = FT, 'Cabin' = CT, 'Price difference' = DT]) )).

difference_text(D, PT, T) :-
    (   D > 0 -> T = text('$~w charged now to ~w', [D, PT])
    ;   D < 0 -> A is -D, T = text('$~w refunded to ~w', [A, PT])
    ;   T = nothing
    ).

guard('airline__update_reservation_baggages', [reservation_id = R, total_baggages = T, nonfree_baggages = N, payment_id = P],
      ( current_user(U),
        require(own_reservation(R), 'the reservation must belong to the user (named by its id exactly as the airline writes it)',
                policy_ref(airline, 'Modify flight › The user must provide their user id.')),
        require(reservation_active(R), 'the reservation is cancelled',
                policy_ref(airline, 'Other reservations can be modified')),
        require(payment_in_profile(U, P), 'the payment method must already be in the user profile',
                policy_ref(airline, 'The payment method must already be in user profile for safety reasons.')),
        require(card_payment(U, P), 'bags are paid with a gift card or credit card, never a travel certificate',
                policy_ref(airline, 'the user needs to provide a single gift card or credit card')),
        require(( reservation_baggage(R, T0, _), integer(T), T >= T0 ), 'checked bags can be added but not removed',
                policy_ref(airline, 'The user can add but not remove checked bags.')),
        require(added_bags_ok(U, R, T, N),
                'the paid bags must be exactly the new bags beyond the free allowance (by membership and cabin): no free bag is charged',
                policy_ref(airline, 'Each extra baggage is 50 dollars.')),
        reservation_baggage(R, _, N0), bag_fee(Fee), Charge is Fee * (N - N0),
        require(covers(U, P, Charge), 'the gift card balance does not cover the bags',
                policy_ref(airline, 'Each extra baggage is 50 dollars.')),
        reservation_label(R, RL), payment_text(U, P, PT), Free is T - N,
        BT = text('~w in all (~w free, ~w paid)', [T, Free, N]), difference_text(Charge, PT, CT),
        confirmed_items('Update the checked bags of this reservation?',
                        ['Reservation' = RL, 'Checked bags' = BT, 'Charged now' = CT]) )).

guard('airline__update_reservation_passengers', [reservation_id = R, passengers = Ps],
      ( current_user(_),
        require(own_reservation(R), 'the reservation must belong to the user (named by its id exactly as the airline writes it)',
                policy_ref(airline, 'Modify flight › The user must provide their user id.')),
        require(reservation_active(R), 'the reservation is cancelled',
                policy_ref(airline, 'Other reservations can be modified')),
        require(( is_list(Ps), length(Ps, N), passenger_count(R, N) ), 'the number of passengers cannot change',
                policy_ref(airline, 'The user can modify passengers but cannot modify the number of passengers')),
        require(passenger_details_ok(Ps), 'every passenger needs a first name, a last name (letters of any script with their marks, and blanks, hyphens, apostrophes, periods or middle dots between them, a zero-width joiner only between two letters of a script written with one; at most 80 characters) and a date of birth (YYYY-MM-DD: a real calendar day, not after today)',
                policy_ref(airline, 'collect the first name, last name, and date of birth for each passenger')),
        require(distinct_passengers(Ps), 'each passenger is a different person: no one is listed twice, in any spelling of their name',
                policy_ref(airline, 'The user can modify passengers but cannot modify the number of passengers')),
        reservation_label(R, RL), passengers_text(Ps, PT),
        confirmed_items('Update the passengers of this reservation?', ['Reservation' = RL, 'Passengers' = PT]) )).

guard('airline__book_reservation',
      [user_id = U, origin = O, destination = D, flight_type = T, cabin = C, flights = Fs, passengers = Ps,
       payment_methods = Pay, total_baggages = TB, nonfree_baggages = NB, insurance = I],
      ( require(current_user(U), 'a reservation is booked for the user themselves (their own user id)',
                policy_ref(airline, 'The agent must first obtain the user id from the user.')),
        ( is_list(Ps) -> length(Ps, PN) ; PN = 0 ),
        require(( PN >= 1, PN =< 5 ), 'a reservation has one to five passengers',
                policy_ref(airline, 'Each reservation can have at most five passengers.')),
        require(passenger_details_ok(Ps), 'every passenger needs a first name, a last name (letters of any script with their marks, and blanks, hyphens, apostrophes, periods or middle dots between them, a zero-width joiner only between two letters of a script written with one; at most 80 characters) and a date of birth (YYYY-MM-DD: a real calendar day, not after today)',
                policy_ref(airline, 'collect the first name, last name, and date of birth for each passenger')),
        require(distinct_passengers(Ps), 'each passenger is a different person: no one is listed twice, in any spelling of their name',
                policy_ref(airline, 'Each reservation can have at most five passengers.')),
        require(payments_well_formed(Pay), 'each payment names a different payment method and pays a positive amount',
                policy_ref(airline, 'All payment methods must already be in user profile for safety reasons.')),
        require(( is_list(Pay), payments_in_profile(U, Pay) ), 'every payment method must already be in the user profile',
                policy_ref(airline, 'All payment methods must already be in user profile for safety reasons.')),
        require(( is_list(Pay), payment_counts_ok(U, Pay) ),
                'a reservation uses at most one travel certificate, one credit card and three gift cards',
                policy_ref(airline, 'at most one travel certificate, at most one credit card, and at most three gift cards')),
        require(( is_list(Pay), payment_balances_ok(U, Pay) ), 'a gift card or travel certificate cannot pay more than its balance',
                policy_ref(airline, 'All payment methods must already be in user profile')),
        require(( is_list(Fs), forall(member(S, Fs), flight_available(S)) ),
                'every flight must be available on its date (not delayed, on time, flying or landed)',
                policy_ref(airline, 'If the status is available, the flight has not taken off')),
        (   is_list(Fs), forall(member(S, Fs), flight_available(S))
        ->  require(route_ok(none, O, D, T, Fs, Legs), 'the flights must go from the origin to the destination (and back for a round trip)',
                    policy_ref(airline, 'The agent should then ask for the trip type, origin, destination.')),
            require(seats_ok(none, C, PN, Legs), 'a flight has not enough seats left in the cabin for every passenger',
                    policy_ref(airline, 'All passengers must fly the same flights in the same cabin.'))
        ;   true
        ),
        require(memberchk(I, [yes, no]), 'travel insurance is "yes" or "no"',
                policy_ref(airline, 'The agent should ask if the user wants to buy the travel insurance.')),
        require(booking_bags_ok(U, C, PN, TB, NB),
                'the paid bags must be exactly the bags beyond the free allowance (by membership and cabin)',
                policy_ref(airline, 'Each extra baggage is 50 dollars.')),
        % (without a route, the rules above already refused the flights: nothing to price)
        (   nonvar(Legs)
        ->  require(legs_price(none, C, Legs, PN, FlightsPrice), 'every flight must have a price in the cabin on its date',
                    policy_ref(airline, 'available seats and prices are listed'))
        ;   true
        ),
        insurance_fee(IF), bag_fee(BF),
        ( I == yes -> InsPrice is IF * PN ; InsPrice = 0 ), BagPrice is BF * NB,
        Total is FlightsPrice + InsPrice + BagPrice,
        require(( payments_total(Pay, Paid), Paid =:= Total ), 'the payments must add up to the price (flights, insurance and paid bags)',
                policy_ref(airline, 'The travel insurance is 30 dollars per passenger')),
        trip_text(T, TT), airport_text(O, OT), airport_text(D, DT), Trip = text('~w, ~w to ~w', [TT, OT, DT]),
        flights_text(Fs, FT), cabin_text(C, CT), passengers_text(Ps, PT), payments_text(U, Pay, PayT),
        Free is TB - NB, BagT = text('~w (~w free, ~w paid at $~w each: $~w)', [TB, Free, NB, BF, BagPrice]),
        ( I == yes -> InsT = text('yes, $~w per passenger: $~w', [IF, InsPrice]) ; InsT = 'no' ),
        PriceT = text('$~w (flights $~w, insurance $~w, bags $~w)', [Total, FlightsPrice, InsPrice, BagPrice]),
        confirmed_items('Book this reservation?',
                        ['Trip' = Trip, 'Flights' = FT, 'Cabin' = CT, 'Passengers' = PT, 'Checked bags' = BagT,
                         'Travel insurance' = InsT, 'Total price' = PriceT, 'Charged now' = PayT]) )).

guard('airline__send_certificate', [user_id = U, amount = A],
      ( require(current_user(U), 'certificates go to the user themselves',
                policy_ref(airline, 'Modify flight › The user must provide their user id.')),
        compensation_reservation(U, R),
        require(reservation_user(R, U), 'the reservation must belong to the user',
                policy_ref(airline, 'Always confirms the facts before offering compensation.')),
        require(compensation_eligible(U, R), 'no compensation: only for silver/gold members, insured reservations, or business cabin',
                policy_ref(airline, 'Only compensate if the user is a silver/gold member or has travel insurance or flies business.')),
        require(\+ compensated(R), 'a certificate was already sent for this reservation: a gesture is offered once',
                policy_ref(airline, 'If the user complains about cancelled flights')),
        compensation_reason(R, W),
        require(compensation_condition(R, W), 'a certificate is offered only for a cancelled flight, or for a delayed one after the reservation was changed or cancelled (in this session)',
                policy_ref(airline, 'Do not offer compensation for any other reason than the ones listed above.')),
        require(compensation_amount(R, W, A), 'the certificate is 100 dollars per passenger for a cancelled flight, 50 per passenger for a delayed one, confirmed from the flight status',
                policy_ref(airline, 'with the amount being $100 times the number of passengers')),
        reservation_label(R, RL), answer_label(compensation_reason, W, WL),
        confirmed_items('Send this travel certificate?',
                        ['Amount' = money(A), 'To' = U, 'Reservation' = RL, 'Because' = text(WL)]) )).

compensation_eligible(U, _) :- user_membership(U, M), memberchk(M, [silver, gold]).
compensation_eligible(_, R) :- reservation_insurance(R, yes).
compensation_eligible(_, R) :- reservation_cabin(R, business).

compensation_amount(R, cancelled_flight, A) :- airline_cancelled_flight(R), passenger_count(R, N), A =:= 100 * N.
% A delayed flight is compensated only as a gesture after the reservation was changed or cancelled in this
% session (policy.md: "... and wants to change or cancel the reservation ... after ... changing or cancelling
% the reservation"); the write itself needed the user's confirmation, so it shows that they wanted it.
compensation_amount(R, delayed_flight, A) :-
    reservation_modified(R, _), had_delayed_flight(R), passenger_count(R, N), A =:= 50 * N.
cites(compensation_amount/3, policy_ref(airline, 'with the amount being $50 times the number of passengers')).

% the delay is on the reservation's flights, or was on a flight the change replaced
had_delayed_flight(R) :- delayed_flight(R).
had_delayed_flight(R) :- delayed_leg_before_change(R, _, _).

compensation_condition(_, cancelled_flight).
compensation_condition(R, delayed_flight) :- reservation_modified(R, _).

% The hand-over is allowed as it is, asking nothing: the policy transfers "if and only if the request cannot be
% handled within the scope of your actions" (a flight already flown is one such case, not the only one), a
% judgement of the request's words that no fact of Sentinel's holds, and states no other condition (no
% authentication, no confirmation: those it asks before actions that update the database, and the transfer
% changes no data). A guard of facts would invent a rule, and no guard at all would leave it to the default
% policy, which asks to confirm any tool that is not read-only.
guard('airline__transfer_to_human_agents', [], true).

% ---------------------------------------------------------------- effects of writes
% What a write did, observed for the rest of the session (the delayed-flight certificate needs it); a flight
% change also records the delayed flights it replaced, read from the facts as they were before the change.
fact(reservation_modified/2).
fact(delayed_leg_before_change/3).
% the reservation a certificate was sent for (the answer the certificate was decided on): one gesture each.
% Kept for every conversation, and across restarts (option kept: docs/rulebase-language.md): the airline keeps
% no record of what a certificate was for, so a new conversation would otherwise send a second one.
fact(compensated/1).
option(kept(compensated/1)).

effect('airline__cancel_reservation', [reservation_id = R],
       [invalidate(reservation_status(R, _)), invalidate(reservation_payment(R, _, _, _)),
        establish(reservation_modified(R, cancelled))]).
effect('airline__update_reservation_flights', [reservation_id = R],
       [establish(reservation_modified(R, changed)),
        establish(delayed_leg_before_change(R, F, Date), ( reservation_leg(R, F, Date, _, _), flight_status(F, Date, delayed) )),
        invalidate(reservation_leg(R, _, _, _, _)), invalidate(reservation_leg_price(R, _, _, _)),
        invalidate(reservation_cabin(R, _)), invalidate(reservation_payment(R, _, _, _))]).
effect('airline__update_reservation_flights', [payment_id = _, reservation_id = _],
       [invalidate(user_payment_balance(_, _, _))]).
effect('airline__update_reservation_baggages', [reservation_id = R],
       [invalidate(reservation_baggage(R, _, _)), invalidate(reservation_payment(R, _, _, _)),
        invalidate(user_payment_balance(_, _, _))]).
effect('airline__update_reservation_passengers', [reservation_id = R],
       [invalidate(reservation_passenger(R, _, _, _, _))]).
effect('airline__book_reservation', [user_id = U], [invalidate(user_reservation(U, _)), invalidate(user_payment_balance(U, _, _)),
                                                      invalidate(user_payment(U, _, _))]).
effect('airline__send_certificate', [user_id = U], [invalidate(user_payment(U, _, _)), invalidate(user_payment_balance(U, _, _)),
                                                      establish(compensated(R), compensation_reservation(U, R))]).
