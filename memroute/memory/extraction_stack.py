"""Facts about the tools a person (or their team) uses and where they deploy.

A tool of the lexicon gets its kind's key (`tool:editor`), so "I switched from vim to
Helix" replaces "I use vim"; an unknown, capitalised tool gets `tool:<slug>`;
"we deploy on Fly.io" gets `stack:deploy`. "We use X" counts as the speaker's stack.
"""

from __future__ import annotations

import re

from memroute.memory.extraction_found import Found
from memroute.memory.extraction_grammar import cut_at, is_filler, is_name, slugify, split_items, strip_fillers
from memroute.memory.extraction_profile import diet_style, place
from memroute.memory.extraction_statements import Draft, fact
from memroute.memory.extraction_tools import PHRASES, lookup, tool_key
from memroute.memory.extraction_words import DIETS, words

# Tools named by an everyday word count only when written with a capital ("on edge").
_AMBIGUOUS = words(
    "arc bear warp render railway drone cursor rider atom travis roam opera safari edge fly arch go "
    "swift ruby dart julia windows zed kate eclipse brave chrome mercurial"
)
# What may follow a tool's name in the same clause.
_TOOL_REST = words(
    "for as at on in with to every daily now mostly exclusively these all too btw lol instead over "
    "nowadays day since and but so because which when at"
)
_CUT = re.compile(r"\s(?:because|since|so|but|which|when|if|though|lol|haha|last|recently|a\s+while)\b", re.I)


def _tool(words: list[str]) -> tuple[str, str, list[str]] | None:
    """(display, kind, rest) when `words` start with a lexicon tool written as one."""
    found = lookup(words)
    if found is None:
        return None
    display, kind, size = found
    written = words[0]
    if display.casefold() in _AMBIGUOUS and not written[:1].isupper():
        return None
    rest = words[size:]
    if rest and re.fullmatch(r"v?\d[\d.x]*", rest[0]):  # a version: "Postgres 16"
        rest = rest[1:]
    if rest and rest[0].lower().strip(",.") not in _TOOL_REST:
        return None
    return display, kind, rest


def _unknown(words: list[str]) -> str | None:
    """The capitalised name a clause starts with ("Figma", "Google Maps"), if any."""
    run: list[str] = []
    for word in words[:3]:
        clean = word.strip(".,!")
        if (run or is_name(clean)) and (clean[:1].isupper() or re.search(r"\d", clean)) and "'" not in clean:
            run.append(clean)
        else:
            break
    return " ".join(run) if run else None


def _uses(display: str, kind: str, rest: list[str], note: str = "") -> Draft:
    slug = slugify(display)
    if kind == "language":
        tail = " " + " ".join(rest) if rest and rest[0].lower() == "for" and len(rest) <= 6 else ""
        return fact(tool_key(kind, slug), f"uses {display}{tail}{note}")
    return fact(tool_key(kind, slug), f"uses {display} {PHRASES[kind]}{note}")


def use(match: Found, obj: str) -> list[Draft]:
    """ "I use Helix" → `tool:editor` "uses Helix as editor"; "we use Figma for design" →
    `tool:figma` "uses Figma for design"; "I use Python" → `preference:python` "uses Python"."""
    facts = []
    for item in split_items(cut_at(strip_fillers(obj), _CUT)):
        words = strip_fillers(item).split()
        if not words or is_filler(item):
            continue
        known = _tool(words)
        if known is not None:
            facts.append(_uses(*known))
            continue
        name = _unknown(words)
        if name and len(words) <= 6:
            facts.append(fact(f"tool:{slugify(name)}", f"uses {' '.join(words)}"))
    return facts


def code_in(match: Found, obj: str) -> list[Draft]:
    """ "I code in Rust" → `preference:rust` "codes in Rust" (languages only)."""
    known = _tool(strip_fillers(obj).split())
    if known is None or known[1] != "language":
        return []
    verb = match.group("cverb").lower()
    return [fact(tool_key("language", slugify(known[0])), f"{verb}s in {known[0]}")]


