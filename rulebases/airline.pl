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
:- include_rules('airline/reading.pl').

% ---------------------------------------------------------------- derived rules
:- include_rules('airline/trips.pl').

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
        % tools before questions: the user is asked what happened only when the flight status holds something
        % a complaint could rest on, and the answer only chooses which of those facts the certificate answers
        require(compensation_ground(R), 'no flight of this reservation is cancelled or delayed, as the flight status shows: a certificate is offered only for a cancelled flight, or a delayed one',
                policy_ref(airline, 'Always confirms the facts before offering compensation.')),
        compensation_reason(R, W),
        require(compensation_condition(R, W), 'a certificate is offered only for a flight of this reservation the flight status shows cancelled, or for a delayed one after the reservation was changed or cancelled (in this session)',
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

% What the user says happened (or the agent, naming it for them) is a claim: each reason holds only on the facts
% the airline's tools give ("Always confirms the facts before offering compensation"), never on the word alone.
compensation_condition(R, cancelled_flight) :- airline_cancelled_flight(R).
compensation_condition(R, delayed_flight) :- reservation_modified(R, _), had_delayed_flight(R).

compensation_ground(R) :- airline_cancelled_flight(R).
compensation_ground(R) :- had_delayed_flight(R).

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
