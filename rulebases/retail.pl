% Retail policy (tau2-bench retail, ../shared/data/tau2-retail/policy.md) for the retail example server
% (examples/retail), mounted as "retail". Every rule about a write is enforced here by itself (tested against
% `python -m examples.retail --permissive`, whose writes check nothing), and every requirement cites the
% sentence of policy.md it formalises (policy_ref; an anchor may name its section, 'Section › fragment', where
% the policy repeats a sentence word for word). Language: docs/rulebase-language.md; the worked example of
% docs/writing-a-rulebase.md.

policy_document(retail, 'examples/retail/data/policy.md').

% ---------------------------------------------------------------- who the user is
% The user is authenticated by locating their user id from what they say: their email, or (when they do not
% know it) their name and zip code. A user id the agent passes proves nothing by itself ("even when the user
% already provides the user id"). Each answer is the user's own (from([user])) and holds for the whole
% conversation, so there is one user per conversation: a second email is never asked for.
% (Its predicates are named for the store, customer_*, since the rulebases of one config share one module:
% airline.pl's current_user/1 and user_payment/3 are other predicates.)
askable(account_email(E), "What is the email address of your account?", text,
        [from([user]), unknown(as(none))]).
askable(account_first_name(F), "What is the first name on your account?", text, [from([user])]).
askable(account_last_name(L), "What is the last name on your account?", text, [from([user])]).
askable(account_zip(Z), "What is the zip code of your default address?", text, [from([user])]).

% The look-ups answer "not found" with an error (API.md): absent_on_error reads that error, and no other, as no
% user id for what was looked up (never its text as one), so a user whose email is not found is located by name
% and zip code, as the API says ("only call this function if the user is not found by email"). Any other error
% (the store busy or failing) says nothing about the email: the look-up failed, and a call that needs the user is
% denied, saying so (before, it too let the name and zip code be asked). An upstream that errors for every
% look-up leaves no user id: nothing is authenticated, every call that needs the user is denied.
binding(user_id_by_email(E, U), tool('retail__find_user_id_by_email', [email = E]),
        extract([U = '/result']), [ttl(session), absent_on_error(['Error: User not found'])]).
binding(user_id_by_name_zip(F, L, Z, U),
        tool('retail__find_user_id_by_name_zip', [first_name = F, last_name = L, zip = Z]),
        extract([U = '/result']), [ttl(session), absent_on_error(['Error: User not found'])]).

% (atom(E): an email not yet answered is unknown, and nothing else is asked before it is)
authenticated_user(U) :-
    account_email(E), atom(E),
    (   E \== none, user_id_by_email(E, U0)
    ->  U = U0
    ;   account_first_name(F), account_last_name(L), account_zip(Z), user_id_by_name_zip(F, L, Z, U)
    ).

% the name and zip code are for a user who does not know their email, or whose email was not found
name_zip_asked :- account_email(E), atom(E), ( E == none -> true ; \+ user_id_by_email(E, _) ).
cites(name_zip_asked/0, policy_ref(retail, 'locating their user id via email, or via name + zip code')).

% ---------------------------------------------------------------- bindings (read-only tools)
% A write is decided on what the store says now (fresh_for_writes: read again before each write is decided),
% never on an earlier read of the conversation: policy.md's "you should check its status before taking the
% action", and another conversation of the user's may have changed the order or the gift card's balance since.
binding(customer_payment(U, Id, Source), tool('retail__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Source = '/payment_methods/*/source']), [ttl(300), fresh_for_writes]).
binding(customer_gift_balance(U, Id, B), tool('retail__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), B = '/payment_methods/*/balance']), [ttl(300), fresh_for_writes]).
binding(customer_card(U, Id, Brand, Last4), tool('retail__get_user_details', [user_id = U]),
        extract([Id = key('/payment_methods/*'), Brand = '/payment_methods/*/brand',
                 Last4 = '/payment_methods/*/last_four']), [ttl(300), fresh_for_writes]).
binding(customer_order(U, O), tool('retail__get_user_details', [user_id = U]),
        extract([O = '/orders/*']), [ttl(300), fresh_for_writes]).
binding(customer_name(U, F, L), tool('retail__get_user_details', [user_id = U]),
        extract([F = '/name/first_name', L = '/name/last_name']), [ttl(300)]).
binding(customer_address(U, A1, A2, City, State, Country, Zip), tool('retail__get_user_details', [user_id = U]),
        extract([A1 = '/address/address1', A2 = '/address/address2', City = '/address/city',
                 State = '/address/state', Country = '/address/country', Zip = '/address/zip']), [ttl(300), fresh_for_writes]).

% An order id the store does not know is no order of the user's, as another customer's is not (the store's own
% "not found", absent_on_error, and no other error: a store that fails is a failed look-up): refused for the same
% words after the same questions, so a call never tells whether an id names another customer's order or none.
% (Only the two that decide whose the order is: every other order predicate is read once an order is the user's,
% never negated on a missing one.)
% the id as the store writes it: what writes did is kept per spelling of the id (order_changed/2), so an order is
% acted on only under the very id the store gives it (another spelling an upstream may read as the same order
% would find no record of an earlier change)
binding(order_id_of(O, Id), tool('retail__get_order_details', [order_id = O]),
        extract([Id = '/order_id']), [ttl(60), fresh_for_writes, absent_on_error(['Error: Order not found'])]).
binding(order_user(O, U), tool('retail__get_order_details', [order_id = O]),
        extract([U = '/user_id']), [ttl(60), fresh_for_writes, absent_on_error(['Error: Order not found'])]).
binding(order_status(O, S), tool('retail__get_order_details', [order_id = O]),
        extract([S = '/status']), [ttl(60), fresh_for_writes]).
% one fact per ordered item (K: its position), so an item id ordered twice counts twice
binding(order_item(O, K, I, P, Price), tool('retail__get_order_details', [order_id = O]),
        extract([K = key('/items/*'), I = '/items/*/item_id', P = '/items/*/product_id', Price = '/items/*/price']),
        [ttl(60), fresh_for_writes]).
binding(order_item_name(O, K, N), tool('retail__get_order_details', [order_id = O]),
        extract([K = key('/items/*'), N = '/items/*/name']), [ttl(60)]).
binding(order_item_option(O, K, Opt, V), tool('retail__get_order_details', [order_id = O]),
        extract([K = key('/items/*'), Opt = key('/items/*/options/*'), V = '/items/*/options/*']), [ttl(60), fresh_for_writes]).
binding(order_payment(O, K, Type, Amount, Method), tool('retail__get_order_details', [order_id = O]),
        extract([K = key('/payment_history/*'), Type = '/payment_history/*/transaction_type',
                 Amount = '/payment_history/*/amount', Method = '/payment_history/*/payment_method_id']), [ttl(60), fresh_for_writes]).
binding(order_address(O, A1, A2, City, State, Country, Zip), tool('retail__get_order_details', [order_id = O]),
        extract([A1 = '/address/address1', A2 = '/address/address2', City = '/address/city',
                 State = '/address/state', Country = '/address/country', Zip = '/address/zip']), [ttl(60), fresh_for_writes]).

binding(product_name(P, N), tool('retail__get_product_details', [product_id = P]),
        extract([N = '/name']), [ttl(300)]).
binding(product_item(P, I, Available, Price), tool('retail__get_product_details', [product_id = P]),
        extract([I = key('/variants/*'), Available = '/variants/*/available', Price = '/variants/*/price']),
        [ttl(60), fresh_for_writes]).
binding(product_item_option(P, I, Opt, V), tool('retail__get_product_details', [product_id = P]),
        extract([I = key('/variants/*'), Opt = key('/variants/*/options/*'), V = '/variants/*/options/*']),
        [ttl(300)]).

% ---------------------------------------------------------------- the order in focus
context(order_of_interest).
context(order_of_interest, O, ( authenticated_user(U), order_user(O, U) )).

% ---------------------------------------------------------------- askables (only the user can say)
% asked of the authenticated user U (an input of the question): never before the user is known
askable(cancel_reason(O, U, W), "Why do you want to cancel order ~w?",
        choice(['no longer needed' - "I no longer need it", 'ordered by mistake' - "I ordered it by mistake"]),
        [from([user]),
         unknown('An order can be cancelled only because it is no longer needed or was ordered by mistake; no other reason is accepted.')]).

% ---------------------------------------------------------------- what writes did (this conversation)
% Items are modified, and a delivered order exchanged, at most once: the write is recorded, whatever status the
% store shows afterwards (the permissive API changes it or not; the rule does not depend on it).
fact(order_changed/2).

% ---------------------------------------------------------------- citations of rules (predicates)
cites(own_order/2, policy_ref(retail, 'You can only help one user per conversation')).
cites(pending/1, policy_ref(retail, 'cancel or modify pending orders')).
cites(pending/1, policy_ref(retail, 'Generally, you can only take action on pending or delivered orders.')).
cites(delivered/1, policy_ref(retail, 'return or exchange delivered orders')).
cites(refund_timing/2, policy_ref(retail, 'Cancel pending order › the total will be refunded via the original payment method immediately if it is gift card')).
cites(refund_timing/2, policy_ref(retail, 'Modify payment › The original payment method will be refunded immediately if it is a gift card')).
cites(payment_method_text/3, policy_ref(retail, 'There are three types of payment methods')).
cites(order_label/2, policy_ref(retail, 'You should not make up any information or knowledge or procedures not provided by the user or the tools')).
cites(item_pairs_ok/4, policy_ref(retail, 'Product ID and Item ID have no relations and should not be confused!')).
cites(cancel_reason/3, policy_ref(retail, 'Other reasons are not acceptable.')).

% ---------------------------------------------------------------- derived rules
% an order is read only for a known user: before the user is authenticated no order is looked at, so what a call
% is told (or asked) then is the same for the user's order, another customer's, and an id that names none
own_order(U, O) :- authenticated_user(U), order_id_of(O, O), order_user(O, U).

% "pending" exactly: an order whose items were modified ("pending (item modified)") cannot be modified or
% cancelled any more
pending(O) :- order_status(O, pending), \+ order_changed(O, _).
delivered(O) :- order_status(O, delivered), \+ order_changed(O, _).

cancel_reason_listed('no longer needed').
cancel_reason_listed('ordered by mistake').

customer_owns_payment(U, P) :- atom(P), customer_payment(U, P, _).

% A gift card pays at most its balance; the other methods have none here.
gift_card_covers(U, P, Amount) :- ( customer_payment(U, P, gift_card) -> customer_gift_balance(U, P, B), Amount =< B ; true ).

% the order's payment (the first payment of its history) and what it paid
original_payment(O, Method, Amount) :-
    aggregate_all(min(K), order_payment(O, K, payment, _, _), K0), order_payment(O, K0, payment, Amount, Method).
payments_of(O, Payments) :- findall(K, order_payment(O, K, _, _, _), Payments).

% What a cancellation gives back to method M: what M paid for the order less what was refunded to it, when more
% than nothing (methods in the order they first paid). After a payment change the history holds the first
% payment, the new one and the refund of the first: the total goes back once, to the method that pays now,
% never again to the one the change already refunded (before, the confirmation promised the total to both).
net_refund(O, M, Net) :-
    findall(M0, order_payment(O, _, _, _, M0), Ms0), sort(Ms0, Ms),
    findall(K0-M1, ( member(M1, Ms), aggregate_all(min(K), order_payment(O, K, _, _, M1), K0) ), KMs0),
    msort(KMs0, KMs), member(_-M, KMs),
    aggregate_all(sum(A), ( order_payment(O, _, payment, A, M), number(A) ), Paid),
    aggregate_all(sum(A), ( order_payment(O, _, refund, A, M), number(A) ), Refunded),
    Net is round((Paid - Refunded) * 100) / 100, Net > 0.
cites(net_refund/3, policy_ref(retail, 'Cancel pending order › the total will be refunded via the original payment method immediately if it is gift card')).

% Every listed item is in the order, each as many times as it is listed.
items_in_order(O, Items) :-
    is_list(Items), Items \== [],
    forall(member(I, Items), ( atom(I), aggregate_all(count, member(I, Items), N),
                               aggregate_all(count, order_item(O, _, I, _, _), Held), N =< Held )).

pairs([], [], []).
pairs([A|As], [B|Bs], [A-B|Ps]) :- pairs(As, Bs, Ps).

% Each old item becomes an available item of the same product with other options; Diff is the price difference.
item_pairs_ok(O, Olds, News, Diff) :-
    is_list(Olds), is_list(News), pairs(Olds, News, Pairs),
    forall(member(Old-New, Pairs), same_product_available(O, Old, New)),
    findall(D, ( member(Old-New, Pairs), pair_difference(O, Old, New, D) ), Ds),
    sum_list(Ds, D0), Diff is round(D0 * 100) / 100.

same_product_available(O, Old, New) :-
    atom(New), New \== Old, once(order_item(O, _, Old, P, _)), product_item(P, New, true, _).

pair_difference(O, Old, New, D) :-
    once(order_item(O, _, Old, P, OldPrice)), product_item(P, New, _, NewPrice), D is NewPrice - OldPrice.

% ---------------------------------------------------------------- how things read for a person
money_text(X, text('$~2f', [X])).

% "Mastercard card ending 9212", "gift card 7091239", "PayPal account 5727330"
payment_method_text(U, Id, T) :-
    (   customer_card(U, Id, Brand, Last4) -> humanized(Brand, B), T = text('~w card ending ~w', [B, Last4])
    ;   customer_payment(U, Id, gift_card) -> id_number(Id, N), T = text('gift card ~w', [N])
    ;   customer_payment(U, Id, paypal) -> id_number(Id, N), T = text('PayPal account ~w', [N])
    ;   T = Id
    ).
id_number(Id, N) :- atomic_list_concat(Parts, '_', Id), last(Parts, N).

refund_timing(gift_card, text('at once')) :- !.
refund_timing(_, text('within 5 to 7 business days')).
refund_text(U, Method, Amount, T) :-
    payment_method_text(U, Method, PT), ( customer_payment(U, Method, S) -> true ; S = unknown ), refund_timing(S, When),
    money_text(Amount, A), T = text('~w to ~w, ~w', [A, PT, When]).

options_text(Pairs, T) :-
    findall(text('~w ~w', [K, V]), member(K-V, Pairs), Xs), T = joined(Xs, ', ').

% "Water Bottle (capacity 1000ml, material glass, color blue) at $47.84"
ordered_item_text(O, K, T) :-
    order_item(O, K, _, _, Price), order_item_name(O, K, N),
    findall(Opt-V, order_item_option(O, K, Opt, V), Os), options_text(Os, OT), money_text(Price, PT),
    T = text('~w (~w) at ~w', [N, OT, PT]).
new_item_text(P, I, T) :-
    product_name(P, N), product_item(P, I, _, Price),
    findall(Opt-V, product_item_option(P, I, Opt, V), Os), options_text(Os, OT), money_text(Price, PT),
    T = text('~w (~w) at ~w', [N, OT, PT]).

order_items_text(O, T) :-
    findall(K, order_item(O, K, _, _, _), Ks0), msort(Ks0, Ks),
    findall(X, ( member(K, Ks), ordered_item_text(O, K, X) ), Xs), T = joined(Xs, '; ').

% the listed items, each shown once per time it is listed (the first positions of the order holding it)
listed_items_text(O, Items, T) :-
    msort(Items, Sorted), clumped_counts(Sorted, Counts),
    findall(X, ( member(I-N, Counts), findall(K, order_item(O, K, I, _, _), Ks0), msort(Ks0, Ks),
                 length(Take, N), append(Take, _, Ks), member(K, Take), ordered_item_text(O, K, X) ), Xs),
    T = joined(Xs, '; ').
clumped_counts([], []).
clumped_counts([X|Xs], [X-N|Rest]) :- take_same(X, Xs, 1, N, Others), clumped_counts(Others, Rest).
take_same(X, [Y|Ys], N0, N, Others) :- Y == X, !, N1 is N0 + 1, take_same(X, Ys, N1, N, Others).
take_same(_, Others, N, N, Others).

items_price(O, Items, Total) :-
    findall(P, ( member(I, Items), once(order_item(O, _, I, _, P)) ), Ps), sum_list(Ps, T0),
    Total is round(T0 * 100) / 100.

% "Water Bottle (capacity 1000ml, ...) at $47.84 becomes Water Bottle (capacity 750ml, ...) at $49.01"
changes_text(O, Olds, News, T) :-
    pairs(Olds, News, Pairs),
    findall(X, ( member(Old-New, Pairs), once(order_item(O, K, Old, P, _)), ordered_item_text(O, K, OT),
                 new_item_text(P, New, NT), X = text('~w becomes ~w', [OT, NT]) ), Xs),
    T = joined(Xs, '; ').

difference_text(U, P, D, T) :-
    payment_method_text(U, P, PT),
    (   D > 0 -> money_text(D, A), T = text('~w charged to ~w', [A, PT])
    ;   D < 0 -> A0 is -D, money_text(A0, A), T = text('~w refunded to ~w', [A, PT])
    ;   T = text('none (same price)')
    ).

% "#W2611340 (pending): Water Bottle, Office Chair"
order_label(O, L) :-
    order_status(O, S), findall(K-N, order_item_name(O, K, N), KNs0), msort(KNs0, KNs),
    findall(N, member(_-N, KNs), Ns), L = text('~w (~w): ~w', [O, S, joined(Ns, ', ')]).

address_text(A1, A2, City, State, Country, Zip, T) :-
    (   A2 == '' -> T = text('~w, ~w, ~w ~w, ~w', [A1, City, State, Zip, Country])
    ;   T = text('~w, ~w, ~w, ~w ~w, ~w', [A1, A2, City, State, Zip, Country])
    ).

% A part of an address is letters, digits, blanks and the marks addresses use (. , - ' # / &), at most 100
% characters; only the second line may be empty. The confirmations show the new address among their items, and
% an address of any text wrote items of the agent's own into what the user read ('1 Main St. New shipping
% address: <the user's own>'). An allow list of what an address is made of, never a list of words it may not say.
% (SWI-Prolog's alpha is a letter of any script; '_' is none here.)
address_ok(A1, A2, City, State, Country, Zip) :-
    forall(member(P, [A1, City, State, Country, Zip]), address_part(P, 1)), address_part(A2, 0).
address_part(P, Min) :-
    atom(P), atom_length(P, L), between(Min, 100, L), atom_codes(P, Cs),
    forall(member(C, Cs), ( address_letter(C) ; memberchk(C, [0' , 0'., 0',, 0'-, 0'\', 0x2019, 0'#, 0'/, 0'&]) )).
address_letter(C) :- code_type(C, digit(_)), !.
address_letter(C) :- code_type(C, alpha), C =\= 0'_.
cites(address_ok/6, policy_ref(retail, 'you can take actions to modify its shipping address')).

after_return_text(text('the order status becomes return requested, and you receive an email about how to return the items')).
after_exchange_text(text('the order status becomes exchange requested, and you receive an email about how to return the items; no new order is needed')).
cites(after_return_text/1, policy_ref(retail, "the order status will be changed to 'return requested'")).
cites(after_exchange_text/1, policy_ref(retail, "the order status will be changed to 'exchange requested'")).
cites(pending/1, policy_ref(retail, 'you can take actions to modify its shipping address, payment method, or product item options, but nothing else')).
cites(order_label/2, policy_ref(retail, 'The status of an order can be')).

% ---------------------------------------------------------------- guards of the read tools
% A customer's data (an order's details, a profile) is read for the authenticated user only, and only their own:
% the agent reads nothing about an order or a user before the user is authenticated, and nothing of another
% customer after. The catalog (products, items, the product list) is read once the user is authenticated, as
% the policy says of product information; the look-ups that authenticate take only what the user told Sentinel
% (below).
% These guards govern what a caller reads; the facts the policy reads to decide a call (e.g. an order's owner,
% to find it is not the user's) stay inside Sentinel (docs/rulebase-language.md, "Guards of read tools").
guard('retail__get_order_details', [order_id = O],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'only the authenticated user\'s own orders can be read: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')) )).

guard('retail__get_user_details', [user_id = V],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(V == U, 'only the authenticated user\'s own profile can be read: one user per conversation',
                policy_ref(retail, 'must deny any requests for tasks related to any other user')) )).

% The catalog is no customer's data, but the policy gives product information, like an order's or a profile's,
% only to an authenticated user (the guard asks who the user is, as the reads above do). The policy's own
% look-ups of products (a modification's or an exchange's new items) stay inside Sentinel.
guard('retail__get_product_details', [], catalog_read).
guard('retail__get_item_details', [], catalog_read).
guard('retail__list_all_product_types', [], catalog_read).

catalog_read :-
    require(authenticated_user(_), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
            policy_ref(retail, 'Once the user has been authenticated, you can provide the user with information about order, product, profile information')).

% The look-ups that locate a user id are the authentication itself: the agent may make them for the user of
% the conversation only, with what the user told Sentinel (their email; or, when they do not know it, their name
% and zip code). Any other email or name is another customer's, whose account and user id the conversation
% may not learn (before, the agent looked up any customer's user id by their email, after authentication too).
% Spellings: only ASCII letters' case and surrounding blanks may differ, which the store ignores too; any
% other difference is another email (never one the store might read as the user's).
guard('retail__find_user_id_by_email', [email = E],
      require(( account_email(A), A \== none, same_words(A, E) ),
              'only the email the user gave can be looked up: one user per conversation',
              policy_ref(retail, 'must deny any requests for tasks related to any other user'))).

guard('retail__find_user_id_by_name_zip', [first_name = F, last_name = L, zip = Z],
      require(( name_zip_asked, account_first_name(F0), account_last_name(L0), account_zip(Z0),
                same_words(F0, F), same_words(L0, L), same_blanks(Z0, Z) ),
              'only the name and zip code the user gave (when they do not know their email, or it was not found) can be looked up: one user per conversation',
              policy_ref(retail, 'must deny any requests for tasks related to any other user'))).

same_words(A, B) :- stripped(A, Cs), stripped(B, Ds), ascii_lower(Cs, K), ascii_lower(Ds, K).
same_blanks(A, B) :- stripped(A, Cs), stripped(B, Cs).  % a zip code: exact but for surrounding blanks
stripped(X, Cs) :-
    atom(X), atom_codes(X, Cs0), strip_blanks(Cs0, Cs1), reverse(Cs1, R0), strip_blanks(R0, R1), reverse(R1, Cs).
strip_blanks([C|Cs], Out) :- memberchk(C, [32, 9, 10, 13]), !, strip_blanks(Cs, Out).  % space, tab, line ends
strip_blanks(Cs, Cs).
ascii_lower([], []).
ascii_lower([C|Cs], [L|Ls]) :- ( between(0'A, 0'Z, C) -> L is C + 32 ; L = C ), ascii_lower(Cs, Ls).

cites(same_words/2, policy_ref(retail, 'authenticate the user identity by locating their user id via email, or via name + zip code')).

% ---------------------------------------------------------------- guards of the write tools
guard('retail__cancel_pending_order', [order_id = O, reason = R],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(pending(O), 'only a pending order can be cancelled (not one that is processed, delivered, cancelled, or whose items were modified)',
                  policy_ref(retail, 'An order can only be cancelled if its status is')),
          require(cancel_reason_listed(R), 'the reason for cancellation must be "no longer needed" or "ordered by mistake"',
                  policy_ref(retail, "either 'no longer needed' or 'ordered by mistake'")),
          cancel_reason(O, U, W),
          require(W == R, 'the reason must be the one the user gave',
                  policy_ref(retail, 'The user needs to confirm the order id and the reason')),
          order_label(O, OL), order_items_text(O, IT),
          answer_label(cancel_reason, R, WL),
          findall(RT, ( net_refund(O, M, A), refund_text(U, M, A, RT) ), RTs),
          RefundT = joined(RTs, '; '),
          confirmed_items('Cancel this order?', ['Order' = OL, 'Items' = IT, 'Reason' = text(WL), 'Refund' = RefundT]) ) ; true ) )).

guard('retail__modify_pending_order_address',
      [order_id = O, address1 = A1, address2 = A2, city = City, state = State, country = Country, zip = Zip],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(pending(O), 'only a pending order can be modified (not one that is processed, delivered, cancelled, or whose items were modified)',
                  policy_ref(retail, 'An order can only be modified if its status is')),
          require(address_ok(A1, A2, City, State, Country, Zip), 'an address is letters, digits, blanks and . , - \' # / & (each part at most 100 characters; only the second line may be empty)',
                  policy_ref(retail, 'you can take actions to modify its shipping address')),
          order_label(O, OL), order_address(O, B1, B2, BC, BS, BCo, BZ), address_text(B1, B2, BC, BS, BCo, BZ, OldT),
          address_text(A1, A2, City, State, Country, Zip, NewT),
          confirmed_items('Change the shipping address of this order?',
                          ['Order' = OL, 'Shipping address now' = OldT, 'New shipping address' = NewT]) ) ; true ) )).

guard('retail__modify_pending_order_payment', [order_id = O, payment_method_id = P],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(pending(O), 'only a pending order can be modified (not one that is processed, delivered, cancelled, or whose items were modified)',
                  policy_ref(retail, 'An order can only be modified if its status is')),
          require(customer_owns_payment(U, P), 'the new payment method must be one of the user\'s own',
                  policy_ref(retail, 'The user can only choose a single payment method different from the original payment method.')),
          require(( payments_of(O, [_]), original_payment(O, Old, _) ), 'the order must have been paid with a single payment method to change it',
                  policy_ref(retail, 'The user can only choose a single payment method')),
          require(( original_payment(O, Old, _), P \== Old ), 'the new payment method must differ from the original one',
                  policy_ref(retail, 'different from the original payment method')),
          require(( original_payment(O, _, Amount), gift_card_covers(U, P, Amount) ), 'the gift card balance does not cover the order total',
                  policy_ref(retail, 'it must have enough balance to cover the total amount')),
          order_label(O, OL), payment_method_text(U, P, PT), money_text(Amount, AT), PayT = text('~w from ~w', [AT, PT]),
          refund_text(U, Old, Amount, RefundT),
          confirmed_items('Change the payment method of this order?',
                          ['Order' = OL, 'Paid now' = PayT, 'Refund of the original payment' = RefundT]) ) ; true ) )).

