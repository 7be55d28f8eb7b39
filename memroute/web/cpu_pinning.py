"""A server process's event loop and chat threads on one CPU of its own (`MEMROUTE_PIN_CPUS`,
off by default).

A server process's Python runs one thread at a time: the event loop and the threads that
admit chats hand the interpreter to each other dozens of times per chat. When they run on
different CPUs, each hand-over wakes the other CPU, and on a virtual machine that wake-up
costs more than the Python between two hand-overs. With them on one CPU, a hand-over is a
switch on that CPU. The background threads (learning, re-index, Qdrant sync) stay free
to run on any CPU, so a re-index with the bundled model does not take the chats' CPU.
Measured on a 2-vCPU VM, from one process at 16 and 64 clients: ~25–40 % more chats a
second with memory on, ~65 % more with memory off (docs/benchmarks.md).

It is off by default: threads held to one CPU cannot move away from other busy work
there, and two memroute instances that each choose CPUs for themselves (two containers on
one host, say) may choose the same one. Turn it on where memroute has the machine's CPUs
to itself: `auto` spreads the server processes over the CPUs this process may use, worker
k on the k-th; a list (`0,2-3`) names the CPUs, worker k on the k-th listed (round robin
when there are more workers).
"""

from __future__ import annotations

import logging
import os
import threading

from memroute.config import PIN_CPUS_SETTING
from memroute.gateway.threads import CHAT_THREAD_PREFIX

log = logging.getLogger("memroute.server")


def pin_server_threads(cpus: tuple[int, ...], worker: int) -> None:
    """Hold this thread (the event loop, once the app has started), the threads that admit
    chats, and every thread they start from now on, to the CPU of server process `worker`
    among `cpus`. The background threads started with the app (learning, re-index, Qdrant
    sync), and the embedding they do, still run on any CPU, so a re-index does not take the
    chats' CPU. Nothing when pinning is off; when the OS refuses, the reason is logged and
    the process runs on as before."""
    if not cpus:
        return
    cpu = cpus[worker % len(cpus)]
    chat_threads = [t.native_id for t in threading.enumerate() if t.name.startswith(CHAT_THREAD_PREFIX)]
    try:
        os.sched_setaffinity(0, {cpu})  # this thread only
        for thread in chat_threads:
            try:
                os.sched_setaffinity(thread or 0, {cpu})
            except ProcessLookupError:
                continue  # the thread has ended meanwhile
    except (AttributeError, OSError) as exc:
        log.warning("could not hold worker %d to CPU %d (%s): it runs on any CPU", worker, cpu, exc)
        return
    log.info("worker %d runs on CPU %d (%s)", worker, cpu, PIN_CPUS_SETTING)
