"""Fixtures for the embedding tests: one small static model distilled per test run (shared
by the parallel workers), the bundled MiniLM loaded once, a clock tests move, and a Hub that
counts as offline."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest
from embed_helpers import SMALL_VOCAB, FakeTimer

from memroute.embeddings import build_static_model
from memroute.embeddings.hub import forget_probe
from memroute.embeddings.onnx_minilm import OnnxEmbedder, load_transformers


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture(scope="session")
def small_static_model(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """Distilled once per run: parallel workers (whose files use it read-only) share the
    folder of the first one to build it, in the run's common temp dir."""
    if worker_id == "master":  # one process
        return build_static_model(tmp_path_factory.mktemp("static") / "small", vocab_limit=SMALL_VOCAB)
    shared = tmp_path_factory.getbasetemp().parent / "static-small"
    with (shared.parent / "static-small.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait for the first build
        if not (shared / "model.safetensors").is_file():
            build_static_model(shared, vocab_limit=SMALL_VOCAB)  # moved into place whole, once done
    return shared


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    return load_transformers("", tmp_path_factory.mktemp("cache"))


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The Hub counts as unreachable (HF_HUB_OFFLINE, which memroute honours), whatever the network."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    forget_probe()
    yield
    forget_probe()