guard('retail__modify_pending_order_items', [order_id = O, item_ids = Olds, new_item_ids = News, payment_method_id = P],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(pending(O), 'only a pending order can be modified, and its items only once (not an order that is processed, delivered, cancelled, or whose items were modified)',
                  policy_ref(retail, 'Modify items › This action can only be called once')),
          require(items_in_order(O, Olds), 'every item to modify must be in the order (as many times as it is listed)',
                  policy_ref(retail, 'Be sure that all items to be changed are collected into a list')),
          require(( is_list(Olds), is_list(News), length(Olds, N), length(News, N) ), 'each item to modify needs exactly one new item',
                  policy_ref(retail, 'Modify items › each item can be modified to an available new item')),
          require(item_pairs_ok(O, Olds, News, Diff), 'each new item must be an available item of the same product with other options (no change of product type)',
                  policy_ref(retail, 'each item can be modified to an available new item of the same product but of different product option')),
          require(customer_owns_payment(U, P), 'the price difference is paid or refunded with one of the user\'s own payment methods',
                  policy_ref(retail, 'Modify items › The user must provide a payment method to pay or receive refund of the price difference.')),
          require(gift_card_covers(U, P, Diff), 'the gift card balance does not cover the price difference',
                  policy_ref(retail, 'Modify items › If the user provides a gift card, it must have enough balance to cover the price difference.')),
          order_label(O, OL), changes_text(O, Olds, News, CT), difference_text(U, P, Diff, DT),
          confirmed_items('Modify the items of this order?',
                          ['Order' = OL, 'Changes' = CT, 'Price difference' = DT,
                           'Only once' = text('items can be modified only once: this must be every item you want to change, and the order cannot be modified or cancelled afterwards')]) ) ; true ) )).

