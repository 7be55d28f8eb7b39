"""int8 quantisation of unit vectors with a scale fitted to the data.

sqlite-vec's `vec_quantize_int8(v, 'unit')` maps [-1, 1] onto int8, but the components
of a 384-d unit vector are about ±0.05, so only ~4 bits are used and recall@20 drops to
~0.85. A scale fitted to the data (127 / the 0.999-quantile of |x|) uses the whole range;
re-scoring the nearest candidates against the float query brings recall back to ~1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

QUANTILE = 0.999


def fit_scale(vectors: NDArray[np.float32]) -> float:
    """The factor that maps these vectors' components onto [-127, 127] (outliers clipped)."""
    edge = float(np.quantile(np.abs(vectors), QUANTILE)) if vectors.size else 0.0
    return 127.0 / max(edge, 1e-6)


def quantize(vectors: NDArray[np.float32], scale: float) -> NDArray[np.int8]:
    quantized: NDArray[np.int8] = np.clip(np.rint(vectors * scale), -127, 127).astype(np.int8)
    return quantized


def dequantize(blob: bytes, scale: float) -> NDArray[np.float32]:
    return np.frombuffer(blob, dtype=np.int8).astype(np.float32) / np.float32(scale)