def _switch_parts(match: Found, obj: str) -> tuple[str, str]:
    text = strip_fillers(obj)
    if match.group("dir").lower() == "from":
        old, sep, new = text.partition(" to ")
        return (old.strip(), new.strip()) if sep else ("", "")
    new, _, old = text.partition(" from ")
    return old.strip(), new.strip()


def _diet(words: list[str]) -> str | None:
    """The diet `words` name, when they are just one ("vegetarian", "gluten-free")."""
    if len(words) != 1:
        return None
    said = words[0].lower().strip(",.!")
    return diet_style(said) if said in DIETS else None


def switch(match: Found, obj: str) -> list[Draft]:
    """ "I switched from vim to Helix" → `tool:editor` "uses Helix as editor (switched from vim)";
    "I moved to Lisbon (from Porto)" → `profile:location` "lives in Lisbon (moved from Porto)"."""
    old, new = _switch_parts(match, obj)
    new_words = cut_at(strip_fillers(new), _CUT).split()
    if not new_words:
        return []
    verb = match.group("sw").lower()
    old_words = strip_fillers(old).split()
    diet = _diet(new_words)
    if diet is not None and verb in ("switched", "changed"):  # "from gluten-free to vegetarian"
        was = _diet(old_words)
        return [fact("profile:diet", f"is {diet}" + (f" (switched from {was})" if was else ""))]
    old_known = _tool(old_words) if old_words else None
    note = f" (switched from {' '.join(old_words)})" if old_words and len(old_words) <= 3 else ""
    known = _tool(new_words)
    if known is not None:
        return [_uses(known[0], known[1], [], note)]
    name = _unknown(new_words)
    if name and old_known is not None and old_known[1] != "language":
        return [_uses(name, old_known[1], [], note)]
    if verb in ("moved", "relocated"):
        where = place(" ".join(new_words))
        if where is None:
            return []
        came = place(old) if old else None
        return [fact("profile:location", f"lives in {where}" + (f" (moved from {came})" if came else ""))]
    if name and len(new_words) <= 4:
        return [fact(f"tool:{slugify(name)}", f"uses {name}{note}")]
    return []


def on(match: Found, obj: str) -> list[Draft]:
    """ "I'm on Arch" → `tool:operating_system`; "we're on AWS" → `stack:deploy` "deploys on AWS"."""
    words = strip_fillers(obj).split()
    known = _tool(words) if words and words[0][:1].isupper() else None
    if known is None or known[1] == "language":
        return []
    if known[1] == "hosting":
        return [fact("stack:deploy", f"deploys on {known[0]}")]
    return [_uses(known[0], known[1], [])]


_MY_KINDS = {
    "editor": "editor",
    "ide": "editor",
    "os": "operating system",
    "distro": "operating system",
    "shell": "shell",
    "terminal": "terminal",
    "browser": "browser",
}


def my_tool(match: Found, obj: str) -> list[Draft]:
    """ "My editor is Helix" → `tool:editor` "uses Helix as editor"."""
    words = strip_fillers(obj).split()
    if not words:
        return []
    known = _tool(words)
    if known is not None and known[1] != "language":
        return [_uses(known[0], known[1], [])]
    name = _unknown(words)
    kind = _MY_KINDS.get(match.group("kind").lower())
    if name and kind and len(words) <= 3:
        return [_uses(name, kind, [])]
    return []


def deploy(match: Found, obj: str) -> list[Draft]:
    """ "We deploy on Fly.io" → `stack:deploy` "deploys on Fly.io"."""
    words = cut_at(strip_fillers(obj), _CUT).split()
    if not words:
        return []
    known = _tool(words)
    if known is not None and known[1] == "hosting":
        return [fact("stack:deploy", f"deploys on {known[0]}")]
    name = _unknown(words)
    if known is None and name and len(words) <= 4:
        return [fact("stack:deploy", f"deploys on {name}")]
    return []
