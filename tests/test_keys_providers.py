"""Client keys and upstream providers: library, routing and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from memories import open_memory
from storage import database

from memroute import InvalidInput, Memory, NotFound, UpstreamError
from memroute.cli import main
from memroute.models.wire import to_wire
from memroute.service.keys import hash_secret
from memroute.service.providers import ProviderRegistry


def _raw(db_path: Path, sql: str) -> list[tuple]:
    import apsw

    con = apsw.Connection(str(db_path))
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_key_secret_is_shown_once_and_only_its_hash_is_stored(mem: Memory, db_path: Path) -> None:
    key, secret = mem.keys.create("laptop")
    assert secret.startswith("mr-") and len(secret) > 40
    assert key.prefix == secret[:8]
    stored = _raw(db_path, "SELECT key_hash FROM api_keys")
    assert stored == [(hash_secret(secret),)]
    dump = json.dumps([to_wire(k) for k in mem.keys.list()])
    assert secret not in dump and hash_secret(secret) not in dump


def test_authenticate_finds_active_keys_only(mem: Memory, clock) -> None:
    key, secret = mem.keys.create("ci")
    assert mem.keys.authenticate(secret).id == key.id
    assert mem.keys.authenticate(secret + "x") is None
    assert mem.keys.authenticate("") is None
    assert mem.keys.authenticate(None) is None
    mem.keys.revoke(key.id)
    assert mem.keys.authenticate(secret) is None
    assert mem.keys.get(key.id).revoked_at is not None


def test_last_used_is_recorded_but_not_on_every_request(mem: Memory, clock) -> None:
    key, secret = mem.keys.create("ci")
    mem.keys.authenticate(secret)
    first = mem.keys.get(key.id).last_used_at
    assert first is not None
    clock.advance(seconds=5)
    mem.keys.authenticate(secret)
    assert mem.keys.get(key.id).last_used_at == first
    clock.advance(seconds=120)
    mem.keys.authenticate(secret)
    assert mem.keys.get(key.id).last_used_at > first


def test_bad_key_names_and_unknown_ids(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.keys.create("  ")
    with pytest.raises(InvalidInput):
        mem.keys.create("x" * 101)
    with pytest.raises(NotFound):
        mem.keys.revoke("no-such-key")
    assert mem.keys.list() == []


def test_provider_secrets_are_masked_and_routes_strip_the_prefix(mem: Memory) -> None:
    mem.providers.add("openai", "https://api.openai.com/v1/", api_key="sk-test-1234567890abcd")
    listed = to_wire(mem.providers.list()[0])
    assert listed["baseUrl"] == "https://api.openai.com/v1"
    assert listed["apiKeyMasked"] == "***abcd"
    assert "sk-test" not in json.dumps(listed)
    route = mem.providers.route("openai/gpt-4o-mini")
    assert (route.provider_id, route.model, route.api_key) == (
        "openai",
        "gpt-4o-mini",
        "sk-test-1234567890abcd",
    )


def test_bare_and_unknown_prefixed_models_go_to_the_default(mem: Memory) -> None:
    mem.providers.add("local", "http://127.0.0.1:11434/v1", default=True)
    mem.providers.add("openai", "https://api.openai.com/v1")
    assert mem.providers.route("llama3").provider_id == "local"
    routed = mem.providers.route("meta-llama/llama-3-8b")  # not a provider id: sent as is
    assert (routed.provider_id, routed.model) == ("local", "meta-llama/llama-3-8b")
    mem.providers.add("openai", "https://api.openai.com/v1", default=True)
    assert mem.providers.route("gpt-4o").provider_id == "openai"
    assert [p.id for p in mem.providers.list() if p.is_default] == ["openai"]


def test_each_route_forwards_only_to_providers_of_its_wire_format(mem: Memory) -> None:
    mem.providers.add("openai", "https://api.openai.com/v1", default=True)
    mem.providers.add("claude", "https://api.anthropic.com/v1", format="anthropic")
    # A bare model goes to the default when it speaks the route's format, else to the one
    # provider that does.
    assert mem.providers.route("gpt-4o").provider_id == "openai"
    bare = mem.providers.route("claude-sonnet-4-5", "anthropic")
    assert (bare.provider_id, bare.model, bare.format) == ("claude", "claude-sonnet-4-5", "anthropic")
    with pytest.raises(InvalidInput, match="speaks the anthropic format") as wrong:
        mem.providers.route("claude/claude-sonnet-4-5")
    assert wrong.value.field == "model"
    with pytest.raises(InvalidInput, match="speaks the openai format"):
        mem.providers.route("openai/gpt-4o", "anthropic")
    # Two of a format and a default of the other: the model must name its provider.
    mem.providers.add("claude-eu", "https://eu.example.com/v1", format="anthropic")
    with pytest.raises(InvalidInput, match="--format anthropic"):
        mem.providers.route("claude-sonnet-4-5", "anthropic")
    assert mem.providers.route("claude-eu/claude-x", "anthropic").provider_id == "claude-eu"
    # A replaced provider keeps its format unless told; a wrong one is refused.
    mem.providers.add("claude", "https://proxy.example.com/v1")
    assert mem.providers.route("claude/x", "anthropic").base_url == "https://proxy.example.com/v1"
    with pytest.raises(InvalidInput, match="openai, anthropic") as bad:
        mem.providers.add("gemini", "https://x.example.com", format="gemini")
    assert bad.value.field == "format" and "gemini" not in [p.id for p in mem.providers.list()]


def test_environment_upstream_and_key_by_env_name(mem: Memory, clock) -> None:
    """MEMROUTE_UPSTREAM_BASE_URL/_API_KEY become the default; keys can be env var names."""
    with database(mem) as store:  # a registry of its own on the same file
        registry = ProviderRegistry(
            store,
            clock,
            default_base_url="http://127.0.0.1:9999/v1",
            default_api_key="up-secret",
            environ={"GROQ_KEY": "gsk-abc"},
        )
        route = registry.route("gpt-4o")
        assert (route.provider_id, route.base_url, route.api_key) == (
            "default",
            "http://127.0.0.1:9999/v1",
            "up-secret",
        )
        registry.add("groq", "https://api.groq.com/openai/v1", api_key_env="GROQ_KEY")
        assert registry.route("groq/llama-3.1-8b").api_key == "gsk-abc"
        assert to_wire(registry.list()[0])["apiKeyEnv"] == "GROQ_KEY"


def test_no_upstream_is_a_clear_error(mem: Memory, clock) -> None:
    with database(mem) as store, pytest.raises(UpstreamError, match="MEMROUTE_UPSTREAM_BASE_URL"):
        ProviderRegistry(store, clock).route("gpt-4o")


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("Open AI", "https://x"), {}),
        (("openai", "ftp://x"), {}),
        (("openai", "not a url"), {}),
        (("openai", "https://x"), {"api_key_env": "1BAD"}),
        (("openai", "https://x"), {"api_key": "  "}),
        (("openai", "https://x"), {"api_key": "k", "api_key_env": "K"}),
    ],
)
def test_bad_providers_are_refused(mem: Memory, args: tuple, kwargs: dict) -> None:
    with pytest.raises(InvalidInput):
        mem.providers.add(*args, **kwargs)
    assert mem.providers.list() == []


def test_cli_keys_and_providers(db_path: Path) -> None:
    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        return runner.invoke(main, ["--db", str(db_path), *args], input=input)

    created = run("keys", "create", "laptop")
    assert created.exit_code == 0, created.output
    secret = json.loads(created.stdout)["secret"]
    key_id = json.loads(created.stdout)["id"]
    listed = run("keys", "list")
    assert secret not in listed.output and json.loads(listed.output)[0]["id"] == key_id
    revoked = json.loads(run("keys", "revoke", key_id).output)
    assert revoked["active"] is False

    added = run(
        "providers",
        "add",
        "openai",
        "--base-url",
        "https://api.openai.com/v1",
        "--api-key-stdin",
        "--default",
        input="sk-live-abcdefghijkl\n",
    )
    assert added.exit_code == 0, added.output
    assert "sk-live" not in added.output and json.loads(added.output)["apiKeyMasked"] == "***ijkl"
    assert "sk-live" not in run("providers", "list").output
    assert run("providers", "remove", "openai").exit_code == 0
    missing = run("providers", "remove", "openai")
    assert missing.exit_code == 1 and "not found" in missing.output
    bad = run("providers", "add", "Bad Id", "--base-url", "https://x")
    assert bad.exit_code == 2
    claude = run(
        "providers", "add", "claude", "--base-url", "https://api.anthropic.com/v1", "--format", "anthropic"
    )
    assert claude.exit_code == 0 and json.loads(claude.output)["format"] == "anthropic"
    assert run("providers", "add", "x", "--base-url", "https://x", "--format", "gemini").exit_code == 2


def test_cli_sets_shows_and_resets_a_keys_limits(db_path: Path) -> None:
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(main, ["--db", str(db_path), *args])

    key_id = json.loads(run("keys", "create", "agent").stdout)["id"]
    shown = json.loads(run("keys", "limits", key_id).output)
    assert (shown["maxConcurrent"], shown["requestsPerMinute"]) == (None, None)
    both = json.loads(run("keys", "limits", key_id, "--max-concurrent", "4", "--rpm", "120").output)
    assert (both["maxConcurrent"], both["requestsPerMinute"]) == (4, 120)
    reset = json.loads(run("keys", "limits", key_id, "--rpm", "default").output)
    assert (reset["maxConcurrent"], reset["requestsPerMinute"]) == (4, None)
    assert json.loads(run("keys", "list").output)[0]["maxConcurrent"] == 4

    for option, value in (("--max-concurrent", "0"), ("--rpm", "-1"), ("--rpm", "lots")):
        refused = run("keys", "limits", key_id, option, value)
        assert refused.exit_code == 2 and "error:" in refused.output
    assert json.loads(run("keys", "limits", key_id).output)["maxConcurrent"] == 4  # unchanged
    missing = run("keys", "limits", "no-such-key", "--rpm", "5")
    assert missing.exit_code == 1 and "not found" in missing.output


def test_upstream_from_the_environment_through_config(tmp_path: Path) -> None:
    from memroute.config import Config

    env = {"MEMROUTE_UPSTREAM_BASE_URL": "http://127.0.0.1:8000/v1", "MEMROUTE_UPSTREAM_API_KEY": "k"}
    with open_memory(config=Config.for_path(tmp_path / "m.db", environ=env), workers=True) as memory:
        route = memory.providers.route("default/gpt-4o")
        assert (route.base_url, route.model, route.api_key) == ("http://127.0.0.1:8000/v1", "gpt-4o", "k")
