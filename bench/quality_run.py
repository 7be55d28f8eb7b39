"""Retrieval quality: recall@5, @10, @20 and MRR@10 of each retrieval mode on each quality set
(bench/quality_sets.py: `paraphrase`, one key of hand-written facts; `conversations`, ten chats
kept turn by turn, one key each; `many-keys`, 40 chats of different lengths, one key each;
`threads`, eight long chats where names and rare words carry the answers).

Modes: `exact` (newest first, a baseline), `fts` (semantic strategy with no vector source: FTS5
keywords only), `no-model` (the install's settings with the bundled model off: keyword matches
fused with the key's meanings, then the newest facts; "default" before the tenth session of
2026-12-05), then `vector:S` and `hybrid:S` for each embedding source S. The install's
settings are `hybrid:transformers` (the bundled MiniLM). A mode whose source fails to load or
to index is reported as unavailable and the run goes on.

    python -m bench.quality_run                                  # sources hashing,static,transformers
    python -m bench.quality_run --sources transformers --sets conversations
    python -m bench.quality_run --sources static --json quality.json
    python -m bench.quality_run --sources ""                     # exact, fts and no-model only
    python -m bench.quality_run --no-speakers                    # no memory says who said it

Each mode's ms/query includes embedding the query: the query-embedding cache is cleared after the
warm-up query. Without the Hugging Face Hub the static source distils a model from the local
MiniLM (~40 s); set MEMORY_STATIC_CACHE_DIR to keep it between runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import NO_MODEL, log, machine, machine_markdown, table
from bench.opened import BenchMemory, open_bench
from bench.quality_sets import ID_FIELD, SETS, QualitySet, SetQuestion, recall_at, reciprocal_rank
from memroute import Memory
from memroute.config import Config
from memroute.memory.lines import LineDeduper, render
from memroute.models.records import RetrievedItem
from memroute.models.wire import to_wire

DEFAULT_SOURCES = "hashing,static,transformers"
LIMIT = 20
KS = (5, 10, 20)
MAX_TOKENS = 16000
VECTOR_TIERS = frozenset({"vector", "qdrant", "hybrid-rrf"})
MEANINGS = "meanings"  # the meaning tier alone (a mode, not a strategy)

Setup = Callable[[BenchMemory], dict[str, Any] | None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def open_filled(directory: Path, qset: QualitySet, database_url: str | None = None) -> BenchMemory:
    """A fresh database holding every memory of the set under its owner key, no model on
    (a group that needs one switches it on and embeds everything at once): an SQLite file,
    or a database made afresh on the PostgreSQL server at `database_url`."""
    config = Config.for_path(directory / "q.db")
    if database_url is not None:
        from bench.postgres import fresh_database

        config = config.with_overrides(database_url=fresh_database(database_url, "quality"))
    mem = open_bench(config=config, start_workers=False)
    mem.update_settings(**NO_MODEL)
    for m in qset.memories:
        metadata = {**(m.metadata or {}), ID_FIELD: m.id}
        mem.add(m.owner, m.content, type=m.type, session_id=m.session_id, metadata=metadata)
    return mem


def evaluate(mem: BenchMemory, qset: QualitySet, strategy: str) -> dict[str, Any]:
    """Ask every question through `Memory.retrieve` as its owner and score the top `LIMIT`."""

    def ask(q: SetQuestion) -> list[Any]:
        if strategy == MEANINGS:
            return meanings_alone(mem, q)
        return mem.retrieve(
            q.owner, q.text, strategy=strategy, max_tokens=MAX_TOKENS, limit=LIMIT, record_access=False
        )

    questions = qset.questions
    ask(questions[0])  # warm-up: loading a model is not a query's cost
    # A key's first recall asks for its in-process index (a big key's is built in the
    # background, its recalls reading SQL meanwhile): the questions are asked of keys in use.
    for first in {q.owner: q for q in questions}.values():
        ask(first)
    mem.settle()
    clear_query_cache(mem)  # ... but embedding the query is: no mode reuses another's vectors
    times: list[float] = []
    scores: dict[str, dict[str, float]] = {}
    ranked_ids: dict[str, list[str]] = {}
    tiers: Counter[str] = Counter()
    for q in questions:
        start = time.perf_counter_ns()
        items = ask(q)
        times.append((time.perf_counter_ns() - start) / 1e6)
        ranked = [str(i.memory.metadata.get(ID_FIELD, "")) for i in items]
        ranked_ids[q.id] = ranked
        scores[q.id] = {f"recall_at_{k}": recall_at(q.answers, ranked, k) for k in KS}
        scores[q.id]["mrr_at_10"] = reciprocal_rank(q.answers, ranked)
        tiers[items[0].tier if items else "none"] += 1

    def summary(ids: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(ids)}
        for name in (*(f"recall_at_{k}" for k in KS), "mrr_at_10"):
            out[name] = _mean([scores[i][name] for i in ids])
        return out

    kinds = sorted({q.kind for q in questions})
    return {
        "status": "ok",
        **summary([q.id for q in questions]),
        "ms_per_query": statistics.fmean(times),
        "p50_ms": statistics.median(times),
        "by_kind": {kind: summary([q.id for q in questions if q.kind == kind]) for kind in kinds},
        "top_tier": dict(tiers.most_common()),
        "resolution": resolution(mem, questions[0], strategy) if strategy != MEANINGS else {},
        "ranked": ranked_ids,
    }


def meanings_alone(mem: BenchMemory, q: SetQuestion) -> list[RetrievedItem]:
    """The first `LIMIT` memories of the meaning tier alone, near duplicates left out as
    retrieval's packing does: the part hybrid recall fuses with keywords."""
    items: list[RetrievedItem] = []
    lines = LineDeduper()
    for memory in mem.by_meaning(q.owner, q.text, 4 * LIMIT):
        form = render(memory)
        if lines.repeats(memory.content, form.words):
            continue
        items.append(
            RetrievedItem(memory=memory, line=form.line, score=0.0, tokens=form.tokens, tier="meaning")
        )
        if len(items) == LIMIT:
            break
    return items


