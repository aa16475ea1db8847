/*  calendar_date(+X), calendar_time(+X): X is a calendar day written YYYY-MM-DD, or a time of day on one
    written YYYY-MM-DDTHH:MM:SS, in ASCII digits, that exists (no 2024-02-30, no 24:00:00). Written for the
    airline example (a passenger's date of birth, a reservation's created_at); any rulebase may call them
    (sentinel_rt exports them). Only that one format counts: parse_time/3 stretches '1990-02-30' to a day in
    March and reads dates alone, zones and full-width digits, so a rule comparing times on what it made of
    them decided on a day nobody wrote. Texts of one format compare as atoms in calendar order. */
:- module(calendar_texts, [calendar_date/1, calendar_time/1]).

calendar_date(X) :- atom(X), atom_codes(X, Cs), day_codes(Cs).

calendar_time(X) :-
    atom(X), atom_codes(X, Cs), length(Day, 10), append(Day, [0'T, H1, H2, 0':, I1, I2, 0':, S1, S2], Cs),
    day_codes(Day), ascii_digits([H1, H2, I1, I2, S1, S2]),
    number_codes(Hour, [H1, H2]), number_codes(Min, [I1, I2]), number_codes(Sec, [S1, S2]),
    Hour =< 23, Min =< 59, Sec =< 59.

day_codes([Y1, Y2, Y3, Y4, 0'-, M1, M2, 0'-, D1, D2]) :-
    ascii_digits([Y1, Y2, Y3, Y4, M1, M2, D1, D2]),
    number_codes(Y, [Y1, Y2, Y3, Y4]), number_codes(M, [M1, M2]), number_codes(D, [D1, D2]),
    Y >= 1, between(1, 12, M), month_days(Y, M, Days), between(1, Days, D).

ascii_digits([]).
ascii_digits([C|Cs]) :- between(0'0, 0'9, C), ascii_digits(Cs).

month_days(Y, 2, D) :- !, ( leap_year(Y) -> D = 29 ; D = 28 ).
month_days(_, M, 30) :- memberchk(M, [4, 6, 9, 11]), !.
month_days(_, _, 31).
leap_year(Y) :- Y mod 4 =:= 0, ( Y mod 100 =\= 0 -> true ; Y mod 400 =:= 0 ).
