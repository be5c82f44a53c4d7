"""Claude Code's own turns: the work it starts with no prompt, such as the turn that reacts to a
background task's notification (a ``run_in_background`` Bash that exited, a background subagent
that finished), told apart from the prompt's turn and shown without being taken for it.

Rules
-----
* A ``result`` is Claude Code's own when its ``origin`` kind is one the reference adapter 0.101.0
  calls autonomous (:data:`OWN_ORIGINS`: ``task-notification``, ``peer``, ``coordinator``,
  ``observer``, ``observer-activity``) and its ``user_message_uuids`` do not name the prompt in
  flight (a prompt Claude Code folded into its own turn owns that turn: the reference's
  ``answersPendingPrompt``). Any other result, one without an origin included, is the prompt's
  (fail open, as the reference: a prompt's result taken for Claude Code's would hang the prompt).
* Any other message of a turn (stream events, assistant and user messages, ``api_retry``) is
  Claude Code's own when the CLI marks its requests (``request_marker_lists_v1`` in the ``init``
  capabilities) and either no prompt is in flight, or an own turn is under way (work came while
  no prompt was in flight, or a ``status: requesting`` frame named no prompt) and Claude Code has
  not taken the prompt yet: since the last result, no message named it (a ``requesting`` frame's
  ``user_message_uuids``, a message's ``user_message_uuid(s)``). Anything else is the prompt's
  (fail open: a prompt's failure that comes before any request, such as a login request, stays
  the prompt's). A CLI without the markers: every message is the prompt's, as before.
* What an own turn shows reaches the editor as it comes, as the reference shows it: chunks and
  tool calls in the session, after the prompt that was answered before it, never in a
  ``PromptResponse``; a cancelled prompt's quiet does not hide it.
* Its events: while no prompt is open (the ledger's flow is ``idle``) they are judged as they
  are (the ledger then takes them as the session's: a real answer recovers, a failure is a
  background failure, a result outside a turn is only noted). While a prompt is open, its turn
  events (:data:`lifecycle.agent.translate.TURN_EVENTS`) are not fed: the ledger has no lane for
  them and would take them for the prompt's (answer it, hold its failure, settle it); the text
  such an event carries that did not stream is shown as a chunk instead, so nothing is lost.
* An own result ends nothing of the prompt's: not the turn in flight (the runtime stays busy),
  no tokens counted in a prompt's ``usage``; it closes the own turn's tool calls left open (not a
  background subagent's, which end with their own results) and gives its ``usage_update``
  (context, cost), as the reference reports an autonomous result's usage separately.

Theory of operation
-------------------
:class:`OwnTurns` is the first lane (:data:`lifecycle.agent.lanes.LANES`): sans-I/O state the
session keeps per runtime stream. :meth:`OwnTurns.owns` is asked once per message, before any
other lane, with the id of the prompt in flight (None between prompts), and sets the pass's
``own``; the translation lane then translates an own message
(:func:`lifecycle.agent.translate.own_steps`: never quiet, its turn events detached as above).
:attr:`OwnTurns.running` tells the prompt path that an own turn is under way, so a prompt that
starts then keeps its streamed text and tool calls (the renderer's turn is not reset under it).
"""

from __future__ import annotations

from typing import Final

from .messages import ClaudeMessage, Kind, LaneParts, Pass, Step

__all__ = ["MARKERS", "OWN_ORIGINS", "OwnTurns"]

#: Result origins of a turn Claude Code started by itself (the reference's AUTONOMOUS_RESULT_ORIGINS).
OWN_ORIGINS: Final = frozenset({"task-notification", "peer", "coordinator", "observer", "observer-activity"})
#: The ``init`` capability of a CLI whose requests name the prompts they serve.
MARKERS: Final = "request_marker_lists_v1"
_WORK: Final = frozenset({Kind.STREAM, Kind.ASSISTANT, Kind.USER})


class OwnTurns:
    """Which of Claude Code's messages belong to a turn no prompt started (see the module)."""

    def __init__(self) -> None:
        self.markers = False  # the CLI names the prompts its requests serve
        self.taken: str | None = None  # the prompt Claude Code works on (named since the last result)
        self.running = False  # an own turn showed work and its result has not come

    @classmethod
    def build(cls, parts: LaneParts) -> OwnTurns:
        return cls()

    def run(self, p: Pass) -> list[Step]:
        """The lane (:mod:`lifecycle.agent.lanes`): sets ``p.own``, shows nothing; a message of a
        turn that shows nothing more is never an own turn's (it is the cancelled turn's)."""
        p.own = self.owns(p.message, p.turn) and not p.quiet
        return []

    def owns(self, message: ClaudeMessage, turn: str | None) -> bool:
        """Whether ``message`` is Claude Code's own (``turn``: the prompt in flight, or None)."""
        kind = message.kind
        if kind is Kind.RESULT:
            own = message.origin in OWN_ORIGINS and (turn is None or turn not in message.names)
            if not own:
                self.taken = None
            self.running = False
            return own
        subtype = message.subtype if kind is Kind.SYSTEM else None
        data = message.data
        if subtype == "init":
            capabilities = data.get("capabilities")
            self.markers = isinstance(capabilities, list) and MARKERS in capabilities
        named = message.names
        if turn is not None and turn in named:
            self.taken = turn
        if subtype == "status" and data.get("status") == "requesting" and not named:
            self.running = self.markers  # Claude Code asks the model for no prompt: its own turn
        work = kind in _WORK or subtype == "api_retry"
        if not self.markers or not work:
            return False
        if turn is not None and (self.taken == turn or not self.running):
            return False  # the prompt's, or nothing shows an own turn (fail open)
        if message.parent_tool_use_id is None:
            self.running = True
        return True
