"""Source resolution: every row of REF §7.1 with memroute's rules (auto → remote only for a
configured provider; hashing only when asked for by name)."""

from __future__ import annotations

from pathlib import Path

import pytest
from embed_helpers import make_config

from memroute.embeddings import DEFAULT_TRANSFORMERS_MODEL, SourceChoice, resolve_source
from memroute.memory.settings import MemorySettings

CONFIGURED = {"openai"}


def resolve(
    tmp_path: Path, config_changes: dict[str, object] | None = None, **settings: object
) -> SourceChoice:
    config = make_config(tmp_path, **(config_changes or {}))
    return resolve_source(MemorySettings(**settings), config, lambda p: p in CONFIGURED)  # type: ignore[arg-type]


ROWS = [
    # (settings, source, model, dims, signature, reason)
    (
        {"embedding_source": "remote"},
        None, None, None, "null:null:null", "no_key: embeddingProviderModel not configured",
    ),
    (
        {"embedding_source": "remote", "embedding_provider_model": "openai/text-embedding-3-small"},
        "remote", "openai/text-embedding-3-small", None, "remote:openai/text-embedding-3-small:null",
        "remote provider configured: openai/text-embedding-3-small",
    ),
    (
        # remote is explicit: no check that the provider exists (that surfaces at embed time)
        {"embedding_source": "remote", "embedding_provider_model": "ollama-local/nomic"},
        "remote", "ollama-local/nomic", None, "remote:ollama-local/nomic:null",
        "remote provider configured: ollama-local/nomic",
    ),
    ({"embedding_source": "static"}, None, None, None, "null:null:null", "static disabled in settings"),
    (
        {"embedding_source": "static", "static_enabled": True},
        "static", "minishlab/potion-base-8M", 256, "static:minishlab/potion-base-8M:256",
        "static (potion-base-8M) explicitly selected",
    ),
    (
        {"embedding_source": "transformers", "transformers_enabled": False},
        None, None, None, "null:null:null", "transformers disabled in settings",
    ),
    (
        {"embedding_source": "transformers", "transformers_enabled": True},
        "transformers", DEFAULT_TRANSFORMERS_MODEL, 384, f"transformers:{DEFAULT_TRANSFORMERS_MODEL}:384",
        "transformers (all-MiniLM-L6-v2, ONNX) explicitly selected",
    ),
    (
        {"embedding_source": "auto", "embedding_provider_model": "openai/text-embedding-3-small",
         "static_enabled": True, "transformers_enabled": True},
        "remote", "openai/text-embedding-3-small", None, "remote:openai/text-embedding-3-small:null",
        "auto: provider openai configured",
    ),
    (
        # provider not configured → falls through to static
        {"embedding_source": "auto", "embedding_provider_model": "cohere/embed-v4", "static_enabled": True},
        "static", "minishlab/potion-base-8M", 256, "static:minishlab/potion-base-8M:256",
        "auto: potion-base-8M (static) available",
    ),
    (
        # not "provider/model" → never remote under auto
        {"embedding_source": "auto", "embedding_provider_model": "openai", "transformers_enabled": True},
        "transformers", DEFAULT_TRANSFORMERS_MODEL, 384, f"transformers:{DEFAULT_TRANSFORMERS_MODEL}:384",
        "auto: transformers (all-MiniLM-L6-v2, ONNX) available",
    ),
    (
        {"embedding_source": "auto", "embedding_provider_model": "/text-embedding-3-small",
         "transformers_enabled": False},
        None, None, None, "null:null:null", "auto: no embedding source available",
    ),
    (
        {"embedding_source": "auto", "embedding_provider_model": "openai/", "transformers_enabled": False},
        None, None, None, "null:null:null", "auto: no embedding source available",
    ),
    (
        {"embedding_source": "auto", "transformers_enabled": False},
        None, None, None, "null:null:null", "auto: no embedding source available",
    ),
    (
        # the install's settings: the bundled MiniLM
        {},
        "transformers", DEFAULT_TRANSFORMERS_MODEL, 384, f"transformers:{DEFAULT_TRANSFORMERS_MODEL}:384",
        "auto: transformers (all-MiniLM-L6-v2, ONNX) available",
    ),
    (
        {"embedding_source": "hashing"},
        "hashing", "hashing-256", 256, "hashing:hashing-256:256", "hashing explicitly selected",
    ),
    ({"embedding_source": "bogus"}, None, None, None, "null:null:null", "unknown embedding source"),
]  # fmt: skip


@pytest.mark.parametrize(("settings", "source", "model", "dims", "signature", "reason"), ROWS)
def test_resolution_table(
    tmp_path: Path,
    settings: dict[str, object],
    source: str | None,
    model: str | None,
    dims: int | None,
    signature: str,
    reason: str,
) -> None:
    choice = resolve(tmp_path, **settings)
    assert (choice.source, choice.model, choice.dimensions) == (source, model, dims)
    assert choice.signature == signature
    assert choice.reason == reason


def test_auto_never_picks_hashing(tmp_path: Path) -> None:
    choice = resolve(tmp_path, embedding_source="auto", static_enabled=False, transformers_enabled=False)
    assert choice.source is None


def test_static_model_and_transformers_model_come_from_config(tmp_path: Path) -> None:
    folder = str(tmp_path / "my-static")
    static = resolve(tmp_path, {"static_model": folder}, embedding_source="static", static_enabled=True)
    assert (static.source, static.model, static.dimensions) == ("static", folder, None)
    assert static.signature == f"static:{folder}:null"
    trans = resolve(
        tmp_path,
        {"transformers_model": "Xenova/all-MiniLM-L6-v2"},
        embedding_source="transformers",
        transformers_enabled=True,
    )
    assert (trans.model, trans.dimensions) == ("Xenova/all-MiniLM-L6-v2", None)


def test_provider_check_gets_the_prefix(tmp_path: Path) -> None:
    asked: list[str] = []

    def configured(provider: str) -> bool:
        asked.append(provider)
        return True

    settings = MemorySettings(embedding_source="auto", embedding_provider_model="my-node/a/b")
    choice = resolve_source(settings, make_config(tmp_path), configured)
    assert asked == ["my-node"]
    assert (choice.source, choice.model, choice.reason) == (
        "remote",
        "my-node/a/b",
        "auto: provider my-node configured",
    )
