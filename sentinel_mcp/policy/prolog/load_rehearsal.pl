/*  A rulebase's load, rehearsed in a child SWI-Prolog before the gateway's engine reads it
    (policy/load_rehearsal.py): the same code (sentinel_core) on a thread with a small C stack, so a
    file that would crash the reader or loop at load costs this process, never the gateway.

    swipl -f none -q load_rehearsal.pl -- CoreJson CoreVersion CStackBytes InferenceLimit FilesJson
    (CoreJson, CoreVersion: the core's files, policy/core_qlf.py core_arguments; FilesJson: the files and
    their includes, as rulebase_includes.py loader_files gives them)
    Prints the load's problems as the engine's sn_load does (JSON: errors, warnings, and core: how the core
    was loaded, qlf or source) and exits 0; a file
    with errors is refused with these (the engine never reads it: SWI-Prolog's own threads know their C
    stack and report a term too deep as an error, the engine's thread, made by Python, may crash instead).
    Any other exit, or none before the parent's deadline, is the rehearsal failing; the end of standard
    input (the parent gone) ends it. */
:- use_module(library(http/json)).
:- use_module('core_files.pl', []).  % by its name with .pl: never a .qlf SWI-Prolog would look for
:- initialization(main, main).

main :-
    current_prolog_flag(argv, [CoreJson, CoreVersion, StackText, LimitText, FilesJson]),
    atom_json_term(CoreJson, Core, []), atom_number(CoreVersion, Version),
    core_files:load_core(user:Core, Version, _),
    atom_number(StackText, Stack), atom_number(LimitText, Limit),
    thread_create(parent_watch, _, [detached(true)]),
    thread_create(rehearse(FilesJson, Limit, _), Id, [c_stack(Stack)]),
    thread_join(Id, Status),
    (   Status == true
    ->  halt(0)
    ;   format(user_error, 'rehearsal: ~q~n', [Status]), halt(3)
    ).

%  Standard input is a pipe the parent holds open until it has the verdict: its end (the parent gone, even
%  killed) ends this process, so a rehearsal started early never outlives the gateway that started it.
parent_watch :-
    catch(get_char(user_input, _), _, true),
    halt(4).

%  What the engine does with a rulebase (policy/rulebase.py load_rulebase and the calls that describe it).
%  The load and its finish within the engine's inference limit (sn_load_bounded/4), as the engine does.
rehearse(FilesJson, Limit, Out) :-
    RB = sn_rehearsal,
    sentinel_core:sn_load_bounded(RB, FilesJson, Limit, Out),
    atom_json_term(Out, json(Result), []),
    (   memberchk(errors=[], Result)
    ->  sentinel_core:sn_info(RB, _),
        sentinel_core:sn_citations(RB, _),
        sentinel_core:sn_confirmations(RB, _),
        sentinel_core:sn_tool_sites(RB, _)
    ;   true
    ),
    %  sn_load's answer read again with its texts as strings: a text "true" or "null" stays a text
    atom_json_term(Out, json(Answer), [value_string_as(string)]),
    core_files:core_loaded(How),
    atom_json_term(Reported, json([core=How|Answer]), [as(atom), width(0)]),  % one line, as sn_load's
    format('~w~n', [Reported]).
