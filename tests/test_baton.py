"""Admissions take turns (`memroute/baton.py`): one thread at a time through its Python
work, in arrival order; a thread that waits outside Python steps out meanwhile; a holder
past its lease lets the next one in. Real threads; then the gateway under uvicorn with
an embedding provider that answers only once several chats wait on it at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gateways import Gateway
from servers import LiveServer, wait_until
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memroute import baton
from memroute.baton import Baton
from memroute.config import Config, allowed_cpus
from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.upstream.route import Route as ProviderRoute
from memroute.web.app import admissions_take_turns

LONG = 30.0  # a lease no test reaches, where the lease is not what is tested


def holding(b: Baton, fn: Callable[[], Any]) -> Any:
    """`fn()` with the baton held."""
    with b.hold():
        return fn()


class Holders:
    """Threads that each take the baton, note their turn and run `inside` while holding it."""

    def __init__(self, b: Baton) -> None:
        self.baton = b
        self.order: list[str] = []
        self.active = 0
        self.most_active = 0
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, name: str, inside: Callable[[], None] = lambda: None) -> threading.Thread:
        def run() -> None:
            with self.baton.hold():
                with self._lock:
                    self.order.append(name)
                    self.active += 1
                    self.most_active = max(self.most_active, self.active)
                try:
                    inside()
                finally:
                    with self._lock:
                        self.active -= 1

        thread = threading.Thread(target=run, name=name)
        self.threads.append(thread)
        thread.start()
        return thread

    def queue(self, name: str, waiting: int) -> None:
        """Start `name` and return once it waits (`waiting` threads queued with it)."""
        self.start(name)
        wait_until(lambda: self.baton.waiting == waiting)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(10)
            assert not thread.is_alive()


def test_one_holder_at_a_time_in_the_order_they_came() -> None:
    b = Baton(lease_s=LONG)
    holders = Holders(b)
    release = threading.Event()
    holders.start("first", lambda: release.wait(10))
    wait_until(lambda: holders.order == ["first"])
    for n, name in enumerate(["b", "c", "d", "e"], start=1):
        holders.queue(name, n)
    release.set()
    holders.join()
    assert holders.order == ["first", "b", "c", "d", "e"]
    assert holders.most_active == 1


def test_a_holder_past_its_lease_lets_the_next_one_in_beside_it() -> None:
    b = Baton(lease_s=0.05)
    holders = Holders(b)
    release = threading.Event()
    holders.start("stuck", lambda: release.wait(10))  # a wait nobody declared
    wait_until(lambda: holders.order == ["stuck"])
    holders.start("next")
    wait_until(lambda: holders.order == ["stuck", "next"], timeout=5)
    assert not release.is_set()  # it got in while the first still held the baton
    release.set()
    holders.join()
    assert holders.most_active == 2


def test_a_holder_steps_out_while_it_waits_and_resumes_ahead_of_newcomers() -> None:
    b = Baton(lease_s=LONG)
    holders = Holders(b)
    outside_now, back = threading.Event(), threading.Event()
    in_b, release_b = threading.Event(), threading.Event()

    def waits_outside() -> None:
        with baton.outside():
            outside_now.set()
            back.wait(10)

    def b_inside() -> None:
        in_b.set()
        release_b.wait(10)

    holders.start("a", waits_outside)
    outside_now.wait(10)
    holders.start("b", b_inside)  # takes the baton a stepped out of
    assert in_b.wait(10)
    holders.queue("c", 1)
    back.set()  # a wants its turn back: ahead of c, which has not started
    wait_until(lambda: b.waiting == 2)
    release_b.set()
    holders.join()
    assert holders.order == ["a", "b", "c"]
    assert holders.most_active == 2  # a (outside) and b; never two inside at once


def test_waiting_for_a_lock_held_elsewhere_is_done_outside_the_baton() -> None:
    b = Baton(lease_s=LONG)
    lock = threading.Lock()
    lock.acquire()  # held by another part of the process (the SQLite writer, say)
    got_lock, other_in = threading.Event(), threading.Event()

    def wants_lock() -> None:
        with b.hold():
            baton.acquire(lock)
            got_lock.set()
            lock.release()

    first = threading.Thread(target=wants_lock)
    first.start()
    wait_until(lambda: lock.locked() and b.waiting == 0)
    second = threading.Thread(target=lambda: holding(b, other_in.set))
    second.start()
    assert other_in.wait(10)  # the baton was free while the first thread waited for the lock
    assert not got_lock.is_set()
    lock.release()
    first.join(10)
    second.join(10)
    assert got_lock.is_set()


def test_holding_again_on_the_same_thread_does_not_wait() -> None:
    b = Baton(lease_s=LONG)
    with b.hold(), b.hold():
        assert holding(b, lambda: "nested") == "nested"
    assert holding(b, lambda: "free") == "free"


class BarrierEmbeddings:
    """`/v1/embeddings` that holds every question (a text with "?") until `expected`
    questions are waiting at once (then answers them all), or 10 s pass (then answers
    what waits); other texts are answered at once."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.waiting = 0
        self.most_waiting = 0
        self._all_here: asyncio.Event | None = None

    def app(self) -> Starlette:
        async def embeddings(request: Request) -> Response:
            body = await request.json()
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if any("?" in text for text in texts):
                if self._all_here is None:
                    self._all_here = asyncio.Event()
                self.waiting += 1
                self.most_waiting = max(self.most_waiting, self.waiting)
                if self.waiting >= self.expected:
                    self._all_here.set()
                try:
                    await asyncio.wait_for(self._all_here.wait(), 10)
                except TimeoutError:
                    pass
                finally:
                    self.waiting -= 1
            data = [{"index": i, "embedding": [1.0, float(len(t) % 7), 0.5]} for i, t in enumerate(texts)]
            return JSONResponse({"data": data})

        return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


