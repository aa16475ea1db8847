% Part of rulebases/airline.pl (included by it: docs/rulebase-language.md, include_rules/1): how the
% policy's facts read for a person (confirmations, refusals).

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
