% Test rulebase for the bookings server (tests/policy/bookings_server.py), mounted as "bk".
fact(current_user/1).
fact(today/1).

context(booking_of_interest, B, (current_user(U), user_booking(U, B))).

binding(user_booking(U, B), tool('bk__list_bookings', [user_id = U]), extract([B = '/bookings/*/id']), [ttl(120)]).
binding(booking_status(B, S), tool('bk__get_booking', [booking_id = B]), extract([S = '/status']), [ttl(60)]).
binding(booking_cabin(B, C), tool('bk__get_booking', [booking_id = B]), extract([C = '/cabin']), [ttl(60)]).
binding(booking_window(B, S, E), tool('bk__get_booking', [booking_id = B]), extract([S = '/started', E = '/ended']), [ttl(60)]).

askable(cancel_reason(B, W), "Why do you want to cancel ~w?", choice([change_of_plan, health, other]), [from([user, agent])]).
askable(really_merge(A, B), "Merge ~w into ~w?", yes_no, [from([user])]).

own_booking(B) :- current_user(U), user_booking(U, B).

guard('bk__cancel_booking', [booking_id = B],
      ( require(own_booking(B), 'not a booking of the current user'),
        require(booking_status(B, confirmed), 'only confirmed bookings can be cancelled'),
        cancel_reason(B, _),
        confirmed('Cancel booking ~w?', [B]) )).

guard('bk__merge_bookings', [first = A, second = B],
      ( booking_status(A, SA), booking_status(B, SB), SA \== cancelled, SB \== cancelled,
        really_merge(A, B) )).

effect('bk__cancel_booking', [booking_id = B], [invalidate(booking_status(B, _))]).
