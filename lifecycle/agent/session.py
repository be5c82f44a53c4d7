"""One ACP session of the agent: its ledger and publisher, its current runtime, its prompt lock,
its lanes, and how a prompt and a cancel run. See :mod:`lifecycle.agent` for the rules.

A session is built whole: everything it takes from the client (what the client declared,
:class:`lifecycle.negotiation.ClientState`; its MCP servers; its additional directories, in the
settings) is given to the constructor, and no part is replaced afterwards. Each Claude message is
read once (:func:`lifecycle.agent.messages.read`) and run through the session's lanes
(:mod:`lifecycle.agent.lanes`) by :meth:`_Session.receive`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import structlog
from acp import RequestError
from acp.schema import PromptResponse
from claude_agent_sdk import ClaudeAgentOptions, HookCallback, HookMatcher

from ..acp import SessionPublisher
from ..claude import from_sdk_exception
from ..events import (
    Cancelled,
    Event,
    InternalError,
    PromptStarted,
    QueryError,
    RateLimitWindow,
    Result,
    RuntimeReplaced,
)
from ..intents import text_update
from ..negotiation import ClientState
from .background import OwnTurns
from .child_records import CHILD_EVENTS, ChildRecords
from .compaction import ContextCompaction
from .following import model_switch_hook
from .hold import BackgroundHold
from .imports import warm_first_prompt
from .interrupts import Interruptions
from .lanes import LaneParts, Lanes
from .launch import EarlyCli, cli_options
from .mcp import McpServers
from .messages import ClaudeMessage, Kind, Step, read
from .meter import meter_steps, meter_windows
from .modes import SessionSettings
from .permissions import PermissionBroker
from .prompt import PromptContent
from .question_routes import QuestionRoutes
from .runtime import Launcher, _Runtime
from .startup_failures import startup_failure
from .steering import Steering, SteerNotSent
from .stream import StreamRenderer, TurnUsage
from .subagents import ChildSessions
from .suggestions import PromptSuggestions
from .titles import SessionTitle
from .translate import local_zone, reading_time, runtime_end
from .usage import is_usage_command, parse_usage, usage_markdown

log = structlog.get_logger("lifecycle.agent")


class _Prompt:
    """One ``session/prompt`` request, from its arrival until it is answered."""

    __slots__ = ("cancelled", "turn_id")

    def __init__(self) -> None:
        self.turn_id: str | None = None  # set once ``PromptStarted`` was fed
        self.cancelled = asyncio.Event()


class _Session:
    """One ACP session: its ledger and publisher, its current runtime, its prompt lock.

    Cancellation: every prompt is registered (:class:`_Prompt`) the moment its handler runs,
    before it waits for the prompt lock, for a cancelled turn to wind down or for ``PromptStarted``
    to be fed. ``session/cancel`` marks every registered prompt: one already started is settled
    ``cancelled`` at once (and Claude interrupted), one not started yet notices the mark itself
    (after ``PromptStarted``, before anything is sent to Claude). So a cancel is never lost,
    whatever its timing (ACP: the pending prompt MUST be answered ``cancelled``).
    """

    def __init__(
        self,
        launcher: Launcher,
        session_id: str,
        cwd: str,
        publisher: SessionPublisher,
        conn: Any = None,
        settings: SessionSettings | None = None,
        *,
        client: ClientState | None = None,
        mcp_servers: Any = None,
        early_cli: EarlyCli | None = None,
    ) -> None:
        self.launcher = launcher
        self.config = launcher.config
        self.settings = settings or SessionSettings()
        self.client = client = client or ClientState()  # what the client declared
        self.id = session_id
        self.cwd = cwd
        self.publisher = publisher
        self.renderer = StreamRenderer(cwd, terminal=client.terminal_output, air=client.air, plan=client.plan)
        # the client's MCP servers (mcp.py)
        self.mcp = McpServers(mcp_servers, negotiated=client.negotiated, notices=client.notices)
        # why Claude Code stopped a turn (interrupts.py)
        self.interrupts = Interruptions(session_id, lambda: self.current_turn, self._quiet)
        # every Claude message's path (lanes.py)
        parts = LaneParts(self.renderer, self.mcp, client, interrupts=self.interrupts, settings=self.settings)
        self.lanes = Lanes(parts)
        self.own_turns = self.lanes.get(OwnTurns)  # Claude Code's own turns (background.py)
        self.steering = self.lanes.get(Steering)  # steers of the running turn (steering.py)
        self.compaction = self.lanes.get(ContextCompaction)  # its compactions (compaction.py)
        self.children = self.lanes.get(ChildSessions)  # subagents as child sessions (subagents.py)
        self.child_records = ChildRecords(conn, publisher)  # their ledgers (child_records.py)
        self.suggestions = self.lanes.get(PromptSuggestions)  # the predicted next prompt (suggestions.py)
        self.hold = self.lanes.get(BackgroundHold)  # a prompt held for its background subagents (hold.py)
        # where each permission question is asked, a late one too (question_routes.py)
        self.routes = QuestionRoutes(session_id, self.children, lambda: self.publisher.ledger.flow, self.hold)
        self.permissions = PermissionBroker(
            publisher, self.renderer, self.settings, conn,
            cwd=cwd, on_cancelled=self.cancel, elicitation_form=client.form, routes=self.routes,
        )  # fmt: skip
        self.title = SessionTitle(session_id, self._show_one, self._stored_title)  # titles.py
        self.runtime: _Runtime | None = None
        self.prompt_lock = asyncio.Lock()
        self.prompts: list[_Prompt] = []  # received and not answered yet, in arrival order
        self.current_turn: str | None = None
        self._sent_turn: str | None = None  # the turn whose user message was written to Claude Code
        self._queued_steers: list[tuple[str, PromptContent]] = []  # steers waiting for that write
        self._dropping: set[asyncio.Future[None]] = set()  # cancel_async_message requests in flight
        self.closed = False
        self._started = False  # a runtime was started (or tried): the next one is a replacement
        self._starting = asyncio.Lock()  # held while a runtime starts (a choice waits for it to run)
        self._early: asyncio.Future[None] | None = None  # Claude Code started ahead of the first prompt
        self._early_failure: Exception | None = None  # how that start failed (the first prompt reports it)
        self._meter: asyncio.Future[None] | None = None  # the account's windows, read at a start (meter.py)
        self.early_cli = early_cli  # Claude Code launched for this session before the agent existed
        # Set once a Claude Code of this session answered the SDK's initialize (it started): a
        # request waiting for the start stops there, not at the start's end, which shows what
        # Claude Code reported through the publisher that request may hold (server.py).
        self.connected = asyncio.Event()
        self._skipped = 0  # Claude Code's messages skipped: malformed, or no lane could take them

    async def feed(self, event: Event, *, runtime: int | None = None) -> bool:
        if self.closed:
            return False
        accepted = await self.publisher.feed(event, runtime=runtime)
        await self._withdraw_questions()
        await self.child_records.session_event(event)  # a recovery reaches the children's ledgers
        return accepted

    async def _withdraw_questions(self) -> None:
        """The questions the ledger reports withdrawn (their turn left ``in_turn``: cancel, loss,
        settlement) are withdrawn on the wire."""
        withdrawn = self.publisher.ledger.take_withdrawn()
        if withdrawn:
            await self.permissions.withdraw(withdrawn)

    # -------------------------------------------------------------- what Claude Code sends

    def _quiet(self) -> bool:
        """The turn shows nothing more: the ledger's flow, the one owner of "cancelled"."""
        return self.publisher.ledger.flow == "cancelled"

    def _idle(self) -> bool:
        """No prompt's turn is open in the ledger."""
        return self.publisher.ledger.flow == "idle"

    async def receive(self, message: object, generation: int) -> bool:
        """The runtime's pump hands each SDK message here: it is read once
        (:func:`lifecycle.agent.messages.read`), run through the session's lanes
        (:meth:`lifecycle.agent.lanes.Lanes.run`), and each step sent as one publisher step.
        Returns whether it ended the turn in flight. A malformed message (:attr:`Kind.MALFORMED`),
        or one a lane cannot take (it raises), is logged, counted and skipped: it ends nothing and
        no record is made of it (a result's lane failure is an adapter bug, fed as one)."""
        record = read(message)
        if record.kind is Kind.MALFORMED:
            self._skip(record, reason="unparsable" if record.data.get("unparsable") else "malformed")
            return False
        try:
            steps, ends = self.lanes.run(
                record, turn=self.current_turn, quiet=self._quiet(), prompt_open=not self._idle()
            )
        except Exception as exc:
            if record.kind is not Kind.RESULT:
                self._skip(record, reason=type(exc).__name__)
                return False
            steps, ends = [Step(event=InternalError())], False
            log.error("runtime.event_failed", session_id=self.id, error_type=type(exc).__name__)
        try:
            await self._emit(steps, generation)
        except Exception as exc:  # an adapter bug, not a runtime failure
            log.error("runtime.event_failed", session_id=self.id, error_type=type(exc).__name__)
            with contextlib.suppress(Exception):
                await self.feed(InternalError(), runtime=generation)
            return False
        return ends

    @property
    def skipped_messages(self) -> int:
        """How many of Claude Code's messages this session skipped (:meth:`receive`)."""
        return self._skipped

    def _skip(self, record: ClaudeMessage, *, reason: str) -> None:
        """Log (type and subtype only, never content) and count a message that is skipped."""
        self._skipped += 1
        kind = record.data.get("type") if record.kind is Kind.MALFORMED else record.kind.value
        log.warning("runtime.message_skipped", session_id=self.id, type=kind, subtype=record.subtype,
                    reason=reason, skipped=self._skipped)  # fmt: skip

    async def runtime_ended(self, generation: int, exc: BaseException | None) -> None:
        """The runtime's stream ended (``exc``: how it failed)."""
        current = generation == self.runtime_generation
        quiet = self._quiet() or not current
        if current:
            self.steering.reset()  # nothing of this runtime answers a steer any more
        held = self.hold.take() if current else None  # the held prompt ends with its own result first
        closing = self.children.end_all("unexplained") if current else []  # children stop with it
        closing += [Step(event=held)] if held is not None else []
        if shown := self.compaction.end(quiet=quiet):
            closing.append(Step(shown))
        await self._emit(closing + runtime_end(self.renderer, exc, quiet=quiet), generation)

    async def _emit(self, steps: list[Step], generation: int) -> None:
        """Each step's updates (not from a replaced runtime, which shows nothing), then its event
        (the ledger refuses a replaced runtime's), under one hold of the publisher's lock."""
        current = generation == self.runtime_generation
        for step in steps:
            if self.closed:
                return
            updates = step.updates if current else []
            if isinstance(step.event, RateLimitWindow):
                self.launcher.meter.saw(step.event)  # carried to the agent's next sessions (meter.py)
            if step.session is not None and isinstance(step.event, CHILD_EVENTS):  # the child's own ledger's
                if updates:
                    await self.publisher.emit(updates, None, session_id=step.session)
                await self.child_records.feed(step.session, step.event)
                continue
            await self.publisher.emit(updates, step.event, runtime=generation, session_id=step.session)
        await self._withdraw_questions()

    @property
    def runtime_generation(self) -> int:
        """The generation of the runtime whose events the ledger takes."""
        return self.publisher.ledger.runtime

    # -------------------------------------------------------------- what the turn shows

    async def show(self, updates: list[dict[str, Any]]) -> None:
        """Send transcript updates that are not the ledger's (chunks, tool calls, plan, usage)."""
        if updates and not self.closed:
            await self.publisher.show(updates)

    async def _show_one(self, update: Mapping[str, Any]) -> None:
        await self.show([dict(update)])

    async def _stored_title(self) -> str | None:
        """The title Claude Code stored for this session (generated or a user's ``/rename``)."""
        info = await asyncio.to_thread(sdk_function("get_session_info"), self.id, directory=self.cwd)
        title = getattr(info, "custom_title", None)
        return title if isinstance(title, str) else None

    # -------------------------------------------------------------- starting Claude Code

    def start_failure(self) -> Result | None:
        """Why the background start failed, when Claude Code said it could not start (a request
        that waited for the start fails with it: :mod:`lifecycle.agent.startup_failures`)."""
        return startup_failure(self._early_failure)

    @property
    def starting(self) -> asyncio.Future[None] | None:
        """Claude Code's start in the background (:meth:`start_early`), if one was made."""
        return self._early

    def start_early(self) -> None:
        """Start Claude Code now, in the background, so the first prompt finds it running and the
        editor learns the models and commands it offers. Best effort: a start that fails is
        reported by the first prompt, as its own start would have been."""
        if self._early is None and not self.closed:
            self._early = asyncio.ensure_future(self._start_early())

    async def _start_early(self) -> None:
        try:
            await self._ensure_runtime()
        except Exception as exc:
            log.info("runtime.early_start_failed", session_id=self.id, error_type=type(exc).__name__)
            self._early_failure = exc  # the first prompt reports it (the next start replaces)

    def claude_options(self, *, resume: bool) -> ClaudeAgentOptions:
        """The SDK options of this session's runtime (Claude's environment passes through)."""
        kw = cli_options(
            self.config, self.settings, cwd=self.cwd, session_id=self.id, resume=resume, mcp_servers=self.mcp.config
        )
        kw["can_use_tool"] = self.permissions.can_use_tool
        # The SDK's types predate these hook events (the CLI's: drift guard, tests/agent_drift.json).
        # Why Claude Code stopped a turn (interrupts.py); a model Claude Code switches to by itself
        # (``/model haiku``) follows in the picker (following.py).
        interrupted = cast(HookCallback, self.interrupts.hook)
        switched = cast(HookCallback, model_switch_hook(self.settings, self.show))
        hooks: dict[Any, list[HookMatcher]] = {
            "Interrupt": [HookMatcher(hooks=[interrupted])],
            "PostModelSwitch": [HookMatcher(hooks=[switched])],
        }
        if self.compaction.updates:  # the summary rides on the compaction_update (compaction.py)
            hooks["PostCompact"] = [HookMatcher(hooks=[cast(HookCallback, self.compaction.summary_hook)])]
        kw["hooks"] = hooks
        if self.client.subagents:  # a child session shows its subagent's text (subagents.py)
            kw["forward_subagent_text"] = True
        kw["stderr"] = _forward_stderr if self.config.cli_stderr else _cli_stderr_logger(self.id)
        if self.launcher.route:  # the backend a client set (providers.py)
            kw["env"] = dict(self.launcher.route)
        return ClaudeAgentOptions(**kw)

    async def reroute(self) -> None:
        """A provider change (providers.py), at a turn boundary: the idle Claude Code stops now
        (no loss: a requested stop); the next prompt starts one on the new route, resuming."""
        async with self._starting:
            if self.runtime is not None:
                await self.runtime.close()
                self.runtime = None

    async def ensure_runtime(self) -> _Runtime:
        """The live runtime, starting (or replacing) one when needed (after an early start still
        under way; the failure of an early start is this start's)."""
        early = self._early
        if early is not None and not early.done():
            await asyncio.shield(early)
        failure, self._early_failure = self._early_failure, None
        if failure is not None:
            raise failure
        return await self._ensure_runtime()

    async def _ensure_runtime(self) -> _Runtime:
        async with self._starting:
            return await self._start_runtime()

    async def _start_runtime(self) -> _Runtime:
        rt = self.runtime
        if rt is not None and rt.alive:
            if rt.idle:
                return rt
            log.warning("runtime.stuck", session_id=self.id, generation=rt.generation)
        replacing = self._started
        self._started = True
        if rt is not None:
            await rt.close()
            self.runtime = None
        ledger = self.publisher.ledger
        generation = ledger.runtime + 1 if replacing else ledger.runtime
        resume = await asyncio.to_thread(_has_transcript, self.id, self.cwd)
        options = self.claude_options(resume=resume)
        early, self.early_cli = self.early_cli, None
        client = self.launcher.client(
            options, early, self.permissions.saw_permission_request, prompt_suggestions=self.suggestions.enabled
        )
        new = _Runtime(self.id, generation, client, self.receive, self.runtime_ended)
        log.info("runtime.start", session_id=self.id, generation=generation, resume=resume)
        warm_first_prompt()  # while Claude Code starts, once per process (imports.py)
        await new.start(self.config.connect_timeout)
        self.connected.set()  # Claude Code answered the SDK's initialize: it started
        if replacing:
            # Only now: the old runtime's loss stays active until a working replacement exists.
            await self.feed(RuntimeReplaced())
        # Tagged with the ledger's generation (no event of it has flowed yet: see ``begin``).
        new.generation = ledger.runtime
        self.runtime = new
        new.begin()
        await self._learn(new)
        if self._meter is None or self._meter.done():  # in the background: a prompt never waits for it
            self._meter = asyncio.ensure_future(self._read_meter(new))
        return new

    async def _read_meter(self, rt: _Runtime) -> None:
        """Issue 52.1: the account's windows as a ``usage_update``, before any prompt (meter.py)."""
        try:
            now, memory = reading_time(), self.launcher.meter
            windows = meter_windows(await rt.get_usage(), now)
            await self._emit(meter_steps(windows or memory.recall(now), self.renderer.context()), rt.generation)
        except Exception as exc:  # the meter is best effort: a session never fails for it
            log.info("meter.failed", session_id=self.id, error_type=type(exc).__name__)

    async def _learn(self, rt: _Runtime) -> None:
        """Show what a new Claude Code reports: the mode it is in (``current_mode_update``), its
        models (``config_option_update``) and its slash commands (``available_commands_update``)."""
        try:
            info = await rt.server_info()
        except Exception as exc:
            log.info("runtime.server_info_failed", session_id=self.id, error_type=type(exc).__name__)
            return
        if info is not None:
            self.launcher.offered.saw(info)
        moved = self.settings.learn_mode(info)
        learned = self.settings.learn(info)
        updates: list[dict[str, Any]] = []
        if moved:
            log.info("session.mode_reported", session_id=self.id, mode=self.settings.mode)
            updates.append({"sessionUpdate": "current_mode_update", "currentModeId": self.settings.mode})
        if learned and self.settings.model not in [m["value"] for m in self.settings.models] and self.settings.models:
            log.info("session.model_not_listed", session_id=self.id)
        if moved or learned:
            updates.append({"sessionUpdate": "config_option_update", "configOptions": self.settings.config_options()})
        if learned:
            updates.append({"sessionUpdate": "available_commands_update", "availableCommands": self.settings.commands})
        await self.show(updates)

    # -------------------------------------------------------------- mode, model, effort

    async def set_config(self, config_id: object, value: object) -> None:
        """Check a ``session/set_mode`` or ``session/set_config_option`` choice, apply it to the
        running Claude Code (no restart) and keep it for the next runtime. A Claude Code still
        starting is waited for first (its models are then known, and the choice is applied to it,
        not lost). Raises :class:`SettingsError` (nothing changes) for a choice the session does
        not offer or Claude Code refuses."""
        early = self._early
        if early is not None and not early.done():
            await asyncio.wait({early})  # the early start (its failure is the first prompt's)
        async with self._starting:
            await self.settings.apply(self.runtime, *self.settings.check_config(config_id, value), self.id)

    async def run_prompt(self, content: PromptContent) -> PromptResponse:
        prompt = _Prompt()
        self.prompts.append(prompt)  # before the first await: a cancel from now on sees it
        try:
            return await self._run_prompt(prompt, content)
        finally:
            self.prompts.remove(prompt)

    async def _run_prompt(self, prompt: _Prompt, content: PromptContent) -> PromptResponse:
        held = self.hold.take()
        if held is not None:  # a prompt held for its background subagents is answered first (hold.py)
            log.info("prompt.hold_released", session_id=self.id, reason="next_prompt")
            await self._emit([Step(event=held)], self.runtime_generation)
        await self.prompt_lock.acquire()
        drive: asyncio.Future[None] | None = None
        try:
            rt = self.runtime
            if rt is not None and rt.alive and not prompt.cancelled.is_set():
                # A cancelled turn may still be winding down: its result must arrive (and be
                # dropped) before this turn opens. A runtime stuck past the timeout is replaced.
                # A cancel of this prompt ends the wait (nothing will be sent).
                await _first(rt.wait_idle(self.config.idle_timeout), prompt.cancelled.wait())
            if self.closed:  # replaced by session/load, or shutting down, while this prompt waited
                log.info("prompt.session_closed", session_id=self.id)
                return PromptResponse(stop_reason="cancelled")
            turn_id = str(uuid.uuid4())
            if self.own_turns.running:  # Claude Code's own turn goes on: its text and tool calls stay
                self.renderer.turn_usage = TurnUsage()
            else:
                self.renderer.start_turn()
            await self.feed(PromptStarted(turn_id=turn_id))
            # No await between here and the check: a cancel either saw ``turn_id`` (and settled
            # the turn) or left its mark for this check.
            prompt.turn_id = turn_id
            self.current_turn = turn_id
            self.steering.open()
            log.info("prompt.start", session_id=self.id, turn_id=turn_id)
            try:
                if prompt.cancelled.is_set():
                    log.info("prompt.cancelled_before_start", session_id=self.id, turn_id=turn_id)
                    await self.feed(Cancelled())
                else:
                    drive = asyncio.ensure_future(self._drive(prompt, turn_id, content))
                response = await self._settled(turn_id, drive)
            except RequestError as err:
                log.info("prompt.end", session_id=self.id, turn_id=turn_id, error_code=err.code)
                raise
            finally:
                self.current_turn = None
                self._queued_steers.clear()  # not written: the turn they were for is over
                self.hold.drop()  # answered otherwise (cancelled, lost): its held result is no one's
            log.info("prompt.end", session_id=self.id, turn_id=turn_id, stop_reason=response.stop_reason)
            return response
        finally:
            if drive is None or drive.done():
                self.prompt_lock.release()
            else:  # answered (a cancel) while Claude Code still starts: the next prompt waits for it
                drive.add_done_callback(lambda _: self.prompt_lock.release())

    async def _settled(self, turn_id: str, drive: asyncio.Future[None] | None) -> PromptResponse:
        """The ledger's settlement of the turn, as soon as it exists (a cancel is answered even
        while the runtime is still starting), with the turn's token usage."""
        settled = asyncio.ensure_future(self.publisher.outcome(turn_id, usage=self.renderer.turn_usage))
        try:
            if drive is not None:
                waiting: set[asyncio.Future[Any]] = {drive, settled}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            return await settled
        finally:
            settled.cancel()

    async def _drive(self, prompt: _Prompt, turn_id: str, content: PromptContent) -> None:
        try:
            try:
                rt = await self.ensure_runtime()
            except Exception as exc:
                log.warning("runtime.start_failed", session_id=self.id, error_type=type(exc).__name__)
                # Claude Code said why it could not start: that result settles the turn
                await self.feed(startup_failure(exc) or QueryError(message=type(exc).__name__))
                return
            if prompt.cancelled.is_set():
                return  # cancelled while the runtime was starting: nothing to send
            await self.show(self.suggestions.prompt_sent())  # the prediction shown is spent
            if is_usage_command(content) and await self._usage(rt):
                return  # answered from Claude Code's reading (usage.py); else Claude Code runs it
            try:
                await rt.send(turn_id, content)
                self._sent_turn = turn_id
                while self._queued_steers and self.current_turn == turn_id:  # steered before the write
                    steer_id, steered = self._queued_steers.pop(0)
                    await rt.send(steer_id, steered, priority=self._steer_priority())
            except Exception as exc:
                await self.feed(from_sdk_exception(exc), runtime=rt.generation)
            else:
                self.title.prompt_sent(content, rt.generate_title)
        except Exception as exc:  # an adapter bug: the ledger settles it as an internal error
            log.error("prompt.internal_error", session_id=self.id, error_type=type(exc).__name__)
            with contextlib.suppress(Exception):
                await self.feed(InternalError())

    # -------------------------------------------------------------- steering (steering.py)

    def _steer_priority(self) -> str:
        """``now`` pre-empts the generation in progress; ``later`` while a question to the client
        is open, so its callback is not interrupted (the reference's choice)."""
        return "later" if self.permissions.open_requests > 0 else "now"

    async def steer(self, content: PromptContent) -> str | None:
        """Inject ``content`` into the running turn; its id, or None when no turn runs that a
        steer can join (none open, cancelled, its ending result already in). A turn whose user
        message is not written yet (Claude Code still starting) gets the steer right after it.
        Raises :class:`~lifecycle.agent.steering.SteerNotSent` when Claude Code could not take it
        (it stopped: the turn ends with that loss)."""
        turn = self.current_turn
        if self.closed or turn is None or self._quiet() or self._idle() or not self.steering.running():
            return None
        steer_id = str(uuid.uuid4())
        self.steering.inject(steer_id)  # before the write: its cycle's result may come at once
        if self._sent_turn != turn:
            self._queued_steers.append((steer_id, content))
            log.info("steer.queued", session_id=self.id, turn_id=turn, steer_id=steer_id)
            return steer_id
        rt = self.runtime
        priority = self._steer_priority()
        try:
            if rt is None or not rt.alive:
                raise ConnectionError("Claude Code is gone")
            await rt.send(steer_id, content, priority=priority)
        except Exception as exc:
            self.steering.withdraw(steer_id)
            log.warning("steer.not_sent", session_id=self.id, turn_id=turn, error_type=type(exc).__name__)
            raise SteerNotSent from None
        log.info("steer.injected", session_id=self.id, turn_id=turn, steer_id=steer_id, priority=priority)
        return steer_id

    async def _usage(self, rt: _Runtime) -> bool:
        """``/usage`` (issue 52.3): the reading as Markdown, and the turn's end; False (nothing
        sent) when Claude Code gives no reading this agent can render."""
        usage = parse_usage(await rt.get_usage())
        if usage is None:
            return False
        await self.show([text_update("agent_message_chunk", usage_markdown(usage, local_zone))])
        await self.feed(Result(subtype="success", is_error=False), runtime=rt.generation)
        return True

    async def cancel(self) -> None:
        await self.permissions.withdraw_late()  # no turn owns them: a cancel answers them denied
        if not self.prompts:
            log.info("cancel.no_running_prompt", session_id=self.id)
            return
        started = []
        for prompt in self.prompts:
            prompt.cancelled.set()
            if prompt.turn_id is not None:
                started.append(prompt.turn_id)
        # A prompt not started yet settles itself (see ``_run_prompt``); the running one is
        # settled here, and Claude interrupted.
        for turn in started:
            if turn != self.current_turn:
                continue
            rt = self.runtime
            if rt is not None and rt.alive:
                await self._drop_steers(rt)
            await self.feed(Cancelled())
            self.hold.drop()  # a prompt held for its subagents ends cancelled
            if rt is not None and rt.alive:
                try:
                    await asyncio.wait_for(rt.interrupt(), 10)
                except Exception as exc:  # a timeout too
                    log.warning("runtime.interrupt_failed", session_id=self.id, error_type=type(exc).__name__)

    async def _drop_steers(self, rt: _Runtime) -> None:
        """Before the cancel withdraws the open questions (Claude Code then ends the turn and
        takes its queue) and before the interrupt, the turn's steers Claude Code still has queued
        are dropped: a ``later`` steer would otherwise run after the cancel, a model request for a
        cancelled turn (the reference's ``dropQueuedMessages``). The requests are written now and
        their answers not awaited (a wedged Claude Code must not hold up the cancel); a steer
        Claude Code already took runs on, and shows nothing."""
        for steer_id in self.steering.pending:
            task = asyncio.ensure_future(self._drop_steer(rt, steer_id))
            self._dropping.add(task)
            task.add_done_callback(self._dropping.discard)
        await asyncio.sleep(0)  # the requests' writes start before the cancel's own

    async def _drop_steer(self, rt: _Runtime, steer_id: str) -> None:
        try:
            dropped = await asyncio.wait_for(rt.drop_queued(steer_id), 10)
        except Exception as exc:  # a timeout too
            log.warning("steer.drop_failed", session_id=self.id, steer_id=steer_id, error_type=type(exc).__name__)
            return
        if dropped and self.steering.dropped(steer_id):
            rt.turn_over()  # the cancelled turn's result came while the steer was still queued
        log.info("steer.dropped", session_id=self.id, steer_id=steer_id, dropped=dropped)

    async def cancel_child(self, child_id: str) -> None:
        """``session/cancel`` of a child session of this one (:mod:`lifecycle.agent.subagents`):
        Claude Code stops that subagent (its end, ``cancelled``, comes as its task's end); the
        parent's turn goes on. Any other id (unknown, a child that ended) changes nothing."""
        rt = self.runtime
        if not self.children.running(child_id) or rt is None or not rt.alive:
            return
        log.info("subagent.cancel", session_id=self.id, child_id=child_id)
        self.routes.stopping(child_id)
        await self.permissions.withdraw_late(child_id)
        try:
            await asyncio.wait_for(rt.stop_task(child_id), 10)
        except Exception as exc:  # a timeout too: the child's end says what became of it
            log.warning("subagent.cancel_failed", session_id=self.id, error_type=type(exc).__name__)

    async def close(self) -> None:
        if self._meter is not None and not self._meter.done():
            self._meter.cancel()
        early = self._early
        if early is not None and not early.done():
            early.cancel()
            with contextlib.suppress(BaseException):
                await early
        if self.early_cli is not None:  # no runtime took it
            self.early_cli.discard("session_closed")
            self.early_cli = None
        for prompt in self.prompts:
            prompt.cancelled.set()
        if not self.closed:  # its running children end with it (subagents.py, issue 51.6)
            with contextlib.suppress(Exception):
                await self._emit(self.children.end_all("cancelled"), self.runtime_generation)
        if self.current_turn is not None and not self.closed:
            # The session is going away (replaced by session/load, or shutdown): the running
            # prompt still gets its answer.
            with contextlib.suppress(Exception):
                await self.feed(Cancelled())
        self.closed = True
        await self.title.close()
        await self.permissions.withdraw()
        if self.runtime is not None:
            await self.runtime.close()
            self.runtime = None


async def _first(*aws: Awaitable[Any]) -> None:
    """Wait until the first of ``aws`` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def sdk_function(name: str) -> Any:
    """``claude_agent_sdk``'s session function ``name``, looked up on :mod:`lifecycle.agent` so a
    test (or an embedder) can replace it there."""
    return getattr(sys.modules[__package__ or "lifecycle.agent"], name)


def _has_transcript(session_id: str, cwd: str) -> bool:
    return sdk_function("get_session_info")(session_id, directory=cwd) is not None


def _forward_stderr(line: str) -> None:
    sys.stderr.write(line if line.endswith("\n") else line + "\n")


def _cli_stderr_logger(session_id: str) -> Callable[[str], None]:
    # Claude Code's stderr is not ours to print (it may hold anything); only its presence is
    # logged unless ``--cli-stderr`` asks for the lines themselves.
    def note(line: str) -> None:
        log.debug("runtime.cli_stderr", session_id=session_id, chars=len(line))

    return note
