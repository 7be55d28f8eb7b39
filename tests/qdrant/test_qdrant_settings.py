"""Qdrant settings (REF §1.6, §9 and the REF §14 qdrant-wiring / qdrant-schemas tests):
stored values are read leniently over the environment's fallbacks, updates are validated
strictly (one bad value refuses them all), and the API key never shows: not in `public()`,
not in a repr, not in `where`.

Where memroute deliberately differs from the reference it says so next to the test:
the collection default is `memroute_memory`, the embedding model default is None (use the
memory embedding source), there is no vectorSize setting (one collection per dimension)
and hnswEfConstruct comes from the environment only.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from memories import open_memory

from memroute import InvalidInput
from memroute.config import Config
from memroute.models.wire import to_wire
from memroute.vectors.qdrant_settings import QdrantSettings, normalize, validate_update

KEY = "qd-key-DO-NOT-LEAK-9f8e7d6c"
DEFAULT = QdrantSettings()
# What QDRANT_HOST / QDRANT_PORT / QDRANT_API_KEY / ... give the engine as its fallback.
ENV = QdrantSettings(
    host="env-qdrant.internal",
    port=6334,
    collection="env_collection",
    embedding_model="envprov/env-embed",
    api_key="env-key-0000abcd",
    hnsw_ef_construct=256,
)
NOT_ENABLED = [None, 0, "", "true", 1, "yes", [True], {"x": 1}]
MISSING = object()


def stored(**values: Any) -> dict[str, Any]:
    """Settings-table values by DB key (`qdrantHost`, ...)."""
    return {f"qdrant{k[0].upper()}{k[1:]}": v for k, v in values.items()}


# -- normalize: defaults and enabled -----------------------------------------------------------


def test_nothing_stored_and_no_environment_gives_the_defaults() -> None:
    qs = normalize({}, DEFAULT)
    assert (qs.enabled, qs.host, qs.api_key, qs.port, qs.https, qs.quantization) == (
        False,
        "",
        None,
        6333,
        False,
        "none",
    )
    # memroute: the collection base is `memroute_memory` (REF: omniroute_memory), and no
    # embedding model means "the memory embedding source" (REF: openai/text-embedding-3-small).
    assert qs.collection == "memroute_memory"
    assert qs.embedding_model is None
    assert qs.hnsw_ef_construct == 128
    assert qs.active is False


@pytest.mark.parametrize("value", [MISSING, *NOT_ENABLED], ids=lambda v: "unset" if v is MISSING else repr(v))
def test_enabled_only_when_stored_as_exactly_true(value: Any) -> None:
    values = stored(host="qdrant.internal") | ({} if value is MISSING else stored(enabled=value))
    qs = normalize(values, DEFAULT)
    assert qs.enabled is False
    assert qs.active is False
    assert normalize(stored(host="qdrant.internal", enabled=True), DEFAULT).active is True


def test_disabled_wins_over_a_set_host_and_enabled_needs_a_host() -> None:
    assert normalize(stored(enabled=False, host="qdrant.internal"), DEFAULT).active is False
    only_enabled = normalize(stored(enabled=True), DEFAULT)
    assert only_enabled.enabled is True and only_enabled.active is False  # "not configured"


def test_a_full_settings_object_maps_every_field() -> None:
    qs = normalize(
        stored(
            enabled=True,
            host="https://q.example.com",
            port=7443,
            https=True,
            collection="team_memory",
            embeddingModel="openai/text-embedding-3-large",
            quantization="binary",
            apiKey=KEY,
        ),
        ENV,
    )
    assert qs == QdrantSettings(
        enabled=True,
        host="https://q.example.com",
        port=7443,
        https=True,
        collection="team_memory",
        embedding_model="openai/text-embedding-3-large",
        quantization="binary",
        api_key=KEY,
        hnsw_ef_construct=256,  # memroute: environment only, never a stored setting
    )


# -- normalize: stored values over the environment ---------------------------------------------


def test_the_stored_host_beats_the_environment_and_the_environment_fills_a_missing_one() -> None:
    assert normalize(stored(host="db-qdrant.internal"), ENV).host == "db-qdrant.internal"
    assert normalize({}, ENV).host == "env-qdrant.internal"
    assert normalize(stored(host="   "), ENV).host == "env-qdrant.internal"
    assert normalize(stored(host=None), ENV).host == "env-qdrant.internal"
    assert normalize(stored(host="  db-qdrant  "), ENV).host == "db-qdrant"


def test_every_setting_falls_back_to_the_environment() -> None:
    qs = normalize({}, ENV)
    assert (qs.host, qs.port, qs.collection, qs.embedding_model, qs.api_key, qs.hnsw_ef_construct) == (
        "env-qdrant.internal",
        6334,
        "env_collection",
        "envprov/env-embed",
        "env-key-0000abcd",
        256,
    )


@pytest.mark.parametrize(
    ("raw", "port"), [("6335", 6335), (" 6335 ", 6335), (6335, 6335), (1, 1), (65535, 65535)]
)
def test_a_port_is_read_from_a_number_or_a_numeric_string(raw: Any, port: int) -> None:
    assert normalize(stored(port=raw), ENV).port == port


@pytest.mark.parametrize(
    "raw", ["abc", "", "6335.0", "-1", 0, 70000, -5, True, 6334.5, None, [6335]], ids=repr
)
def test_an_unusable_stored_port_falls_back_to_the_environment(raw: Any) -> None:
    assert normalize(stored(port=raw), ENV).port == 6334
    assert normalize(stored(port=raw), DEFAULT).port == 6333


def test_a_superscript_digit_port_falls_back_instead_of_raising() -> None:
    assert normalize(stored(port="²"), ENV).port == 6334


def test_a_blank_api_key_uses_the_environment_key_then_none() -> None:
    assert normalize(stored(apiKey="   "), ENV).api_key == "env-key-0000abcd"
    assert normalize(stored(apiKey="   "), DEFAULT).api_key is None
    assert normalize(stored(apiKey=None), DEFAULT).api_key is None
    assert normalize(stored(apiKey=f"  {KEY}\n"), ENV).api_key == KEY


@pytest.mark.parametrize("quantization", ["int8", "binary", "none"])
def test_a_known_quantization_is_read(quantization: str) -> None:
    assert normalize(stored(quantization=quantization), DEFAULT).quantization == quantization


@pytest.mark.parametrize("raw", ["bogus", 5, None, "INT8", ""], ids=repr)
def test_an_unknown_quantization_reads_as_none(raw: Any) -> None:
    assert normalize(stored(quantization=raw), DEFAULT).quantization == "none"


def test_https_collection_and_model_are_read_leniently() -> None:
    assert normalize(stored(https=True), DEFAULT).https is True
    assert normalize(stored(https="true"), DEFAULT).https is False
    assert normalize(stored(collection="  "), ENV).collection == "env_collection"
    assert normalize(stored(collection="mine"), ENV).collection == "mine"
    assert normalize(stored(embeddingModel=""), ENV).embedding_model == "envprov/env-embed"
    assert normalize(stored(embeddingModel="p/m"), ENV).embedding_model == "p/m"


# -- the URL ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "https", "url"),
    [
        ("localhost", False, "http://localhost:6333"),
        ("localhost", True, "https://localhost:6333"),
        ("qdrant.internal/", False, "http://qdrant.internal:6333"),
        ("http://qdrant.internal///", False, "http://qdrant.internal:6333"),
        ("https://q.example.com", False, "https://q.example.com:6333"),
        ("http://q.example.com", True, "http://q.example.com:6333"),  # an explicit scheme wins
        ("q.example.com:7000", False, "http://q.example.com:7000"),
        ("https://q.example.com:443/", False, "https://q.example.com:443"),
        ("http://h/qdrant/", False, "http://h:6333/qdrant"),
        ("http://[::1]", False, "http://[::1]:6333"),
        ("[::1]", True, "https://[::1]:6333"),
        ("http://[::1]:7000/", False, "http://[::1]:7000"),
        ("  127.0.0.1  ", False, "http://127.0.0.1:6333"),
    ],
)
def test_the_base_url_has_a_scheme_a_port_and_no_trailing_slash(host: str, https: bool, url: str) -> None:
    qs = QdrantSettings(host=host, https=https)
    assert qs.url == url
    assert qs.where == url
    assert qs.local_location is None


def test_the_port_setting_applies_only_when_the_host_names_none() -> None:
    assert QdrantSettings(host="h", port=7001).url == "http://h:7001"
    assert QdrantSettings(host="h:7002", port=7001).url == "http://h:7002"


@pytest.mark.parametrize(
    ("host", "location"),
    [(":memory:", ":memory:"), ("local:/var/lib/qdrant", "/var/lib/qdrant"), ("local: /data/q ", "/data/q")],
)
def test_memory_and_local_directory_hosts_run_qdrant_local_mode(host: str, location: str) -> None:
    qs = QdrantSettings(enabled=True, host=host)
    assert qs.local_location == location
    assert qs.where == f"local mode ({location})"
    assert qs.url == host  # no http:// or port glued onto a local location
    assert qs.active is True


# -- validate_update ----------------------------------------------------------------------------


def test_an_update_maps_api_fields_to_database_keys() -> None:
    assert validate_update(
        {
            "enabled": True,
            "host": " qdrant.internal ",
            "port": 6334,
            "https": False,
            "collection": "team_memory",
            "embeddingModel": "openai/text-embedding-3-small",
            "quantization": "int8",
            "apiKey": f" {KEY} ",
        }
    ) == {
        "qdrantEnabled": True,
        "qdrantHost": "qdrant.internal",
        "qdrantPort": 6334,
        "qdrantHttps": False,
        "qdrantCollection": "team_memory",
        "qdrantEmbeddingModel": "openai/text-embedding-3-small",
        "qdrantQuantization": "int8",
        "qdrantApiKey": KEY,
    }
    assert validate_update({}) == {}  # a partial update is valid (REF qdrant-schemas)


@pytest.mark.parametrize(
    ("changes", "stored_as"),
    [
        ({"apiKey": ""}, {"qdrantApiKey": None}),
        ({"apiKey": "   "}, {"qdrantApiKey": None}),
        ({"apiKey": None}, {"qdrantApiKey": None}),
        ({"embeddingModel": ""}, {"qdrantEmbeddingModel": None}),
        ({"embeddingModel": None}, {"qdrantEmbeddingModel": None}),
        ({"host": ""}, {"qdrantHost": None}),
        ({"host": ":memory:"}, {"qdrantHost": ":memory:"}),
        ({"host": "local:/tmp/qdrant"}, {"qdrantHost": "local:/tmp/qdrant"}),
        ({"host": "http://[::1]:6333"}, {"qdrantHost": "http://[::1]:6333"}),
        ({"host": "https://q.example.com/"}, {"qdrantHost": "https://q.example.com/"}),
    ],
)
def test_blank_values_remove_and_local_or_url_hosts_are_accepted(
    changes: dict[str, Any], stored_as: dict[str, Any]
) -> None:
    assert validate_update(changes) == stored_as


def test_an_unknown_field_is_refused_and_names_the_known_ones() -> None:
    with pytest.raises(InvalidInput) as refused:
        validate_update({"host": "fine", "vectorSize": 1536})
    assert "vectorSize" in str(refused.value)
    assert "collection" in str(refused.value)  # the message lists what is accepted


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("port", 0),
        ("port", 70000),
        ("port", -1),
        ("port", "80"),
        ("port", True),
        ("port", 6334.0),
        ("port", None),
        ("enabled", "true"),
        ("enabled", 1),
        ("enabled", None),
        ("https", "yes"),
        ("quantization", "bogus"),
        ("quantization", "INT8"),
        ("quantization", None),
        ("collection", ""),
        ("collection", "has space"),
        ("collection", "dots.not.allowed"),
        ("collection", "x" * 101),
        ("collection", 7),
        ("host", "qdrant internal"),
        ("host", "ftp://qdrant.internal"),
        ("host", "http://"),
        ("host", "localhost:abc"),
        ("host", "::1"),  # a bare IPv6 literal needs brackets
        ("host", "h:99999"),
        ("host", 6333),
        ("apiKey", 12345),
        ("apiKey", ["k"]),
        ("apiKey", "k" * 1025),
        ("embeddingModel", "text-embedding-3-small"),
        ("embeddingModel", "/model"),
        ("embeddingModel", "provider/"),
        ("embeddingModel", "p/" + "m" * 255),
        ("embeddingModel", 3),
    ],
)
def test_a_bad_value_is_refused_with_its_field_named(field: str, value: Any) -> None:
    with pytest.raises(InvalidInput) as refused:
        validate_update({field: value})
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")


def test_one_bad_value_refuses_the_whole_update() -> None:
    with pytest.raises(InvalidInput):
        validate_update({"host": "qdrant.internal", "apiKey": KEY, "port": 0})


def test_a_refused_api_key_is_not_repeated_in_the_error() -> None:
    with pytest.raises(InvalidInput) as refused:
        validate_update({"apiKey": KEY + "x" * 1024})
    assert KEY not in str(refused.value)


def test_local_mode_without_a_directory_is_refused() -> None:
    with pytest.raises(InvalidInput):
        validate_update({"host": "local:"})


# -- the public view, repr and where: the key never shows ---------------------------------------


def test_the_public_view_masks_the_key_to_its_last_four_characters() -> None:
    qs = QdrantSettings(enabled=True, host="qdrant.internal", api_key=KEY)
    public = to_wire(qs.public())
    assert public == {
        "enabled": True,
        "host": "qdrant.internal",
        "port": 6333,
        "https": False,
        "collection": "memroute_memory",
        "embeddingModel": None,
        "quantization": "none",
        "hasApiKey": True,
        "apiKeyMasked": "***" + KEY[-4:],
    }
    assert KEY not in repr(public)


@pytest.mark.parametrize("key", ["k", "abcd", "12345678"])
def test_a_short_key_is_masked_entirely(key: str) -> None:
    public = QdrantSettings(api_key=key).public()
    assert public.has_api_key is True
    assert public.api_key_masked == "***"


def test_no_key_shows_as_none() -> None:
    public = QdrantSettings().public()
    assert public.has_api_key is False and public.api_key_masked is None


def test_repr_str_and_where_never_contain_the_key() -> None:
    for host in ("qdrant.internal", ":memory:", "https://q.example.com:443"):
        qs = QdrantSettings(enabled=True, host=host, api_key=KEY)
        for text in (repr(qs), str(qs), qs.where, repr(replace(qs, port=7000))):
            assert KEY not in text
            assert KEY[-8:] not in text
    assert "api_key" not in repr(QdrantSettings(api_key=KEY))


# -- the environment (Config.from_env) and through the engine -----------------------------------

QDRANT_ENV = {
    "QDRANT_HOST": " env-qdrant.internal ",
    "QDRANT_PORT": "6334",
    "QDRANT_API_KEY": f" {KEY} ",
    "QDRANT_COLLECTION": "env_collection",
    "QDRANT_EMBEDDING_MODEL": "envprov/env-embed",
    "QDRANT_HNSW_EF_CONSTRUCT": "256",
    "QDRANT_TIMEOUT": "2.5",
    "QDRANT_VECTOR_SIZE": "768",  # memroute: ignored, the collection follows the vectors' dimension
}


def test_config_reads_every_qdrant_variable(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ=QDRANT_ENV)
    assert (
        config.qdrant_host,
        config.qdrant_port,
        config.qdrant_api_key,
        config.qdrant_collection,
        config.qdrant_embedding_model,
        config.qdrant_hnsw_ef_construct,
        config.qdrant_timeout_s,
    ) == ("env-qdrant.internal", 6334, KEY, "env_collection", "envprov/env-embed", 256, 2.5)


def test_config_without_qdrant_variables_uses_the_defaults(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ={"QDRANT_API_KEY": "   ", "QDRANT_HOST": ""})
    assert (config.qdrant_host, config.qdrant_port, config.qdrant_api_key) == ("", 6333, None)
    assert (config.qdrant_collection, config.qdrant_embedding_model) == ("memroute_memory", None)
    assert (config.qdrant_hnsw_ef_construct, config.qdrant_timeout_s) == (128, 5.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("QDRANT_PORT", "not-a-number"),
        ("QDRANT_PORT", "0"),
        ("QDRANT_PORT", "70000"),
        ("QDRANT_PORT", "63.5"),
        # memroute: a bad HNSW value is refused at start (REF: silently 128).
        ("QDRANT_HNSW_EF_CONSTRUCT", "not-a-number"),
        ("QDRANT_HNSW_EF_CONSTRUCT", "0"),
        ("QDRANT_TIMEOUT", "soon"),
    ],
)
def test_a_bad_qdrant_variable_stops_start_up_with_its_name(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        Config.for_path(tmp_path / "m.db", environ={name: value})
    assert refused.value.field == name
    assert value in str(refused.value)


def test_the_engine_reads_stored_settings_over_the_environment(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ=QDRANT_ENV)
    with open_memory(config=config) as mem:
        engine = mem.qdrant
        from_env = engine.settings()
        assert (from_env.host, from_env.port, from_env.collection, from_env.embedding_model) == (
            "env-qdrant.internal",
            6334,
            "env_collection",
            "envprov/env-embed",
        )
        assert (from_env.api_key, from_env.hnsw_ef_construct, from_env.enabled) == (KEY, 256, False)
        assert from_env.public().api_key_masked == "***" + KEY[-4:]

        engine.update_settings({"host": "db-qdrant.internal", "port": 7000, "apiKey": "db-key-1234wxyz"})
        from_db = engine.settings()
        assert (from_db.host, from_db.port, from_db.api_key) == (
            "db-qdrant.internal",
            7000,
            "db-key-1234wxyz",
        )
        assert from_db.collection == "env_collection"  # not stored: still the environment's

        engine.update_settings({"apiKey": ""})  # removing the stored key falls back to QDRANT_API_KEY
        assert engine.settings().api_key == KEY

    # The settings live in the database: a restart reads them back.
    with open_memory(config=config) as again:
        assert again.qdrant.settings().host == "db-qdrant.internal"


def test_a_refused_engine_update_stores_nothing(tmp_path: Path) -> None:
    with open_memory(tmp_path / "m.db") as mem:
        engine = mem.qdrant
        before = engine.settings()
        with pytest.raises(InvalidInput):
            engine.update_settings({"host": "qdrant.internal", "enabled": True, "quantization": "pq"})
        assert engine.settings() == before
        assert mem.settings().vector_store == "auto"
