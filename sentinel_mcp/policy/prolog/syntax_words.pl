/*  Part of sentinel_core (included): a rulebase's syntax errors in words its author reads, at the place
    they are (SWI-Prolog names an unclosed block comment at line 0, raised at the end of the file).
*/

% SWI-Prolog's syntax error codes in words a rulebase author reads
syntax_words(end_of_file, 'unexpected end of file (an unfinished clause: a missing ")", "]" or "."?)') :- !.
syntax_words(end_of_clause_expected, 'end of clause expected (a missing "," or ".", or an operator?)') :- !.
syntax_words(operator_expected, 'operator expected (a missing "," between goals or arguments?)') :- !.
syntax_words(cannot_start_term, 'unexpected token (a term cannot start here)') :- !.
syntax_words(illegal_number, 'illegal number') :- !.
syntax_words(quoted_punctuation, 'a "|" or "," where a term was expected (quasi-quotations, {|...|}, are not \c
                                  read in a rulebase)') :- !.
syntax_words(end_of_file_in_block_comment, 'a /* comment is never closed (no */ after it)') :- !.
syntax_words(end_of_file_in_quoted(Q), W) :- !,
    format(atom(W), 'a quoted text is never closed (a missing ~w, or a ~w inside it not doubled or escaped)', [Q, Q]).
syntax_words(illegal_character, 'a character that cannot appear here (a control character?)') :- !.
syntax_words(undefined_char_escape(C), W) :- !,
    format(atom(W), 'an unknown escape \\~w in a quoted text (a backslash is written \\\\)', [C]).
syntax_words(W, W).

%  unclosed_comment_at(+File, -Line, -Column): where the /* that is never closed opens. It runs to the end of
%  the file, so no */ follows it: it is the first /* after the last */ (or one written in a quoted text or a
%  % comment before it, on its line or earlier: an error's place, read once the file failed to load).
unclosed_comment_at(File, Line, Col) :-
    catch(read_file_to_string(File, S, [encoding(utf8)]), _, fail),
    atomic_list_concat(Parts, '*/', S), last(Parts, Tail),
    sub_atom(Tail, B, 2, _, '/*'), !,
    string_length(S, N), atom_length(Tail, T), Offset is N - T + B,
    sub_string(S, 0, Offset, _, Before), split_string(Before, "\n", "", Lines),
    length(Lines, Line), last(Lines, Current), string_length(Current, C0), Col is C0 + 1.
