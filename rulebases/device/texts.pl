% Part of rulebases/device.pl (included by it: docs/rulebase-language.md, include_rules/1): the text
% classifiers, one-time codes and payment card numbers in any script and spelling.

% A one-time code (the SMS tool's reading too: device_tools/one_time_codes.py speaks_of_code, one list of words
% and one fold, tests/device/test_code_rule_parity.py): words of a code in any language the device knows
% (sentinel_rt's speaks_of_a_code/1, written from core/code_words.py: "Your code", "Tu código", "Ваш код",
% "验证码"), also with the digits inside a word read as letters ("c0de", "0TP", "v3rification"), or a "G-"
% style prefix; together with a run of 4-8 digits whose groups are joined by one space, hyphen, dot, _, / or \
% ("730 551", "73 - 05 - 51", "730.551"), all read through code_fold/2: "Your code is ٧٣٠٥٥١", "ＣＯＤＥ 730551",
% "code 730\u00a0551" and "code 730\u200b551" are codes too. (A bare number is only treated as a code in an SMS
% body: typed into a field it is usually an amount or a PIN prompt.)
one_time_code_text(T) :-
    atom(T), atom_codes(T, Cs0), code_fold(Cs0, Cs), code_run(Cs),
    ( speaks_of_a_code(T) -> true ; leet_words(Cs, L), speaks_of_a_code(L) -> true ; code_prefix(Cs) ), !.

%  leet_words(+FoldedCodes, -Text): the runs of letters and numbers, apart by one space, the digits of a run
%  with a letter in it as the letters they stand for
leet_words(Cs, L) :- word_runs(Cs, Rs), leet_runs(Rs, Ws), atomic_list_concat(Ws, ' ', L).

leet_runs([], []).
leet_runs([R|Rs], [W|Ws]) :- leet_run(R, W), leet_runs(Rs, Ws).

word_runs([], []).
word_runs([C|Cs], [[C|W]|Rs]) :- word_code(C), !, word_codes(Cs, W, Rest), word_runs(Rest, Rs).
word_runs([_|Cs], Rs) :- word_runs(Cs, Rs).

word_codes([C|Cs], [C|W], Rest) :- word_code(C), !, word_codes(Cs, W, Rest).
word_codes(Cs, [], Cs).

word_code(C) :- unicode_category(C, K), sub_atom(K, 0, 1, _, F), memberchk(F, ['L', 'N']).

leet_run(R, W) :-
    ( member(C, R), unicode_category(C, K), sub_atom(K, 0, 1, _, 'L') -> leet_codes(R, R1) ; R1 = R ),
    atom_codes(W, R1).

leet_codes([], []).
leet_codes([C|Cs], [L|Ls]) :- ( nth0(I, `013457`, C) -> nth0(I, `oieast`, L) ; L = C ), leet_codes(Cs, Ls).

%  code_prefix(+FoldedCodes): 1-3 capital ASCII letters apart from a word before them, a hyphen, a digit (one
%  pass: a long text costs its length)
code_prefix(Cs) :- prefix_from(Cs, 0' ).

prefix_from([C|Cs], Prev) :-
    (   \+ word_code(Prev), Prev =\= 0'_, capitals([C|Cs], 0, N, [0'-, D|_]), N >= 1, ascii_digit(D) -> true
    ;   prefix_from(Cs, C)
    ).

capitals([C|Cs], N0, N, R) :- C >= 0'A, C =< 0'Z, !, N1 is N0 + 1, N1 =< 3, capitals(Cs, N1, N, R).
capitals(R, N, N, R).

%  code_fold(+Codes, -Folded): one code for each: a decimal digit of any script as its ASCII digit, a
%  fullwidth form as its ASCII character, a mathematical styled letter (bold, italic, script, ...) as its
%  letter, an invisible character or any space as a space; the rest as it is
code_fold([], []).
code_fold([C|Cs], [F|Fs]) :- fold_code(C, F), code_fold(Cs, Fs).

