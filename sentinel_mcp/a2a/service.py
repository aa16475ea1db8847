"""The A2A operations, independent of the binding: SendMessage, SendStreamingMessage, GetTask,
ListTasks, CancelTask, SubscribeToTask.

Every action runs through ``GatewayPort.invoke(..., origin="a2a", client=<caller>)``, the same guard
and audit as MCP calls. A guard that asks turns the task INPUT_REQUIRED; a later SendMessage on that
taskId with ``answers`` resumes the same call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pydantic import ValidationError

from sentinel_mcp.a2a import actions
from sentinel_mcp.a2a.actions import AssistRequest, Capabilities, GuardedCall, Rejection
from sentinel_mcp.a2a.assist_inbox import AssistInbox
from sentinel_mcp.a2a.chat_memory import ChatMemory
from sentinel_mcp.a2a.assist_tasks import PersonAssist
from sentinel_mcp.a2a.input_expiry import InputExpiry
from sentinel_mcp.a2a.leased_tasks import LeasedTasks
from sentinel_mcp.a2a.heard_messages import HeardMessages
from sentinel_mcp.a2a.remote_tasks import RemoteTasks
from sentinel_mcp.a2a.shared_message_ids import SharedMessageIds
from sentinel_mcp.a2a.orchestrated_tasks import OrchestratorFirst
from sentinel_mcp.a2a.jsonrpc import (
    INVALID_PARAMS,
    PUSH_NOT_SUPPORTED,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
    RpcError,
    invalid_params_from,
)
from sentinel_mcp.a2a.protocol import (
    INTERRUPTED_STATES,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskStatus,
    now_iso,
)
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.stream_slots import StreamSlots
from sentinel_mcp.core.held_bytes import HeldBytes
from sentinel_mcp.a2a.task_events import EventStream, StreamEvent, TaskEvents
from sentinel_mcp.a2a import task_lease
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_moves import TaskMoves
from sentinel_mcp.a2a.resumed_credentials import resumed_check
from sentinel_mcp.identity.resolver import Authenticator
from sentinel_mcp.a2a.task_store import (
    json_bytes,
    store_fault,
    HeldElsewhere,
    PendingCall,
    TaskRecord,
    TaskStore,
    decode_page_token,
    encode_page_token,
    sort_key,
)
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.conversation_names import SharedLabels

CONTEXT_IDLE_SECONDS = 12 * 3600  # a context's conversation lapses after this long without a task (as MCP's)

if TYPE_CHECKING:  # discovery pulls in the TLS client; a registry is passed only when discovery runs
    from sentinel_mcp.a2a.discovery import PeerRegistry

log = logging.getLogger(__name__)
OFFERED_KINDS = ("task_offer", "chat")
ASSIST_POLL_SECONDS = 0.5
# a help request nobody answered within the hour ends FAILED  # free-form intents; sensor requests and tool
# calls are local by nature
ASSIST_WAIT_SECONDS = 3600.0


class A2AService(TaskMoves, OrchestratorFirst, PersonAssist, LeasedTasks, RemoteTasks, InputExpiry):
    def __init__(self, port: GatewayPort, settings: A2ASettings, peers: PeerRegistry | None = None) -> None:
        self.port = port
        self.settings = settings
        self.store = TaskStore(
            settings.max_tasks,
            per_caller=settings.open_per_caller,
            bytes_per_caller=settings.task_bytes_per_caller,
        )
        self._next_expiry = 0.0  # (monotonic) when tasks waiting for input are next looked over
        self._expiry: asyncio.Task[None] | None = None  # looks them over when no new task arrives
        self.events = TaskEvents()  # status/artifact updates per task, for streams
        self.stream_slots = StreamSlots(settings.max_streams_per_caller, settings.max_streams)  # SSE and WS
        # bytes of HTTP request bodies being read or served: each is bounded by max_frame_bytes, their number
        # per caller and in all by this (core/held_bytes.py)
        self.held_bodies = HeldBytes(16 * settings.max_frame_bytes, 256 * settings.max_frame_bytes)
        self.peers = peers  # a discovery.PeerRegistry, when discovery runs
        self.epoch = secrets.token_hex(4)
        self._journal: TaskJournal | None = None
        self._leases: asyncio.Task[None] | None = None
        self._cancels: asyncio.Task[None] | None = None  # cancels asked through other replicas
        self._contexts: SharedLabels | None = None  # replicas: a caller's context is one conversation
        self._followers: dict[str, asyncio.Task[None]] = {}  # other replicas' tasks streamed from here
        self._degraded: dict[str, str] = {}
        self._offering: set[str] = set()  # tasks whose intent is being offered to the orchestrator now
        self.inbox: AssistInbox | None = None
        # every connection's chats: per caller, and all callers' together
        self.seen = HeardMessages()  # message ids sent lately, per caller: a replay acts once
        self.chat_memory = ChatMemory(settings.chat_bytes_per_caller, settings.chat_bytes_total)
        # the HTTP host's: proves a task's stored credentials again where it resumes (resumed_credentials.py)
        self.authenticator: Authenticator | None = None

    async def open(
        self,
        task_db: Path | str | None = None,
        adopt: Sequence[Path] = (),
        *,
        replica: str | None = None,
        label_key: bytes | None = None,
        task_key: bytes | None = None,
        lease_seconds: float = task_lease.LEASE_SECONDS,
        renew_every: float = task_lease.RENEW_EVERY,
    ) -> None:
        """Persist tasks in SQLite at ``task_db`` (and reload those stored there, with the tasks of the ended
        gateways' journals ``adopt``); or in the ``postgresql://`` store replicas share (``task_db`` the URL,
        ``replica`` this replica's name): tasks leased there (``task_lease.py``), read from any replica;
        ``label_key`` signs the rows naming a context's conversation (the cluster's, ``SharedStore.key``);
        ``task_key`` the tasks' rows (``task_rows.py``).
        Without it, memory only."""
        if task_db is None:
            return
        self._journal = TaskJournal(task_db, replica, lease_seconds, key=task_key)
        self.store.journal = self._journal
        self.store.load(await self._journal.open(adopt))
        for record in self.store.all_records():  # their messages' replays find them after the restart
            for message in record.task.history or ():
                if message.role == "ROLE_USER":
                    self.seen.remember(record.owner, message.message_id, record.task.id)
        if self._journal.shared:
            self._leases = asyncio.create_task(self._keep_leases(renew_every), name="a2a-task-leases")
            self._contexts = await SharedLabels.open(self._journal.db, CONTEXT_IDLE_SECONDS, key=label_key)
            # a replay reaching another replica finds the task the first hearing started
            self.seen.shared = await SharedMessageIds.open(self._journal.db, key=task_key)
            self._cancels = asyncio.create_task(
                self._watch_cancels(min(task_lease.CANCEL_POLL, renew_every)), name="a2a-task-cancels"
            )

    def end_streams(self) -> None:
        """End open streams (SSE and WebSocket) so an HTTP server can shut down; tasks keep their state."""
        self.events.close_all()

    async def close(self) -> None:
        self.end_streams()
        # running tasks stay WORKING in the journal: the next start reports them as interrupted
        for loop in (self._leases, self._cancels, self._expiry, *self._followers.values()):
            if loop is not None:
                loop.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await loop
        self._leases = self._cancels = self._expiry = None
        if self._journal is not None:
            await self._journal.close()
            self._journal = None

    # --- status (degraded mode) ---------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What other agents are told (the public card, a chat's answer): whether an orchestrator is there,
        never where (its configured URL may carry a credential), nor how many peers and tools there are."""
        caps = Capabilities.of(self.port)
        peers = len(self.peers.verified()) if self.peers is not None else 0
        orchestrator = self.settings.orchestrator_url or (self._discovered_orchestrator())
        return {
            "degraded": orchestrator is None and peers == 0,
            "orchestrator": orchestrator is not None,
            "local_llm": caps.llm,
            "sensors": caps.sensors,
            "note": (
                "no orchestrator and no peers: local capabilities only ("
                + ", ".join(
                    k
                    for k, on in (("sensors", caps.sensors), ("tools", bool(caps.tools)), ("chat", caps.llm))
                    if on
                )
                + ")"
            )
            if orchestrator is None and peers == 0
            else "",
        }

    # --- operations ---------------------------------------------------------------------------

    async def send_message(self, req: SendMessageRequest, caller: str,
                           recheck: Callable[[], Any] | None = None) -> dict[str, Any]:
        """``recheck``: the request's credentials checked again (``TaskRecord.recheck``)."""
        record = await self._accept(req, caller, recheck)
        config = req.configuration
        history_length = config.history_length if config else None
        if not (config and config.return_immediately) and record.runner is not None:
            await asyncio.wait({record.runner})  # never raises, even when the task is canceled meanwhile
        return {"task": self._view(record.task, history_length)}

    async def send_streaming_message(self, req: SendMessageRequest, caller: str,
                                     recheck: Callable[[], Any] | None = None) -> EventStream:
        """Start (or resume) the task like SendMessage; the stream is the task, then its updates.

        Errors (bad params, unknown task, a task that takes no input) raise before any event.
        """
        record = await self._accept(req, caller, recheck)
        # no await since the task's status last changed, and its runner has not run yet: subscribing
        # now sees every later event and the snapshot everything before
        return self._stream(record, req.configuration.history_length if req.configuration else None)

    async def subscribe_to_task(self, req: SubscribeToTaskRequest, caller: str) -> EventStream:
        try:
            record = await self.store.held(req.id, caller)
        except HeldElsewhere as e:  # running on another replica: followed through the shared store
            return self._follow(e.record, caller, lambda task: self._view(task, None))
        if record.terminal:  # A2A v1.0 SubscribeToTask: a terminal task is UnsupportedOperationError
            raise RpcError(
                UNSUPPORTED_OPERATION,
                f"Task {req.id} is in terminal state: {record.task.status.state}",
                {"taskId": req.id},
            )
        return self._stream(record, None)

    def _stream(self, record: TaskRecord, history_length: int | None) -> EventStream:
        def snapshot() -> StreamEvent:
            return {"task": self._view(record.task, history_length)}

        return EventStream(self.events.subscribe(record.task.id), snapshot)

    async def _accept(self, req: SendMessageRequest, caller: str,
                      recheck: Callable[[], Any] | None) -> TaskRecord:
        """Create the task and start its work, or hand answers to a task waiting for input."""
        msg = req.message
        if msg.role != "ROLE_USER":
            raise RpcError(INVALID_PARAMS, "Invalid params: message.role must be ROLE_USER")
        if req.configuration is not None and req.configuration.task_push_notification_config is not None:
            # refused, never ignored: a peer that asked to be called back would wait for a call that never
            # comes (the card says pushNotifications false)
            raise RpcError(
                PUSH_NOT_SUPPORTED,
                "Push Notification is not supported: nothing was started; follow the task with GetTask or "
                "SendStreamingMessage",
            )
        planned = msg.task_id or str(uuid.uuid4())  # the task it starts (or continues), named when heard
        known = await self.seen.claim(caller, msg.message_id, planned)
        if known is not None and await self._never_stored(msg, caller, known, planned):
            known = None  # its first hearing stored nothing (failed, or its replica stopped): heard anew now
        try:
            replayed = await self._replayed(msg, caller, known)
            return replayed if replayed is not None else await self._act_on(msg, caller, recheck, planned)
        finally:  # nothing started (an error before the task was stored): a resend may try again
            if known is None:
                await self.seen.release(caller, msg.message_id, planned)

    async def _never_stored(self, msg: Message, caller: str, known: str, planned: str) -> bool:
        if msg.task_id:  # a continued task's messages are found in its history (``_replayed``)
            return False
        try:
            await self.store.find(known, caller)
            return False
        except RpcError as e:
            if e.code != TASK_NOT_FOUND:  # (a store that cannot be read: the row stays as it is)
                raise
            return await self.seen.take_over(caller, msg.message_id, known, planned)

    async def _replayed(self, msg: Message, caller: str, known: str | None) -> TaskRecord | None:
        """The task a message sent before (``known``: its id, as remembered) started or continued: a replay is
        answered with it, never acted on again; None: a new message."""
        if known is None and msg.task_id:  # its task's history outlives the ids remembered (a restart)
            record = await self.store.held(msg.task_id, caller)
            if any(m.message_id == msg.message_id for m in record.task.history or ()):
                return record
            return None
        if known is None:
            return None
        try:
            return await self.store.find(known, caller)
        except RpcError:
            raise RpcError(INVALID_PARAMS, f"Invalid params: message {msg.message_id} was received already "
                           "and its task is not to be found (still being started, or gone): follow the task "
                           "its first sending returns; a new request takes a new messageId") from None

    async def _act_on(self, msg: Message, caller: str, recheck: Callable[[], Any] | None,
                      task_id: str) -> TaskRecord:
        if msg.task_id:
            record = await self.store.held(msg.task_id, caller)
            await self._continue(record, msg, recheck)
            self.seen.settle(caller, msg.message_id, record.task.id)
            return record
        self._watch_expiry()
        await self._expire_waiting()
        record = await self._new_task(msg, caller, task_id)
        record.recheck = recheck
        action = actions.plan(msg, Capabilities.of(self.port), record.task.id)
        if self.store.shared and self._journal is not None:  # leased before anything runs (task_lease.py)
            self.store.add(record, save=False)
            also = self.seen.stored(caller, msg.message_id, task_id)
            try:
                marked = await self._journal.commit(record, also=also)
            except StorageError as e:  # fail closed: nothing runs that the cluster could not see
                self.store.drop(record.task.id)
                raise store_fault("the task store cannot be written, nothing was started", e) from None
            if also and marked[0].rowcount != 1:  # its hearing was taken over meanwhile: that one acts
                self.store.drop(record.task.id)
                self._journal.delete(record.task.id)
                raise RpcError(INVALID_PARAMS, f"Invalid params: message {msg.message_id} was received "
                               "already: follow the task its first sending returns")
        else:
            self.store.add(record)
        self.seen.settle(caller, msg.message_id, record.task.id)  # stored: a replay from now on finds it
        if isinstance(action, Rejection):
            await self._settle(record, "TASK_STATE_REJECTED", action.reason)
        elif isinstance(action, AssistRequest):
            await self._start_assist(record, action, caller)
        elif self._offers(action, caller):
            self._start_offer(record, action)
        else:
            self._start(record, action, answers=None)
        return record

    async def run_design_message(
        self, data: dict[str, Any], caller: str, context_id: str | None, return_immediately: bool = False,
        recheck: Callable[[], Any] | None = None,
    ) -> dict[str, Any]:
        """The WebSocket binding's ``sensor_request``/``tool_call``: one data part, as a SendMessage."""
        message = Message(
            message_id=str(uuid.uuid4()), context_id=context_id, role="ROLE_USER", parts=[Part.of_data(data)]
        )
        req = SendMessageRequest(message=message)
        if return_immediately:
            req.configuration = SendMessageConfiguration(return_immediately=True)
        return await self.send_message(req, caller, recheck)

    async def get_task(self, req: GetTaskRequest, caller: str) -> dict[str, Any]:
        return self._view((await self.store.find(req.id, caller)).task, req.history_length)

    async def list_tasks(self, req: ListTasksRequest, caller: str) -> dict[str, Any]:
        records = await self.store.listed(
            caller, context_id=req.context_id, state=req.status, since=req.status_timestamp_after
        )
        size = req.page_size or 50
        after = decode_page_token(req.page_token)
        start = (
            0
            if after is None
            else next((i for i, r in enumerate(records) if sort_key(r) < after), len(records))
        )
        page = records[start : start + size]
        nxt = encode_page_token(sort_key(page[-1])) if page and start + size < len(records) else ""
        tasks = [self._view(r.task, req.history_length, artifacts=req.include_artifacts) for r in page]
        return ListTasksResponse(
            tasks=[Task.model_validate(t) for t in tasks],
            next_page_token=nxt,
            page_size=size,
            total_size=len(records),
        ).to_wire()

    async def cancel_task(self, req: CancelTaskRequest, caller: str) -> dict[str, Any]:
        for _ in range(2):  # a task running elsewhere that waits for input meanwhile: taken over, then here
            try:
                record = await self.store.held(req.id, caller)
            except HeldElsewhere as e:  # the replica running it cancels it (remote_tasks.py)
                task = await self._cancel_elsewhere(e.record, caller)
                if task is None:
                    continue
                return self._view(task, None)
            break
        else:
            record = await self.store.held(req.id, caller)
        if record.terminal:
            raise RpcError(
                TASK_NOT_CANCELABLE,
                f"Task {req.id} cannot be canceled: it is {record.task.status.state}",
                {"taskId": req.id},
            )
        await self._cancel_here(record)
        return self._view(record.task, None)

    # --- internals ----------------------------------------------------------------------------

    async def _new_task(self, msg: Message, caller: str, task_id: str) -> TaskRecord:
        context_id = msg.context_id or str(uuid.uuid4())
        stored = msg.model_copy(update={"task_id": task_id, "context_id": context_id})
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(state="TASK_STATE_SUBMITTED", timestamp=now_iso()),
            history=[stored],
        )
        # the guard's session: per caller and conversation (and per run of this server, so a restart starts
        # afresh), so peers never share facts by picking an id. Replicas on one store: the same for a caller's
        # context on every replica (a shared row, idle for 12 hours at most: storage/conversation_names.py)
        if self._contexts is None:
            return TaskRecord(task=task, owner=caller, session_id=f"{caller}/a2a-{self.epoch}-{context_id}")
        # whole: the peer names its contexts, and two of one digest would be one conversation (an answer given
        # in one counting in the other)
        digest = hashlib.sha256(context_id.encode("utf-8", "surrogatepass")).hexdigest()
        try:
            session = await self._contexts.session(caller, digest, kind="a2a")
        except StorageError as e:  # fail closed: whose facts the task would use is not known
            raise store_fault("the task store cannot be read, nothing was started", e) from None
        return TaskRecord(task=task, owner=caller, session_id=session)

    async def _continue(self, record: TaskRecord, msg: Message, recheck: Callable[[], Any] | None) -> None:
        task = record.task
        if msg.context_id and msg.context_id != task.context_id:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: contextId {msg.context_id} does not match "
                f"task {task.id} (contextId {task.context_id})",
            )
        async with record.lock:
            if await self._expire_if_waited_out(record):  # past its wait: the sweep may not have run yet
                raise RpcError(UNSUPPORTED_OPERATION,
                               f"Task {task.id} takes no input now: it waited too long", {"taskId": task.id})
            if record.terminal:
                raise RpcError(
                    UNSUPPORTED_OPERATION,
                    f"Task {task.id} is in terminal state: {task.status.state}",
                    {"taskId": task.id},
                )
            if task.status.state not in INTERRUPTED_STATES or record.pending is None:
                raise RpcError(
                    UNSUPPORTED_OPERATION,
                    f"Task {task.id} is {task.status.state}; it takes no "
                    "input now (wait for it, or cancel it)",
                    {"taskId": task.id},
                )
            answers = self._answers(record.pending, msg)
            kept = msg.model_copy(update={"context_id": task.context_id})
            if self.store.holds(record):  # each continuation is kept in the history: in the caller's share
                self.store.grow(record, json_bytes(kept))
            before = task.history
            task.history = [*(task.history or []), kept]
            pending, record.pending = record.pending, None
            try:
                await self._hold_to_run(record)
            except RpcError:
                task.history, record.pending = before, pending
                raise
            call = GuardedCall(pending.kind, pending.tool, pending.arguments)
            # the caller's request now (the same principal, authenticated afresh): its credentials carry on
            record.recheck = recheck
            self._start(record, call, answers=answers, identity=pending.identity)

    async def waiting_for(self, callers: str | Sequence[str]) -> list[TaskRecord]:
        """The callers' tasks waiting for input (the web console's inbox shows them to that principal, the
        owner's every A2A peer's too): held here, and (replicas) those other replicas hold, read in one query
        of at most ``max_tasks`` rows, the first caller's own first (the viewer's: ``TaskJournal.waiting``);
        an answer takes over the round it reads then (``answer_as_user``), never a round only shown."""
        named = [callers] if isinstance(callers, str) else list(dict.fromkeys(callers))
        owners = frozenset(named)
        here = [
            r
            for r in self.store.all_records()
            if r.owner in owners
            and r.pending is not None
            and r.task.status.state in INTERRUPTED_STATES
            and not r.terminal
        ]
        if not self.store.shared or self._journal is None:
            return here
        limit = self.settings.max_tasks
        try:  # the store says which wait now, and where: one held here may have been taken over since
            rows = await self._journal.waiting(named, limit)
        except StorageError as e:  # the inbox shows what this replica holds; nothing is answered unread
            log.warning("A2A: other replicas' tasks waiting for input cannot be read now: %s", e)
            return here
        local = {r.task.id: r for r in here}
        out = [local[r.task.id] if r.task.id in local and not self.store.moved_on(local[r.task.id], r) else r
               for r in rows]
        if len(rows) >= limit:  # (rows cut at the limit: the others held here still shown)
            shown = {r.task.id for r in rows}
            out += [r for r in here if r.task.id not in shown]
        return out

    async def answer_as_user(self, task_id: str, caller: str, answers: dict[str, Answer],
                             still_asks: Callable[[TaskRecord], bool] | None = None) -> None:
        """The principal's own answers, given in Sentinel's console (provenance ``user``): the task resumes.
        ``still_asks``: whether the task asks, under its lock, what the person was shown (the wait for the
        record may span a new round whose questions share the shown ones' keys); if not, nothing is taken.
        """
        record = await self.store.held(task_id, caller)
        async with record.lock:
            await self._expire_if_waited_out(record)  # past its wait: FAILED now, and refused below
            pending = record.pending
            if (record.terminal or pending is None or record.task.status.state not in INTERRUPTED_STATES
                    or (still_asks is not None and not still_asks(record))):
                raise RpcError(
                    UNSUPPORTED_OPERATION, f"Task {task_id} takes no input now", {"taskId": task_id}
                )
            unknown = sorted(set(answers) - set(pending.question_keys))
            if unknown:
                raise RpcError(
                    INVALID_PARAMS, f"Invalid params: no question {', '.join(unknown)} on this task"
                )
            record.pending = None
            try:
                await self._hold_to_run(record)
            except RpcError:
                record.pending = pending
                raise
            given = {k: a.model_copy(update={"provenance": "user"}) for k, a in answers.items()}
            # no request of its caller: the credentials that started it must still hold (read back from the
            # store, only their stamp is here)
            record.recheck = resumed_check(self.authenticator, record, pending)
            call = GuardedCall(pending.kind, pending.tool, pending.arguments)
            self._start(record, call, answers=given, identity=pending.identity)

    def _answers(self, pending: PendingCall, msg: Message) -> dict[str, Answer]:
        raw = actions.answers_in(msg)
        if raw is None:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: this task waits for answers to "
                f"{', '.join(pending.question_keys)}; send a data part "
                '{"answers": {"<key>": {"action": "accept", "content": {...}}}}',
            )
        unknown = sorted(set(raw) - set(pending.question_keys))
        if unknown:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: no question {', '.join(unknown)} on this task; "
                f"asked: {', '.join(pending.question_keys)}",
            )
        answers: dict[str, Answer] = {}
        for key, value in raw.items():
            if not isinstance(value, dict):
                raise RpcError(INVALID_PARAMS, f"Invalid params: answers.{key} must be an object")
            body = {k: v for k, v in value.items() if k != "provenance"}
            try:  # a peer cannot claim to be our user: provenance comes from settings
                answers[key] = Answer.model_validate({**body, "provenance": self.settings.answers_provenance})
            except ValidationError as e:
                raise invalid_params_from(e, prefix=f"answers.{key}") from None
        return answers

    @staticmethod
    def _view(task: Task, history_length: int | None, artifacts: bool = True) -> dict[str, Any]:
        wire = task.to_wire()
        if history_length is not None:
            hist = wire.get("history") or []
            wire["history"] = hist[-history_length:] if history_length > 0 else []
            if not wire["history"]:
                wire.pop("history")
        if not artifacts:
            wire.pop("artifacts", None)
        return wire
