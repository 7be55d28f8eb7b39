"""What admitting one chat costs, step by step: the work the gateway does in its admission
thread before the request goes upstream, timed per step with the library's own calls, in
the order the gateway makes them, in one thread and without a server around it (the
library's background workers run, as in the gateway: turns are captured, a busy key's
vectors are copied into memory).

One client key with N memories (1,000) under the install defaults (keyword recall, up to
2,000 tokens injected: ~100 memories, turn capture on); each chat asks one of Q realistic
questions after a short history (system prompt, an earlier exchange). Steps:

- authenticate: the client key looked up by its secret's hash;
- parse: the request body's JSON;
- route: the provider for the model;
- settings: the memory settings as the gateway reads them per chat;
- recall: what the key remembers for the question (keyword search, ranking, packing
  into the token budget, leaving out what the request already says);
- inject: the memory block written into the outgoing messages;
- encode: the outgoing body's JSON;
- queue turn: the user's turn queued for capture and extraction (one write transaction);
  the gateway makes this write once the request is on its way to the provider, so it
  overlaps the provider's work: the steps before it are what delays the request.

Each question is asked once untimed first (the key's index is built, the lines of the
memories seen are formatted), then `--rounds` times timed; a step's p50 / p99 / mean are
over every timed chat. The sum of the step means is what one chat's admission costs in
CPU, save the thread hop and what other threads do meanwhile.

    python -m bench.admission                      # 1,000 memories, 200 questions, 5 rounds
    python -m bench.admission --memories 10000 --rounds 3
    python -m bench.admission --static --data-dir /tmp/adm   # hybrid with static vectors
    python -m bench.admission --history 100                  # each chat re-sends ~100 KB of history
    python -m bench.admission --quick

With `--history KB`, each chat carries a long conversation before its question (about KB
kilobytes of earlier messages), and the conversation goes on as a client's does: each chat
re-sends the one before it, its answer and a new question, for `TURNS_PER_CONVERSATION`
chats, then a new conversation starts from the same history. What parsing, leaving out
what the request already says, injecting and encoding cost then.

With `--static`, static embeddings are switched on (hybrid: keywords and vectors fused)
and every memory is embedded first; the static model is distilled from the bundled MiniLM
on first use (~20 s, untimed; kept under `--data-dir` for the next run).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import (
    NO_MODEL,
    Latency,
    Report,
    emit,
    log,
    ms,
    parser,
    remove_database,
    table,
    work_dir,
)
from bench.corpus import Picker, chat_message, queries
from bench.gateway import store_memories
from memroute import Memory
from memroute.config import Config
from memroute.memory.turns import last_user_turn, said_in
from memroute.service.turn_queue import ChatTurn

TURNS_PER_CONVERSATION = 20  # with --history: chats of one conversation before the next starts
ANSWER = "Here is what the notes say about it."  # the assistant's answer each chat re-sends
STEPS = ("authenticate", "parse", "route", "settings", "recall", "inject", "encode", "queue turn")
AFTER_SENDING = "queue turn"  # made while the provider works (memroute/gateway/due_turn.py)
MODEL = "echo-1"


@dataclass(frozen=True, slots=True)
class Plan:
    memories: int = 1000
    questions: int = 200
    rounds: int = 5
    static: bool = False  # hybrid recall with static vectors instead of keywords only
    history_kb: int = 0  # earlier messages every chat re-sends, in kilobytes


QUICK = Plan(memories=200, questions=30, rounds=2)


def chat_body(question: str, index: int, history: Sequence[dict[str, str]] = ()) -> bytes:
    """A chat request as a client sends it: a system prompt, an earlier exchange (or
    `history`), the question."""
    earlier = history or [
        {"role": "user", "content": "Can you help me with our deployment notes?"},
        {"role": "assistant", "content": "Of course. What would you like to know?"},
    ]
    return json.dumps(
        {
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "You are a helpful assistant for a software team."},
                *earlier,
                {"role": "user", "content": f"{question} (chat {index})"},
            ],
        }
    ).encode()


def going_on(history: Sequence[dict[str, str]], questions: Sequence[str]) -> list[bytes]:
    """The chats of conversations that go on from `history`: each re-sends the history, its
    conversation's earlier questions with their answers, and its own question; a new
    conversation every `TURNS_PER_CONVERSATION` chats."""
    bodies: list[bytes] = []
    earlier: list[dict[str, str]] = []
    for index, question in enumerate(questions):
        if index % TURNS_PER_CONVERSATION == 0:
            earlier = []
        bodies.append(chat_body(question, index, [*history, *earlier]))
        earlier.append({"role": "user", "content": f"{question} (chat {index})"})
        earlier.append({"role": "assistant", "content": ANSWER})
    return bodies


def conversation(kilobytes: int, seed: int) -> list[dict[str, str]]:
    """Earlier messages of about `kilobytes` KB: the user's chat messages and longer replies."""
    p = Picker(seed)
    messages: list[dict[str, str]] = []
    size = 0
    while size < kilobytes * 1024:
        for role, text in (("user", chat_message(p)), ("assistant", f"{chat_message(p)} {chat_message(p)}")):
            messages.append({"role": role, "content": text})
            size += len(text)
    return messages


