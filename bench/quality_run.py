"""Retrieval quality: recall@5, recall@10 and MRR@10 of each retrieval mode on bench/quality/.

Modes: `exact` (newest first, a baseline), `fts` (semantic strategy with no vector source: FTS5
keywords only), then `vector:S` and `hybrid:S` for each embedding source S. A mode whose source
fails to load or to index is reported as unavailable and the run goes on.

    python -m bench.quality_run                                  # sources hashing,static,transformers
    python -m bench.quality_run --sources static --json quality.json
    python -m bench.quality_run --sources ""                     # exact and fts only

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
from pathlib import Path
from typing import Any

from bench.common import log, machine, machine_markdown, table
from bench.opened import BenchMemory, open_bench
from bench.quality import load_memories, load_queries, overlaps
from memroute import Memory
from memroute.models.wire import to_wire

OWNER = "quality"
KEY_PREFIX = f"{OWNER}:"
DEFAULT_SOURCES = "hashing,static,transformers"
LIMIT = 10
MAX_TOKENS = 16000
VECTOR_TIERS = frozenset({"vector", "qdrant", "hybrid-rrf"})

Setup = Callable[[Memory], dict[str, Any] | None]


def score(ranked: Sequence[str], relevant: Sequence[str]) -> tuple[float, float, float]:
    """recall@5, recall@10 and reciprocal rank (within the top 10) of one ranking."""
    wanted = set(relevant)
    r5 = len(wanted.intersection(ranked[:5])) / len(wanted)
    r10 = len(wanted.intersection(ranked[:10])) / len(wanted)
    rr = next((1.0 / rank for rank, i in enumerate(ranked[:10], start=1) if i in wanted), 0.0)
    return r5, r10, rr


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def open_filled(directory: Path, memories: Sequence[dict[str, Any]]) -> BenchMemory:
    """A fresh database holding every memory under one owner key."""
    mem = open_bench(directory / "q.db", start_workers=True)
    for m in memories:
        mem.add(OWNER, m["content"], key=f"{KEY_PREFIX}{m['id']}", type=m["type"])
    return mem


def evaluate(
    mem: Memory, queries: Sequence[dict[str, Any]], strategy: str, lexical: set[str]
) -> dict[str, Any]:
    """Run every query through `Memory.retrieve` and score the top 10."""

    def ask(text: str) -> list[Any]:
        return mem.retrieve(
            OWNER, text, strategy=strategy, max_tokens=MAX_TOKENS, limit=LIMIT, record_access=False
        )

    ask(queries[0]["query"])  # warm-up: loading a model is not a query's cost
    clear_query_cache(mem)  # ... but embedding the query is: no mode reuses another's vectors
    times: list[float] = []
    scores: dict[str, tuple[float, float, float]] = {}
    top10: dict[str, list[str]] = {}
    tiers: Counter[str] = Counter()
    for q in queries:
        start = time.perf_counter_ns()
        items = ask(q["query"])
        times.append((time.perf_counter_ns() - start) / 1e6)
        ranked = [i.memory.key.removeprefix(KEY_PREFIX) for i in items]
        top10[q["id"]] = ranked
        scores[q["id"]] = score(ranked, q["relevant"])
        tiers[items[0].tier if items else "none"] += 1

    def summary(ids: Sequence[str]) -> dict[str, Any]:
        return {
            "n": len(ids),
            "recall_at_5": _mean([scores[i][0] for i in ids]),
            "recall_at_10": _mean([scores[i][1] for i in ids]),
            "mrr_at_10": _mean([scores[i][2] for i in ids]),
        }

    all_ids = [q["id"] for q in queries]
    return {
        "status": "ok",
        **summary(all_ids),
        "ms_per_query": statistics.fmean(times),
        "p50_ms": statistics.median(times),
        "by_overlap": {
            "lexical": summary([i for i in all_ids if i in lexical]),
            "paraphrase": summary([i for i in all_ids if i not in lexical]),
        },
        "top_tier": dict(tiers.most_common()),
        "resolution": resolution(mem, queries[0]["query"], strategy),
        "top10": top10,
    }


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


def resolution(mem: Memory, query: str, strategy: str) -> dict[str, Any]:
    """How a query of this mode is answered: embedding source and model, or why not."""
    try:
        preview = mem.retrieve_preview(OWNER, query, strategy=strategy, max_tokens=MAX_TOKENS, limit=LIMIT)
    except Exception as exc:  # informational only: never fails a measured mode
        return {"error": _reason(exc)}
    return to_wire(preview.resolution)


def unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "reason": reason}


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def baseline_setup(mem: Memory) -> None:
    """`exact` and `fts` need no index; settings are applied per mode."""


def source_setup(source: str) -> Setup:
    def setup(mem: Memory) -> dict[str, Any]:
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
    memories: Sequence[dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    lexical: set[str],
) -> dict[str, dict[str, Any]]:
    """One fresh database: `setup` (e.g. embed everything), then each (mode, strategy, settings)."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="memroute-quality-") as tmp:
        log(f"{name}: storing {len(memories)} memories")
        with open_filled(Path(tmp), memories) as mem:
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
                log(f"{mode}: {len(queries)} queries")
                try:
                    mem.update_settings(**settings)
                    result = evaluate(mem, queries, strategy, lexical)
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


