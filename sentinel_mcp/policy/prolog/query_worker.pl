/*  The query worker: a separate swipl process that proves goals typed by clients.

    Client goals never run in the engine that decides tool calls: whatever a goal does to this process
    (runs long, builds a huge term or atom, exhausts memory) cannot delay or change a decision. The
    process holds copies of the rulebase and of the sessions it is asked about, and is killed and started
    afresh by its owner when it overruns. It reads one JSON request per line on stdin and writes one JSON
    answer per line on stdout:

      {"op":"load","module":M,"files":[...]}                 -> {"ok":true,"errors":[...]}
      {"op":"unload","module":M}                             -> {"ok":true}
      {"op":"session","session":S,"lines":Text}              -> {"ok":true}   (replaces the session's facts)
      {"op":"drop","session":S}                              -> {"ok":true}
      {"op":"ping"}                                          -> {"ok":true,"core":"qlf"}  (or "source")
      {"op":"query","rb":M,"session":S,"now":T,"goal":Text,"max":N,"limit":L,"seconds":Sec}
                                                             -> the sn_client_query answer
*/
:- module(query_worker, [main/0]).
:- use_module('core_files.pl', []).  % by its name with .pl: never a .qlf SWI-Prolog would look for
:- use_module(library(http/json)).
:- use_module(library(readutil)).

%  The core's files and the SWI-Prolog their .qlf need are the last two arguments (policy/core_qlf.py)
main :-
    current_prolog_flag(argv, Argv),
    append(_, [FilesJson, VersionText], Argv),
    atom_json_term(FilesJson, Files, []), atom_number(VersionText, Version),
    core_files:load_core(query_worker:Files, Version, _),
    set_prolog_flag(verbose, silent),
    ( catch(set_prolog_flag(quasi_quotations, false), _, true) -> true ; true ),
    set_stream(user_input, encoding(utf8)),
    set_stream(user_output, encoding(utf8)),
    serve.

serve :-
    read_line_to_string(user_input, Line),
    (   Line == end_of_file
    ->  halt(0)
    ;   catch(handle(Line, Out), E, failure(E, Out)),
        write(user_output, Out), nl(user_output), flush_output(user_output),
        garbage_collect, garbage_collect_atoms,
        serve
    ).

handle(Line, Out) :-
    atom_string(A, Line), atom_json_term(A, json(Req), []),
    memberchk(op = Op, Req),
    do_op(Op, Req, Out).

do_op(load, Req, Out) :- !,
    memberchk(module = M, Req), memberchk(files = Files, Req),
    sentinel_core:sn_load_files(M, Files, Out0),
    atom_json_term(Out0, json(R), []),
    ( memberchk(errors = [], R) -> sentinel_core:sn_finish_load(M) ; true ),
    atom_json_term(Out, json([ok = @(true) | R]), [as(atom), width(0)]).
do_op(unload, Req, '{"ok":true}') :- !,
    memberchk(module = M, Req), sentinel_core:sn_unload(M).
do_op(session, Req, '{"ok":true}') :- !,
    memberchk(session = S, Req), memberchk(lines = Text, Req),
    sentinel_core:sn_drop_session(S), sentinel_core:sn_assert_lines(S, Text).
do_op(drop, Req, '{"ok":true}') :- !,
    memberchk(session = S, Req), sentinel_core:sn_drop_session(S).
do_op(query, Req, Out) :- !,
    memberchk(rb = RB, Req), memberchk(session = S, Req), memberchk(now = Now, Req),
    memberchk(goal = Goal, Req), memberchk(max = Max, Req), memberchk(limit = Limit, Req),
    memberchk(seconds = Secs, Req),
    sentinel_core:sn_client_query(RB, S, Now, Goal, Max, Limit, Secs, Out).
do_op(ping, _, Out) :- !,  % and how this process loaded the core: qlf or source (core_files.pl)
    core_files:core_loaded(How),
    atom_json_term(Out, json([ok= @(true), core=How]), [as(atom), width(0)]).
do_op(Op, _, Out) :- format(atom(M), 'unknown op ~q', [Op]), atom_json_term(Out, json([ok= @(false), error=M]), [as(atom)]).

failure(E, Out) :-
    ( E = error(resource_error(_), _) -> M = 'out of memory' ; sentinel_core:message_to_codes_safe(E, M) ),
    atom_json_term(Out, json([ok= @(false), error=M]), [as(atom), width(0)]).
