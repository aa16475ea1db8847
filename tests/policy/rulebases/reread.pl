% Test rulebase for tests/policy/reread_server.py (mounted as "bk"): a cancel needs the booking to be the
% current user's and confirmed, both as the upstream last said.
fact(current_user/1).
binding(user_booking(U, B), tool('bk__list_bookings', [user_id = U]), extract([B = '/bookings/*/id']), [ttl(600)]).
binding(booking_status(B, S), tool('bk__get_booking', [booking_id = B]), extract([S = '/status']), [ttl(600)]).
guard('bk__cancel_booking', [booking_id = B],
      ( require(( current_user(U), user_booking(U, B) ), 'not a booking of the current user'),
        require(booking_status(B, confirmed), 'only confirmed bookings can be cancelled') )).
