% Airline policy (tau2-bench airline, ../shared/data/tau2-airline/policy.md) for the airline example server
% (examples/airline), mounted as "airline". Facts come from its read tools; what only the user can say is
% askable. Language: docs/rulebase-language.md.

% ---------------------------------------------------------------- time and identity
seed(current_time('2024-05-15T15:00:00')).   % "The current time is 2024-05-15 15:00:00 EST."
seed(today('2024-05-15')).
fact(current_time/1).
fact(today/1).

% The user must give their own user id (a config seed may establish it for a logged-in user).
askable(current_user(U), "What is your user id?", text, [from([user])]).

% ---------------------------------------------------------------- bindings (read-only tools)
binding(user_membership(U, M), tool('airline__get_user_details', [user_id = U]),
        extract([M = '/membership']), [ttl(300)]).
binding(user_payment(U, Id, Source), tool('airline__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Source = '/payment_methods/*/source']), [ttl(300)]).
binding(user_payment_balance(U, Id, Amount), tool('airline__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Amount = '/payment_methods/*/amount']), [ttl(300)]).
binding(user_reservation(U, R), tool('airline__get_user_details', [user_id = U]),
        extract([R = '/reservations/*']), [ttl(300)]).

binding(reservation_user(R, U), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([U = '/user_id']), [ttl(60)]).
binding(reservation_cabin(R, C), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([C = '/cabin']), [ttl(60)]).
binding(reservation_route(R, O, D, T), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([O = '/origin', D = '/destination', T = '/flight_type']), [ttl(60)]).
binding(reservation_created(R, T), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([T = '/created_at']), [ttl(60)]).
binding(reservation_leg(R, F, Date, O, D), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([F = '/flights/*/flight_number', Date = '/flights/*/date',
                 O = '/flights/*/origin', D = '/flights/*/destination']), [ttl(60)]).
binding(reservation_passenger(R, First, Last, Dob), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([First = '/passengers/*/first_name', Last = '/passengers/*/last_name', Dob = '/passengers/*/dob']),
        [ttl(60)]).
binding(reservation_insurance(R, I), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([I = '/insurance']), [ttl(60)]).
binding(reservation_baggage(R, Total, Nonfree), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([Total = '/total_baggages', Nonfree = '/nonfree_baggages']), [ttl(60)]).
binding(reservation_status(R, S), tool('airline__get_reservation_details', [reservation_id = R]),
        extract([S = '/status']), [ttl(60)]).

binding(flight_status(F, Date, S), tool('airline__get_flight_status', [flight_number = F, date = Date]),
        extract([S = '/result']), [ttl(60)]).
binding(direct_flight(O, D, Date, F), tool('airline__search_direct_flight', [origin = O, destination = D, date = Date]),
        extract([F = '/result/*/flight_number']), [ttl(60)]).
binding(onestop_flight(O, D, Date, F1, D1, F2, D2),
        tool('airline__search_onestop_flight', [origin = O, destination = D, date = Date]),
        extract([F1 = '/result/*/0/flight_number', D1 = '/result/*/0/date',
                 F2 = '/result/*/1/flight_number', D2 = '/result/*/1/date']), [ttl(60)]).

% ---------------------------------------------------------------- askables (only the user can say)
askable(cancel_reason(R, W), "Why do you want to cancel reservation ~w?",
        choice([change_of_plan, airline_cancelled, health, weather, other]), [from([user, agent])]).
askable(compensation_reservation(U, R), "Which reservation of ~w is the compensation about (reservation id)?",
        text, [from([user, agent])]).
askable(compensation_reason(R, W), "What happened to your flight in reservation ~w?",
        choice([cancelled_flight, delayed_flight, other]), [from([user, agent])]).

% ---------------------------------------------------------------- derived rules
own_reservation(R) :- current_user(U), reservation_user(R, U).
reservation_active(R) :- \+ reservation_status(R, cancelled).

flown_status(flying).
flown_status(landed).
any_flight_flown(R) :- reservation_leg(R, F, Date, _, _), flight_status(F, Date, S), flown_status(S).
airline_cancelled_flight(R) :- reservation_leg(R, F, Date, _, _), flight_status(F, Date, cancelled).
delayed_flight(R) :- reservation_leg(R, F, Date, _, _), flight_status(F, Date, delayed).

booked_within_24h(R) :- reservation_created(R, T), current_time(Now), iso_hours_between(T, Now, H), H =< 24.

covered_by_insurance(health).
covered_by_insurance(weather).

cancellable(R, _) :- booked_within_24h(R).
cancellable(R, _) :- airline_cancelled_flight(R).
cancellable(R, _) :- reservation_cabin(R, business).
cancellable(R, W) :- reservation_insurance(R, yes), covered_by_insurance(W).

passenger_count(R, N) :- aggregate_all(count, reservation_passenger(R, _, _, _), N).

free_bags_per_passenger(regular, basic_economy, 0).
free_bags_per_passenger(regular, economy, 1).
free_bags_per_passenger(regular, business, 2).
free_bags_per_passenger(silver, basic_economy, 1).
free_bags_per_passenger(silver, economy, 2).
free_bags_per_passenger(silver, business, 3).
free_bags_per_passenger(gold, basic_economy, 2).
free_bags_per_passenger(gold, economy, 3).
free_bags_per_passenger(gold, business, 4).

free_bags(U, Cabin, Passengers, Free) :-
    user_membership(U, M), free_bags_per_passenger(M, Cabin, Per), Free is Per * Passengers.

% Paid bags cover everything beyond the allowance, and no free bag is charged.
baggage_fee_ok(U, Cabin, Passengers, Total, Nonfree) :-
    integer(Total), integer(Nonfree), Total >= 0, Nonfree >= 0, Nonfree =< Total,
    free_bags(U, Cabin, Passengers, Free), Nonfree >= Total - Free.

payment_in_profile(U, P) :- user_payment(U, P, _).
payment_source(U, P, S) :- user_payment(U, P, S).

% Booking payments: all in the profile, at most one certificate, one credit card, three gift cards,
% and a gift card or certificate cannot pay more than its balance.
payment_mix_ok(U, Payments) :-
    forall(member(json(P), Payments), ( memberchk(payment_id = Id, P), payment_in_profile(U, Id) )),
    count_source(U, Payments, certificate, C), C =< 1,
    count_source(U, Payments, credit_card, K), K =< 1,
    count_source(U, Payments, gift_card, G), G =< 3,
    forall(( member(json(P), Payments), memberchk(payment_id = Id, P), memberchk(amount = A, P),
             user_payment_balance(U, Id, Balance) ), A =< Balance).

count_source(U, Payments, Source, N) :-
    aggregate_all(count, ( member(json(P), Payments), memberchk(payment_id = Id, P), payment_source(U, Id, Source) ), N).

% flights given as [json([flight_number = F, date = D]), ...]
segment(json(L), F, Date) :- memberchk(flight_number = F, L), memberchk(date = Date, L).

% A leg from O to D: a leg the reservation already has (kept), or a direct flight the search finds.
leg(R, S, O, D) :-
    segment(S, F, Date),
    (   R \== none, reservation_leg(R, F, Date, O, D)
    ->  true
    ;   direct_flight(O, D, Date, F)
    ).

% A path O -> D of one or two legs.
path(R, O, D, [S]) :- leg(R, S, O, D).
path(R, O, D, [S1, S2]) :-
    segment(S1, F1, Date1), segment(S2, F2, Date2),
    (   onestop_flight(O, D, Date1, F1, Date1, F2, Date2)
    ->  true
    ;   leg(R, S1, O, M), leg(R, S2, M, D)
    ).
path(R, O, D, [S1, S2]) :- R \== none, reservation_leg(R, _, _, O, M), leg(R, S1, O, M), leg(R, S2, M, D).

% The trip keeps its origin, destination and trip type.
route_ok(R, O, D, one_way, Flights) :- path(R, O, D, Flights).
route_ok(R, O, D, round_trip, Flights) :-
    append(Out, Back, Flights), Out \== [], Back \== [], path(R, O, D, Out), path(R, D, O, Back), !.

same_flights(R, Flights) :-
    findall(F-D, reservation_leg(R, F, D, _, _), Old0), msort(Old0, Old),
    findall(F-D, ( member(S, Flights), segment(S, F, D) ), New0), msort(New0, New),
    Old == New.

% How a person reads a flight list in a confirmation: "HAT083 on 2024-05-16, HAT221 on 2024-05-16".
flights_text(Fs, Text) :-
    findall(X, ( member(S, Fs), segment(S, F, D), format(atom(X), '~w on ~w', [F, D]) ), Xs),
    atomic_list_concat(Xs, ', ', Text).

flight_not_flown(S) :- segment(S, F, Date), \+ ( flight_status(F, Date, St), flown_status(St) ).

% ---------------------------------------------------------------- guards of the write tools
guard('airline__cancel_reservation', [reservation_id = R],
      ( current_user(_),
        require(own_reservation(R), 'the reservation must belong to the user'),
        require(reservation_active(R), 'the reservation is already cancelled'),
        require(\+ any_flight_flown(R), 'a flight of this reservation has already been flown; transfer to a human agent'),
        cancel_reason(R, W),
        require(cancellable(R, W), 'not eligible for cancellation: only within 24 hours of booking, when the airline cancelled a flight, for business cabin, or with insurance and a health or weather reason'),
        confirmed('Cancel reservation ~w (reason: ~w)? The refund goes to the original payment methods in 5 to 7 business days.', [R, W]) )).

guard('airline__update_reservation_flights', [reservation_id = R, cabin = C, flights = Fs, payment_id = P],
      ( current_user(U),
        require(own_reservation(R), 'the reservation must belong to the user'),
        require(reservation_active(R), 'the reservation is cancelled'),
        require(payment_in_profile(U, P), 'the payment method must already be in the user profile'),
        require(is_list(Fs), 'flights must be a list'),
        (   same_flights(R, Fs)
        ->  true
        ;   require(\+ reservation_cabin(R, basic_economy), 'basic economy flights cannot be modified'),
            require(( payment_source(U, P, S), memberchk(S, [credit_card, gift_card]) ),
                    'a flight change is paid with a single gift card or credit card'),
            require(( reservation_route(R, O, D, T), route_ok(R, O, D, T, Fs) ),
                    'origin, destination and trip type must stay the same'),
            require(forall(member(S1, Fs), flight_not_flown(S1)), 'a flight that has already been flown cannot be changed')
        ),
        (   reservation_cabin(R, C)
        ->  true
        ;   require(\+ any_flight_flown(R), 'the cabin cannot be changed once a flight has been flown')
        ),
        flights_text(Fs, FT),
        confirmed('Update reservation ~w to cabin ~w with flights ~w, paid with ~w?', [R, C, FT, P]) )).

guard('airline__update_reservation_baggages', [reservation_id = R, total_baggages = T, nonfree_baggages = N, payment_id = P],
      ( current_user(U),
        require(own_reservation(R), 'the reservation must belong to the user'),
        require(reservation_active(R), 'the reservation is cancelled'),
        require(payment_in_profile(U, P), 'the payment method must already be in the user profile'),
        require(( reservation_baggage(R, T0, _), integer(T), T >= T0 ), 'checked bags can be added but not removed'),
        require(( reservation_cabin(R, C), passenger_count(R, PN), baggage_fee_ok(U, C, PN, T, N) ),
                'the non-free bags must cover every bag beyond the free allowance (by membership and cabin)'),
        confirmed('Set reservation ~w to ~w checked bags (~w paid, 50 dollars each) paid with ~w?', [R, T, N, P]) )).

guard('airline__update_reservation_passengers', [reservation_id = R, passengers = Ps],
      ( current_user(_),
        require(own_reservation(R), 'the reservation must belong to the user'),
        require(reservation_active(R), 'the reservation is cancelled'),
        require(( is_list(Ps), length(Ps, N), passenger_count(R, N) ), 'the number of passengers cannot change'),
        confirmed('Update the passengers of reservation ~w to ~w?', [R, Ps]) )).

guard('airline__book_reservation',
      [user_id = U, origin = O, destination = D, flight_type = T, cabin = C, flights = Fs, passengers = Ps,
       payment_methods = Pay, total_baggages = TB, nonfree_baggages = NB, insurance = _],
      ( require(current_user(U), 'a reservation is booked for the user themselves (their own user id)'),
        require(( is_list(Ps), length(Ps, PN), PN >= 1, PN =< 5 ), 'a reservation has one to five passengers'),
        require(( is_list(Pay), payment_mix_ok(U, Pay) ),
                'payment: methods from the profile only, at most one certificate, one credit card and three gift cards, within their balance'),
        require(( is_list(Fs), route_ok(none, O, D, T, Fs) ), 'the flights must go from the origin to the destination (and back for a round trip)'),
        require(baggage_fee_ok(U, C, PN, TB, NB), 'the non-free bags must cover every bag beyond the free allowance'),
        flights_text(Fs, FT),
        confirmed('Book ~w ~w trip ~w -> ~w in ~w for ~w passenger(s), flights ~w, ~w bags (~w paid), payment ~w?',
                  [T, C, O, D, C, PN, FT, TB, NB, Pay]) )).

guard('airline__send_certificate', [user_id = U, amount = A],
      ( require(current_user(U), 'certificates go to the user themselves'),
        compensation_reservation(U, R),
        require(reservation_user(R, U), 'the reservation must belong to the user'),
        require(compensation_eligible(U, R), 'no compensation: only for silver/gold members, insured reservations, or business cabin'),
        compensation_reason(R, W),
        require(compensation_condition(R, W), 'a certificate for a delayed flight is offered only after the reservation has been changed or cancelled (in this session)'),
        require(compensation_amount(R, W, A), 'the certificate is 100 dollars per passenger for a cancelled flight, 50 per passenger for a delayed one, confirmed from the flight status'),
        confirmed('Send a certificate of ~w dollars to ~w for reservation ~w?', [A, U, R]) )).

compensation_eligible(U, _) :- user_membership(U, M), memberchk(M, [silver, gold]).
compensation_eligible(_, R) :- reservation_insurance(R, yes).
compensation_eligible(_, R) :- reservation_cabin(R, business).

compensation_amount(R, cancelled_flight, A) :- airline_cancelled_flight(R), passenger_count(R, N), A =:= 100 * N.
% A delayed flight is compensated only as a gesture after the reservation was changed or cancelled in this
% session (policy.md: "... and wants to change or cancel the reservation ... after ... changing or cancelling
% the reservation"); the write itself needed the user's confirmation, so it shows that they wanted it.
compensation_amount(R, delayed_flight, A) :-
    reservation_modified(R, _), had_delayed_flight(R), passenger_count(R, N), A =:= 50 * N.

% the delay is on the reservation's flights, or was on a flight the change replaced
had_delayed_flight(R) :- delayed_flight(R).
had_delayed_flight(R) :- delayed_leg_before_change(R, _, _).

compensation_condition(_, cancelled_flight).
compensation_condition(R, delayed_flight) :- reservation_modified(R, _).
compensation_condition(_, other).

guard('airline__transfer_to_human_agents', [], true).

% ---------------------------------------------------------------- effects of writes
% What a write did, observed for the rest of the session (the delayed-flight certificate needs it); a flight
% change also records the delayed flights it replaced, read from the facts as they were before the change.
fact(reservation_modified/2).
fact(delayed_leg_before_change/3).

effect('airline__cancel_reservation', [reservation_id = R],
       [invalidate(reservation_status(R, _)), establish(reservation_modified(R, cancelled))]).
effect('airline__update_reservation_flights', [reservation_id = R],
       [establish(reservation_modified(R, changed)),
        establish(delayed_leg_before_change(R, F, Date), ( reservation_leg(R, F, Date, _, _), flight_status(F, Date, delayed) )),
        invalidate(reservation_leg(R, _, _, _, _)), invalidate(reservation_cabin(R, _))]).
effect('airline__update_reservation_baggages', [reservation_id = R], [invalidate(reservation_baggage(R, _, _))]).
effect('airline__update_reservation_passengers', [reservation_id = R],
       [invalidate(reservation_passenger(R, _, _, _))]).
effect('airline__book_reservation', [user_id = U], [invalidate(user_reservation(U, _)), invalidate(user_payment_balance(U, _, _))]).
effect('airline__send_certificate', [user_id = U], [invalidate(user_payment(U, _, _)), invalidate(user_payment_balance(U, _, _))]).
