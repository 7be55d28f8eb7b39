"""Fact extraction: `extract_facts_from_text` latency, and the queue's throughput.

Texts:
- realistic: 64 KiB of chat-like prose, a first-person statement every 3–6 sentences;
- worst case: 64 KiB with a statement in every sentence;
- adversarial (informational): 64 KiB of leads without any boundary ("I prefer I prefer …",
  "I prefer thing1 I prefer thing2 …"), the inputs that cost the most per byte.

Queue: chat messages (a few sentences, 0–3 statements) and 64 KiB texts go through
`enqueue_extraction` and the worker thread until `wait_for_extraction` returns
("live"), and through a backlog drained by the worker loop alone ("drain").

    python -m bench.extraction                       # 30 texts × 3 runs, 2000 messages, 50 big texts
    python -m bench.extraction --texts 50 --messages 5000 --big 100
    python -m bench.extraction --quick
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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
    table,
    time_calls,
    verdict,
    work_dir,
)
from bench.corpus import Picker, chat_message, prose
from bench.dataset import owner_ids
from memroute import Memory
from memroute.memory.extraction import extract_facts_from_text
from memroute.models.wire import to_wire

TEXT_BYTES = 64 * 1024
TARGET_MS = 20.0


def _texts(seed: int, count: int, every: tuple[int, int]) -> list[str]:
    return [prose(seed + i, TEXT_BYTES, statement_every=every) for i in range(count)]


def _adversarial() -> dict[str, str]:
    return {
        "adversarial: “I prefer ” × 7,281, no punctuation": ("I prefer " * 8000)[:TEXT_BYTES],
        "adversarial: “I prefer thingN ” × 3,500": " ".join(f"I prefer thing{i}" for i in range(6000))[
            :TEXT_BYTES
        ],
    }


def bench_function(seed: int, n_texts: int, repeats: int) -> list[tuple[str, Latency, float, bool]]:
    """(label, latency, facts per text, has target) per text kind."""
    out = []
    for label, every in (
        ("realistic (statement every 3–6 sentences)", (3, 6)),
        ("worst case (statement in every sentence)", (1, 1)),
    ):
        texts = _texts(seed, n_texts, every)
        facts = sum(len(extract_facts_from_text(t)) for t in texts) / len(texts)
        log(f"extract_facts_from_text: {label}")
        out.append((label, time_calls(extract_facts_from_text, texts * repeats, warmup=2), facts, True))
    for label, text in _adversarial().items():
        log(f"extract_facts_from_text: {label}")
        facts = len(extract_facts_from_text(text))
        out.append((label, time_calls(extract_facts_from_text, [text] * 3, warmup=0), facts, False))
    return out


def _queue_run(path: Path, texts: list[str], owners: list[str], *, live: bool) -> dict[str, Any]:
    """Enqueue every text, then wait until the worker has stored every fact."""
    mem = Memory.open(path, start_workers=live)
    mem.update_settings(**NO_MODEL)  # no vectors embedded beside the extraction
    try:
        clock = time.perf_counter_ns
        enqueue = []
        start = clock()
        for i, text in enumerate(texts):
            t = clock()
            mem.enqueue_extraction(owners[i % len(owners)], text, session_id=f"s{i % 50}")
            enqueue.append(clock() - t)
        queued = clock()
        if not mem.wait_for_extraction(timeout=3600):
            raise RuntimeError("extraction queue did not drain")
        done = clock()
        stored = mem.stats().total
        pending = to_wire(mem.extraction_queue())
    finally:
        mem.close()
    seconds = (done - start) / 1e9 if live else (done - queued) / 1e9
    return {
        "texts": len(texts),
        "seconds": seconds,
        "per_s": len(texts) / seconds,
        "enqueue": Latency(enqueue),
        "memories": stored,
        "left": pending,
    }


def bench_queue(seed: int, n_messages: int, n_big: int) -> list[tuple[str, str, dict[str, Any]]]:
    p = Picker(seed)
    messages = [chat_message(p) for _ in range(n_messages)]
    big = _texts(seed + 100, n_big, (3, 6))
    owners = owner_ids(seed + 3, 20)
    out = []
    with work_dir(None) as tmp:
        for label, texts in (
            (f"chat messages (~{sum(map(len, messages)) // len(messages)} chars)", messages),
            ("64 KiB texts", big),
        ):
            for live in (True, False):
                mode = "live" if live else "drain"
                log(f"queue: {label}, {mode}")
                out.append((label, mode, _queue_run(tmp / f"q-{len(out)}.db", texts, owners, live=live)))
    return out


def bench_stall(seed: int, rounds: int) -> list[tuple[str, Latency]]:
    """How long an API write (`mem.add`) waits while the worker processes one queued text.

    The worker holds the single writer lock for the whole job, so a write issued
    just after a text was queued waits for that job to finish."""
    texts = {
        "idle worker (baseline)": None,
        "64 KiB realistic text being extracted": _texts(seed + 200, 1, (3, 6))[0],
        "64 KiB adversarial text being extracted": next(iter(_adversarial().values())),
    }
    owner = owner_ids(seed + 4, 1)[0]
    out = []
    with work_dir(None) as tmp:
        mem = Memory.open(tmp / "stall.db", start_workers=True)
        mem.update_settings(**NO_MODEL)
        try:
            for label, text in texts.items():
                log(f"writer stall: {label}")
                samples = []
                n = 2 if text is not None and "adversarial" in label else rounds
                for i in range(n):
                    if text is not None:
                        mem.enqueue_extraction(owner, text)
                        time.sleep(0.002)  # let the worker pick the job up
                    start = time.perf_counter_ns()
                    mem.add(owner, f"stall probe {label} {i}")
                    samples.append(time.perf_counter_ns() - start)
                    mem.wait_for_extraction(timeout=600)
                out.append((label, Latency(samples)))
        finally:
            mem.close()
    return out


def report(
    fn: list[tuple[str, Latency, float, bool]],
    queue: list[tuple[str, str, dict[str, Any]]],
    stall: list[tuple[str, Latency]],
) -> Report:
    rep = Report("Extraction")
    rows, data = [], {}
    for label, lat, facts, gated in fn:
        target = f"≤ {TARGET_MS:g} ms: {verdict(lat.p99 <= TARGET_MS)}" if gated else "—"
        rows.append([label, lat.n, ms(lat.p50), ms(lat.p99), ms(lat.mean), f"{facts:,.0f}", target])
        data[label] = {**lat.to_dict(), "facts": facts}
    rep.add(
        f"`extract_facts_from_text(text)` on {TEXT_BYTES // 1024} KiB texts; times in ms "
        "(the target is read as p99 ≤ 20 ms)."
    )
    rep.add(table(["text", "n", "p50", "p99", "mean", "facts/text", "target"], rows))
    qrows = []
    for label, mode, res in queue:
        enq = res["enqueue"]
        qrows.append(
            [
                label,
                mode,
                f"{res['texts']:,}",
                f"{res['per_s']:,.0f}",
                f"{res['memories']:,}",
                f"{ms(enq.p50)} / {ms(enq.p99)}",
                res["left"]["pending"] + res["left"]["failed"],
            ]
        )
        data[f"queue/{label}/{mode}"] = {k: v for k, v in res.items() if k not in ("enqueue", "left")} | {
            "enqueue": enq.to_dict()
        }
    rep.add(
        "Queue: `enqueue_extraction` + worker until `wait_for_extraction()` returns. *live*: the "
        "worker thread runs while texts are queued (time from first enqueue to idle); *drain*: a "
        "backlog queued with no worker, then drained by the worker loop (drain time only)."
    )
    rep.add(
        table(
            ["texts", "mode", "count", "texts/s", "memories stored", "enqueue p50 / p99 ms", "left in queue"],
            qrows,
        )
    )
    rep.add(
        "Writer stall: latency of one `mem.add` issued 2 ms after a text was queued, while the "
        "worker thread processes it (times in ms)."
    )
    rep.add(
        table(
            ["worker is busy with", "n", "p50", "max"],
            [[label, lat.n, ms(lat.p50), ms(lat.max)] for label, lat in stall],
        )
    )
    for label, lat in stall:
        data[f"stall/{label}"] = lat.to_dict()
    rep.data = data
    return rep


def run(*, seed: int, n_texts: int, repeats: int, n_messages: int, n_big: int) -> Report:
    return report(
        bench_function(seed, n_texts, repeats),
        bench_queue(seed, n_messages, n_big),
        bench_stall(seed, rounds=10 if n_texts > 5 else 3),
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=30, help="distinct 64 KiB texts per kind (default 30)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs over each text (default 3)")
    ap.add_argument(
        "--messages", type=int, default=2_000, help="chat messages through the queue (default 2000)"
    )
    ap.add_argument("--big", type=int, default=50, help="64 KiB texts through the queue (default 50)")
    args = ap.parse_args(argv)
    if args.quick:
        args.texts, args.repeats, args.messages, args.big = 5, 1, 100, 5
    emit(
        run(
            seed=args.seed, n_texts=args.texts, repeats=args.repeats, n_messages=args.messages, n_big=args.big
        ),
        args.json,
    )


if __name__ == "__main__":
    main()
