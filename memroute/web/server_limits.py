"""How much a server lets its clients hold: the timeouts and the connection cap of
`memroute serve` (from the settings), and the process's open-files limit they depend on."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memroute.config import Config

log = logging.getLogger("memroute.server")

DEFAULT_MAX_CONNECTIONS = 4096  # idle ones cost little, and the open-files limit is raised at start
RESERVED_FILES = 128  # the database, its WAL, read connections, logs, the listening socket …


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """The connection settings of one server (defaults as in Config)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_timeout_s: int = 30
    max_connections: int | None = None  # None: connection_cap() picks
    trusted_proxies: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: Config) -> ServerLimits:
        return cls(
            header_timeout_s=config.header_timeout_s,
            body_timeout_s=config.body_timeout_s,
            keep_alive_timeout_s=config.keep_alive_timeout_s,
            max_connections=config.max_connections,
            trusted_proxies=config.trusted_proxies,
        )

    @classmethod
    def of_app(cls, app: object) -> ServerLimits:
        """The limits of memroute's app (from its Config), the defaults for any other app."""
        config = getattr(getattr(app, "state", None), "config", None)
        return cls.of(config) if isinstance(config, Config) else cls()

    def connection_cap(self, open_files: int | None) -> int:
        """The configured cap, else 4096 or, under a low open-files limit, what leaves room
        for one upstream socket per client and the files the server itself needs."""
        if self.max_connections is not None:
            if open_files is not None and self.max_connections > open_files - RESERVED_FILES:
                log.warning(
                    "MEMROUTE_MAX_CONNECTIONS=%d is close to the open-files limit %d: "
                    "new connections may fail with 'Too many open files'",
                    self.max_connections,
                    open_files,
                )
            return self.max_connections
        if open_files is None:
            return DEFAULT_MAX_CONNECTIONS
        return max(16, min(DEFAULT_MAX_CONNECTIONS, (open_files - RESERVED_FILES) // 2))


def open_files_limit() -> int | None:
    """The soft limit on open files, None where the platform has none (Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_open_files_limit() -> int | None:
    """Raise the soft open-files limit to the hard one (logged), so that idle clients do not
    exhaust it first; returns the limit now in force."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft == resource.RLIM_INFINITY or soft >= target:
        log.info("open-files limit: %s (the hard limit)", soft)
        return open_files_limit()
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        log.warning("open-files limit stays %d: raising it to %d failed (%s)", soft, target, exc)
        return soft
    log.info("open-files limit raised from %d to %d", soft, target)
    return target