def clear_query_cache(mem: BenchMemory) -> None:
    """Drop cached query vectors (the embedding sources keep recent ones for minutes)."""
    mem.parts.sources.clear_cache()


def loaded_model(mem: BenchMemory) -> str | None:
    """The model of the embedder actually loaded: engine status and resolutions name the
    configured model, also when a stand-in (static without the Hub) is in use."""
    try:
        return str(mem.parts.sources.embedder(mem.source()).model)
    except Exception:
        return None


def resolution(mem: Memory, q: SetQuestion, strategy: str) -> dict[str, Any]:
    """How a question of this mode is answered: embedding source and model, or why not."""
    try:
        preview = mem.retrieve_preview(q.owner, q.text, strategy=strategy, max_tokens=MAX_TOKENS, limit=LIMIT)
    except Exception as exc:  # informational only: never fails a measured mode
        return {"error": _reason(exc)}
    return to_wire(preview.resolution)


def unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "reason": reason}


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def baseline_setup(mem: BenchMemory) -> None:
    """`exact` and `fts` need no index; settings are applied per mode."""


def source_setup(source: str) -> Setup:
    def setup(mem: BenchMemory) -> dict[str, Any]:
        mem.update_settings(
            enabled=True, embedding_source=source, transformers_enabled=True, static_enabled=True
        )
        report: dict[str, Any] = to_wire(mem.reindex(force=True, wait=True))
        report["embedding"] = {**to_wire(mem.engine_status().embedding), "loaded_model": loaded_model(mem)}
        return report

    return setup


