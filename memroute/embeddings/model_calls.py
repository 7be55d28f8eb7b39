"""Model calls the interpreter's exit waits for.

onnxruntime lets go of the interpreter while a model loads or runs. A daemon thread (the
model's background load, the re-index worker) that comes back from it after the
interpreter has begun to finalize is unwound through onnxruntime's C++ frames, and the
whole process aborts ("terminate called without an active exception", exit status 134)
instead of ending cleanly; one still importing onnxruntime or making a session when the
process ends aborts it the same way. Each of these calls goes inside `model_call()` (a
session made with onnxruntime's import, a run of the model, one batch of a
distillation): at exit the calls in flight are waited for (up to EXIT_WAIT_S), and a
daemon thread that starts one after that waits until the process is gone, so it is only
ever stopped in Python code.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

EXIT_WAIT_S = 10.0  # a session takes ~1 s to make here, one batch of texts well under 1 s

_state = threading.Condition()
_in_flight = 0  # model calls running now
_exiting = False


@contextmanager
def model_call() -> Iterator[None]:
    """Run the block as a model call the interpreter's exit waits for (never one inside
    another: a daemon thread's inner call would wait for an exit that waits for it)."""
    global _in_flight
    with _state:
        if _exiting and threading.current_thread().daemon:
            _state.wait_for(lambda: False)  # never returns: the process is ending
        _in_flight += 1
    try:
        yield
    finally:
        with _state:
            _in_flight -= 1
            _state.notify_all()


def wait_for_model_calls(timeout_s: float = EXIT_WAIT_S) -> bool:
    """Hold new model calls of daemon threads and wait for those in flight to end; False
    (and a warning) when some still run after `timeout_s`."""
    global _exiting
    with _state:
        _exiting = True
        done = _state.wait_for(lambda: _in_flight == 0, timeout=timeout_s)
    if not done:
        log.warning("embedding.exit.model_call_running after=%.0fs", timeout_s)
    return done


atexit.register(wait_for_model_calls)
