"""Crash safety: the server (`memroute serve`, its own process, forked from one that has
imported it: tests/forked_servers.py) takes concurrent REST adds and chat turns, and is
killed with SIGKILL at a random moment after its first acknowledged add and chat turn, 20
times over one database. After every kill: the file passes `integrity_check`, the FTS index
matches the table, every write acknowledged before the kill is there, and every chat turn
that was answered has its facts, and is kept itself as an episode, once the queued
extraction jobs run."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import pytest
from forked_servers import ServerForks
from memories import open_memory
from servers import ADMIN, LiveServer, ScriptedUpstream, free_port, wait_until
from storage import database
from writers import chat_turns, rest_adds

from memroute.models.results import ExtractionQueue

CYCLES = 20


def _server_env(upstream_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "MEMROUTE_ADMIN_TOKEN": ADMIN,
        "MEMROUTE_UPSTREAM_BASE_URL": upstream_url + "/v1",
        "MEMROUTE_KEY_RPM": "0",  # the chat thread sends as fast as it can, cycle after cycle
    }


@pytest.mark.slow(seconds=15)
def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    # The bundled model off: each server lives a fraction of a second, and one that starts
    # with memories waiting for a vector spends it loading the model and embedding them,
    # when what is checked is the writes it acknowledges under a kill.
    with open_memory(db, model=False) as setup:
        setup.update_settings(enabled=True)
        key, secret = setup.keys.create("crash")
    added: list[str] = []  # memory keys whose add was answered 200
    learned: list[str] = []  # topics of chat turns that were answered 200
    rng = random.Random(2026)
    upstream = ScriptedUpstream()
    with LiveServer(upstream.app()) as up, ServerForks(_server_env(up.url)) as servers:
        for cycle in range(CYCLES):
            port = free_port()
            server = servers.start(db, port)
            base = f"http://127.0.0.1:{port}"
            stop = threading.Event()

            names = (f"crash:{cycle}:{worker}" for worker in range(2))
            threads = [
                threading.Thread(target=rest_adds, args=(base, key.id, name, stop, added)) for name in names
            ]
            threads.append(
                threading.Thread(target=chat_turns, args=(base, secret, f"option{cycle}", stop, learned))
            )
            already = len(added), len(learned)
            for thread in threads:
                thread.start()
            # The kill falls at a random moment after this server's first acknowledged add and
            # chat turn: a first chat loads the bundled model, which on a loaded machine can
            # outlast a fixed window, and a cycle that acknowledged nothing checks nothing.
            wait_until(lambda seen=already: len(added) > seen[0] and len(learned) > seen[1], 30, 0.005)
            time.sleep(rng.uniform(0.0, 0.5))
            servers.kill(server)
            stop.set()
            for thread in threads:
                thread.join(10)

            with open_memory(db) as check, database(check) as stored:
                con = stored.db.read()  # the file itself: what survived the kill
                assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)], f"cycle {cycle}"
                with stored.db.write() as writer:
                    writer.execute("INSERT INTO memory_fts(memory_fts) VALUES('integrity-check')")
                present = {row[0] for row in con.execute("SELECT key FROM memories WHERE key LIKE 'crash:%'")}
                lost = [name for name in added if name not in present]
                assert not lost, f"cycle {cycle}: acknowledged adds lost: {lost[:5]}"
                assert check.wait_for_extraction(30)  # runs every job the killed server left queued
                assert check.extraction_queue() == ExtractionQueue(pending=0, failed=0)
                kept = {
                    row[0] for row in con.execute("SELECT content FROM memories WHERE key NOT LIKE 'crash:%'")
                }
                missing = [topic for topic in learned if f"prefers {topic}" not in kept]
                assert not missing, f"cycle {cycle}: answered chat turns not learned: {missing[:5]}"
                unkept = [topic for topic in learned if f"I prefer {topic}." not in kept]
                assert not unkept, f"cycle {cycle}: answered chat turns not kept: {unkept[:5]}"
    print(
        f"{CYCLES} kills survived: {len(added)} acknowledged adds and {len(learned)} answered chat turns kept"
    )
