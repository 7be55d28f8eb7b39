"""The hashing embedder: deterministic (also across processes), unit length, and texts
that share words are closer than unrelated ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from embed_helpers import cosine

from memroute.embeddings import HashingEmbedder

TEXTS = ["My dog is called Biscuit", "What is my dog called?", "Quarterly tax filing deadline", "", "!!"]


def test_shape_dtype_and_unit_norm() -> None:
    embedder = HashingEmbedder()
    assert (embedder.source, embedder.model, embedder.dimensions) == ("hashing", "hashing-256", 256)
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (5, 256) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms[:3], 1.0, atol=1e-6)
    assert not vectors[3].any() and not vectors[4].any()  # no word tokens → zero row


def test_deterministic_across_instances_and_processes() -> None:
    first = HashingEmbedder(64).embed(TEXTS)
    assert np.array_equal(first, HashingEmbedder(64).embed(TEXTS))
    code = (
        "import json, sys; from memroute.embeddings.hashing import HashingEmbedder; "
        "print(json.dumps(HashingEmbedder(64).embed(json.loads(sys.argv[1])).tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS)], capture_output=True, text=True, env=env, check=True
    )
    assert np.array_equal(np.asarray(json.loads(out.stdout), dtype=np.float32), first)


def test_shared_words_are_closer() -> None:
    dog, question, tax = HashingEmbedder().embed(TEXTS[:3])
    assert cosine(dog, question) > cosine(dog, tax) + 0.2
    assert cosine(question, tax) < cosine(dog, question)


def test_case_and_inflection() -> None:
    a, b, c = HashingEmbedder().embed(["Memory", "memories", "banana"])
    assert cosine(a, b) > cosine(a, c)  # trigrams: shared stem
    same = HashingEmbedder().embed(["HELLO world", "hello WORLD"])
    assert np.array_equal(same[0], same[1])


def test_empty_batch() -> None:
    assert HashingEmbedder(8).embed([]).shape == (0, 8)
