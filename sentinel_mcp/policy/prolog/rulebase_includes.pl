/*  Part of sentinel_core (included): `:- include_rules('bags.pl').`, another file's terms read where it
    stands, through every check a term of the including file goes through.

    Which file a declaration includes is not decided here: rulebase_includes.py confines it (a name below the
    configured file's directory, a regular file, each once, bounded depth and count) and gives the loader the
    table of what each declaration includes, at its file and line. A declaration the table does not name is
    refused, and so is an entry of the table no declaration read (a line that looked like one, in a comment or
    a quoted text): the files the loader reads are the files the version is the digest of.

    An included file is its includer's text: a predicate, base predicate or option it shares with it is one
    file's (owner_file/3), while each problem names the file and line it is at. */

%  load_spec(+Spec, -Files, -Includes): the configured files, and the table (json([files, includes, refused]))
load_spec(json(L), Files, json(L)) :- !, memberchk(files=Files, L).
load_spec(Files, Files, json([])).

%  include_table(+RB, +Includes, -Refused): the table kept in RB for this load; what rulebase_includes.py
%  refused, as errors at their declarations
include_table(RB, json(L), Refused) :-
    dynamic([RB:'$include'/4, RB:'$include_read'/2, RB:'$included'/2, RB:'$include_refused'/2]),
    ( memberchk(includes=Es, L) -> true ; Es = [] ),
    ( memberchk(refused=Rs, L) -> true ; Rs = [] ),
    forall(member([F, Line, N, Path], Es), assertz(RB:'$include'(F, Line, N, Path))),
    findall(P, ( member([F, Line, M], Rs), assertz(RB:'$include_refused'(F, Line)),
                 problem(error, F, Line, M, P) ), Refused).

include_terms(RB, File, Line, Name, Ps) :-
    (   atom(Name), RB:'$include'(File, Line, Name, Path), \+ RB:'$include_read'(File, Line)
    ->  assertz(RB:'$include_read'(File, Line)),
        owner_file(RB, File, Owner), assertz(RB:'$included'(Path, Owner)),
        load_file_terms(RB, Path, Ps),
        nb_setval(sn_loading_file, File)  % read on in the including file
    ;   RB:'$include_refused'(File, Line)
    ->  Ps = []  % said already, with why
    ;   format(atom(M), 'include_rules(~q) is not read: write it alone on its line as \c
                         :- include_rules(''name.pl''). (a file in this directory or below)', [Name]),
        problem(error, File, Line, M, P), Ps = [P]
    ).

%  a line that read as an include where the loader read none: its file would be in the version, not the rules
unread_include(RB, P) :-
    catch(RB:'$include'(File, Line, Name, _), _, fail), \+ RB:'$include_read'(File, Line),
    format(atom(M), 'this line reads as include_rules(~q), but the loader read no declaration here (is it in \c
                     a comment or a quoted text?): write it alone on its line, outside both', [Name]),
    problem(error, File, Line, M, P).

%  owner_file(+RB, +File, -Owner): the configured file whose text File is (itself, when it is one)
owner_file(RB, File, Owner) :-
    ( catch(RB:'$included'(File, O), _, fail) -> Owner = O ; Owner = File ).

%  a multifile declaration in any file of Owner's text is Owner's consent
owned_multifile(RB, PI, Owner) :-
    RB:'$src'(multifile, PI, F, _), owner_file(RB, F, Owner), !.
