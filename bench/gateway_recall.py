"""What recall costs a chat, per search setting, in one running gateway.

One memroute server process (as `memroute serve` runs it) in front of the echo upstream,
one client key with N memories (1,000), the `openai` SDK sending the same realistic
questions. The cases are memory settings switched through the library on the same
database (the server sees a change at once), in blocks of `--block` chats, the order
rotated every round, so the drift of a shared VM hits every case alike:

- off: `enabled=false` (authentication, routing, forwarding);
- keywords: keyword recall (the bundled model off), turn capture, extraction;
- keywords without extraction: the same without extraction and capture (what learning costs);
- minilm: the install defaults (hybrid recall with the bundled MiniLM, capture, extraction);
- minilm without extraction: the same without extraction (no new memories to embed);
- static: static embeddings switched on (hybrid: vectors and keywords fused), as the
  install defaults otherwise;
- static without extraction: the same without extraction (no new memories to embed).

Per case: p50 / mean latency of the whole chat and the gateway's CPU per chat (from
`/proc`, the blocks' sum, so background work a chat causes counts). The static model is
distilled from the bundled MiniLM on first use, in the gateway (~20 s, untimed); with
`--data-dir` it is kept for the next run. Each case's untimed first chats load what it
needs, and the memories are embedded (for the minilm and static cases) before timing.

    python -m bench.gateway_recall                 # 150 chats per block, 6 rounds
    python -m bench.gateway_recall --block 100 --rounds 4 --cases off,keywords
    python -m bench.gateway_recall --quick
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import Report, emit, log, ms, parser, remove_database, table, work_dir
from bench.corpus import queries
from bench.gateway import client, launch, messages, store_memories
from memroute import Memory


def _case(search: str, *, extraction: bool = True) -> dict[str, Any]:
    """Memory on, searching by `search` (keywords, minilm or static), learning or not."""
    return {
        "enabled": True,
        "extraction_enabled": extraction,
        "embedding_source": "static" if search == "static" else "auto",
        "static_enabled": search == "static",
        "transformers_enabled": search == "minilm",
    }


CASES: dict[str, dict[str, Any]] = {
    "off": {"enabled": False, "transformers_enabled": False, "static_enabled": False},
    "keywords": _case("keywords"),
    "keywords without extraction": _case("keywords", extraction=False),
    "minilm": _case("minilm"),  # the install defaults
    "minilm without extraction": _case("minilm", extraction=False),
    "static": _case("static"),
    "static without extraction": _case("static", extraction=False),
}


def embedded(side: Memory, settings: dict[str, Any], timeout_s: float = 300.0) -> None:
    """With an embedding source in `settings`, wait until no memory waits for a vector (the
    gateway embeds them in the background); without one they wait for good."""
    if not (settings.get("transformers_enabled") or settings.get("static_enabled")):
        return
    deadline = time.monotonic() + timeout_s
    while side.engine_status().vector_store.needs_reindex and time.monotonic() < deadline:
        time.sleep(0.1)


def run(
    cases: Sequence[str], *, block: int, rounds: int, memories: int, seed: int, data_dir: Path | None
) -> Report:
    with work_dir(data_dir) as directory:
        db = directory / "gateway-recall.db"
        remove_database(db)
        side = Memory.open(db, start_workers=False)
        try:
            key, secret = side.keys.create("bench")
            side.update_settings(**CASES["off"])  # no model loaded at start
            store_memories(side, key.id, memories, seed)
            texts = queries(seed + 8, block * rounds * len(cases) + 50)
            latency: dict[str, list[float]] = {case: [] for case in cases}
            cpu: dict[str, float] = dict.fromkeys(cases, 0.0)
            with (
                launch("echo", in_process=False) as upstream,
                launch("gateway", in_process=False, db=db, upstream_url=upstream.url) as gateway,
            ):
                chat = client(gateway.url, secret)
                for case in cases:  # untimed: loads what each case needs (the static model)
                    side.update_settings(**CASES[case])
                    for text in texts[:10]:
                        chat.chat.completions.create(model="echo-1", messages=messages(text))
                    embedded(side, CASES[case])
                used = 50
                for r in range(rounds):
                    order = [*cases[r % len(cases) :], *cases[: r % len(cases)]]
                    for case in order:
                        side.update_settings(**CASES[case])
                        chat.chat.completions.create(model="echo-1", messages=messages(texts[0]))
                        embedded(side, CASES[case])  # a change of source re-embeds every memory
                        time.sleep(0.15)  # the previous block's background work ends
                        before = gateway.cpu_s() or 0.0
                        for text in texts[used : used + block]:
                            start = time.perf_counter_ns()
                            chat.chat.completions.create(model="echo-1", messages=messages(text))
                            latency[case].append((time.perf_counter_ns() - start) / 1e6)
                        time.sleep(0.15)  # and this block's is counted
                        cpu[case] += (gateway.cpu_s() or 0.0) - before
                        used += block
                    log(f"round {r + 1}/{rounds} done")
        finally:
            side.close()
    chats = block * rounds
    rows = [
        [
            case,
            ms(statistics.median(latency[case])),
            ms(statistics.fmean(latency[case])),
            ms(1000 * cpu[case] / chats),
        ]
        for case in cases
    ]
    report = Report("Recall's cost per chat, one gateway")
    report.add(
        f"{memories:,} memories for the key; {rounds} rounds of {block} chats per case, the cases "
        "switched by settings in one gateway process, the order rotated every round. Milliseconds."
    )
    report.add(table(["case", "p50", "mean", "gateway CPU per chat"], rows))
    report.data = {
        case: {
            "p50_ms": statistics.median(latency[case]),
            "mean_ms": statistics.fmean(latency[case]),
            "cpu_ms": 1000 * cpu[case] / chats,
        }
        for case in cases
    }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--block", type=int, default=150, help="chats per case per round (150)")
    ap.add_argument("--rounds", type=int, default=6, help="rounds (6)")
    ap.add_argument("--memories", type=int, default=1000, help="memories stored for the key (1000)")
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated cases ({','.join(CASES)})")
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}: choose from {', '.join(CASES)}")
    block, rounds, memories = (10, 2, 100) if args.quick else (args.block, args.rounds, args.memories)
    emit(
        run(cases, block=block, rounds=rounds, memories=memories, seed=args.seed, data_dir=args.data_dir),
        args.json,
    )


if __name__ == "__main__":
    main()
