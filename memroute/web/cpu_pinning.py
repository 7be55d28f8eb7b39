"""Each server process on one CPU of its own (`MEMROUTE_PIN_CPUS`, off by default).

A server process's Python runs one thread at a time: the event loop and the threads that
admit chats hand the interpreter to each other dozens of times per chat. When they run on
different CPUs, each hand-over wakes the other CPU, and on a virtual machine that wake-up
costs more than the Python between two hand-overs. With every thread of the process on one
CPU, a hand-over is a switch on that CPU. Measured on a 2-vCPU VM: ~40 % more chats a
second with memory on and ~65 % more with memory off, from one process at 16–64 clients
(docs/benchmarks.md).

It is off by default: a process held to one CPU cannot move away from other busy work
there, and two memroute instances that each choose CPUs for themselves (two containers on
one host, say) may choose the same one. Turn it on where memroute has the machine's CPUs
to itself: `auto` spreads the server processes over the CPUs this process may use, worker
k on the k-th; a list (`0,2-3`) names the CPUs, worker k on the k-th listed (round robin
when there are more workers).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from memroute.config import PIN_CPUS_SETTING

log = logging.getLogger("memroute.server")


def pin_process(cpus: tuple[int, ...], worker: int) -> int | None:
    """Hold every thread of this process (and the threads it starts later) to the CPU of
    server process `worker` among `cpus`: that CPU, or None when pinning is off or the OS
    refused (the reason is logged; the process runs on as before)."""
    if not cpus:
        return None
    cpu = cpus[worker % len(cpus)]
    try:
        for thread in _thread_ids():
            try:
                os.sched_setaffinity(thread, {cpu})
            except ProcessLookupError:
                continue  # the thread has ended meanwhile
    except (AttributeError, OSError) as exc:
        log.warning("could not hold worker %d to CPU %d (%s): it runs on any CPU", worker, cpu, exc)
        return None
    log.info("worker %d runs on CPU %d (%s)", worker, cpu, PIN_CPUS_SETTING)
    return cpu


def _thread_ids() -> list[int]:
    """This process's threads (only itself where /proc is missing)."""
    try:
        return [int(entry.name) for entry in Path("/proc/self/task").iterdir()]
    except OSError:
        return [0]