def run_group(
    name: str,
    setup: Setup,
    modes: Sequence[tuple[str, str, dict[str, Any]]],
    qset: QualitySet,
    database_url: str | None = None,
) -> dict[str, dict[str, Any]]:
    """One fresh database: `setup` (e.g. embed everything), then each (mode, strategy, settings)."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="memroute-quality-") as tmp:
        log(f"{qset.name} {name}: storing {len(qset.memories)} memories")
        mem = open_filled(Path(tmp), qset, database_url)
        with mem:
            try:
                started = time.perf_counter()
                report = setup(mem)
                setup_s = time.perf_counter() - started
            except Exception as exc:  # a source that cannot load makes its modes unavailable
                reason = _reason(exc)
                log(f"{name}: unavailable: {reason}")
                return {mode: unavailable(reason) for mode, _, _ in modes}
            notes = []
            if report is not None:
                shown = {k: v for k, v in report.items() if k != "embedding"}
                log(f"{name}: reindex {shown} in {setup_s:.1f} s")
                if report.get("pending"):
                    notes.append(f"{report['pending']} memories still pending after reindex")
            for mode, strategy, settings in modes:
                log(f"{qset.name} {mode}: {len(qset.questions)} questions")
                try:
                    mem.update_settings(**settings)
                    result = evaluate(mem, qset, strategy)
                except Exception as exc:
                    results[mode] = unavailable(_reason(exc))
                    log(f"{mode}: unavailable: {results[mode]['reason']}")
                    continue
                mode_notes = list(notes)
                if mode.startswith(("vector:", "hybrid:")) and not VECTOR_TIERS & set(result["top_tier"]):
                    mode_notes.append("no query was answered by a vector tier (keyword fallback only)")
                if report is not None:
                    result["reindex"] = {**report, "seconds": setup_s}
                result["notes"] = mode_notes
                results[mode] = result
    return results


# The modes of one database without vectors; settings apply in turn, so each names all it needs.
BASELINE_MODES: list[tuple[str, str, dict[str, Any]]] = [
    ("exact", "exact", {"enabled": True, "strategy": "recent"}),
    (
        "fts",
        "semantic",
        {
            "enabled": True,
            "strategy": "semantic",
            "embedding_source": "transformers",
            "transformers_enabled": False,
        },
    ),
    (MEANINGS, MEANINGS, {"enabled": True, "strategy": "hybrid"}),  # no-model's other part
    (  # the install's settings with the bundled model off
        "no-model",
        "hybrid",
        {"enabled": True, "strategy": "hybrid", "embedding_source": "auto", "transformers_enabled": False},
    ),
]


def run_set(qset: QualitySet, sources: Sequence[str], database_url: str | None = None) -> dict[str, Any]:
    modes: dict[str, dict[str, Any]] = {}
    modes.update(run_group("baseline", baseline_setup, BASELINE_MODES, qset, database_url))
    for source in sources:
        vector = [
            (f"vector:{source}", "semantic", {"strategy": "semantic"}),
            (f"hybrid:{source}", "hybrid", {"strategy": "hybrid"}),
        ]
        modes.update(run_group(source, source_setup(source), vector, qset, database_url))
    return {
        "dataset": {
            "description": qset.description,
            "memories": len(qset.memories),
            "keys": qset.owners,
            "memories_per_key": _per_key_range(qset),
            "questions": len(qset.questions),
            "answers_per_question": _mean([len(q.answers) for q in qset.questions]),
            "questions_by_kind": dict(sorted(Counter(q.kind for q in qset.questions).items())),
        },
        "modes": modes,
    }


def _per_key_range(qset: QualitySet) -> tuple[int, int]:
    """The fewest and the most memories one key holds."""
    sizes = Counter(m.owner for m in qset.memories)
    return min(sizes.values()), max(sizes.values())


def run(
    sources: Sequence[str],
    sets: Sequence[str] = tuple(SETS),
    *,
    speakers: bool = True,
    database_url: str | None = None,
) -> dict[str, Any]:
    return {
        name: run_set(SETS[name]() if speakers else without_speakers(SETS[name]()), sources, database_url)
        for name in sets
    }


def without_speakers(qset: QualitySet) -> QualitySet:
    """`qset` as a client that names no one keeps it: no memory says who said it."""
    memories = [
        replace(m, metadata={k: v for k, v in (m.metadata or {}).items() if k != "speaker"})
        for m in qset.memories
    ]
    return replace(qset, description=qset.description + " (no speaker metadata)", memories=memories)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _span(low_high: Sequence[int]) -> str:
    low, high = low_high
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def markdown(name: str, figures: dict[str, Any]) -> str:
    data = figures["dataset"]
    kinds = list(data["questions_by_kind"])
    rows = []
    for mode, r in figures["modes"].items():
        if r["status"] != "ok":
            rows.append([mode, f"unavailable: {r['reason']}", *[""] * (5 + len(kinds))])
            continue
        tiers = ", ".join(f"{tier} {n}" for tier, n in r["top_tier"].items())
        rows.append(
            [
                mode,
                *(_fmt(r[f"recall_at_{k}"]) for k in KS),
                _fmt(r["mrr_at_10"]),
                f"{r['ms_per_query']:.2f}",
                *(_fmt(r["by_kind"][kind]["recall_at_10"]) for kind in kinds),
                tiers + "".join(f"; {note}" for note in r.get("notes", [])),
            ]
        )
    headers = [
        "mode",
        *(f"R@{k}" for k in KS),
        "MRR@10",
        "ms/query",
        *(f"R@10 {kind} ({data['questions_by_kind'][kind]})" for kind in kinds),
        "tier of the top item (questions)",
    ]
    intro = (
        f"Set `{name}`: {data['description']}. {data['memories']:,} memories in {data['keys']} "
        f"key(s) ({_span(data['memories_per_key'])} per key), {data['questions']} questions "
        f"({data['answers_per_question']:.2f} answers each; "
        f"R@k = the share of answers ranked in the first k). `Memory.retrieve(limit={LIMIT}, "
        f"max_tokens={MAX_TOKENS})` as each question's key."
    )
    models = []
    for mode, r in figures["modes"].items():
        embedding = r.get("reindex", {}).get("embedding") if mode.startswith("vector:") else None
        if embedding:
            model, loaded = embedding.get("model"), embedding.get("loaded_model")
            used = model if loaded in (None, model) else f"{loaded} (configured: {model})"
            models.append(f"{mode.split(':', 1)[1]}: {used}, {embedding.get('dimensions')} dims")
    parts = [f"## Retrieval quality: {name}", intro, table(headers, rows)]
    if models:
        parts.append("Embedding models: " + "; ".join(models) + ".")
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--sources",
        default=DEFAULT_SOURCES,
        help=f'comma-separated embedding sources (default "{DEFAULT_SOURCES}"; "" for the modes without)',
    )
    ap.add_argument(
        "--sets", default=",".join(SETS), help=f'comma-separated quality sets (default "{",".join(SETS)}")'
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON to this file")
    ap.add_argument(
        "--no-speakers",
        action="store_true",
        help="store the memories without metadata.speaker (a client that sends no names)",
    )
    ap.add_argument(
        "--postgres",
        nargs="?",
        const="",
        default=None,
        metavar="URL",
        help="store each set in PostgreSQL: the server at URL, or one started for the run (pgserver)",
    )
    args = ap.parse_args(argv)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set(s) {', '.join(unknown)}: choose from {', '.join(SETS)}")
    if args.postgres is None:
        figures = run(sources, sets, speakers=not args.no_speakers)
    else:
        from bench.postgres import server

        with server(args.postgres or None) as url:
            figures = run(sources, sets, speakers=not args.no_speakers, database_url=url)
    print(machine_markdown())
    for name, per_set in figures.items():
        print()
        print(markdown(name, per_set))
    sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), "quality": figures}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