guard('retail__return_delivered_order_items', [order_id = O, item_ids = Items, payment_method_id = P],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(delivered(O), 'only a delivered order can be returned (and only once)',
                  policy_ref(retail, 'An order can only be returned if its status is')),
          require(items_in_order(O, Items), 'every item to return must be in the order (as many times as it is listed)',
                  policy_ref(retail, 'The user needs to confirm the order id and the list of items to be returned.')),
          require(customer_owns_payment(U, P), 'the refund goes to one of the user\'s own payment methods',
                  policy_ref(retail, 'The user needs to provide a payment method to receive the refund.')),
          require(( original_payment(O, P, _) ; customer_payment(U, P, gift_card) ), 'the refund must go to the original payment method or an existing gift card',
                  policy_ref(retail, 'The refund must either go to the original payment method, or an existing gift card.')),
          order_label(O, OL), listed_items_text(O, Items, IT), items_price(O, Items, Total), payment_method_text(U, P, PT),
          after_return_text(ThenT),
          money_text(Total, TT), RefundT = text('~w to ~w', [TT, PT]),
          confirmed_items('Return these items?',
                          ['Order' = OL, 'Items to return' = IT, 'Refund' = RefundT,
                           'Then' = ThenT]) ) ; true ) )).

guard('retail__exchange_delivered_order_items', [order_id = O, item_ids = Olds, new_item_ids = News, payment_method_id = P],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(own_order(U, O), 'the order must belong to the authenticated user: one user per conversation',
                policy_ref(retail, 'You can only help one user per conversation')),
        ( own_order(U, O) -> (
          require(delivered(O), 'only a delivered order can be exchanged, and only once',
                  policy_ref(retail, 'An order can only be exchanged if its status is')),
          require(items_in_order(O, Olds), 'every item to exchange must be in the order (as many times as it is listed)',
                  policy_ref(retail, 'Exchange or modify order tools can only be called once per order.')),
          require(( is_list(Olds), is_list(News), length(Olds, N), length(News, N) ), 'each item to exchange needs exactly one new item',
                  policy_ref(retail, 'each item can be exchanged to an available new item')),
          require(item_pairs_ok(O, Olds, News, Diff), 'each new item must be an available item of the same product with other options (no change of product type)',
                  policy_ref(retail, 'each item can be exchanged to an available new item of the same product but of different product option')),
          require(customer_owns_payment(U, P), 'the price difference is paid or refunded with one of the user\'s own payment methods',
                  policy_ref(retail, 'Exchange delivered order › The user must provide a payment method to pay or receive refund of the price difference.')),
          require(gift_card_covers(U, P, Diff), 'the gift card balance does not cover the price difference',
                  policy_ref(retail, 'Exchange delivered order › If the user provides a gift card, it must have enough balance to cover the price difference.')),
          order_label(O, OL), changes_text(O, Olds, News, CT), difference_text(U, P, Diff, DT), after_exchange_text(ThenT),
          confirmed_items('Exchange these items?',
                          ['Order' = OL, 'Exchanges' = CT, 'Price difference' = DT,
                           'All items' = text('an order is exchanged only once: this must be every item you want to exchange'),
                           'Then' = ThenT]) ) ; true ) )).

