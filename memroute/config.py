"""Configuration from environment variables, built once at the edge.

Only `service.py` and the edges (CLI, web, MCP) read a Config; logic code gets
plain arguments.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from memroute.errors import InvalidInput

DEFAULT_PORT = 20128
DB_FILENAME = "memroute.db"


def _int(
    env: Mapping[str, str], name: str, default: int, minimum: int = 0, maximum: int | None = None
) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"must be an integer, got {raw!r}", name) from None
    if value < minimum:
        raise InvalidInput(f"must be >= {minimum}, got {value}", name)
    if maximum is not None and value > maximum:
        raise InvalidInput(f"must be at most {maximum}, got {value}", name)
    return value


MAX_WORKERS = 64
PIN_CPUS_SETTING = "MEMROUTE_PIN_CPUS"


def allowed_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (all of them where the OS cannot say)."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return tuple(range(os.cpu_count() or 1))


def parse_cpus(spec: str, allowed: tuple[int, ...], name: str = PIN_CPUS_SETTING) -> tuple[int, ...]:
    """The CPUs `spec` names (see memroute/web/cpu_pinning.py): () for "" or "off", every
    allowed CPU for "auto", else a comma-separated list of CPUs and ranges (`0,2-3`), each
    one this process may use."""
    spec = spec.strip().lower()
    if spec in ("", "off"):
        return ()
    if spec == "auto":
        return allowed
    cpus: list[int] = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last if dash else first)
        except ValueError:
            raise InvalidInput(f"must be off, auto or CPUs such as 0,2-3; got {spec!r}", name) from None
        if low > high:
            raise InvalidInput(f"the range {part.strip()} runs backwards", name)
        cpus.extend(cpu for cpu in range(low, high + 1) if cpu not in cpus)
    outside = [cpu for cpu in cpus if cpu not in allowed]
    if outside:
        raise InvalidInput(
            f"CPU {outside[0]} is not one this process may use ({','.join(map(str, allowed))})", name
        )
    return tuple(cpus)


MAX_STREAM_GATHER_MS = 100
# How late a fast provider's streamed tokens may reach the client, so that several go in one
# write (see UpstreamResponse.chunks; docs/settings.md weighs 5 against 16 ms).
DEFAULT_STREAM_GATHER_MS = 5


def check_qdrant_host(value: str, field: str = "host") -> str | None:
    """A Qdrant host as given (None when empty): a host name, an http(s) URL (its port, if
    any, 1–65535), ":memory:" or "local:<dir>" (Qdrant's local mode). InvalidInput else."""
    value = value.strip()
    if not value:
        return None
    if len(value) > 512 or any(c.isspace() for c in value):
        raise InvalidInput("must be a host name or URL without spaces", field)
    if value == ":memory:":
        return value
    if value.startswith("local:"):
        if not value[len("local:") :].strip():
            raise InvalidInput("local mode needs a folder: local:<dir>", field)
        return value
    candidate = value if "://" in value else f"http://{value}"
    try:
        parts = urlsplit(candidate)
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"is not a valid host or URL ({exc})", field) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput("must be a host name, or an http(s) URL", field)
    if port == 0:
        raise InvalidInput("port must be from 1 to 65535", field)
    return value


