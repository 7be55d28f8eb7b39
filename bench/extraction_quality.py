"""Fact extraction quality on the labelled set `tests/data/extraction_set.jsonl`.

Each row is one chat message (with its speaker when named) and the facts it states
(key and content). A found fact is correct when its key and content both match a
label; any other fact is a false positive. Prints precision and recall per category
(the part of the key before ":"), the totals, and the rows that differ.

    python -m bench.extraction_quality            # table + differences
    python -m bench.extraction_quality --json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memroute.memory.extraction import extract_facts_from_text

SET_PATH = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_set.jsonl"


def load(path: Path = SET_PATH) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def category(key: str) -> str:
    return key.rsplit("/", 1)[-1].split(":", 1)[0]


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """True positives, false positives and false negatives per category, and the rows that differ."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    differ = []
    for row in rows:
        found = {(f.key, f.content) for f in extract_facts_from_text(row["text"], speaker=row.get("speaker"))}
        wanted = {(f["key"], f["content"]) for f in row["facts"]}
        for key, _ in found & wanted:
            tp[category(key)] += 1
        for key, _ in found - wanted:
            fp[category(key)] += 1
        for key, _ in wanted - found:
            fn[category(key)] += 1
        if found != wanted:
            differ.append(
                {"text": row["text"], "extra": sorted(found - wanted), "missed": sorted(wanted - found)}
            )
    return {"tp": tp, "fp": fp, "fn": fn, "differ": differ}


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def summary(result: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp, fp, fn = result["tp"], result["fp"], result["fn"]
    cats = sorted(set(tp) | set(fp) | set(fn))
    per = {
        c: {
            "labelled": tp[c] + fn[c],
            "found": tp[c] + fp[c],
            "precision": _ratio(tp[c], tp[c] + fp[c]),
            "recall": _ratio(tp[c], tp[c] + fn[c]),
        }
        for c in cats
    }
    total_tp, total_fp, total_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    return {
        "sentences": len(rows),
        "nothing_sentences": sum(1 for r in rows if not r["facts"]),
        "nothing_with_a_fact": sum(
            1 for r in rows if not r["facts"] for d in result["differ"] if d["text"] == r["text"]
        ),
        "labelled_facts": total_tp + total_fn,
        "precision": _ratio(total_tp, total_tp + total_fp),
        "recall": _ratio(total_tp, total_tp + total_fn),
        "categories": per,
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    rows = load()
    result = score(rows)
    figures = summary(result, rows)
    if args.json:
        print(json.dumps(figures | {"differ": result["differ"]}, indent=2, ensure_ascii=False))
        return
    print(
        f"{figures['sentences']} sentences ({figures['nothing_sentences']} state nothing, "
        f"{figures['nothing_with_a_fact']} of those gave a fact), {figures['labelled_facts']} labelled facts"
    )
    print(f"precision {figures['precision']:.3f}  recall {figures['recall']:.3f}\n")
    print(f"| {'category':<11} | labelled | found | precision | recall |")
    print(f"|{'-' * 13}|----------|-------|-----------|--------|")
    for name, c in figures["categories"].items():
        print(
            f"| {name:<11} | {c['labelled']:>8} | {c['found']:>5} "
            f"| {c['precision']:>9.3f} | {c['recall']:>6.3f} |"
        )
    if result["differ"]:
        print("\nDiffering rows:")
        for d in result["differ"]:
            print(f"- {d['text']!r}\n    extra:  {d['extra']}\n    missed: {d['missed']}")


if __name__ == "__main__":
    main()
