"""Fixtures for the embedding tests: one small static model distilled per session, the
bundled MiniLM loaded once, a clock tests move, and a Hub that counts as offline."""

from __future__ import annotations

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
def small_static_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_static_model(tmp_path_factory.mktemp("static") / "small", vocab_limit=SMALL_VOCAB)


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