guard('retail__modify_user_address',
      [user_id = V, address1 = A1, address2 = A2, city = City, state = State, country = Country, zip = Zip],
      ( require(authenticated_user(U), 'the user must be authenticated first: their user id located by their email, or by their name and zip code',
                policy_ref(retail, 'you have to authenticate the user identity by locating their user id via email, or via name + zip code')),
        require(V == U, 'only the authenticated user\'s own default address can be changed: one user per conversation',
                policy_ref(retail, 'must deny any requests for tasks related to any other user')),
        % another user id is read nothing of (whether it names a customer is not told)
        ( V == U -> (
          require(address_ok(A1, A2, City, State, Country, Zip), 'an address is letters, digits, blanks and . , - \' # / & (each part at most 100 characters; only the second line may be empty)',
                  policy_ref(retail, 'modify their default user address')),
          customer_name(U, F, L), Who = text('~w ~w (~w)', [F, L, U]),
          customer_address(U, B1, B2, BC, BS, BCo, BZ), address_text(B1, B2, BC, BS, BCo, BZ, OldT),
          address_text(A1, A2, City, State, Country, Zip, NewT),
          confirmed_items('Change your default address?',
                          ['Account' = Who, 'Default address now' = OldT, 'New default address' = NewT]) ) ; true ) )).

