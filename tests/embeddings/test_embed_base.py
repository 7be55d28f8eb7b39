"""Shared pieces: message sanitising, L2 normalisation, repo-id recognition."""

from __future__ import annotations

import numpy as np
import pytest

from memroute.embeddings import l2_normalize, sanitize
from memroute.embeddings.hub import looks_like_repo_id


def test_sanitize_removes_secrets_and_key_like_strings() -> None:
    secret = "verysecretvalue123"
    text = (
        f"key {secret} failed; Authorization: Bearer abc.def-123 and sk-proj-ABCDEFGHIJKLMNOP at "
        "https://user:pass@api.example.com/v1\n\n  done"
    )
    clean = sanitize(text, [secret, None, ""])
    assert secret not in clean and "abc.def-123" not in clean and "ABCDEFGHIJKLMNOP" not in clean
    assert "user:pass" not in clean and "https://***@api.example.com/v1" in clean
    assert "Bearer ***" in clean and "\n" not in clean and "  " not in clean


def test_sanitize_cuts_long_messages() -> None:
    clean = sanitize("x" * 10_000)
    assert len(clean) == 500 and clean.endswith("…")


def test_l2_normalize_keeps_zero_rows() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0]]))
    assert out.dtype == np.float32
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError):
        l2_normalize(np.zeros(3))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("minishlab/potion-base-8M", True),
        ("sentence-transformers/all-MiniLM-L6-v2", True),
        ("bert-base-uncased", True),
        ("/abs/path", False),
        ("./rel/path", False),
        ("a/b/c", False),
        ("org/../x", False),
        ("~/models/x", False),
        ("", False),
    ],
)
def test_repo_id_recognition(value: str, expected: bool) -> None:
    assert looks_like_repo_id(value) is expected