def _float(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise InvalidInput(f"must be a number, got {raw!r}", name) from None


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    """A duration in seconds, more than 0."""
    value = _float(env, name, default)
    if value is None or value <= 0:
        raise InvalidInput(f"must be a number of seconds above 0, got {value}", name)
    return value


def _share(env: Mapping[str, str], name: str) -> float | None:
    """A number from 0 to 1, or None when unset."""
    value = _float(env, name, None)
    if value is not None and not 0.0 <= value <= 1.0:
        raise InvalidInput(f"must be a number from 0 to 1, got {value}", name)
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    return raw in ("1", "true", "yes", "on")


def _str(env: Mapping[str, str], name: str, default: str) -> str:
    return env.get(name, "").strip() or default


def _synchronous(env: Mapping[str, str], name: str) -> str:
    """A store's `normal` / `full` durability setting (InvalidInput naming `name` else)."""
    value = _str(env, name, "normal").lower()
    if value not in ("normal", "full"):
        raise InvalidInput("must be 'normal' or 'full'", name)
    return value


def _optional_int(env: Mapping[str, str], name: str, minimum: int) -> int | None:
    return _int(env, name, 0, minimum=minimum) if env.get(name, "").strip() else None


def _trusted_proxies(raw: str, name: str = "MEMROUTE_TRUSTED_PROXIES") -> tuple[str, ...]:
    """The comma-separated IP addresses and CIDR networks in `raw`, each checked
    (InvalidInput naming `name` for anything else, host names included)."""
    entries = tuple(item.strip() for item in raw.split(",") if item.strip())
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise InvalidInput(f"{entry!r} is not an IP address or CIDR network", name) from None
    return entries


def without_password(url: str) -> str:
    """`url` with its password replaced by `***` (for logs and status)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _database_url(raw: str) -> str | None:
    """A PostgreSQL connection URL, or None when unset (the SQLite file is used)."""
    url = raw.strip()
    if not url:
        return None
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput("must be a postgresql:// URL", "MEMROUTE_DATABASE_URL")
    return url


def _names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list, each entry stripped and lower-cased (empty entries dropped)."""
    return tuple(part.strip().lower() for part in env.get(name, "").split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class Config:
    data_dir: Path
    db_path: Path
    # A PostgreSQL URL: the shared store of several replicas instead of the SQLite file.
    database_url: str | None = field(default=None, repr=False)  # it may hold a password
    database_pool: int = 10  # connections each process keeps to it, at most
    max_content_bytes: int = 64 * 1024
    max_body_bytes: int = 4 * 1024 * 1024
    max_import_bytes: int = 1024**3  # POST /api/memory/import streams; each line is within max_body_bytes
    # Server and gateway.
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    admin_token: str | None = field(default=None, repr=False)
    upstream_base_url: str | None = None
    upstream_api_key: str | None = field(default=None, repr=False)
    require_api_key: bool = True
    max_chat_body_bytes: int = 16 * 1024 * 1024
    max_chat_messages: int = 4096
    chat_threads: int = 32  # threads that admit chats (recall, injection, queueing the turn)
    chat_serial: bool = True  # on SQLite, admissions take turns through Python (baton.py)
    recall_index_memories: int = 50_000  # memories of recalled keys held in process (store/key_index.py)
    upstream_connect_timeout_s: float = 10.0
    upstream_timeout_s: float = 600.0
    # Connections to the server (memroute/web/server.py).
    header_timeout_s: float = 10.0  # a request head must arrive whole within this
    access_log: bool = True  # `memroute serve` writes a line per request on stdout
    workers: int = 1  # server processes on the port (`memroute serve --workers N`)
    pin_cpus: tuple[int, ...] = ()  # each server process's CPU (memroute/web/cpu_pinning.py); () off
    body_timeout_s: float = 30.0  # longest pause between two pieces of a request body
    keep_alive_timeout_s: int = 30  # an idle connection between requests is closed after this
    max_connections: int | None = None  # None: 1000, fewer when the open-files limit is low
    trusted_proxies: tuple[str, ...] = ()  # peers whose X-Forwarded-For/-Proto are believed
    upstream_total_timeout_s: float = 600.0  # a whole answer, however it trickles in
    max_upstream_body_bytes: int = 64 * 1024 * 1024  # a non-streamed answer
    # A provider's stream pieces that come faster than this are relayed together, each at
    # most this late (0: each as it arrives); see UpstreamResponse.chunks.
    stream_gather_ms: int = DEFAULT_STREAM_GATHER_MS
    # Gateway limits: upstream calls at once (all keys, one key) and a key's requests a minute.
    max_concurrent: int = 128
    key_max_concurrent: int = 16
    key_rpm: int = 600  # 0: no per-minute limit
    # Embeddings and vectors.
    embedding_cache_ttl_ms: int = 300_000
    embedding_cache_max: int = 1000
    static_model: str = "minishlab/potion-base-8M"
    static_cache_dir: Path | None = None
    transformers_model: str = ""
    vec_top_k: int = 20
    redact: bool = True  # secrets are replaced in chat texts, facts, adds and imports (memory/redact.py)
    memory_framing: bool = True  # injected memories say they are background facts, not instructions
    related_words: bool = True  # keyword search matches a question's related words too (related_words.py)
    meanings: bool = True  # hybrid recall finds memories near in meaning with word vectors (key_meanings.py)
    vec_cache_mb: int = 256
    # hybrid retrieval: the embedding model's share of a memory's score (None: the source's own)
    hybrid_vector_weight: float | None = None
    vec_quantization: str = "none"
    disable_vec: bool = False
    min_score: float | None = None
    backfill_batch: int = 32
    reindex_poll_s: float = 5.0  # the re-index worker also looks for settings changed elsewhere this often
    # Qdrant: env fallbacks for the settings of `/api/settings/qdrant`.
    qdrant_host: str = ""
    qdrant_port: int = 6333
    qdrant_api_key: str | None = field(default=None, repr=False)
    qdrant_collection: str = "memroute_memory"
    qdrant_embedding_model: str | None = None
    qdrant_hnsw_ef_construct: int = 128
    qdrant_timeout_s: float = 5.0
    qdrant_retry_s: float = 30.0  # after a failure, searches skip Qdrant this long
    # Typed decay: off unless enabled.
    decay_enabled: bool = False
    decay_episodic_days: int = 30
    decay_access_immunity: int = 3
    decay_sweep_interval_s: int = 0
    # Extraction queue.
    extraction_max_attempts: int = 5
    # Bounded memory: facts stored per chat message, memories per key (0: no cap).
    max_facts_per_message: int = 20
    max_memories_per_key: int = 20_000
    sqlite_synchronous: str = "normal"
    postgres_synchronous: str = "normal"  # full: chat turns too wait for the log's flush
    # Authentication: wrong admin tokens per minute (per client address, over all), Host names.
    admin_failures_per_address: int = 10
    admin_failures_total: int = 100
    allowed_hosts: tuple[str, ...] = ()  # empty: localhost names and MEMROUTE_HOST (web/guards.py)

    @property
    def database_shown(self) -> str:
        """Where the memory is kept, as logs and the banner show it (no password)."""
        return str(self.db_path) if self.database_url is None else without_password(self.database_url)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        data_dir: str | Path | None = None,
        db_path: str | Path | None = None,
    ) -> Config:
        env = os.environ if environ is None else environ
        root = Path(data_dir or env.get("MEMROUTE_DATA_DIR") or Path.home() / ".memroute").expanduser()
        db = Path(db_path).expanduser() if db_path else root / DB_FILENAME
        static_dir = env.get("MEMORY_STATIC_CACHE_DIR", "").strip()
        quant = _str(env, "MEMORY_VEC_QUANTIZATION", "none").lower()
        sync = _synchronous(env, "MEMROUTE_SQLITE_SYNCHRONOUS")
        return cls(
            data_dir=root,
            db_path=db,
            database_url=_database_url(env.get("MEMROUTE_DATABASE_URL", "")),
            database_pool=_int(env, "MEMROUTE_DATABASE_POOL", 10, minimum=2),
            max_content_bytes=_int(env, "MEMROUTE_MAX_CONTENT_BYTES", 64 * 1024, minimum=1),
            max_body_bytes=_int(env, "MEMROUTE_MAX_BODY_BYTES", 4 * 1024 * 1024, minimum=1024),
            max_import_bytes=_int(env, "MEMROUTE_MAX_IMPORT_BYTES", 1024**3, minimum=1024),
            host=_str(env, "MEMROUTE_HOST", "127.0.0.1"),
            port=_int(env, "MEMROUTE_PORT", DEFAULT_PORT, minimum=0),
            admin_token=env.get("MEMROUTE_ADMIN_TOKEN", "").strip() or None,
            upstream_base_url=env.get("MEMROUTE_UPSTREAM_BASE_URL", "").strip() or None,
            upstream_api_key=env.get("MEMROUTE_UPSTREAM_API_KEY", "").strip() or None,
            require_api_key=_bool(env, "MEMROUTE_REQUIRE_API_KEY", True),
            max_chat_body_bytes=_int(env, "MEMROUTE_MAX_CHAT_BODY_BYTES", 16 * 1024 * 1024, minimum=1024),
            max_chat_messages=_int(env, "MEMROUTE_MAX_CHAT_MESSAGES", 4096, minimum=1),
            chat_threads=_int(env, "MEMROUTE_CHAT_THREADS", 32, minimum=1),
            chat_serial=_bool(env, "MEMROUTE_CHAT_SERIAL", True),
            recall_index_memories=_int(env, "MEMROUTE_RECALL_INDEX_MEMORIES", 50_000),
            upstream_connect_timeout_s=_float(env, "MEMROUTE_UPSTREAM_CONNECT_TIMEOUT", 10.0) or 10.0,
            upstream_timeout_s=_float(env, "MEMROUTE_UPSTREAM_TIMEOUT", 600.0) or 600.0,
            header_timeout_s=_seconds(env, "MEMROUTE_HEADER_TIMEOUT", 10.0),
            access_log=_bool(env, "MEMROUTE_ACCESS_LOG", True),
            workers=_int(env, "MEMROUTE_WORKERS", 1, minimum=1, maximum=MAX_WORKERS),
            pin_cpus=parse_cpus(env.get(PIN_CPUS_SETTING, ""), allowed_cpus()),
            body_timeout_s=_seconds(env, "MEMROUTE_BODY_TIMEOUT", 30.0),
            keep_alive_timeout_s=_int(env, "MEMROUTE_KEEP_ALIVE_TIMEOUT", 30, minimum=1),
            max_connections=_optional_int(env, "MEMROUTE_MAX_CONNECTIONS", minimum=1),
            trusted_proxies=_trusted_proxies(env.get("MEMROUTE_TRUSTED_PROXIES", "")),
            upstream_total_timeout_s=_seconds(env, "MEMROUTE_UPSTREAM_TOTAL_TIMEOUT", 600.0),
            max_upstream_body_bytes=_int(
                env, "MEMROUTE_MAX_UPSTREAM_BODY_BYTES", 64 * 1024 * 1024, minimum=1024
            ),
            stream_gather_ms=_int(
                env, "MEMROUTE_STREAM_GATHER_MS", DEFAULT_STREAM_GATHER_MS, maximum=MAX_STREAM_GATHER_MS
            ),
            max_concurrent=_int(env, "MEMROUTE_MAX_CONCURRENT", 128, minimum=1),
            key_max_concurrent=_int(env, "MEMROUTE_KEY_MAX_CONCURRENT", 16, minimum=1),
            key_rpm=_int(env, "MEMROUTE_KEY_RPM", 600),
            embedding_cache_ttl_ms=_int(env, "MEMORY_EMBEDDING_CACHE_TTL_MS", 300_000),
            embedding_cache_max=_int(env, "MEMORY_EMBEDDING_CACHE_MAX", 1000),
            static_model=_str(env, "MEMORY_STATIC_MODEL", "minishlab/potion-base-8M"),
            static_cache_dir=Path(static_dir).expanduser() if static_dir else None,
            transformers_model=_str(env, "MEMORY_TRANSFORMERS_MODEL", ""),
            vec_top_k=_int(env, "MEMORY_VEC_TOP_K", 20, minimum=1),
            redact=_bool(env, "MEMROUTE_REDACT", True),
            memory_framing=_bool(env, "MEMROUTE_MEMORY_FRAMING", True),
            related_words=_bool(env, "MEMROUTE_RELATED_WORDS", True),
            meanings=_bool(env, "MEMROUTE_MEANINGS", True),
            vec_cache_mb=_int(env, "MEMORY_VEC_CACHE_MB", 256, minimum=0),
            hybrid_vector_weight=_share(env, "MEMORY_HYBRID_VECTOR_WEIGHT"),
            vec_quantization="int8" if quant == "int8" else "none",
            disable_vec=_bool(env, "VECTOR_STORE_DISABLE_VEC", False),
            min_score=_float(env, "MEMORY_MIN_SCORE", None),
            backfill_batch=_int(env, "MEMORY_BACKFILL_BATCH", 32),
            reindex_poll_s=_float(env, "MEMORY_REINDEX_POLL_S", 5.0) or 5.0,
            qdrant_host=check_qdrant_host(env.get("QDRANT_HOST", ""), "QDRANT_HOST") or "",
            qdrant_port=_int(env, "QDRANT_PORT", 6333, minimum=1, maximum=65535),
            qdrant_api_key=env.get("QDRANT_API_KEY", "").strip() or None,
            qdrant_collection=_str(env, "QDRANT_COLLECTION", "memroute_memory"),
            qdrant_embedding_model=env.get("QDRANT_EMBEDDING_MODEL", "").strip() or None,
            qdrant_hnsw_ef_construct=_int(env, "QDRANT_HNSW_EF_CONSTRUCT", 128, minimum=4),
            qdrant_timeout_s=_float(env, "QDRANT_TIMEOUT", 5.0) or 5.0,
            qdrant_retry_s=max(0.0, _float(env, "QDRANT_RETRY_S", 30.0) or 0.0),
            decay_enabled=_bool(env, "MEMORY_TYPED_DECAY_ENABLED", False),
            decay_episodic_days=_int(env, "MEMORY_TYPED_DECAY_EPISODIC_DAYS", 30),
            decay_access_immunity=_int(env, "MEMORY_TYPED_DECAY_ACCESS_IMMUNITY", 3),
            decay_sweep_interval_s=_int(env, "MEMORY_TYPED_DECAY_SWEEP_INTERVAL", 0),
            extraction_max_attempts=_int(env, "MEMROUTE_EXTRACTION_MAX_ATTEMPTS", 5, minimum=1),
            max_facts_per_message=_int(env, "MEMROUTE_MAX_FACTS_PER_MESSAGE", 20, minimum=1),
            max_memories_per_key=_int(env, "MEMROUTE_MAX_MEMORIES_PER_KEY", 20_000, minimum=0),
            sqlite_synchronous=sync,
            postgres_synchronous=_synchronous(env, "MEMROUTE_POSTGRES_SYNCHRONOUS"),
            admin_failures_per_address=_int(env, "MEMROUTE_ADMIN_FAILURES_PER_ADDRESS", 10, minimum=1),
            admin_failures_total=_int(env, "MEMROUTE_ADMIN_FAILURES_TOTAL", 100, minimum=1),
            allowed_hosts=_names(env, "MEMROUTE_ALLOWED_HOSTS"),
        )

    @classmethod
    def for_path(cls, db_path: str | Path, environ: Mapping[str, str] | None = None) -> Config:
        """A config whose database is `db_path` (data dir = its folder); other values from env."""
        path = Path(db_path).expanduser()
        return cls.from_env(environ, data_dir=path.parent, db_path=path)

    def with_overrides(self, **changes: object) -> Config:
        return replace(self, **changes)  # type: ignore[arg-type]