def admit_once(memory: Memory, secret: str, raw: bytes, times: dict[str, list[int]] | None) -> int:
    """One admission, step by step as the gateway makes it; each step's time is appended to
    `times` (None: untimed). Returns how many memories were injected."""
    clock = time.perf_counter_ns

    def step(name: str, fn: Callable[[], Any]) -> Any:
        started = clock()
        value = fn()
        if times is not None:
            times[name].append(clock() - started)
        return value

    key = step("authenticate", lambda: memory.keys.authenticate(secret))
    body = step("parse", lambda: json.loads(raw))
    route = step("route", lambda: memory.providers.route(body["model"]))
    settings = step("settings", memory.settings)
    items = step(
        "recall",
        lambda: memory.recall(
            key.id,
            last_user_turn(body)[0] or None,
            "",
            settings=settings,
            record_access=False,
            already_said=said_in(body),
        ),
    )
    outgoing = step("inject", lambda: memory.inject(body, items, route.provider_id, route.model))
    step("encode", lambda: json.dumps({**outgoing, "model": route.model}).encode())
    text, speaker = last_user_turn(body)
    turn = ChatTurn(text, "", speaker, f"req_{len(raw)}", "")
    step("queue turn", lambda: memory.enqueue_turn(key.id, turn, settings=settings))
    return len(items)


def run(plan: Plan, *, seed: int, data_dir: Path | None) -> Report:
    report = Report("Admission, step by step")
    with work_dir(data_dir) as directory:
        db = directory / "admission.db"
        remove_database(db)
        config = Config.for_path(db).with_overrides(
            upstream_base_url="http://127.0.0.1:9/v1", static_cache_dir=directory / "embeddings"
        )
        memory = Memory.open(db, config=config)
        try:
            key, secret = memory.keys.create("admission")
            memory.update_settings(enabled=False)
            store_memories(memory, key.id, plan.memories, seed)
            memory.update_settings(enabled=True, extraction_enabled=True, **NO_MODEL)
            if plan.static:
                memory.update_settings(embedding_source="static", static_enabled=True)
                memory.reindex(wait=True)
            asked = queries(seed + 1, plan.questions)
            if plan.history_kb:
                bodies = going_on(conversation(plan.history_kb, seed + 2), asked)
            else:
                bodies = [chat_body(q, i) for i, q in enumerate(asked)]
            injected = [admit_once(memory, secret, raw, None) for raw in bodies]
            memory.wait_for_extraction()  # the untimed pass's turns are stored, its copies made
            time.sleep(0.5)
            log(f"{plan.memories} memories; {sum(injected) / len(injected):.0f} injected per chat")
            times: dict[str, list[int]] = {name: [] for name in STEPS}
            for _ in range(plan.rounds):
                for raw in bodies:
                    admit_once(memory, secret, raw, times)
        finally:
            memory.close()
    _report(report, plan, times, sum(injected) / len(injected), len(bodies[0]))
    return report


def _report(report: Report, plan: Plan, times: dict[str, list[int]], injected: float, body: int) -> None:
    recall = "hybrid recall with static vectors" if plan.static else "install defaults (keyword recall)"
    report.add(
        f"One key with {plan.memories:,} memories, {recall}, turn capture; "
        f"{plan.questions} questions, each asked once untimed, then {plan.rounds} timed rounds; "
        f"requests of {body / 1024:,.0f} KB; "
        f"{injected:.0f} memories injected per chat on average. One thread, no server (the background "
        "workers run): the sum of the means is one admission's CPU, save the thread hop."
    )
    latencies = {name: Latency(samples) for name, samples in times.items()}
    total = sum(lat.mean for lat in latencies.values())
    rows = [
        [name, ms(lat.p50), ms(lat.p99), ms(lat.mean), f"{lat.mean / total * 100:.0f}"]
        for name, lat in latencies.items()
    ]
    before = total - latencies[AFTER_SENDING].mean
    rows.append(["**before the request leaves**", "—", "—", ms(before), f"{before / total * 100:.0f}"])
    rows.append(["**all steps**", "—", "—", ms(total), "100"])
    report.add(table(["step", "p50 ms", "p99 ms", "mean ms", "share %"], rows))
    report.data = {
        "steps": {name: lat.to_dict() for name, lat in latencies.items()},
        "total_mean_ms": total,
        "before_sending_mean_ms": before,
        "injected_per_chat": injected,
        "plan": {
            "memories": plan.memories,
            "questions": plan.questions,
            "rounds": plan.rounds,
            "static": plan.static,
            "history_kb": plan.history_kb,
        },
        "body_bytes": body,
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--memories", type=int, default=None, help="memories stored for the key (1000)")
    ap.add_argument("--questions", type=int, default=None, help="distinct questions (200)")
    ap.add_argument("--rounds", type=int, default=None, help="timed rounds over the questions (5)")
    ap.add_argument("--static", action="store_true", help="hybrid recall with static vectors")
    ap.add_argument("--history", type=int, default=0, help="KB of earlier messages each chat re-sends (0)")
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    plan = Plan(
        memories=args.memories or plan.memories,
        questions=args.questions or plan.questions,
        rounds=args.rounds or plan.rounds,
        static=args.static,
        history_kb=args.history,
    )
    emit(run(plan, seed=args.seed, data_dir=args.data_dir), args.json)


if __name__ == "__main__":
    main()
