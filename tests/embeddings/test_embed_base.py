"""Shared pieces: L2 normalisation, repo-id recognition."""

from __future__ import annotations

import numpy as np
import pytest

from memroute.embeddings import l2_normalize
from memroute.embeddings.hub import looks_like_repo_id


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
