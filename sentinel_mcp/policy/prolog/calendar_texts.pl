/*  calendar_date(+X), calendar_time(+X): X is a calendar day written YYYY-MM-DD, or a time of day on one
    written YYYY-MM-DDTHH:MM:SS, in ASCII digits, that exists (no 2024-02-30, no 24:00:00). Written for the
    airline example (a passenger's date of birth, a reservation's created_at); any rulebase may call them
    (sentinel_rt exports them). Only that one format counts: parse_time/3 stretches '1990-02-30' to a day in
    March and reads dates alone, zones and full-width digits, so a rule comparing times on what it made of
    them decided on a day nobody wrote. Texts of one format compare as atoms in calendar order. */
:- module(calendar_texts, [calendar_date/1, calendar_time/1]).

%  Each test and sum below is arithmetic compiled in line (optimise: this file's load only, SWI-Prolog
%  restores the flag), so a time is checked in 7 inferences, not 63 (a digit at a time through between/3 and
%  number_codes/2): a decision of the airline guard checks two. tests/policy/test_calendar_texts.py holds
%  the former code-by-code definition and compares the two over many texts.
:- set_prolog_flag(optimise, true).

goal_expansion(two_digits(A, B, N),
               ( A >= 0'0, A =< 0'9, B >= 0'0, B =< 0'9, N is (A - 0'0) * 10 + (B - 0'0) )).

calendar_date(X) :-
    atom(X), atom_codes(X, [Y1, Y2, Y3, Y4, 0'-, M1, M2, 0'-, D1, D2]), day(Y1, Y2, Y3, Y4, M1, M2, D1, D2).

calendar_time(X) :-
    atom(X), atom_codes(X, [Y1, Y2, Y3, Y4, 0'-, M1, M2, 0'-, D1, D2, 0'T, H1, H2, 0':, I1, I2, 0':, S1, S2]),
    day(Y1, Y2, Y3, Y4, M1, M2, D1, D2),
    two_digits(H1, H2, Hour), Hour =< 23, two_digits(I1, I2, Min), Min =< 59,
    two_digits(S1, S2, Sec), Sec =< 59.

day(Y1, Y2, Y3, Y4, M1, M2, D1, D2) :-
    two_digits(Y1, Y2, C), two_digits(Y3, Y4, YY), Y is C * 100 + YY, Y >= 1,
    two_digits(M1, M2, M), M >= 1, M =< 12, month_days(Y, M, Days),
    two_digits(D1, D2, D), D >= 1, D =< Days.

%  Two ASCII digits (codes 0'0-0'9: no other script's) and the number they write; written in line where it
%  is called (goal_expansion/2: seven calls a time less).
two_digits(A, B, N) :- A >= 0'0, A =< 0'9, B >= 0'0, B =< 0'9, N is (A - 0'0) * 10 + (B - 0'0).

month_days(Y, 2, D) :- !, ( leap_year(Y) -> D = 29 ; D = 28 ).
month_days(_, M, 30) :- memberchk(M, [4, 6, 9, 11]), !.
month_days(_, _, 31).
leap_year(Y) :- Y mod 4 =:= 0, ( Y mod 100 =\= 0 -> true ; Y mod 400 =:= 0 ).
