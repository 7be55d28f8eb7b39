"""A small lexicon of tools: a name as written ("nvim", "VS Code") → its display name and
kind (editor, os, hosting, …), so "I use Helix" and "I switched from vim to Helix" share
the key `tool:editor`. Programming languages are kept as preferences, not tool kinds."""

from __future__ import annotations

_KINDS: dict[str, tuple[str, ...]] = {
    "editor": (
        "Vim",
        "Neovim",
        "nvim=Neovim",
        "Emacs",
        "Doom Emacs",
        "Spacemacs",
        "Helix",
        "VS Code",
        "vscode=VS Code",
        "Visual Studio Code=VS Code",
        "Sublime Text",
        "Sublime=Sublime Text",
        "Atom",
        "IntelliJ",
        "IntelliJ IDEA=IntelliJ",
        "PyCharm",
        "WebStorm",
        "GoLand",
        "Rider",
        "CLion",
        "Xcode",
        "Android Studio",
        "nano",
        "Zed",
        "Cursor",
        "Notepad++",
        "Kate",
        "TextMate",
        "BBEdit",
        "Visual Studio",
        "Eclipse",
        "Kakoune",
        "LazyVim",
    ),
    "operating system": (
        "Linux",
        "Ubuntu",
        "Debian",
        "Fedora",
        "Arch",
        "Arch Linux",
        "Manjaro",
        "Linux Mint",
        "NixOS",
        "Gentoo",
        "Pop!_OS",
        "Pop OS=Pop!_OS",
        "Windows",
        "Windows 10",
        "Windows 11",
        "macOS",
        "Mac OS=macOS",
        "OS X=macOS",
        "FreeBSD",
        "ChromeOS",
        "openSUSE",
    ),
    "shell": ("zsh", "fish", "Nushell", "PowerShell", "bash"),
    "terminal": ("iTerm", "iTerm2", "kitty", "Alacritty", "WezTerm", "Ghostty", "Warp", "tmux"),
    "browser": ("Firefox", "Chrome", "Safari", "Brave", "Arc", "Vivaldi", "Opera", "Chromium", "Edge"),
    "hosting": (
        "Fly.io",
        "Fly=Fly.io",
        "Heroku",
        "AWS",
        "GCP",
        "Google Cloud",
        "Azure",
        "Vercel",
        "Netlify",
        "Render",
        "Railway",
        "DigitalOcean",
        "Digital Ocean=DigitalOcean",
        "Linode",
        "Hetzner",
        "Cloudflare",
        "Cloudflare Workers",
        "Cloudflare Pages",
        "GitHub Pages",
        "Kubernetes",
        "k8s=Kubernetes",
        "OVH",
        "Scaleway",
    ),
    "database": (
        "Postgres",
        "PostgreSQL=Postgres",
        "MySQL",
        "MariaDB",
        "SQLite",
        "MongoDB",
        "Mongo=MongoDB",
        "Redis",
        "DynamoDB",
        "Cassandra",
        "ClickHouse",
        "DuckDB",
        "Supabase",
        "Elasticsearch",
        "Neo4j",
        "SQL Server",
        "CockroachDB",
        "PlanetScale",
        "Firestore",
    ),
    "CI": (
        "GitHub Actions",
        "GitLab CI",
        "CircleCI",
        "Jenkins",
        "Travis",
        "Travis CI",
        "Buildkite",
        "TeamCity",
        "Drone",
        "Azure Pipelines",
    ),
    "version control": ("git", "Mercurial", "SVN", "Jujutsu"),
    "notes": ("Obsidian", "Notion", "Logseq", "Evernote", "OneNote", "Bear", "Roam", "Apple Notes"),
    "team chat": ("Slack", "Discord", "Microsoft Teams", "Mattermost", "Zulip"),
    "password manager": ("1Password", "Bitwarden", "LastPass", "KeePass", "KeePassXC"),
    "language": (
        "Python",
        "TypeScript",
        "JavaScript",
        "Go",
        "Golang=Go",
        "Rust",
        "Java",
        "Kotlin",
        "C#",
        "Swift",
        "Ruby",
        "PHP",
        "Elixir",
        "Scala",
        "Haskell",
        "Clojure",
        "Zig",
        "OCaml",
        "Julia",
        "Lua",
        "C++",
        "Dart",
        "Perl",
        "Erlang",
        "Gleam",
    ),
}
# How a kind reads in a fact: "uses Helix as editor", "uses AWS for hosting".
PHRASES = {
    "editor": "as editor",
    "operating system": "as operating system",
    "shell": "as shell",
    "terminal": "as terminal",
    "browser": "as browser",
    "hosting": "for hosting",
    "database": "as database",
    "CI": "for CI",
    "version control": "for version control",
    "notes": "for notes",
    "team chat": "for team chat",
    "password manager": "as password manager",
}


def _lexicon() -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for kind, names in _KINDS.items():
        for entry in names:
            written, _, display = entry.partition("=")
            table[written.casefold()] = (display or written, kind)
    return table


LEXICON = _lexicon()
_LONGEST = max(len(name.split()) for name in LEXICON)


def lookup(words: list[str]) -> tuple[str, str, int] | None:
    """The tool the first words name: (display name, kind, words used), longest name first."""
    for size in range(min(_LONGEST, len(words)), 0, -1):
        name = " ".join(words[:size]).casefold().rstrip(".,!")
        if name in LEXICON:
            display, kind = LEXICON[name]
            return display, kind, size
    return None


def tool_key(kind: str, slug: str) -> str:
    """`tool:<kind>` for a known kind; languages are preferences; else `tool:<slug>`."""
    if kind == "language":
        return f"preference:{slug}"
    return "tool:" + kind.replace(" ", "_").lower()
