/*  Part of sentinel_core (included): which askable judges an answer the agent gives (sentinel_answer).

    A proof judges a stored answer by the first askable whose head covers the goal (askable_of/3): its
    type, who may answer it. An answer written by name alone could be a fact no askable covers (a proof then
    takes it as a plain stored fact, whoever gave it) or be judged, when written, by another askable of the
    same name than the one that judges it when read. The answer's writer asks here first.
*/

%  sn_askable_index(+RB, +FactText, +Free, -Out): Out's index is the position, among the rulebase's askables
%  in the order sn_info/2 lists them, of the askable a proof judges the fact of FactText by, or -1 for none.
%  Free = true: the fact's last argument (the answer) is left free, as a proof asks the question; the askable
%  must then cover the question whatever its answer (one whose head names an answer comes first: -1), so the
%  one that judges the question judges every answer to it.
sn_askable_index(RB, Text, Free, Out) :-
    term_to_atom(F, Text), callable(F), ground(F),
    (   Free == true, F =.. [N|As], append(Ins, [_], As)
    ->  append(Ins, [_], As0), Goal =.. [N|As0]
    ;   Goal = F
    ),
    (   once(( askables_of(RB, Goal, H, Q, Ty, O), \+ H \= Goal )),  % the first that could judge it
        subsumes_term(H, Goal),  % and judges every answer: its head leaves the answer free
        findall(askable(H1, Q1, Ty1, O1), decl(RB, askable(H1, Q1, Ty1, O1)), All),
        nth0(I, All, Decl), Decl =@= askable(H, Q, Ty, O)
    ->  true
    ;   I = -1
    ),
    to_json_atom(json([index=I]), Out).
