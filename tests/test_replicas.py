"""Several replicas, one memory: three `memroute serve` processes (forked from one that has
imported the server, tests/forked_servers.py) on one PostgreSQL database, chatted with
round-robin through the official `openai` client. What one replica learns, the others
inject; a key revoked on one is refused by the others at once; wrong admin tokens count
against every replica together; a replica SIGKILLed under chat and write load loses
nothing it acknowledged, and the others finish its queued jobs."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai
import pytest
from forked_servers import ServerForks
from memories import open_memory
from servers import ADMIN, AUTH, TLS, LiveServer, ScriptedUpstream, free_port, wait_until
from writers import chat_turns, rest_adds

from memroute import Memory
from memroute.config import Config
from memroute.models.results import ExtractionQueue

REPLICAS = 3


def _client(base: str, secret: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base + "/v1",
        api_key=secret,
        max_retries=0,
        timeout=10,
        http_client=openai.DefaultHttpxClient(verify=TLS),
    )


@contextmanager
def _replicas(
    tmp_path: Path, pg_url: str
) -> Iterator[tuple[Memory, ScriptedUpstream, ServerForks, list[tuple[int, str]]]]:
    """The database set up (memory on; the bundled model off: three replicas would each load
    it), the scripted upstream, and three replicas: (pid, base URL) each."""
    config = Config.for_path(tmp_path / "setup" / "memroute.db", {}).with_overrides(database_url=pg_url)
    setup = open_memory(config=config, model=False)
    setup.update_settings(enabled=True)
    upstream = ScriptedUpstream()
    env = {
        **os.environ,
        "MEMROUTE_DATABASE_URL": pg_url,
        "MEMROUTE_ADMIN_TOKEN": ADMIN,
        "MEMROUTE_KEY_RPM": "0",
    }
    try:
        with LiveServer(upstream.app()) as up:
            env["MEMROUTE_UPSTREAM_BASE_URL"] = up.url + "/v1"
            with ServerForks(env) as servers:
                started = []
                for n in range(REPLICAS):
                    port = free_port()
                    pid = servers.start(tmp_path / f"replica{n}" / "memroute.db", port)
                    started.append((pid, f"http://127.0.0.1:{port}"))
                yield setup, upstream, servers, started
    finally:
        setup.close()


def _injected(upstream: ScriptedUpstream) -> str:
    """The system text the gateway put in front of the last request upstream."""
    messages = upstream.last["body"]["messages"]
    return " ".join(m["content"] for m in messages if m["role"] == "system" and isinstance(m["content"], str))


@pytest.mark.slow(seconds=20)
def test_what_one_replica_learns_the_others_inject_and_a_revoked_key_is_refused_by_all(
    tmp_path: Path, pg_url: str
) -> None:
    with _replicas(tmp_path, pg_url) as (setup, upstream, _servers, replicas):
        bases = [base for _, base in replicas]
        with httpx.Client(headers=AUTH, timeout=10, verify=TLS) as admin:
            created = admin.post(bases[0] + "/api/keys", json={"name": "team"}).json()
        key_id, secret = created["key"]["id"], created["secret"]
        cities = ["Lyon", "Porto", "Kyoto"]
        for n, city in enumerate(cities):  # learned through replica n, asked through the next
            teller, asker = _client(bases[n], secret), _client(bases[(n + 1) % REPLICAS], secret)
            teller.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": f"My sister moved to {city}."}]
            )
            wait_until(
                lambda city=city: any(city in m.content for m in setup.list(key_id, limit=100).items), 15
            )
            asker.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": f"Where did my sister move, {city}?"}]
            )
            assert city in _injected(upstream), f"replica {(n + 1) % REPLICAS} did not inject {city}"
        # Revoked through replica 2: refused by replica 1 (and 3) on the very next request.
        with httpx.Client(headers=AUTH, timeout=10, verify=TLS) as admin:
            assert admin.delete(f"{bases[1]}/api/keys/{key_id}").status_code == 200
        for base in (bases[0], bases[2]):
            with pytest.raises(openai.AuthenticationError):
                _client(base, secret).chat.completions.create(
                    model="echo-1", messages=[{"role": "user", "content": "still there?"}]
                )
        # A setting changed through one replica is in force on the others within a second.
        with httpx.Client(headers=AUTH, timeout=10, verify=TLS) as admin:
            changed = admin.put(bases[2] + "/api/settings/memory", json={"maxTokens": 777})
            assert changed.status_code == 200
            time.sleep(1.0)
            for base in bases[:2]:
                assert admin.get(base + "/api/settings/memory").json()["maxTokens"] == 777
        # Wrong admin tokens count on every replica together: ten from one address, spread
        # over the three (each replica alone saw fewer than its limit), close them all to it.
        wrong = {"Authorization": "Bearer " + "x" * 40}
        with httpx.Client(timeout=10, verify=TLS) as guesser:
            statuses = [
                guesser.get(bases[n % REPLICAS] + "/api/keys", headers=wrong).status_code for n in range(10)
            ]
            assert statuses == [401] * 10
            for base in bases:
                refused = guesser.get(base + "/api/keys", headers=AUTH)  # even the right token
                assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


@pytest.mark.slow(seconds=30)
def test_a_replica_killed_under_load_loses_nothing_it_acknowledged(tmp_path: Path, pg_url: str) -> None:
    with _replicas(tmp_path, pg_url) as (setup, _upstream, servers, replicas):
        key, secret = setup.keys.create("load")
        added: list[str] = []
        answered: list[str] = []
        stop = threading.Event()
        threads = []
        for n, (_, base) in enumerate(replicas):
            threads.append(threading.Thread(target=rest_adds, args=(base, key.id, f"add{n}", stop, added)))
            threads.append(
                threading.Thread(target=chat_turns, args=(base, secret, f"topic{n}", stop, answered))
            )
        for thread in threads:
            thread.start()
        time.sleep(2.0)
        # On a loaded machine the writers may still be slow to get going: the kill waits
        # until enough was acknowledged that losing any of it would show.
        wait_until(lambda: len(added) > 30 and len(answered) > 10, 60)
        victim, _ = replicas[1]
        servers.kill(victim)  # mid-write, mid-chat, maybe mid-job
        time.sleep(1.0)  # the others go on
        stop.set()
        for thread in threads:
            thread.join(15)
        # The survivors finish every queued job, the dead replica's claimed ones included.
        wait_until(lambda: setup.extraction_queue() == ExtractionQueue(pending=0, failed=0), 40)
        records = list(setup.export(key.id))
        contents = {record["content"] for record in records}
        keys = {record["key"] for record in records}
        lost = [name for name in added if name not in keys]
        assert not lost, f"acknowledged adds lost: {lost[:5]}"
        unlearned = [t for t in answered if f"prefers {t}" not in contents]
        assert not unlearned, f"answered chat turns not learned: {unlearned[:5]}"
        unkept = [t for t in answered if f"I prefer {t}." not in contents]
        assert not unkept, f"answered chat turns not kept: {unkept[:5]}"
        print(
            f"\none replica killed: {len(added)} adds and {len(answered)} chat turns acknowledged, all kept"
        )