cites(address_text/7, policy_ref(retail, 'modify their default user address')).
cites(listed_items_text/3, policy_ref(retail, 'you must list the action details and obtain explicit user confirmation (yes) to proceed')).

% The hand-over is allowed as it is, asking nothing: the policy transfers "if and only if the request cannot be
% handled within the scope of your actions", a judgement of the request's words that no fact of Sentinel's
% holds, and states no other condition (no authentication, no confirmation: those it asks before actions that
% update the database, and the transfer changes no data). A guard of facts would invent a rule, and no guard at
% all would leave it to the default policy, which asks to confirm any tool that is not read-only.
guard('retail__transfer_to_human_agents', [], true).

% ---------------------------------------------------------------- effects of writes
effect('retail__cancel_pending_order', [order_id = O],
       [invalidate(order_status(O, _)), invalidate(order_payment(O, _, _, _, _)), invalidate(customer_gift_balance(_, _, _))]).
effect('retail__modify_pending_order_address', [order_id = O], [invalidate(order_address(O, _, _, _, _, _, _))]).
effect('retail__modify_pending_order_payment', [order_id = O],
       [invalidate(order_payment(O, _, _, _, _)), invalidate(customer_gift_balance(_, _, _))]).
effect('retail__modify_pending_order_items', [order_id = O],
       [establish(order_changed(O, items_modified)), invalidate(order_status(O, _)), invalidate(order_item(O, _, _, _, _)),
        invalidate(order_item_option(O, _, _, _)), invalidate(order_payment(O, _, _, _, _)),
        invalidate(customer_gift_balance(_, _, _))]).
effect('retail__return_delivered_order_items', [order_id = O],
       [establish(order_changed(O, return_requested)), invalidate(order_status(O, _))]).
effect('retail__exchange_delivered_order_items', [order_id = O],
       [establish(order_changed(O, exchange_requested)), invalidate(order_status(O, _))]).
effect('retail__modify_user_address', [user_id = U], [invalidate(customer_address(U, _, _, _, _, _, _))]).
