"""Realistic synthetic data from word lists, reproducible from a seed.

- `MemoryGenerator` yields memories shaped like the ones extraction stores
  ("prefers TypeScript for large projects", key `preference:typescript_for_large_projects`)
  mixed with free-text facts added through the API ("the billing service runs on AWS
  in eu-west-1"), with the metadata, sessions, expiry and timestamps real rows have.
- `queries` yields 5–15-word questions a chat user would send.
- `prose` builds chat-like text with a first-person statement every few sentences
  (or in every sentence) for the extraction benchmark.

Popular items are picked more often (Zipf-like weights), as in real usage.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memroute.clock import to_iso
from memroute.memory.extraction import slugify

LANGS = (
    "Python",
    "TypeScript",
    "JavaScript",
    "Go",
    "Rust",
    "Java",
    "Kotlin",
    "C#",
    "Swift",
    "C++",
    "Ruby",
    "PHP",
    "Elixir",
    "Scala",
    "Dart",
    "Haskell",
    "Clojure",
    "Zig",
    "OCaml",
    "Julia",
    "R",
    "Lua",
    "Perl",
    "F#",
    "Erlang",
    "Nim",
    "Crystal",
    "Bash",
    "Gleam",
    "Fortran",
)
DATABASES = (
    "Postgres",
    "SQLite",
    "MySQL",
    "Redis",
    "MongoDB",
    "DynamoDB",
    "ClickHouse",
    "DuckDB",
    "Elasticsearch",
    "CockroachDB",
    "Cassandra",
    "MariaDB",
    "Firestore",
    "Supabase",
    "Neo4j",
    "TimescaleDB",
    "Snowflake",
    "BigQuery",
    "Qdrant",
    "Pinecone",
    "InfluxDB",
    "SQL Server",
    "Oracle",
    "Couchbase",
    "ScyllaDB",
    "OpenSearch",
    "Valkey",
    "LiteFS",
    "Turso",
    "Neon",
)
FRAMEWORKS = (
    "React",
    "Next.js",
    "FastAPI",
    "Django",
    "Vue",
    "Svelte",
    "Flask",
    "Rails",
    "Spring Boot",
    "Express",
    "Angular",
    "NestJS",
    "Tailwind",
    "htmx",
    "Phoenix",
    "Laravel",
    "SwiftUI",
    "Flutter",
    "Remix",
    "Astro",
    "SolidJS",
    "Nuxt",
    "Gin",
    "Axum",
    "Actix",
    "Ktor",
    "Quarkus",
    "Echo",
    "Starlette",
    "Litestar",
    "Hono",
    "Qwik",
    "Jetpack Compose",
    "Tauri",
    "Electron",
    "Pydantic",
)
TOOLS = (
    "Docker",
    "Git",
    "VS Code",
    "Kubernetes",
    "Neovim",
    "GitHub Actions",
    "Terraform",
    "pytest",
    "uv",
    "pnpm",
    "tmux",
    "zsh",
    "Vite",
    "Jest",
    "Vitest",
    "Playwright",
    "Poetry",
    "Homebrew",
    "Ansible",
    "Emacs",
    "IntelliJ",
    "PyCharm",
    "Zed",
    "fish",
    "Nix",
    "Bazel",
    "esbuild",
    "webpack",
    "Cypress",
    "Sentry",
    "Grafana",
    "Prometheus",
    "Datadog",
    "Kafka",
    "RabbitMQ",
    "Nginx",
    "Caddy",
    "Linear",
    "Jira",
    "Notion",
    "Figma",
    "GitLab CI",
    "Jenkins",
    "Helm",
    "ArgoCD",
    "Podman",
    "ruff",
    "mypy",
    "Black",
    "ESLint",
    "Prettier",
    "Biome",
    "Storybook",
    "Postman",
    "Insomnia",
    "OpenTelemetry",
    "Celery",
    "Temporal",
    "Airflow",
    "dbt",
    "Jupyter",
    "pandas",
    "Polars",
)
CLOUDS = (
    "AWS",
    "GCP",
    "Azure",
    "Fly.io",
    "Hetzner",
    "DigitalOcean",
    "Vercel",
    "Cloudflare",
    "Render",
    "Railway",
    "Netlify",
    "Heroku",
    "Linode",
    "OVH",
    "Scaleway",
)
REGIONS = (
    "eu-west-1",
    "us-east-1",
    "us-west-2",
    "eu-central-1",
    "ap-southeast-1",
    "europe-west4",
    "Frankfurt",
    "Amsterdam",
    "Virginia",
    "Oregon",
    "Singapore",
    "Tokyo",
    "London",
    "Paris",
)
CONTEXTS = (
    "large projects",
    "side projects",
    "data pipelines",
    "internal tools",
    "the backend",
    "the frontend",
    "scripting",
    "prototypes",
    "production services",
    "CLI tools",
    "machine learning work",
    "mobile apps",
    "the billing service",
    "the analytics dashboard",
    "infrastructure code",
    "quick experiments",
    "the public API",
    "batch jobs",
    "the search service",
    "the admin panel",
    "embedded work",
    "game jams",
    "teaching",
    "code katas",
    "microservices",
    "the payments flow",
    "report generation",
    "web scraping",
    "ETL jobs",
    "the notification service",
    "the onboarding flow",
    "load testing",
    "the recommendation engine",
    "the auth service",
    "documentation sites",
    "the mobile backend",
    "realtime features",
    "serverless functions",
)
PROJECTS = (
    "this project",
    "the new service",
    "the migration",
    "the analytics pipeline",
    "the auth rewrite",
    "the next sprint",
    "the Q3 launch",
    "the billing revamp",
    "the search revamp",
    "the mobile app",
    "the internal dashboard",
    "the hackathon",
    "the data warehouse",
    "the event bus",
    "the customer portal",
    "the inventory system",
    "the chat feature",
    "the reporting API",
    "the pricing engine",
    "the onboarding redesign",
    "the recommendation service",
    "the CRM sync",
    "the audit log",
    "the feature flag service",
    "the image pipeline",
    "the email service",
)
HABITS = (
    "commit before pushing",
    "write tests first",
    "run the linter before committing",
    "review pull requests in the morning",
    "squash commits before merging",
    "deploy on Tuesdays",
    "pair on tricky bugs",
    "write a design doc first",
    "pin dependency versions",
    "use feature flags for risky changes",
    "rebase instead of merging",
    "keep functions short",
    "document public APIs",
    "benchmark before optimizing",
    "back up the database before migrations",
    "use type hints",
    "log structured JSON",
    "check CI before merging",
    "take notes in Markdown",
    "read the changelog before upgrading",
    "profile slow endpoints",
    "tag releases with semver",
    "write commit messages in the imperative",
    "keep pull requests small",
    "add a regression test for every bug",
    "use conventional commits",
    "run migrations in a transaction",
    "format code on save",
    "update dependencies on Fridays",
    "close the laptop at six",
    "answer email after lunch",
    "start the day with a todo list",
    "use dark mode",
    "split large tables into partitions",
    "store secrets in a vault",
    "use UTC timestamps",
    "write docstrings for every module",
    "keep a changelog",
    "review the on-call handover notes",
    "time-box spikes to one day",
)
DISLIKES = (
    "tabs for indentation",
    "long meetings",
    "ORMs for complex queries",
    "magic numbers",
    "global state",
    "YAML configuration",
    "mocking internal code",
    "monorepos",
    "late night deploys",
    "microservices for small teams",
    "dynamic typing in large codebases",
    "deeply nested callbacks",
    "premature abstraction",
    "flaky tests",
    "giant pull requests",
    "stand-ups over fifteen minutes",
    "vendor lock-in",
    "manual deployments",
    "untyped JSON blobs",
    "meetings without an agenda",
    "auto-generated code in reviews",
    "cron jobs without monitoring",
    "cryptic error messages",
)
ACTIVITIES = (
    "pair programming",
    "code reviews",
    "refactoring legacy code",
    "writing documentation",
    "debugging race conditions",
    "hiking on weekends",
    "reading sci-fi",
    "playing chess",
    "cooking Italian food",
    "running in the morning",
    "learning new languages",
    "building keyboards",
    "photography",
    "cycling to work",
    "board games",
    "jazz while coding",
    "rock climbing",
)
NAMES = (
    "Alice",
    "Bob",
    "Carla",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Keiko",
    "Lars",
    "Maya",
    "Noah",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Ximena",
    "Yusuf",
    "Zoe",
)
CITIES = (
    ("Berlin", "CET"),
    ("Lisbon", "WET"),
    ("Toronto", "EST"),
    ("Austin", "CST"),
    ("Seattle", "PST"),
    ("Bangalore", "IST"),
    ("Tokyo", "JST"),
    ("Sydney", "AEST"),
    ("Warsaw", "CET"),
    ("Nairobi", "EAT"),
    ("Madrid", "CET"),
    ("Denver", "MST"),
    ("Dublin", "GMT"),
    ("Singapore", "SGT"),
    ("Paris", "CET"),
)
ROLES = (
    "backend engineer",
    "frontend developer",
    "data engineer",
    "SRE",
    "engineering manager",
    "staff engineer",
    "ML engineer",
    "product designer",
    "CTO",
    "mobile developer",
    "security engineer",
    "tech lead",
    "QA engineer",
    "developer advocate",
    "platform engineer",
)
COMPANIES = (
    "fintech startup",
    "logistics company",
    "healthcare SaaS",
    "game studio",
    "e-commerce shop",
    "consultancy",
    "university lab",
    "bank",
    "travel platform",
    "media company",
    "climate startup",
    "insurance company",
    "robotics startup",
    "government agency",
    "non-profit",
)
SERVICES = (
    "billing",
    "search",
    "auth",
    "notifications",
    "payments",
    "reporting",
    "ingest",
    "checkout",
    "catalog",
    "gateway",
    "scheduler",
    "webhooks",
    "export",
    "inventory",
    "pricing",
    "profile",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
PETS = ("dog", "cat", "parrot", "rabbit", "hamster", "tortoise")
OSES = ("macOS", "Ubuntu", "Fedora", "Windows", "Arch Linux", "NixOS", "Debian")
SPOKEN = ("English", "German", "Spanish", "Portuguese", "French", "Hindi", "Japanese", "Polish", "Swahili")

THINGS: tuple[str, ...] = LANGS + DATABASES + FRAMEWORKS + TOOLS + CLOUDS


def _weights(n: int, s: float = 0.9) -> list[float]:
    return [1.0 / (rank + 1) ** s for rank in range(n)]


class Picker:
    """Zipf-weighted choices over the word lists, from one seeded `random.Random`."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._cum: dict[int, list[float]] = {}

    def pick(self, items: Sequence[Any]) -> Any:
        cum = self._cum.get(id(items))
        if cum is None:
            cum = self._cum[id(items)] = _cumulative(_weights(len(items)))
        return self.rng.choices(items, cum_weights=cum, k=1)[0]

    def uniform(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for w in weights:
        total += w
        out.append(total)
    return out


@dataclass(slots=True)
class GeneratedMemory:
    content: str
    key: str = ""
    type: str = "factual"
    session_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    expires_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


# (category, type, polarity, builder) — mirrors the templates of memory/extraction.py.
def _extracted(p: Picker) -> tuple[str, str, str, str, str]:
    """(category, type, polarity, content, object) of one extraction-style fact."""
    r = p.rng.random()
    if r < 0.40:
        return _preference(p)
    if r < 0.70:
        return _decision(p)
    return _pattern(p)


def _preference(p: Picker) -> tuple[str, str, str, str, str]:
    """A preference: prefers, likes, dislikes, enjoys, or a favourite."""
    kind = p.rng.random()
    if kind < 0.35:
        obj = f"{p.pick(LANGS)} for {p.pick(CONTEXTS)}"
        return "preference", "factual", "positive", f"prefers {obj}", obj
    if kind < 0.55:
        obj = f"{p.pick(THINGS)} for {p.pick(CONTEXTS)}"
        return "preference", "factual", "positive", f"likes {obj}", obj
    if kind < 0.70:
        obj = p.pick(DISLIKES) if p.rng.random() < 0.6 else f"{p.pick(THINGS)} for {p.pick(CONTEXTS)}"
        verb = p.uniform(("does not like", "dislikes", "hates", "avoids"))
        return "preference", "factual", "negative", f"{verb} {obj}", obj
    if kind < 0.85:
        obj = p.pick(ACTIVITIES)
        return "preference", "factual", "positive", f"{p.uniform(('enjoys', 'loves'))} {obj}", obj
    thing = p.uniform(("editor", "database", "language", "framework", "cloud", "shell"))
    pool = {
        "editor": TOOLS,
        "database": DATABASES,
        "language": LANGS,
        "framework": FRAMEWORKS,
        "cloud": CLOUDS,
        "shell": ("zsh", "fish", "bash", "nushell"),
    }[thing]
    obj = p.pick(pool)
    return "preference", "factual", "positive", f"favorite {thing} is {obj}", f"{thing} is {obj}"


def _decision(p: Picker) -> tuple[str, str, str, str, str]:
    """A decision: will use, chose, decided (not) to, is going to use."""
    kind = p.rng.random()
    if kind < 0.35:
        obj = f"{p.pick(DATABASES if p.rng.random() < 0.5 else THINGS)} for {p.pick(PROJECTS)}"
        return "decision", "episodic", "positive", f"will use {obj}", obj
    if kind < 0.55:
        obj = f"{p.pick(THINGS)} over {p.pick(THINGS)} for {p.pick(PROJECTS)}"
        verb = p.uniform(("chose", "picked", "went with", "selected"))
        return "decision", "episodic", "positive", f"{verb} {obj}", obj
    if kind < 0.80:
        obj = f"{p.pick(HABITS)} on {p.pick(PROJECTS)}"
        neg = p.rng.random() < 0.25
        verb = "decided not to" if neg else "decided to"
        return "decision", "episodic", "negative" if neg else "positive", f"{verb} {obj}", obj
    obj = f"{p.pick(FRAMEWORKS)} for {p.pick(PROJECTS)}"
    verb = p.uniform(("is going to use", "is going with", "is going to adopt"))
    return "decision", "episodic", "positive", f"{verb} {obj}", obj


def _pattern(p: Picker) -> tuple[str, str, str, str, str]:
    """A habit: always, usually, never, …"""
    obj = p.pick(HABITS)
    if p.rng.random() < 0.3:
        obj = f"{obj} for {p.pick(CONTEXTS)}"
    verb = p.uniform(("always", "usually", "never", "typically", "often", "tends to", "regularly"))
    return "pattern", "factual", "negative" if verb == "never" else "positive", f"{verb} {obj}", obj


def _free_text(p: Picker) -> tuple[str, str]:
    """(type, content) of a fact a client added through the API."""
    rng = p.rng
    n = rng.randrange(1, 40)
    templates = (
        ("factual", lambda: f"works at a {p.pick(COMPANIES)} as a {p.pick(ROLES)}"),
        ("factual", lambda: f"the team uses {p.pick(TOOLS)} for {p.pick(CONTEXTS)}"),
        ("factual", lambda: f"the {p.pick(SERVICES)} service runs on {p.pick(CLOUDS)} in {p.pick(REGIONS)}"),
        ("factual", lambda: f"staging database is {p.pick(DATABASES)} {rng.randrange(5, 17)}"),
        (
            "procedural",
            lambda: (
                f"standup is at {rng.randrange(8, 11)}:{p.uniform(('00', '15', '30'))}"
                f" on {p.uniform(WEEKDAYS)}s"
            ),
        ),
        ("factual", lambda: "lives in {} ({} timezone)".format(*p.pick(CITIES))),
        ("factual", lambda: f"has a {p.pick(PETS)} named {p.uniform(NAMES)}"),
        ("episodic", lambda: f"is learning {p.pick(LANGS)} in the evenings"),
        ("procedural", lambda: f"on-call rotation is every {rng.randrange(2, 7)} weeks"),
        ("episodic", lambda: f"{p.pick(PROJECTS)} launch is planned for {p.uniform(MONTHS)}"),
        (
            "factual",
            lambda: f"manager is {p.uniform(NAMES)}; sends the weekly report on {p.uniform(WEEKDAYS)}",
        ),
        (
            "factual",
            lambda: (
                f"main laptop is a {p.uniform(('MacBook Pro', 'ThinkPad', 'Framework', 'XPS'))}"
                f" with {p.uniform((16, 32, 64))} GB RAM"
            ),
        ),
        ("factual", lambda: f"speaks {p.pick(SPOKEN)} and {p.pick(SPOKEN)}"),
        (
            "episodic",
            lambda: f"deadline for {p.pick(PROJECTS)} is {p.uniform(MONTHS)} {rng.randrange(1, 29)}",
        ),
        ("factual", lambda: f"the {p.pick(SERVICES)} API is limited to {n * 50} requests per minute"),
        ("factual", lambda: f"uses {p.pick(OSES)} at work and {p.pick(OSES)} at home"),
        (
            "semantic",
            lambda: (
                f"{p.pick(THINGS)} is what the team standardised on for {p.pick(CONTEXTS)}"
                f" after the {p.uniform(MONTHS)} retro"
            ),
        ),
        (
            "procedural",
            lambda: (
                f"to release {p.pick(SERVICES)}: bump the version, tag it, and let"
                f" {p.pick(TOOLS)} deploy to {p.pick(CLOUDS)}"
            ),
        ),
        (
            "episodic",
            lambda: (
                f"{p.uniform(NAMES)} owns the {p.pick(SERVICES)} migration to"
                f" {p.pick(DATABASES)}; it is blocked on {p.pick(TOOLS)} access"
            ),
        ),
        (
            "semantic",
            lambda: (
                f"notes from the {p.uniform(MONTHS)} planning: {p.pick(PROJECTS)} moves to"
                f" {p.pick(FRAMEWORKS)}, {p.pick(DATABASES)} stays as the primary store, and"
                f" {p.uniform(NAMES)} reviews the {p.pick(SERVICES)} changes before launch"
            ),
        ),
    )
    kind, build = templates[rng.randrange(len(templates))]
    return kind, build()


class MemoryGenerator:
    """Memories for one owner after another, shaped like real rows (seeded, reproducible)."""

    def __init__(self, seed: int, now: datetime | None = None) -> None:
        self.p = Picker(seed)
        self.now = now or datetime.now(UTC)

    def _stamp(self) -> tuple[str, str]:
        rng = self.p.rng
        # 90 % inside the default 30-day retention window, 10 % older.
        days = rng.uniform(0, 28) if rng.random() < 0.9 else rng.uniform(31, 365)
        created = self.now - timedelta(days=days)
        updated = created + timedelta(hours=rng.uniform(0, 24)) if rng.random() < 0.2 else created
        updated = min(updated, self.now)
        return to_iso(created), to_iso(updated)

    def for_owner(self, count: int) -> Iterator[GeneratedMemory]:
        """`count` memories of one owner; extraction keys are unique per owner, as stored."""
        rng = self.p.rng
        used: set[str] = set()
        sessions = [f"sess-{rng.getrandbits(40):010x}" for _ in range(max(1, count // 50))]
        for _ in range(count):
            created, updated = self._stamp()
            session = self.p.uniform(sessions) if rng.random() < 0.3 else ""
            r = rng.random()
            expires = None
            if r < 0.02:
                expires = to_iso(self.now - timedelta(days=rng.uniform(1, 30)))
            elif r < 0.05:
                expires = to_iso(self.now + timedelta(days=rng.uniform(1, 90)))
            if rng.random() < 0.6:
                for _attempt in range(4):  # a repeated subject would overwrite; pick another
                    category, kind, polarity, content, obj = _extracted(self.p)
                    key = f"{category}:{slugify(obj)}"
                    if key not in used:
                        break
                if key not in used:
                    used.add(key)
                    metadata = {
                        "category": category,
                        "polarity": polarity,
                        "source": "user_message",
                        "extractedAt": created,
                    }
                    yield GeneratedMemory(content, key, kind, session, metadata, expires, created, updated)
                    continue
            kind, content = _free_text(self.p)
            metadata = {"source": "api"} if rng.random() < 0.5 else {}
            yield GeneratedMemory(content, "", kind, session, metadata, expires, created, updated)


QUERY_TEMPLATES = (
    "Which database should I use for the new service?",
    "What language do I prefer for {context}?",
    "Remind me which {kind} we picked for {project}.",
    "Should we use {db} or {db2} for {project}?",
    "What did I decide about {thing} last week?",
    "Do I like {thing} or should I avoid it here?",
    "What is my usual workflow before pushing code to main?",
    "Which cloud does the {service} service run on these days?",
    "When is the deadline for {project} again?",
    "Can you set up a {framework} project with my usual tooling?",
    "Write a {lang} script that migrates users from {db} to {db2}.",
    "What editor and shell do I normally use at work?",
    "Help me configure {tool} for {context}.",
    "Explain how to write tests for {framework} components in {lang}.",
    "Any preferences about code style that I mentioned before?",
    "How should I structure {context} in {lang} with {framework}?",
    "Is {db} a good fit for {context} given what we chose?",
    "Draft a release checklist for the {service} service.",
    "Why is the {service} API returning rate limit errors?",
    "Set up {tool} and {tool2} for {project} like last time.",
    "Summarize what we agreed for {project} during planning.",
    "Who owns the {service} migration and what is it blocked on?",
    "Suggest a {lang} library for {context} that fits my habits.",
    "Compare {framework} and {framework2} for {context} please.",
)


def queries(seed: int, count: int) -> list[str]:
    """`count` realistic chat questions of 5–15 words."""
    p = Picker(seed)
    out: list[str] = []
    while len(out) < count:
        template = p.uniform(QUERY_TEMPLATES)
        text = template.format(
            context=p.pick(CONTEXTS),
            project=p.pick(PROJECTS),
            db=p.pick(DATABASES),
            db2=p.pick(DATABASES),
            thing=p.pick(THINGS),
            service=p.pick(SERVICES),
            framework=p.pick(FRAMEWORKS),
            framework2=p.pick(FRAMEWORKS),
            lang=p.pick(LANGS),
            tool=p.pick(TOOLS),
            tool2=p.pick(TOOLS),
            kind=p.uniform(("database", "framework", "cloud provider", "CI tool", "language")),
        )
        if 5 <= len(text.split()) <= 15:
            out.append(text)
    return out


# -- prose for extraction ------------------------------------------------------------

_FILLER = (
    "The deploy pipeline took longer than expected yesterday.",
    "We spent most of the afternoon chasing a flaky integration test.",
    "The product team wants the dashboard to load faster on mobile.",
    "Our staging environment was down for about an hour this morning.",
    "There is a lot of legacy code in the {service} module that nobody wants to touch.",
    "The customer reported that exports time out for large accounts.",
    "Latency on the {service} endpoint doubled after the last release.",
    "The new hire starts on {weekday} and will join the platform team.",
    "{name} suggested moving the cron jobs into a proper queue.",
    "The migration script has to handle about two million rows.",
    "Our error budget for the quarter is almost used up.",
    "Security asked for an audit of every third-party dependency.",
    "The design review for {project} is scheduled for next {weekday}.",
    "Most of the traffic comes from Europe during business hours.",
    "Can you explain why the cache hit rate dropped so much?",
    "The logs show a spike of 502 errors around midnight.",
    "We might need to shard the events table next year.",
    "Documentation for the internal SDK is out of date again.",
    "{name} is on vacation until the end of {month}.",
    "Build times went from four minutes to eleven after the upgrade.",
)
_STATEMENTS = (
    "I prefer {lang} for {context}.",
    "I really like {thing} for {context}.",
    "I don't like {dislike}.",
    "I hate {dislike}.",
    "I'll use {db} for {project}.",
    "I decided to {habit} on {project}.",
    "I have decided not to {habit}.",
    "I always {habit}.",
    "I usually {habit} before lunch.",
    "I never {habit} on Fridays.",
    "I'm going to use {framework} for {project}.",
    "I went with {thing} over {thing2} for {project}.",
    "I chose {db} because the team knows it well.",
    "I tend to {habit} when the deadline is close.",
    "My favorite editor is {tool}.",
    "I enjoy {activity} on weekends.",
    "Honestly, I think I prefer {thing} for {context}, but I am open to ideas.",
    "For {project} I picked {framework}, and I will use {db} for storage.",
)


def _fill(p: Picker, template: str) -> str:
    return template.format(
        lang=p.pick(LANGS),
        context=p.pick(CONTEXTS),
        thing=p.pick(THINGS),
        thing2=p.pick(THINGS),
        dislike=p.pick(DISLIKES),
        db=p.pick(DATABASES),
        project=p.pick(PROJECTS),
        habit=p.pick(HABITS),
        framework=p.pick(FRAMEWORKS),
        tool=p.pick(TOOLS),
        activity=p.pick(ACTIVITIES),
        service=p.pick(SERVICES),
        weekday=p.uniform(WEEKDAYS),
        name=p.uniform(NAMES),
        month=p.uniform(MONTHS),
    )


def prose(seed: int, size: int, *, statement_every: tuple[int, int] = (3, 6)) -> str:
    """About `size` characters of chat-like text; a first-person statement every
    `statement_every` (min, max) sentences, or every sentence with (1, 1)."""
    p = Picker(seed)
    parts: list[str] = []
    length = 0
    gap = p.rng.randint(*statement_every)
    since = 0
    while length < size:
        since += 1
        if since >= gap:
            sentence = _fill(p, p.uniform(_STATEMENTS))
            since, gap = 0, p.rng.randint(*statement_every)
        else:
            sentence = _fill(p, p.uniform(_FILLER))
        sep = "\n\n" if p.rng.random() < 0.1 else " "
        parts.append(sentence + sep)
        length += len(sentence) + len(sep)
    return "".join(parts)[:size]


def chat_message(p: Picker) -> str:
    """One user chat message of a few sentences, with zero to three statements."""
    sentences = [_fill(p, p.uniform(_FILLER)) for _ in range(p.rng.randint(2, 6))]
    for _ in range(p.rng.choice((0, 1, 1, 2, 3))):
        sentences.insert(p.rng.randrange(len(sentences) + 1), _fill(p, p.uniform(_STATEMENTS)))
    return " ".join(sentences)
