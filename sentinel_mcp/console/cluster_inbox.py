"""The console inbox across replicas on one PostgreSQL: every replica's waiting questions, answered once.

A question waits on the replica that holds its call (an in-process ``InboxItem`` with an event the held call
awaits); this mirror copies it into the shared ``inbox_items`` table so that the person's console on any
replica shows it. An answer given on any replica is claimed with one ``UPDATE ... WHERE answers IS NULL AND
live = 1 AND principal = ? RETURNING``: the row lock lets exactly one answer in the cluster count, and another
principal's answer matches no row (the same "no such question" as a made-up id). The replica that holds the
call picks the answer up (``delivered`` flips once, again by ``UPDATE ... RETURNING``) and lets its held call
go on.

The flags are not signed, so a database writer without the seal key can turn them back (``used = 0``,
``delivered = 0``, a later ``expires``). The answer's MAC covers its expiry (on the database's clock), and
whatever uses an answer (a retry, the held call, a withdrawal) wipes its MAC in the same statement that sets
``used``, compared against the MAC it checked: a used answer has no signature left to count again, whatever
its flags say. A question withdrawn or settled by the client loses its MAC too: ``live = 1`` shows it nowhere
and lets no answer be claimed. A row put back whole from a copy taken before the use is refused by the replica
that used it (``_spent``, until the signed expiry); another replica cannot tell it from the first use within
that window.

Propagation is polling with a bound (``POLL_SECONDS``; a local change wakes the loop at once), not
LISTEN/NOTIFY: the store's connections belong to its writer and reader threads, and one small indexed read per
tick per replica is cheap next to the decisions' own round trips. A pushed elicitation (a handshake-era client
that can elicit) never reaches the inbox: it is answered on the replica holding that client's stream (affinity
by ``Mcp-Session-Id`` at the balancer, ``examples/cluster/``).

Fail closed: a store that cannot be reached shows no other replica's questions and claims no answer (the page
says "no such question"); local questions stay listed but cannot be answered until the store is back."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from pydantic import ValidationError

from sentinel_mcp.console.inbox import Inbox, InboxItem
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.core.record_bounds import AUDIT_ARGUMENTS, bounded
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, sign_row, signed, signed_row
from sentinel_mcp.storage.shared_clock import DB_NOW
from sentinel_mcp.storage import Schema, StorageError, open_database
from sentinel_mcp.storage.open import release

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5  # the longest an answer given on another replica waits before the held call sees it
MAX_ROWS = 2000  # other replicas' open questions read per tick (the inbox's own bound)
SWEEP_EVERY = 120  # ticks between deletions of expired rows
_TABLE = ("CREATE TABLE inbox_items (id TEXT PRIMARY KEY, principal TEXT NOT NULL, replica TEXT NOT NULL, "
          "body TEXT NOT NULL, expires {real} NOT NULL, live INTEGER NOT NULL DEFAULT 1, answers TEXT, "
          "delivered INTEGER NOT NULL DEFAULT 0); "
          "CREATE INDEX inbox_items_open ON inbox_items (live, expires); "
          "CREATE INDEX inbox_items_owner ON inbox_items (replica, delivered)")
# step 2: an answer waiting for a retry is used once on any replica: the exact call it is bound to
# (conversation,
# tool, argument digest, policy version as JSON; the principal is its own column), when it was answered, and
# whether a call used it
_RETRY = (
    "ALTER TABLE inbox_items ADD COLUMN call_key TEXT; "
    "ALTER TABLE inbox_items ADD COLUMN answered_at {real}; "
    "ALTER TABLE inbox_items ADD COLUMN used INTEGER NOT NULL DEFAULT 0; "
    "CREATE INDEX inbox_items_call ON inbox_items (principal, call_key)"
)
# step 3: the question signed by the replica holding its call, the answer by the replica whose console took it
# (``storage/row_signature.py``): a row someone wrote in SQL is shown to nobody and answers nothing
_SIGNED = (
    "ALTER TABLE inbox_items ADD COLUMN question_mac TEXT NOT NULL DEFAULT ''; "
    "ALTER TABLE inbox_items ADD COLUMN answer_mac TEXT NOT NULL DEFAULT ''"
)
SCHEMA = Schema(
    "inbox_items",
    {
        "sqlite": [_TABLE.format(real="REAL"), _RETRY.format(real="REAL"), _SIGNED],
        "postgres": [
            _TABLE.format(real="DOUBLE PRECISION"),
            _RETRY.format(real="DOUBLE PRECISION"),
            _SIGNED,
        ],
    },
)
# the signatures' purposes; an answer's covers (id, principal, call key, answers text, expires)
QUESTION, ANSWER = "inbox question", "inbox answer until"

# a row's ``expires`` is on the database's clock (replicas' clocks may disagree: one behind would use an
# answer expired everywhere else, one ahead would stretch it); each replica shows it on its own clock
_NOW = DB_NOW
_CLAIM = (
    "UPDATE inbox_items SET answers = ?, answer_mac = ?, delivered = ?, answered_at = ?, expires = ? "
    "WHERE id = ? "
    f"AND principal = ? AND live = 1 AND answers IS NULL AND used = 0 AND expires > {_NOW} "
    "AND question_mac <> '' AND question_mac = ? RETURNING replica"
)
TAKE_ROWS = 8  # answered rows of one call read at a retry (made-up ones among them are skipped)
_ANSWERED = (
    "SELECT id, answers, answered_at, body, answer_mac, expires FROM inbox_items WHERE principal = ? "
    f"AND call_key = ? AND answers IS NOT NULL AND used = 0 AND expires > {_NOW} ORDER BY answered_at "
    f"LIMIT {TAKE_ROWS}"
)
# the use: only while the row still carries the MAC (and the expiry) checked, wiped in the same statement;
# the row lock lets exactly one of two replicas using at once match (the other finds nothing, asks again)
_USE = (
    "UPDATE inbox_items SET used = 1, answer_mac = '' WHERE id = ? AND used = 0 AND answers IS NOT NULL "
    f"AND answer_mac = ? AND expires = ? AND expires > {_NOW} RETURNING id"
)


def call_key(session: str, tool: str, digest: str, version: str) -> str:
    return json.dumps([session, tool, digest, version])


def _item_key(item: InboxItem) -> str:
    return call_key(item.session, item.tool, item.digest, item.version)


def _body(item: InboxItem) -> str:
    return json.dumps(
        {
            "session": item.session,
            "client": item.client,
            "kind": item.kind,
            "tool": item.tool,
            # bounded as the audit bounds them: a client's 1 MB of arguments would otherwise be a 1 MB row
            # that every replica reads each tick (up to MAX_ROWS of them); a cut copy says so and carries
            # the full value's SHA-256, and the answer is bound to the call by ``digest``, never by this copy
            "arguments": bounded(item.arguments, AUDIT_ARGUMENTS),
            "digest": item.digest,
            "version": item.version,
            "reason": item.reason,
            "created": item.created,
            "questions": [q.model_dump(mode="json") for q in item.questions],
            # whose call asked, when not the inbox's principal (an agent's, in the person's): every replica's
            # card says so (signed with the rest of the body)
            "asker": item.asker,
        },
        default=str,
    )


def _remote_item(
    item_id: str, principal: str, replica: str, body: str, expires: float, mac: str = ""
) -> InboxItem | None:
    """Another replica's question as this console shows it (a malformed row is skipped, never shown);
    ``mac``: the row's question signature, what an answer to this copy is bound to (``claim``)."""
    try:
        d = json.loads(body)
        asker = d.get("asker", "")  # a row of an older replica has none: the inbox's principal asked
        if not isinstance(asker, str):
            raise TypeError(f"asker is a {type(asker).__name__}")
        return InboxItem(
            id=item_id,
            principal=principal,
            session=str(d["session"]),
            client=d.get("client"),
            kind=d["kind"],
            tool=str(d["tool"]),
            arguments=d.get("arguments"),
            digest=str(d["digest"]),
            version=str(d["version"]),
            reason=str(d["reason"]),
            questions=[Question.model_validate(q) for q in d["questions"]],
            created=float(d["created"]),
            expires=float(expires),
            replica=replica,
            shown_from=mac,
            asker=asker if asker != principal else "",
        )
    except (ValueError, KeyError, TypeError, ValidationError) as e:
        log.warning("inbox row %s from replica %s is malformed, not shown: %s", item_id, replica, e)
        return None


