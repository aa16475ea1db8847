% Test rulebase for tests/policy/slow_write_server.py (mounted as "bk"): a cancel needs the booking
% confirmed, as the upstream last said; a cancel changes that status (it is read again after one).
binding(booking_status(B, S), tool('bk__get_booking', [booking_id = B]), extract([S = '/status']), [ttl(600)]).
guard('bk__cancel_booking', [booking_id = B],
      require(booking_status(B, confirmed), 'only confirmed bookings can be cancelled')).
effect('bk__cancel_booking', [booking_id = B], [invalidate(booking_status(B, _))]).
