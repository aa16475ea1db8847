/*  Sentinel's core loaded from the files policy/core_qlf.py chose: its modules' .qlf (built at install and
    found unchanged by their manifest) or their sources, each by its full path and in order, so that a
    use_module(name) inside one finds its module loaded and SWI-Prolog never goes looking for a .qlf itself
    (its own look-up compares times and recompiles into the package where it can write).

    load_core(:Files, +Version, -How): Files end in .qlf and Version is the SWI-Prolog that built them; they
    are read only if this is that SWI-Prolog and each header reads as one it may load ('$qlf_info': its
    format version and VM signature) naming the source beside it, else the sources are loaded (How =
    source). A qlf whose load fails even so is answered by reloading every source (How = source). The last
    module's exports are imported into the caller's module, the others' into none (as use_module of
    sentinel_core alone did). */
:- module(core_files, [load_core/3, core_loaded/1]).

:- meta_predicate load_core(:, +, -).
:- dynamic core_loaded/1.  % qlf or source: how this process loaded the core (tests, the rehearsal's report)

load_core(M:Files, Version, How) :-
    (   usable_qlf(Files, Version),
        catch(load_all(M, Files, []), E, (print_message(warning, E), fail))
    ->  How = qlf
    ;   maplist(source_of, Files, Sources),
        load_all(M, Sources, [if(true)]),
        How = source
    ),
    retractall(core_loaded(_)),
    assertz(core_loaded(How)).

usable_qlf(Files, Version) :-
    Files \== [],
    current_prolog_flag(version, Version),
    forall(member(F, Files), readable_qlf(F)).

%  SWI-Prolog's own test of a qlf it may load (boot/init.pl, '$qlf_out_of_date'), and the source it was
%  compiled from is the one beside it
readable_qlf(File) :-
    file_name_extension(_, qlf, File),
    catch('$qlf_info'(File, Current, MinLoad, FileVersion, Signature, FileSignature, Sources), _, fail),
    FileVersion >= MinLoad, FileVersion =< Current, Signature == FileSignature,
    source_of(File, Source), atom_string(SourceAtom, Source),
    Sources == [SourceAtom].

source_of(File, Source) :-
    file_name_extension(Base, _, File),
    file_name_extension(Base, pl, Source).

load_all(M, Files, Options) :-
    append(Used, [Last], Files),
    forall(member(F, Used), load_files(M:F, [imports([])|Options])),
    load_files(M:Last, [imports(all)|Options]).
