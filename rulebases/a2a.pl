% rulebases/a2a.pl — guards for the a2a built-in (sentinel_mcp/a2a), mounted as `a2a`.
%
% Sending to another agent gives it the user's words and data. A peer whose agent card a pinned or trusted
% key verified (sentinel.a2a.peer_keys, trusted_keys) is who it says; any other one (unsigned, or signed by a
% key nobody configured) is who it says only by its own word: anyone on the link can announce a look-alike
% over mDNS. So a send to an unverified peer needs the user's own yes, naming the peer, where it answers
% and its card's key, or is refused outright with sentinel.a2a.require_verified_peers. The verdict is read
% from a2a_peer_check (the built-in's registry), never from the call's arguments, and read again before each
% send (fresh_for_writes): a card changed since is checked anew (and the built-in refuses a send whose card
% is not the one last checked).

binding(a2a_peer_trust(P, Known, Verified, Refuse, Shown),
        tool('a2a__a2a_peer_check', [peer = P]),
        extract([Known = '/known', Verified = '/verified', Refuse = '/refuse_unverified', Shown = '/peer']),
        [ttl(5), fresh_for_writes]).
binding(a2a_bridge_trust(T, Known, Verified, Refuse, Shown),
        tool('a2a__a2a_peer_check', [peer = T, bridged = true]),
        extract([Known = '/known', Verified = '/verified', Refuse = '/refuse_unverified', Shown = '/peer']),
        [ttl(5), fresh_for_writes]).

% each send is a write: its peer's verdict is read again before it is decided
effect('a2a__a2a_send', [peer = P], [invalidate(a2a_peer_trust(P, _, _, _, _))]).
effect('a2a__a2a_relay', [target = T], [invalidate(a2a_bridge_trust(T, _, _, _, _))]).

read_only('a2a__a2a_peer_check').

guard('a2a__a2a_send', [peer = P],
      ( a2a_peer_trust(P, Known, Verified, Refuse, Shown),
        require(Known == true, 'no peer of that name checks out: neither a listed bridge target whose card at its listed URL checks out nor a found peer (run a2a_discover first)'),
        send_allowed(Verified, Refuse, Shown) )).

guard('a2a__a2a_relay', [target = T],
      ( a2a_bridge_trust(T, Known, Verified, Refuse, Shown),
        require(Known == true, 'the target is neither a listed bridge target whose card at its listed URL checks out nor a found peer'),
        send_allowed(Verified, Refuse, Shown) )).

send_allowed(true, _, _).
send_allowed(Verified, Refuse, Shown) :-
    Verified \== true,
    require(Refuse \== true,
            'the peer is unverified (no pinned or trusted key signed its card) and sentinel.a2a.require_verified_peers refuses unverified peers'),
    confirmed('Send your message to an UNVERIFIED agent? ~w. No key you configured vouches for its card: it is who it says only by its own word, and anyone on your network can announce a look-alike.',
              [text(Shown)]).  % Sentinel's description of the peer, its announced values quoted in it
