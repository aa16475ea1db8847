% Sentinel's default rulebase: its own tools (built-in "sentinel") and resource caps for the local LLM
% (built-in "llm"). Language: docs/rulebase-language.md.

% ---------------------------------------------------------------- Sentinel's own tools
% Queries, the facts summary and "why not" only read the fact store (and fetch through guarded read tools).
read_only('sentinel__sentinel_query').
read_only('sentinel__sentinel_facts').
read_only('sentinel__sentinel_why_not').
% The caller's own memory (per principal, expiring, redacted): stored without a question, kept small.
guard('sentinel__memory_store', [text = T],
      require(( atom_length(T, L), L =< 4000 ), 'a memory is at most 4000 characters')).

% Rebinding a context is checked by the context's own rule (context/3); answers from the agent are
% stored with provenance agent, which askables that demand the user refuse.
guard('sentinel__sentinel_bind', [context = C], require(atom(C), 'the context must be a name')).
guard('sentinel__sentinel_answer', [predicate = P], require(atom(P), 'the predicate must be a name')).

% ---------------------------------------------------------------- local LLM caps
llm_max_tokens(1024).
llm_max_prompt_chars(32000).

within_token_cap(Args, Default) :-
    option_value(Args, max_tokens, Default, N), llm_max_tokens(Max), integer(N), N >= 1, N =< Max.

text_within_cap(Args, Name) :-
    option_value(Args, Name, '', T), atom_length(T, L), llm_max_prompt_chars(Max), L =< Max.

guard('llm__llm_generate', [args(A)],
      ( require(within_token_cap(A, 256), 'max_tokens must be between 1 and 1024'),
        require(text_within_cap(A, prompt), 'the prompt must be at most 32000 characters') )).

guard('llm__llm_extract', [args(A)],
      ( require(within_token_cap(A, 512), 'max_tokens must be between 1 and 1024'),
        require(text_within_cap(A, text), 'the text must be at most 32000 characters') )).
