/*  person_name(+X): X is a person's name as a confirmation may show it bare of doubt: letters of any
    script with their marks and the separators between them (the allow list below), at most 80 characters.
    Written for the airline example's passengers; any rulebase may call it (sentinel_rt exports it). */
:- module(person_names, [person_name/1, person_name_key/2]).
:- use_module(unicode_categories, [uc_category/2]).
:- use_module(library(unicode), [unicode_nfkd/2]).  % SWI-Prolog's utf8proc package: loaded here, never autoloaded
:- use_module(library(apply), [include/3]).
:- use_module(person_key_letters, [key_compat_fold/2, key_letter_fold/2]).  % policy/person_key_table.py

% A name is letters (any script) with the marks they carry, and the blanks, hyphens, apostrophes, periods and
% middle dots between them, starting with a letter, at most 80 characters: a confirmation shows the names among
% its items, and a name of any text wrote items of the agent's own into what the user read before the real ones
% ('Li. Charged now: $104 from gift card ...'). An allow list of what a name is made of, never a list of words it
% may not say. A letter is Unicode's (general category L*): SWI-Prolog's alpha also holds for the digits of every
% script but ASCII ('Li ٤٠١', '４', '𝟒'), Roman numerals and circled letters, and not for the combining marks of
% a decomposed 'é' or of a virama ('कृष्ण'). A mark (Mn, Mc) sits on a letter, at most four on one.
% Tibetan parts syllables with the tsheg (U+0F0B, U+0F0C) and Ethiopic words with its wordspace (U+1361).
% A zero-width joiner or non-joiner (U+200C, U+200D) is how Persian writes 'محمد<U+200C>رضا' and Sinhala
% 'ශ්<U+200D>රී': it stands only between two letters or marks (Bengali's ra, ZWJ, virama, ya) of one script
% that writes with joiners (name_joined/2), never first or last, never two in a row, never in Latin. No other
% invisible character is part of a name (Unicode's Default_Ignorable_Code_Point: a variation selector or the
% combining grapheme joiner is a mark, a Hangul filler a letter, and each shows nothing: 'Li' and 'Li<U+034F>'
% read the same to the user).
% One joiner may end a word: Malayalam wrote its chillu letters (a consonant without its vowel, 'ൻ' U+0D7B) as
% the consonant, the virama and a ZWJ ('ന്<U+200D>') before Unicode 5.1 encoded them, and names written then
% end so ('കിരണ്<U+200D>', 'ബഷീര്<U+200D>'). The ZWJ there is seen (the chillu's form, not the virama's), so it
% stands at a name's or word's end only right after a Malayalam consonant that has a chillu and its virama.
person_name(X) :-
    atom(X), atom_length(X, L), between(1, 80, L), atom_codes(X, [C|Cs]), name_letter(C),
    name_rest(Cs, C, 0).
name_rest([], _, _).
name_rest([C|Cs], _, _) :- name_letter(C), !, name_rest(Cs, C, 0).
name_rest([0x0D4D, 0x200D|Cs], P, 0) :- chillu_base(P), word_end(Cs), !, name_rest(Cs, 0x200D, -1).
name_rest([C|Cs], _, M) :- M >= 0, M < 4, name_mark(C), !, M1 is M + 1, name_rest(Cs, C, M1).
name_rest([J, C|Cs], P, M) :-
    memberchk(J, [0x200C, 0x200D]), M >= 0, name_joined(P, C),
    ( name_letter(C) -> M1 = 0 ; M < 4, name_mark(C), M1 is M + 1 ), !, name_rest(Cs, C, M1).
name_rest([C|Cs], _, _) :- name_separator(C), name_rest(Cs, C, -1).
name_separator(C) :- memberchk(C, [0' , 0'-, 0'\', 0'., 0x2019, 0xB7, 0x30FB, 0x0F0B, 0x0F0C, 0x1361]).
word_end([]).
word_end([C|_]) :- name_separator(C).
% the Malayalam consonants Unicode encodes a chillu of (U+0D54-0D56, U+0D7A-0D7F): NN, N, RR, L, LL, K, M, Y, LLL
chillu_base(C) :- memberchk(C, [0x0D23, 0x0D28, 0x0D30, 0x0D32, 0x0D33, 0x0D15, 0x0D2E, 0x0D2F, 0x0D34]).
name_letter(C) :- uc_category(C, K), sub_atom(K, 0, 1, _, 'L'), \+ ignorable(C).
name_mark(C) :- uc_category(C, K), memberchk(K, ['Mn', 'Mc']), \+ ignorable(C).

% name_joined(+Before, +After): both in one script that writes with ZWNJ/ZWJ (Unicode's core spec, ch. 23.2):
% Arabic (Persian, Urdu, Kurdish, Uyghur), Syriac, N'Ko, Mongolian, and each Indic script of U+0900-U+0DFF.
name_joined(P, C) :- joining_script(P, S), joining_script(C, S).
joining_script(C, S) :- joining_range(Lo, Hi, S), between(Lo, Hi, C), !.
joining_range(0x0600, 0x06FF, arabic).
joining_range(0x0750, 0x077F, arabic).
joining_range(0x0870, 0x08FF, arabic).
joining_range(0xFB50, 0xFDFF, arabic).
joining_range(0xFE70, 0xFEFF, arabic).
joining_range(0x0700, 0x074F, syriac).
joining_range(0x0860, 0x086F, syriac).
joining_range(0x07C0, 0x07FF, nko).
joining_range(0x1800, 0x18AF, mongolian).
joining_range(Lo, Hi, indic(Lo)) :- between(0, 9, N), Lo is 0x0900 + N * 0x80, Hi is Lo + 0x7F.

% ignorable(+Code): Unicode 14's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), letters and marks
% among them included: nothing a person sees.
ignorable(C) :- ignorable_range(Lo, Hi), between(Lo, Hi, C), !.
ignorable_range(0x00AD, 0x00AD). ignorable_range(0x034F, 0x034F). ignorable_range(0x061C, 0x061C).
ignorable_range(0x115F, 0x1160). ignorable_range(0x17B4, 0x17B5). ignorable_range(0x180B, 0x180F).
ignorable_range(0x200B, 0x200F). ignorable_range(0x202A, 0x202E). ignorable_range(0x2060, 0x206F).
ignorable_range(0x3164, 0x3164). ignorable_range(0xFE00, 0xFE0F). ignorable_range(0xFEFF, 0xFEFF).
ignorable_range(0xFFA0, 0xFFA0). ignorable_range(0xFFF0, 0xFFF8). ignorable_range(0x1BCA0, 0x1BCA3).
ignorable_range(0x1D173, 0x1D17A). ignorable_range(0xE0000, 0xE0FFF).

%  person_name_key(+Name, -Key): what the spellings of one person's name share, so that a list naming one
%  person twice is seen whatever the spelling ('Mia Li', 'MIA LI', 'Mía Li' composed or decomposed, 'Mi-a
%  Li', 'Mi<U+0430> Li' with a Cyrillic a): its letters alone, in order, each compatibility-decomposed (NFKD)
%  with its marks left out, in lower case, and each letter that reads as another (UTS #39's confusables)
%  taken as that one (key_letter_fold/2: a person cannot tell them apart; two real travellers named alike
%  differ by their dates of birth). Blanks, hyphens, apostrophes, periods, joiners and marks are no part of
%  it. The same key in Python: sentinel_mcp/core/person_keys.py.
person_name_key(Name, Key) :-
    atom(Name), atom_codes(Name, C0), key_folded(C0, key_compat_fold, C1), atom_codes(N1, C1),
    unicode_nfkd(N1, D), downcase_atom(D, L), atom_codes(L, Cs), include(key_letter, Cs, Ks),
    key_folded(Ks, key_letter_fold, Fs), atom_codes(Key, Fs).
key_letter(C) :- uc_category(C, K), sub_atom(K, 0, 1, _, 'L').
key_folded([], _, []).
key_folded([C|Cs], Fold, Fs) :-
    ( call(Fold, C, F) -> append(F, Rest, Fs) ; Fs = [C|Rest] ), key_folded(Cs, Fold, Rest).