def _answer_mac(key: bytes, item_id: Any, principal: Any, ck: Any, text: Any, expires: Any) -> str:
    return sign_row(key, ANSWER, [item_id, principal, ck, text, expires])


def _answer_signed(
    key: bytes, mac: Any, item_id: Any, principal: Any, ck: Any, text: Any, expires: Any
) -> bool:
    """Type-strict: every field as the database hands it back (text, and a float expiry)."""
    if not all(isinstance(f, str) for f in (item_id, principal, ck, text)) or type(expires) is not float:
        return False
    return signed_row(key, mac, ANSWER, [item_id, principal, ck, text, expires])


def _answers(text: str) -> dict[str, Answer] | None:
    try:
        raw = json.loads(text)
        return {
            str(k): Answer.model_validate(v).model_copy(update={"provenance": "user"}) for k, v in raw.items()
        }
    except (ValueError, AttributeError, ValidationError) as e:
        log.warning("an inbox answer is malformed, not used: %s", e)
        return None


class ClusterInbox:
    """The shared side of one replica's ``Inbox`` (``inbox.shared``)."""

    def __init__(self, inbox: Inbox, url: str, replica: str, key: bytes | None = None) -> None:
        self.inbox, self.url, self.replica = inbox, url, str(replica)
        self._key = key if key is not None else PROCESS_KEY  # the cluster's (``SharedStore.key("inbox")``)
        self.db: Any = None
        self._published: dict[str, asyncio.Task[None]] = {}  # local item id -> its INSERT
        # local item id -> the questions its row holds now, and that row's signature (what a claim binds to)
        self._written: dict[str, tuple[list[Question], str]] = {}
        # answers to questions held here, as checked (id -> MAC, signed expiry): what the held call's use
        # must still find in the row
        self._held_answers: dict[str, tuple[str, float]] = {}
        # answers used here (id -> signed expiry): a row put back from an earlier copy is not used again here
        self._spent: dict[str, float] = {}
        self._withdrawn: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.ok = False

    async def start(self) -> "ClusterInbox":
        self.db = open_database(self.url, "inbox")
        try:
            await self.db.migrate(SCHEMA)
        except StorageError as e:  # degraded: the loop retries; nothing is shown or claimed meanwhile
            log.warning("shared inbox unavailable at start: %s", e)
        self.inbox.shared = self
        self._task = asyncio.create_task(self._loop(), name="cluster-inbox")
        return self

    async def stop(self) -> None:
        self.inbox.shared = None
        # Python 3.11's ``wait_for`` loses a cancel that meets a wake-up (the loop's ``wait_for`` returned the
        # wake and ran on forever, so stopping a replica hung): the loop also ends on this flag
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for task in self._published.values():
            task.cancel()
        if self.db is not None:
            await release(self.db)

    # ---------------------------------------------------------------- the Inbox's hooks
    def posted(self, item: InboxItem) -> None:
        """A local question (new, or asked again): copied to the shared table."""
        self._published[item.id] = asyncio.get_running_loop().create_task(self._publish(item))

    def changed(self) -> None:
        self._wake.set()

    async def claim(self, item: InboxItem, answers: dict[str, Answer], asked: list[Question]) -> bool:
        """The person's answer to the questions ``asked`` (as the console showed them), counted once in the
        cluster (False: answered already, expired, withdrawn, another principal's, asked anew since, or the
        store is unreachable)."""
        publishing = self._published.get(item.id)
        if publishing is not None:
            await asyncio.gather(publishing, return_exceptions=True)
        if item.replica is None:  # held here: bound to the signed copy of exactly these questions
            written = self._written.get(item.id)
            if written is None or written[0] != asked or item.questions != asked:
                return False
            shown_from = written[1]
        else:
            shown_from = item.shown_from
        text = json.dumps({k: a.model_dump(mode="json") for k, a in answers.items()})
        now = time.time()
        try:
            # the window the answer waits for a retry, on the database's clock, inside its MAC
            expires = float((await self.db.query(f"SELECT {_NOW}"))[0][0]) + float(self.inbox.ttl)
            mac = _answer_mac(self._key, item.id, item.principal, _item_key(item), text, expires)
            # only while the row still asks what was shown (the holder asked the same call anew, with
            # another text, since another replica's last poll or during this claim: the row's signature
            # changed with it). A copy that names no row matches none: a row's signature is never empty
            rows = await self.db.consume(
                _CLAIM,
                (text, mac, int(item.replica is None), now, expires, item.id, item.principal, shown_from),
            )
        except StorageError as e:
            log.warning("inbox answer refused, the shared store is unavailable: %s", e)
            return False
        if rows and item.replica is None:  # held here: the held call uses exactly this signed answer
            self._held_answers[item.id] = (mac, expires)
        return bool(rows)

    async def take(self, key: tuple[str, str, str, str, str]) -> tuple[str, dict[str, Answer], float] | None:
        """An answer given on any replica for exactly this call (principal, conversation, tool, argument
        digest, policy version), consumed once in the cluster: (item id, answers, seconds the person took).
        None: none waits, another replica's retry took it, or the store is unreachable (asked again)."""
        principal, session, tool, digest, version = key
        ck = call_key(session, tool, digest, version)
        try:
            rows = await self.db.query(_ANSWERED, (principal, ck))
        except StorageError as e:
            log.warning("an answer given in the console is not used, the shared store is unavailable: %s", e)
            return None
        for item_id, text, answered_at, body, mac, expires in rows:
            if not _answer_signed(self._key, mac, item_id, principal, ck, text, expires):
                log.warning("inbox answer %s is not signed for this call: not used", str(item_id)[:80])
                continue
            answers = _answers(str(text))
            if answers is None or not await self._use(item_id, mac, expires):
                return None  # malformed, or another replica's retry (or the held call) used it first
            try:
                created = float(json.loads(str(body))["created"])
            except (ValueError, KeyError, TypeError):
                created = float(answered_at or 0.0)
            return str(item_id), answers, max(0.0, float(answered_at or 0.0) - created)
        return None

    async def open_elsewhere(self, key: tuple[str, str, str, str, str]) -> str | None:
        """Another replica's open question for exactly this call (its id), read from the store now (not the
        last tick's copy: a retry may reach this replica before the tick). None: none, or the store is
        unreachable (then this replica posts its own, as without the store)."""
        principal, session, tool, digest, version = key
        try:
            rows = await self.db.query(
                "SELECT id FROM inbox_items WHERE principal = ? AND call_key = ? AND live = 1 "
                f"AND answers IS NULL AND used = 0 AND expires > {_NOW} AND replica <> ? ORDER BY expires "
                "LIMIT 1",
                (principal, call_key(session, tool, digest, version), self.replica),
            )
        except StorageError as e:
            log.warning("inbox: could not look for this question on other replicas: %s", e)
            return None
        return str(rows[0][0]) if rows else None

    async def use(self, item_id: str) -> bool:
        """A held call uses the answer to its question: once in the cluster (False: a retry elsewhere took
        it first, the answer was not one this replica checked, or the store is unreachable)."""
        checked = self._held_answers.pop(item_id, None)
        return checked is not None and await self._use(item_id, *checked)

    async def _use(self, item_id: str, mac: str, expires: float) -> bool:
        """The one use of a checked answer: its MAC wiped with ``used`` in one statement."""
        await self._forget_spent()
        if item_id in self._spent:
            log.warning("inbox answer %s was used here already: a row put back is not used again", item_id)
            return False
        try:
            used = bool(await self.db.consume(_USE, (item_id, mac, expires)))
        except StorageError as e:
            log.warning("an answer is not used, the shared store is unavailable: %s", e)
            return False
        if used:
            self._spent[item_id] = expires
        return used

    async def _forget_spent(self) -> None:
        """Bounded by the answers' windows: past its signed expiry no answer is used anywhere. The expiry is
        on the database's clock, and so is this: a replica's own clock running ahead forgot answers the
        database still took (a row put back was used again here)."""
        if len(self._spent) > MAX_ROWS:
            try:
                now = float((await self.db.query(f"SELECT {_NOW}"))[0][0])
            except StorageError:  # kept (the use itself needs the store too)
                return
            self._spent = {i: e for i, e in self._spent.items() if e > now}

    # ---------------------------------------------------------------- the loop
    async def _publish(self, item: InboxItem) -> None:
        questions, body, ck = list(item.questions), _body(item), _item_key(item)
        mac = sign(self._key, QUESTION, item.id, item.principal, self.replica, ck, body)
        try:
            # the row rewritten (the call asked anew, maybe with other words): an answer not yet delivered
            # was to the row as it was, and goes (the person answers the question as it reads now)
            await self.db.write(
                "INSERT INTO inbox_items (id, principal, replica, body, expires, call_key, question_mac) "
                f"VALUES (?, ?, ?, ?, {_NOW} + ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET body = excluded.body, expires = excluded.expires, "
                "question_mac = excluded.question_mac, "
                "answers = CASE WHEN inbox_items.question_mac = excluded.question_mac "
                "THEN inbox_items.answers END, "
                "answer_mac = CASE WHEN inbox_items.question_mac = excluded.question_mac "
                "THEN inbox_items.answer_mac ELSE '' END",
                (
                    item.id,
                    item.principal,
                    self.replica,
                    body,
                    item.expires - process_clock.now(),  # what is left of it, from the database's now
                    ck,
                    mac,
                ),
            )
        except StorageError as e:
            log.warning("inbox question %s not shared (only this replica shows it): %s", item.id, e)
            return
        if item.questions == questions:  # not asked anew meanwhile (that copy is on its way)
            self._written[item.id] = (list(questions), mac)

    async def _loop(self) -> None:
        ticks = 0
        while not self._stopping:
            try:
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            except asyncio.TimeoutError:
                pass
            if self._stopping:
                return
            self._wake.clear()
            ticks += 1
            try:
                await self._tick(sweep=ticks % SWEEP_EVERY == 0)
                self.ok = True
            except StorageError as e:
                if self.ok:
                    log.warning("shared inbox unavailable: %s", e)
                self.ok = False
                self._show({}, {})  # fail closed: nothing another replica holds is shown
            except Exception:  # noqa: BLE001 - the mirror never dies; the next tick tries again
                log.exception("shared inbox tick failed")

    async def _tick(self, sweep: bool) -> None:
        now = process_clock.now()  # a remote item's expiry on this replica's clock, as its own items
        await self._withdraw_settled()
        for item_id in [i for i in self._written if self.inbox.local(i) is None]:  # bounded by the inbox's
            del self._written[item_id]
        for item_id in list(self._held_answers):  # the held call is over (or the item gone): nothing to use
            held = self.inbox.local(item_id)
            if held is None or held.used:
                del self._held_answers[item_id]
        if sweep:
            await self.db.write(f"DELETE FROM inbox_items WHERE expires < {_NOW} - 60")
        # answered here before this read: the row says whether a retry (on any replica) used it since
        waiting_here = self.inbox.waiting_ids()
        # one read per tick: other replicas' open questions, every replica's answers waiting for a retry, and
        # whether answers wait for questions held here
        rows = await self.db.query(
            f"SELECT id, principal, replica, body, expires - {_NOW}, answers, delivered, call_key, "
            "question_mac, answer_mac, expires FROM inbox_items "
            f"WHERE (live = 1 AND answers IS NULL AND used = 0 AND expires > {_NOW} AND replica <> ?) "
            "OR (replica = ? AND delivered = 0 AND answers IS NOT NULL) "
            f"OR (answers IS NOT NULL AND used = 0 AND expires > {_NOW}) "
            f"ORDER BY expires LIMIT {MAX_ROWS}",
            (self.replica, self.replica),
        )
        remote: dict[str, InboxItem] = {}
        answered: dict[str, InboxItem] = {}
        to_deliver = False
        for item_id, principal, replica, body, left, text, delivered, ck, q_mac, a_mac, until in rows:
            if replica == self.replica and not delivered and text is not None:
                to_deliver = True  # checked where it is delivered (``_deliver``)
            # a question (and an answer) another replica wrote counts only when signed by the cluster's key
            if not signed(self._key, q_mac, QUESTION, item_id, principal, replica, ck, body):
                continue
            if text is not None and not _answer_signed(self._key, a_mac, item_id, principal, ck, text, until):
                continue
            if type(left) not in (int, float):  # an odd value from the store is no time to live
                continue
            expires = now + float(left)  # on this replica's clock, as its own items
            if text is None:
                item = _remote_item(
                    str(item_id), str(principal), str(replica), str(body), float(expires), str(q_mac)
                )
                if item is not None:
                    remote[item.id] = item
                continue
            if float(expires) <= now:
                continue
            item = _remote_item(str(item_id), str(principal), str(replica), str(body), float(expires))
            answers = _answers(str(text))
            if item is not None and answers is not None:
                item.answers = answers
                item.denied = any(a.action != "accept" for a in answers.values())
                answered[item.id] = item
        self.inbox.used_elsewhere(waiting_here - set(answered))
        self._show(remote, answered)
        if to_deliver:
            for item_id, text, mac, expires, used in await self.db.consume(
                "UPDATE inbox_items SET delivered = 1 WHERE replica = ? AND delivered = 0 "
                "AND answers IS NOT NULL RETURNING id, answers, answer_mac, expires, used",
                (self.replica,),
            ):
                self._deliver(str(item_id), text, mac, expires, used)

    async def _withdraw_settled(self) -> None:
        """Local questions no longer open leave the other replicas' consoles; one withdrawn or settled by the
        client itself (not answered here) can no longer be answered or used anywhere."""
        gone = [i for i in self._published if not self.inbox.is_open(i)]
        if not gone:
            return
        waiting = self.inbox.waiting_ids()
        ended = [i for i in gone if i not in waiting]
        await self.db.write(
            f"UPDATE inbox_items SET live = 0 WHERE id IN ({', '.join('?' * len(gone))})", gone
        )
        if ended:  # spent: no signature left to show the question or count its answer after ``used = 0``
            marks = ", ".join("?" * len(ended))
            await self.db.write(
                f"UPDATE inbox_items SET used = 1, answer_mac = '', question_mac = '' WHERE id IN ({marks})",
                ended,
            )
        for item_id in gone:
            self._published.pop(item_id, None)

    def _show(self, remote: dict[str, InboxItem], answered: dict[str, InboxItem] | None = None) -> None:
        answered = answered or {}
        before, before_answered = self.inbox.remote, self.inbox.remote_answered
        self.inbox.remote, self.inbox.remote_answered = remote, answered
        changed = set()
        for old, new in ((before, remote), (before_answered, answered)):
            changed |= {i.principal for k, i in old.items() if k not in new} | {
                i.principal for k, i in new.items() if k not in old
            }
        for principal in changed:
            self.inbox.notify(principal, "inbox")

    def _deliver(self, item_id: str, text: Any, mac: Any, expires: Any, used: Any) -> None:
        """An answer given on another replica, for a question this replica holds: only one that replica
        signed for exactly this question (its id, principal and call, as held here), this text and expiry.
        One already used (a retry elsewhere won the race: its MAC is wiped) ends the held call with
        nothing."""
        item = self.inbox.local(item_id)
        if item is not None and mac == "" and type(used) is int and used == 1:
            if item.open:  # told at once that the answer was taken, instead of waiting out its hold
                log.info("the answer to %s was used by a retry elsewhere: the held call gets none", item_id)
                item.used = True
                item.settled.set()
                self.inbox.notify(item.principal, "inbox")
            return
        if item is not None and not _answer_signed(
            self._key, mac, item.id, item.principal, _item_key(item), text, expires
        ):
            log.warning("an answer to %s is not signed by a replica of this cluster: nothing passes", item_id)
            return
        answers = _answers(text) if isinstance(text, str) else None
        if item is None or not item.open or answers is None:
            log.info("an answer from another replica's console came too late for %s: nothing passes", item_id)
            return
        self._held_answers[item.id] = (str(mac), float(expires))
        self.inbox.answer(item, answers)