def run(sources: Sequence[str]) -> dict[str, Any]:
    memories, queries = load_memories(), load_queries()
    by_id = {m["id"]: m for m in memories}
    lexical = {q["id"] for q in queries if overlaps(q, by_id)}
    modes: dict[str, dict[str, Any]] = {}
    baseline = [
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
    ]
    modes.update(run_group("baseline", baseline_setup, baseline, memories, queries, lexical))
    for source in sources:
        vector = [
            (f"vector:{source}", "semantic", {"strategy": "semantic"}),
            (f"hybrid:{source}", "hybrid", {"strategy": "hybrid"}),
        ]
        modes.update(run_group(source, source_setup(source), vector, memories, queries, lexical))
    return {
        "dataset": {
            "memories": len(memories),
            "queries": len(queries),
            "relevant_per_query": _mean([len(q["relevant"]) for q in queries]),
            "lexical_queries": len(lexical),
            "paraphrase_queries": len(queries) - len(lexical),
        },
        "modes": modes,
    }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown(figures: dict[str, Any]) -> str:
    data = figures["dataset"]
    rows = []
    for mode, r in figures["modes"].items():
        if r["status"] != "ok":
            rows.append([mode, f"unavailable: {r['reason']}", "", "", "", "", "", ""])
            continue
        lex, para = r["by_overlap"]["lexical"], r["by_overlap"]["paraphrase"]
        tiers = ", ".join(f"{tier} {n}" for tier, n in r["top_tier"].items())
        rows.append(
            [
                mode,
                _fmt(r["recall_at_5"]),
                _fmt(r["recall_at_10"]),
                _fmt(r["mrr_at_10"]),
                f"{r['ms_per_query']:.2f}",
                _fmt(lex["recall_at_10"]),
                _fmt(para["recall_at_10"]),
                tiers + "".join(f"; {note}" for note in r.get("notes", [])),
            ]
        )
    headers = [
        "mode",
        "recall@5",
        "recall@10",
        "MRR@10",
        "ms/query",
        f"recall@10 lexical ({data['lexical_queries']})",
        f"recall@10 paraphrase ({data['paraphrase_queries']})",
        "tier of the top item (queries)",
    ]
    intro = (
        f"{data['memories']} memories, {data['queries']} queries "
        f"({data['relevant_per_query']:.2f} relevant per query; {data['paraphrase_queries']} share no "
        f"content word with their relevant memories). `Memory.retrieve(limit={LIMIT}, "
        f"max_tokens={MAX_TOKENS})` on one key."
    )
    models = []
    for mode, r in figures["modes"].items():
        embedding = r.get("reindex", {}).get("embedding") if mode.startswith("vector:") else None
        if embedding:
            model, loaded = embedding.get("model"), embedding.get("loaded_model")
            used = model if loaded in (None, model) else f"{loaded} (configured: {model})"
            models.append(f"{mode.split(':', 1)[1]}: {used}, {embedding.get('dimensions')} dims")
    parts = ["## Retrieval quality", intro, table(headers, rows)]
    if models:
        parts.append("Embedding models: " + "; ".join(models) + ".")
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--sources",
        default=DEFAULT_SOURCES,
        help=f'comma-separated embedding sources (default "{DEFAULT_SOURCES}"; "" for exact and fts only)',
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON to this file")
    args = ap.parse_args(argv)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    figures = run(sources)
    print(machine_markdown())
    print()
    print(markdown(figures))
    sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), "quality": figures}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
