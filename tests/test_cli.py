"""The `memroute` command line, run in-process with click's runner and once as a real process."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memroute.cli import main
from memroute.cli.banner import self_command


@pytest.fixture
def run(db_path: Path):
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(main, ["--db", str(db_path), *args], input=input)

    return invoke


def test_add_get_history_delete(run) -> None:
    added = run("memory", "add", "-k", "k1", "-c", "prefers vim", "--key", "preference:editor")
    assert added.exit_code == 0, added.output
    memory = json.loads(added.output)
    assert memory["content"] == "prefers vim"

    run("memory", "add", "-k", "k1", "-c", "prefers emacs", "--key", "preference:editor")
    got = json.loads(run("memory", "get", memory["id"]).output)
    assert got["content"] == "prefers emacs"
    assert got["id"] == memory["id"]
    assert got["provenance"] is None  # added by the CLI without metadata: no line either

    history = json.loads(run("memory", "history", memory["id"]).output)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert history[1]["oldContent"] == "prefers vim"
    assert history[0]["actor"] == "cli"

    deleted = run("memory", "delete", memory["id"])
    assert deleted.exit_code == 0
    missing = run("memory", "get", memory["id"])
    assert missing.exit_code == 1
    assert "not found" in missing.output


def test_get_says_where_a_memory_came_from(run) -> None:
    learned = '{"role": "user", "speaker": "Caroline", "requestId": "req_42", "sessionId": "s1", '
    learned += '"learnedAt": "2026-05-08T14:03:00.000Z"}'
    added = json.loads(
        run("memory", "add", "-k", "k1", "-c", "lives in Lisbon", "--metadata", learned).stdout
    )
    shown = run("memory", "get", added["id"])
    assert shown.exit_code == 0, shown.output
    assert shown.stderr == "learned from request req_42 at 2026-05-08 14:03 UTC (Caroline, session s1)\n"
    assert json.loads(shown.stdout)["provenance"]["requestId"] == "req_42"  # stdout stays JSON


def test_remember_then_search_and_list(run) -> None:
    stored = json.loads(
        run("memory", "remember", "-k", "k1", "I prefer TypeScript. I don't like Python.").output
    )
    assert {m["key"] for m in stored} == {"preference:typescript", "preference:python"}

    found = json.loads(run("memory", "search", "-k", "k1", "what about python?").output)
    assert found[0]["content"] == "does not like Python"
    assert found[0]["tier"] == "hybrid-rrf"  # by its words and by the bundled model's meaning

    listing = run("memory", "list", "-k", "k1")
    assert "2 memories" in listing.output
    as_json = json.loads(run("memory", "list", "-k", "k1", "--json", "--limit", "1").output)
    assert as_json["total"] == 2 and len(as_json["data"]) == 1 and as_json["totalPages"] == 2


def test_search_without_a_key_searches_every_key_and_says_so(run) -> None:
    run("memory", "add", "-k", "k1", "-c", "prefers the vim editor", "--key", "preference:editor")
    run("memory", "add", "-k", "k2", "-c", "prefers the emacs editor", "--key", "preference:editor")
    run("memory", "add", "-c", "an unowned editor note")
    everywhere = run("memory", "search", "editor")
    assert everywhere.exit_code == 0, everywhere.output
    found = json.loads(everywhere.stdout)
    assert {m["apiKeyId"] for m in found} == {"k1", "k2", ""}
    assert "searched every key" in everywhere.stderr
    one = run("memory", "search", "-k", "k2", "editor")
    assert [m["content"] for m in json.loads(one.stdout)] == ["prefers the emacs editor"]
    assert one.stderr == ""
    unowned = json.loads(run("memory", "search", "-k", "", "editor").stdout)
    assert [m["content"] for m in unowned] == ["an unowned editor note"]


def test_the_list_is_a_table_unless_json_is_asked_for(run) -> None:
    run("memory", "add", "-k", "k1", "-c", "prefers vim", "--key", "preference:editor")
    table = run("memory", "list").output.splitlines()
    assert table[0].split()[1:4] == ["k1", "factual", "preference:editor"]
    assert table[-1] == "1 memories, page 1 of 1"
    assert json.loads(run("memory", "list", "--json").output)["data"][0]["content"] == "prefers vim"


def test_end_users_of_a_key_are_added_listed_searched_and_exported_apart(run, tmp_path: Path) -> None:
    run("memory", "add", "-k", "k1", "-c", "the key's own: ships on Fridays")
    assert run("memory", "add", "-k", "k1", "-u", "ana", "-c", "Ana likes tea").exit_code == 0
    run("memory", "remember", "-k", "k1", "-u", "ben", "I prefer coffee.")
    table = run("memory", "list", "-k", "k1").output.splitlines()  # the key's, with its users'
    assert sorted(line.split()[1] for line in table[:-1]) == ["k1", "k1/ana", "k1/ben"]
    anas = json.loads(run("memory", "list", "-k", "k1", "-u", "ana", "--json").output)["data"]
    assert [(m["apiKeyId"], m["userId"], m["content"]) for m in anas] == [("k1", "ana", "Ana likes tea")]
    found = json.loads(run("memory", "search", "-k", "k1", "-u", "ben", "tea coffee").output)
    assert [(m["userId"], m["content"]) for m in found] == [("ben", "prefers coffee")]
    exported = tmp_path / "k1.jsonl"
    run("memory", "export", "-k", "k1", "-o", str(exported))
    users = sorted(json.loads(line)["userId"] for line in exported.read_text().splitlines())
    assert users == ["", "ana", "ben"]  # a key's export holds its end users too
    other_db = tmp_path / "other.db"
    CliRunner().invoke(main, ["--db", str(other_db), "memory", "import", str(exported)])
    again = CliRunner().invoke(
        main, ["--db", str(other_db), "memory", "list", "-k", "k1", "-u", "ana", "--json"]
    )
    assert [m["content"] for m in json.loads(again.output)["data"]] == ["Ana likes tea"]  # still Ana's


@pytest.mark.parametrize(
    "args",
    [
        ("memory", "search", "--scope", "apiKey", "editor"),
        ("memory", "search", "--scope", "session", "editor"),
        ("memory", "add", "-k", "k1", "-c", "   "),
        ("memory", "add", "-k", "k1", "-c", "x", "--metadata", "[1, 2]"),
        ("memory", "add", "-k", "k1", "-c", "x", "--metadata", "{oops"),
        ("memory", "add", "-k", "k1", "-c", "x", "--expires-at", "next tuesday"),
        ("memory", "list", "--limit", "0"),
        ("memory", "list", "--page", "0"),
        ("settings", "set", "maxTokens=99999"),
        ("settings", "set", "noSuchSetting=1"),
        ("settings", "set", "nonsense"),
        ("summarize",),
    ],
)
def test_bad_input_exits_2_with_a_message_and_writes_nothing(run, args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    assert "Traceback" not in result.output
    listing = json.loads(run("memory", "list", "--json").output)
    assert listing["total"] == 0


def test_settings_get_and_set(run) -> None:
    before = json.loads(run("settings", "get").output)
    assert before["enabled"] is False and before["maxTokens"] == 2000
    after = json.loads(run("settings", "set", "enabled=true", "maxTokens=1500", "strategy=semantic").output)
    assert after["enabled"] is True and after["maxTokens"] == 1500 and after["strategy"] == "semantic"
    assert json.loads(run("settings", "get").output)["maxTokens"] == 1500


def test_export_import_round_trip_reports_bad_lines(run, tmp_path: Path) -> None:
    run("memory", "remember", "-k", "k1", "I prefer vim. I always test first.")
    run("memory", "add", "-k", "k2", "-c", "likes tea", "--key", "preference:tea")
    export_file = tmp_path / "out.jsonl"
    assert run("memory", "export", "-o", str(export_file)).exit_code == 0
    lines = export_file.read_text().splitlines()
    assert len(lines) == 3
    assert {json.loads(line)["apiKeyId"] for line in lines} == {"k1", "k2"}

    other_db = tmp_path / "other.db"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "\n".join([lines[0], "{not json", json.dumps({"content": ""}), lines[1], lines[2]]) + "\n"
    )
    result = CliRunner().invoke(main, ["--db", str(other_db), "memory", "import", str(broken)])
    assert result.exit_code == 2
    report = json.loads(result.output)
    assert report["imported"] == 3
    assert [e["line"] for e in report["errors"]] == [2, 3]

    again = CliRunner().invoke(main, ["--db", str(other_db), "memory", "import", str(export_file)])
    assert json.loads(again.output)["skipped"] == 3


def test_import_json_array_from_stdin(run) -> None:
    payload = json.dumps([{"apiKeyId": "k9", "content": "uses zsh", "key": "tool:shell"}])
    result = run("memory", "import", "-", input=payload)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["imported"] == 1
    assert json.loads(run("memory", "list", "-k", "k9", "--json").output)["data"][0]["content"] == "uses zsh"


def test_summarize_dry_run_and_health(run) -> None:
    result = json.loads(run("summarize", "-k", "k1", "--dry-run").output)
    assert result["dryRun"] is True and result["candidates"] == []
    health = run("health")
    assert health.exit_code == 0
    assert json.loads(health.output)["working"] is True


def test_doctor_reports_sqlite_features(run) -> None:
    result = run("doctor")
    assert result.exit_code == 0
    assert "fts5" in result.output and "yes" in result.output
    assert "sqlite-vec" in result.output


def test_demo_runs_a_conversation_through_the_gateway() -> None:
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert "preference:typescript_for_new_services" in result.output
    assert "does not like ORMs that hide SQL  [negative]" in result.output
    assert "system: Memory context: " in result.output
    assert (
        "Hi! I prefer TypeScript for new services, and I always write tests first.  [what was said]"
        in result.output
    )
    # The four facts and both turns: "database" relates to the turn that names Postgres.
    assert "injected 6 memories" in result.output
    assert "User: For this project I'll use Postgres." in result.output


def test_serve_prints_the_admin_token_once_and_serves(tmp_path: Path) -> None:
    import os
    import signal
    import time

    import httpx
    from servers import TLS, free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMROUTE_")}
    env["MEMROUTE_DATA_DIR"] = str(tmp_path)

    def start(port: int) -> tuple[subprocess.Popen[bytes], str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memroute", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=0,  # unbuffered: readline() takes only the first line, communicate() the rest
        )
        assert proc.stdout is not None
        first_line = proc.stdout.readline().decode()  # "memroute <url>", also for --port 0
        url = first_line.split()[1]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/healthz", verify=TLS).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=20)
        return proc, first_line + output.decode()

    first, output = start(port)
    token = (tmp_path / "admin_token").read_text().strip()
    assert f"admin token (shown once; stored in {tmp_path}/admin_token): {token}" in output
    assert f"http://127.0.0.1:{port}/v1" in output
    assert f"http://127.0.0.1:{port}/dashboard" in output
    assert first.returncode == 0
    assert '"GET /healthz HTTP/1.1" 200' in output  # the access log is on by default
    assert oct((tmp_path / "admin_token").stat().st_mode & 0o777) == "0o600"
    # The commands it prints work as printed, from a shell without MEMROUTE_DATA_DIR.
    switch_on = re.search(r"memory is off: .*`(.+ settings set enabled=true)`", output)
    assert switch_on is not None, output
    create_key = re.search(r"create a client key: (.+)$", output, re.M)
    assert create_key is not None, output
    bare_env = {k: v for k, v in env.items() if k != "MEMROUTE_DATA_DIR"}
    for command in (switch_on.group(1), create_key.group(1)):
        done = subprocess.run(
            shlex.split(command), env=bare_env, capture_output=True, text=True, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
    env["MEMROUTE_ACCESS_LOG"] = "false"
    again_proc, again = start(0)  # any free port, named in the banner
    assert again_proc.returncode == 0, again
    assert "GET /healthz" not in again  # switched off
    assert token not in again and "admin token: in" in again
    assert "memory is on" in again and "memory is off" not in again
    assert "Uvicorn running on " + again.split()[1] in again


def test_the_printed_command_is_the_one_that_runs(tmp_path: Path) -> None:
    script = tmp_path / "venv" / "bin" / "memroute"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    elsewhere = tmp_path / "other" / "memroute"
    elsewhere.parent.mkdir()
    elsewhere.write_text("#!/bin/sh\n")
    assert self_command(str(script), "/usr/bin/python3", lambda name: str(script)) == "memroute"
    assert self_command(str(script), "/usr/bin/python3", lambda name: str(elsewhere)) == str(script)
    assert self_command(str(script), "/usr/bin/python3", lambda name: None) == str(script)
    assert self_command(".venv/bin/memroute", "python3", lambda name: None) == ".venv/bin/memroute"
    assert self_command("memroute", "python3", lambda name: None) == "memroute"
    main_py = "/src/memroute/__main__.py"
    assert (
        self_command(main_py, "/opt/my python/bin/python", shutil.which)
        == "'/opt/my python/bin/python' -m memroute"
    )


def test_real_process_help_and_bad_input(tmp_path: Path) -> None:
    help_run = subprocess.run([sys.executable, "-m", "memroute", "--help"], capture_output=True, text=True)
    assert help_run.returncode == 0 and "memory" in help_run.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "memroute", "--db", str(tmp_path / "x.db"), "memory", "get", "nope"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1
    assert bad.stderr.strip() == "error: memory nope not found"


def test_doctor_reports_the_database_in_use(run) -> None:
    run("memory", "add", "-k", "k1", "-c", "prefers vim")
    result = run("doctor")
    assert result.exit_code == 0
    lines = dict(line.split(None, 1) for line in result.output.splitlines() if line and line[0] != " ")
    assert lines["memories"].strip() == "1"
    assert "0 pending" in result.output


def test_reindex_embeds_waiting_memories_and_doctor_reports_the_source(run) -> None:
    run("memory", "add", "-k", "k1", "-c", "has a dog named Biscuit")
    run("memory", "add", "-k", "k1", "-c", "prefers TypeScript")
    assert run("settings", "set", "transformersEnabled=false").exit_code == 0  # the bundled model off
    nothing = run("reindex")
    assert nothing.exit_code == 1
    assert json.loads(nothing.output)["reason"] == "auto: no embedding source available"
    assert run("settings", "set", "embeddingSource=hashing").exit_code == 0
    done = run("reindex")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert (report["started"], report["processed"], report["pending"]) == (True, 2, 0)
    again = json.loads(run("reindex", "--force").output)
    assert again["processed"] == 2
    doctor = run("doctor").output
    assert "hashing (hashing-256)" in doctor and "2 stored, 0 waiting for a vector" in doctor
    search = run("memory", "search", "-k", "k1", "dog Biscuit", "--strategy", "semantic")
    assert "has a dog named Biscuit" in search.output
