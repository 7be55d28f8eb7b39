"""Putting chat turns on the durable extraction queue (the worker learns from them later).

A text is queued only when there is something to learn from it: it is kept as an episode
(capture on, and it says more than "ok" or "thanks"), or it states a fact (a user message
with a statement lead such as "I prefer" or "my …"). Most chat turns then cost one
write and no more. A secret is never written, not even to the queue: texts are redacted
first, and NUL, lone surrogates and control characters are dropped (a chat never fails
on them). While the database is full the turns are held in this process and queued by
the worker once there is room (no job ids are returned then).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memroute.memory import turns, validate
from memroute.memory.extraction import may_state_facts
from memroute.service.held_turns import HeldTurn, HeldTurns

CAPTURE_MODES = ("off", "user", "all")


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One exchange of a chat request: the user's last message (and who said it), the
    assistant's reply, the request and session it belongs to."""

    user_text: str
    reply: str = ""
    speaker: str = ""
    request_id: str = ""
    session_id: str = ""


class TurnQueue:
    def __init__(
        self,
        held: HeldTurns,
        *,
        redact: Callable[[str], str],
        max_bytes: int,
        now: Callable[[], str],
        notify: Callable[[], None],
    ) -> None:
        """`max_bytes`: only the last this many characters of a text are kept; `notify()`
        wakes the worker after a write."""
        self._held = held
        self._redact = redact
        self._max_bytes = max_bytes
        self._now = now
        self._notify = notify

    def _tail(self, text: str) -> str:
        return text[-self._max_bytes :]

    def _clean(self, text: str) -> str:
        return self._redact(validate.without_refused_chars(self._tail(text)))

    def queue_turn(self, owner: str, turn: ChatTurn, *, capture: str, facts: bool) -> list[int]:
        """Queue what `turn` can teach: the user's message as an episode (`capture` user or
        all) and for facts (`facts`), the reply as the assistant's episode (`capture` all).
        Chat turns are not `durable` (see `JobStore`): a chat's admission waits while its
        user message is queued."""
        now = self._now()
        pending: list[HeldTurn] = []
        user = turn.user_text if isinstance(turn.user_text, str) else ""
        keep = capture in ("user", "all") and turns.says_something(self._tail(user))
        learn = facts and may_state_facts(self._tail(user))
        if keep or learn:
            pending.append(
                HeldTurn(
                    owner,
                    turn.session_id,
                    "user_message",
                    self._clean(user),
                    now,
                    request_id=turn.request_id,
                    speaker=turn.speaker,
                    capture=keep,
                    facts=learn,
                    durable=False,
                )
            )
        reply = turn.reply if isinstance(turn.reply, str) else ""
        if capture == "all" and turns.says_something(self._tail(reply)):
            pending.append(
                HeldTurn(
                    owner,
                    turn.session_id,
                    "llm_response",
                    self._clean(reply),
                    now,
                    request_id=turn.request_id,
                    capture=True,
                    facts=False,
                    durable=False,
                )
            )
        return self._write(pending)

    def queue_texts(self, owner: str, texts: Sequence[tuple[str, str]], session: str) -> list[int]:
        """Queue (text, source) pairs for fact extraction only; a reply (`llm_response`)
        never states facts about the user, so only user messages with a statement lead
        are queued."""
        now = self._now()
        pending = [
            HeldTurn(owner, session, source, self._clean(text), now)
            for text, source in texts
            if source == "user_message"
            and isinstance(text, str)
            and may_state_facts(text[-self._max_bytes :])
        ]
        return self._write(pending)

    def _write(self, pending: list[HeldTurn]) -> list[int]:
        if not pending:
            return []
        job_ids = self._held.queue(pending)  # one transaction; held in this process when full
        self._notify()
        return job_ids