fold_code(C, F) :- decimal_digit(C, D), !, F is 0'0 + D.
fold_code(C, F) :- C >= 0xFF01, C =< 0xFF5E, !, F is C - 0xFEE0.
fold_code(C, 0' ) :- invisible_code(C), !.
fold_code(C, 0' ) :- space_code(C), !.
fold_code(C, F) :- C >= 0x1D400, C =< 0x1D6A3, !,
    I is (C - 0x1D400) mod 52, ( I < 26 -> F is 0'A + I ; F is 0'a + I - 26 ).
fold_code(C, C).

invisible_code(C) :- memberchk(C, [0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFEFF, 0xFFA0]), !.
invisible_code(C) :- C >= 0x200B, C =< 0x200F, !.
invisible_code(C) :- C >= 0x202A, C =< 0x202E, !.
invisible_code(C) :- C >= 0x2060, C =< 0x206F, !.
invisible_code(C) :- C >= 0xFE00, C =< 0xFE0F, !.
invisible_code(C) :- C >= 0xE0000, C =< 0xE0FFF.

%  space_code(+Code): a space as Python's str.isspace has it (SWI-Prolog's code_type space lacks the no-break
%  spaces U+00A0, U+2007, U+202F, U+0085 and U+001C-001F: "code 730\u00a0551" was no run to the rule)
space_code(C) :- code_type(C, space), !.
space_code(C) :- memberchk(C, [0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0xA0, 0x2007, 0x202F]).

code_joiner(C) :- memberchk(C, [0' , 0'-]).  % not '.': "10.30", "12.50" are times and amounts

without_joiners([], []).
without_joiners([C|Cs], Ds) :- code_joiner(C), !, without_joiners(Cs, Ds).
without_joiners([C|Cs], [C|Ds]) :- without_joiners(Cs, Ds).

%  code_run(+FoldedCodes): a run of 4-8 ASCII digits with no digit right before or after it, its groups joined
%  by one joiner (run_joiner/2): some whole groups, in a row, of a chain of groups
code_run(Cs) :- digit_chains(Cs, Chains), member(Ns, Chains), append(_, [N|Rest], Ns), run_from(Rest, N), !.

run_from(_, S) :- S >= 4, S =< 8, !.
run_from([N|Ns], S0) :- S is S0 + N, S =< 8, run_from(Ns, S).

%  digit_chains(+FoldedCodes, -Chains): each chain of digit groups joined by one joiner, as its groups' lengths
digit_chains([], []).
digit_chains([C|Cs], [Ns|Chains]) :- ascii_digit(C), !, digit_chain([C|Cs], Ns, Rest), digit_chains(Rest, Chains).
digit_chains([_|Cs], Chains) :- digit_chains(Cs, Chains).

digit_chain(Cs, [N|Ns], Rest) :-
    count_digits(Cs, 0, N, R0),
    ( run_joiner(R0, R1) -> digit_chain(R1, Ns, Rest) ; Ns = [], Rest = R0 ).

%  run_joiner(+Codes, -FromTheNextDigit): one space; or a hyphen (any dash), dot, _, / or \, a space either side
%  or not (" - "); then a digit
run_joiner([0' , D|R], [D|R]) :- ascii_digit(D), !.
run_joiner(R0, R) :-
    ( R0 = [0' |R1] -> true ; R1 = R0 ), R1 = [J|R2], group_joiner(J),
    ( R2 = [0' |R3] -> R = R3 ; R = R2 ), R = [D|_], ascii_digit(D).

group_joiner(J) :- memberchk(J, [0'-, 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0'., 0'_, 0'/, 0'\\]).

count_digits([C|Cs], N0, N, R) :- ascii_digit(C), !, N1 is N0 + 1, count_digits(Cs, N1, N, R).
count_digits(R, N, N, R).

ascii_digit(C) :- integer(C), C >= 0'0, C =< 0'9.

% A card number anywhere in the text: 13-19 digits (of any script: "４１１１", "٤١١١") in runs joined by anything
% but a letter or a digit ("4111 1111", "4111.1111", "4111/1111", "4111_1111", "4111  --  1111", a line break,
% invisible characters), passing the Luhn check. Runs of one group are tried in every window of whole runs
% ("call 555 0100 4111 1111 1111 1111"). The same rule as sentinel_mcp/core/card_numbers.py.
card_number_text(T) :-
    atom(T), atom_codes(T, Cs), card_tokens(Cs, Ts), card_groups(Ts, [], 0, Gs), member(Runs, Gs),
    append(_, From, Runs), card_window(From, [], 0, Ds), luhn(Ds), !.

card_tokens([], []).
card_tokens([C|Cs], [d([D|Ds])|Ts]) :- decimal_digit(C, D), !, digit_chars(Cs, Ds, Rest), card_tokens(Rest, Ts).
card_tokens([C|Cs], [w|Ts]) :- code_type(C, alpha), C \== 0'_, !, card_tokens(Cs, Ts).  % a letter
card_tokens([_|Cs], [s|Ts]) :- card_tokens(Cs, Ts).

digit_chars([C|Cs], [D|Ds], Rest) :- decimal_digit(C, D), !, digit_chars(Cs, Ds, Rest).
digit_chars(Cs, [], Cs).

%  card_groups(+Tokens, +RunsSoFar, +SeparatorsSince, -Groups): each group's digit runs, in order
card_groups([], Cur, _, Gs) :- close_group(Cur, [], Gs).
card_groups([d(D)|Ts], Cur, _, Gs) :- !, card_groups(Ts, [D|Cur], 0, Gs).
card_groups([s|Ts], Cur, S, Gs) :- Cur \== [], !, S1 is S + 1, card_groups(Ts, Cur, S1, Gs).
card_groups([_|Ts], Cur, _, Gs) :- close_group(Cur, Gs1, Gs), card_groups(Ts, [], 0, Gs1).
close_group([], Gs, Gs) :- !.
close_group(Cur, Gs, [G|Gs]) :- reverse(Cur, G).

%  decimal_digit(+Code, -Value): a decimal digit of any script (Unicode's Nd characters come in runs of ten
%  from a zero; the zeros below are Unicode 14's, as Python's unicodedata has them)
decimal_digit(C, W) :- C =< 0x7F, !, C >= 0'0, C =< 0'9, W is C - 0'0.
decimal_digit(C, W) :- digit_zero(Z), C >= Z, C =< Z + 9, !, W is C - Z.
digit_zero(1632).
digit_zero(1776).
digit_zero(1984).
digit_zero(2406).
digit_zero(2534).
digit_zero(2662).
digit_zero(2790).
digit_zero(2918).
digit_zero(3046).
digit_zero(3174).
digit_zero(3302).
digit_zero(3430).
digit_zero(3558).
digit_zero(3664).
digit_zero(3792).
digit_zero(3872).
digit_zero(4160).
digit_zero(4240).
digit_zero(6112).
digit_zero(6160).
digit_zero(6470).
digit_zero(6608).
digit_zero(6784).
digit_zero(6800).
digit_zero(6992).
digit_zero(7088).
digit_zero(7232).
digit_zero(7248).
digit_zero(42528).
digit_zero(43216).
digit_zero(43264).
digit_zero(43472).
digit_zero(43504).
digit_zero(43600).
digit_zero(44016).
digit_zero(65296).
digit_zero(66720).
digit_zero(68912).
digit_zero(69734).
digit_zero(69872).
digit_zero(69942).
digit_zero(70096).
digit_zero(70384).
digit_zero(70736).
digit_zero(70864).
digit_zero(71248).
digit_zero(71360).
digit_zero(71472).
digit_zero(71904).
digit_zero(72016).
digit_zero(72784).
digit_zero(73040).
digit_zero(73120).
digit_zero(92768).
digit_zero(92864).
digit_zero(93008).
digit_zero(120782).
digit_zero(120792).
digit_zero(120802).
digit_zero(120812).
digit_zero(120822).
digit_zero(123200).
digit_zero(123632).
digit_zero(125264).
digit_zero(130032).

card_window([R|Rs], Acc, N0, Ds) :-
    length(R, L), N is N0 + L, N =< 19, append(Acc, R, Acc1),
    ( N >= 13, Ds = Acc1 ; card_window(Rs, Acc1, N, Ds) ).

all_digits([]).
all_digits([C|Cs]) :- ascii_digit(C), all_digits(Cs).

luhn(Ds) :-
    reverse(Ds, R), luhn_sum(R, 0, S), S mod 10 =:= 0.
luhn_sum([], _, 0).
luhn_sum([D|Ds], I, S) :-
    I1 is I + 1, luhn_sum(Ds, I1, S0),
    ( I mod 2 =:= 1 -> D2 is D * 2, ( D2 > 9 -> V is D2 - 9 ; V = D2 ) ; V = D ),
    S is S0 + V.