def test_threads_that_wait_for_an_embedding_provider_wait_outside_their_turn(tmp_path: Path) -> None:
    provider = BarrierEmbeddings(expected=2)
    with LiveServer(provider.app()) as live:
        sources = EmbeddingSources(
            Config(data_dir=tmp_path, db_path=tmp_path / "memroute.db"),
            lambda model: ProviderRoute("emb", live.url + "/v1", "sk-embedding-key", model.partition("/")[2]),
        )
        choice = SourceChoice("remote", "emb/text-embedder", None, "remote provider configured")
        b = Baton(lease_s=LONG)  # only stepping out lets the second thread reach the provider
        try:
            with ThreadPoolExecutor(2) as pool:
                asked = [
                    pool.submit(holding, b, lambda n=n: sources.embed_query(choice, f"question {n}?"))
                    for n in (1, 2)
                ]
                assert all(len(done.result(20)) == 3 for done in asked)
        finally:
            sources.close()
    assert provider.most_waiting == 2


def test_chats_waiting_on_an_embedding_provider_wait_together_not_in_turn(gateway: Gateway) -> None:
    # Each chat's recall embeds its question with the provider. While one chat waits for
    # the provider's answer, it has stepped out of its turn: the others reach the provider
    # too, so a slow provider slows each chat by its own answer, not by everyone's.
    chats = 3
    provider = BarrierEmbeddings(expected=chats)
    with LiveServer(provider.app()) as live:
        mem = gateway.memory
        mem.providers.add("emb", base_url=live.url + "/v1", api_key="sk-embedding-key")
        mem.update_settings(
            embedding_source="remote", embedding_provider_model="emb/text-embedder", strategy="hybrid"
        )
        stored = mem.add(gateway.key_id, "plays chess online every evening")
        assert mem.reindex(wait=True).processed >= 1

        def ask(n: int) -> Any:
            return gateway.client(**{"x-memroute-debug": "true"}).chat.completions.with_raw_response.create(
                model="echo-1", messages=[{"role": "user", "content": f"Which game do I play, {n}?"}]
            )

        with ThreadPoolExecutor(chats) as pool:
            answers = list(pool.map(ask, range(chats)))
        assert provider.most_waiting == chats
        # (A chat may also get another's question, kept as a turn while it ranked.)
        assert all(stored.id in raw.headers["x-memroute-memory-ids"].split(",") for raw in answers)


def test_admissions_take_turns_only_on_sqlite_with_a_core_to_spare(tmp_path: Path) -> None:
    # A turn handed on wakes a waiting thread, which needs a free core at once.
    config = Config(data_dir=tmp_path, db_path=tmp_path / "memroute.db")
    cores = len(allowed_cpus())
    assert admissions_take_turns(config.with_overrides(workers=1)) is (cores > 1)
    assert not admissions_take_turns(config.with_overrides(workers=cores))
    assert not admissions_take_turns(config.with_overrides(workers=1, chat_serial=False))
    assert not admissions_take_turns(
        config.with_overrides(workers=1, database_url="postgresql://db/memroute")
    )
