"""Fact extraction: every row of REF §3.3 with memroute's fixed output, the REF §14
extraction cases, and the SPEC §3 fixes (polarity, verbs, boundaries, Unicode)."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memroute import extract_facts_from_text
from memroute.memory.extraction import MAX_EXTRACTION_TEXT_LENGTH, may_state_facts, slugify
from memroute.memory.extraction_words import CASE_EXTRAS

P, N = "positive", "negative"
CATEGORIES = ("preference", "decision", "pattern", "profile", "work", "family", "pet", "health", "diet")
CATEGORIES += ("tool", "stack", "plan")

# (input, [(key, content, type, polarity), ...]) in output order.
REF_TABLE = [
    (
        "I prefer TypeScript. I'll use Postgres for this project. I always commit before pushing. "
        "I don't like Python.",
        [
            ("preference:typescript", "prefers TypeScript", "factual", P),
            ("preference:python", "does not like Python", "factual", N),
            ("decision:postgres_for_this_project", "will use Postgres for this project", "episodic", P),
            ("pattern:commit_before_pushing", "always commits before pushing", "factual", P),
        ],
    ),
    # Polarity is kept and the later statement wins (REF lost it, §17.1).
    ("I like Python. I don't like Python.", [("preference:python", "does not like Python", "factual", N)]),
    ("I don't like Python. I like Python.", [("preference:python", "likes Python", "factual", P)]),
    (
        "I never commit to main. I always commit to main.",
        [("pattern:commit_to_main", "always commits to main", "factual", P)],
    ),
    # A capture stops at a clause boundary instead of swallowing the next statement.
    (
        "I hate Java; I love Kotlin.",
        [
            ("preference:java", "hates Java", "factual", N),
            ("preference:kotlin", "loves Kotlin", "factual", P),
        ],
    ),
    ("I like A and I like B.", []),  # one-letter objects are under the 2-character minimum
    (
        "I like cats and I like dogs.",
        [("preference:cats", "likes cats", "factual", P), ("preference:dogs", "likes dogs", "factual", P)],
    ),
    # A period inside a token does not end the capture.
    (
        "I'll use Next.js for this project.",
        [("decision:next_js_for_this_project", "will use Next.js for this project", "episodic", P)],
    ),
    ("I prefer Go.", [("preference:go", "prefers Go", "factual", P)]),  # two-letter objects count
    ("I will use Redis.", [("decision:redis", "will use Redis", "episodic", P)]),
    (
        "I’ll use Redis and I don’t like Java.",  # curly apostrophes
        [
            ("preference:java", "does not like Java", "factual", N),
            ("decision:redis", "will use Redis", "episodic", P),
        ],
    ),
    # "decided not to X" shares its key with "decided to X", so the newer one replaces the older.
    ("I decided not to use Redis", [("decision:use_redis", "decided not to use Redis", "episodic", N)]),
    ("I'm going adopt Bun", [("decision:bun", "is going to adopt Bun", "episodic", P)]),
    (
        "i prefer vim, and I usually test first",
        [
            ("preference:vim", "prefers vim", "factual", P),
            ("pattern:test_first", "usually tests first", "factual", P),
        ],
    ),
    (
        "My favorite are cats and dogs",
        [("preference:cats_and_dogs", "favors cats and dogs", "factual", P)],
    ),
    (
        "I prefer TypeScript over JavaScript for large projects, honestly.",
        [
            (
                "preference:typescript_over_javascript_for_large_pro",
                "prefers TypeScript over JavaScript for large projects",
                "factual",
                P,
            )
        ],
    ),
    ("The sky is blue. Water is wet. 2 + 2 = 4.", []),
]


def _shape(text: str) -> list[tuple[str, str, str, str]]:
    return [(f.key, f.content, f.type, f.polarity) for f in extract_facts_from_text(text)]


@pytest.mark.parametrize(("text", "expected"), REF_TABLE, ids=[t[:40] for t, _ in REF_TABLE])
def test_reference_table_with_memroute_fixes(text: str, expected: list[tuple[str, str, str, str]]) -> None:
    assert _shape(text) == expected


def test_long_object_is_capped_at_500_characters() -> None:
    (fact,) = extract_facts_from_text("I prefer " + "a" * 600)
    assert len(fact.content) <= 500
    assert fact.key == "preference:" + "a" * 40


def test_only_the_last_64_kib_is_read() -> None:
    text = "I prefer prefix-only-editor. " + "x" * (70 * 1024) + " I prefer tail-only-editor."
    assert _shape(text) == [("preference:tail_only_editor", "prefers tail-only-editor", "factual", P)]
    assert MAX_EXTRACTION_TEXT_LENGTH == 64 * 1024


# REF §14 memory-extraction.test.ts: (text, category, type, fragment the content must contain)
REF_CASES = [
    ("I prefer dark mode in my editor.", "preference", "factual", "dark mode"),
    ("I like TypeScript over JavaScript.", "preference", "factual", "typescript"),
    ("My favorite is VS Code for editing.", "preference", "factual", "vs code"),
    ("I don't like JavaScript callbacks.", "preference", "factual", "javascript callbacks"),
    ("I'll use PostgreSQL for this project.", "decision", "episodic", "postgresql"),
    ("I chose React for the frontend.", "decision", "episodic", "react"),
    ("I decided to migrate to Docker.", "decision", "episodic", "migrate to docker"),
    ("I went with Tailwind for styling.", "decision", "episodic", "tailwind"),
    ("I usually start with tests first.", "pattern", "factual", "starts with tests"),
    ("I always use ESLint in my projects.", "pattern", "factual", "eslint"),
    ("I never commit directly to main.", "pattern", "factual", "commits directly to main"),
    ("I tend to use functional components.", "pattern", "factual", "functional components"),
]


@pytest.mark.parametrize(("text", "category", "type_", "fragment"), REF_CASES)
def test_reference_extraction_cases(text: str, category: str, type_: str, fragment: str) -> None:
    facts = extract_facts_from_text(text)
    assert len(facts) == 1
    assert facts[0].category == category
    assert facts[0].type == type_
    assert fragment in facts[0].content.lower()
    assert facts[0].key.startswith(category + ":")


def test_statements_keep_their_verb() -> None:
    assert [f.content for f in extract_facts_from_text("I prefer TypeScript")] == ["prefers TypeScript"]
    assert [f.content for f in extract_facts_from_text("I don't like Python")] == ["does not like Python"]
    assert [f.content for f in extract_facts_from_text("I do not like Python")] == ["does not like Python"]
    assert [f.content for f in extract_facts_from_text("I'll use Postgres for this project")] == [
        "will use Postgres for this project"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I don't like Rust",
        "I do not like Rust",
        "I hate Rust",
        "I dislike Rust",
        "I avoid Rust",
        "I never use Rust",
    ],
)
def test_negative_statements_are_marked_negative(text: str) -> None:
    (fact,) = extract_facts_from_text(text)
    assert fact.polarity == "negative"


@pytest.mark.parametrize("text", ["I like Rust", "I love Rust", "I enjoy Rust", "I prefer Rust"])
def test_positive_and_negative_share_the_key(text: str) -> None:
    (positive,) = extract_facts_from_text(text)
    (negative,) = extract_facts_from_text("I don't like Rust")
    assert positive.polarity == "positive"
    assert positive.key == negative.key == "preference:rust"


def test_three_categories_in_one_text() -> None:
    facts = extract_facts_from_text(
        "I prefer TypeScript. I'll use Next.js for this project. I usually write tests first."
    )
    assert {f.category for f in facts} == {"preference", "decision", "pattern"}
    assert [f.category for f in facts] == ["preference", "decision", "pattern"]


def test_duplicates_in_one_text_give_one_fact() -> None:
    assert len(extract_facts_from_text("I prefer vim. I prefer vim.")) == 1


@pytest.mark.parametrize("value", ["", "   ", None, 42, b"I prefer vim"])
def test_empty_or_non_text_input_gives_nothing(value: object) -> None:
    assert extract_facts_from_text(value) == []


def test_questions_are_not_facts() -> None:
    assert extract_facts_from_text("Do I like Python? Should I use Redis?") == []


def test_version_numbers_and_dotted_names_survive() -> None:
    (fact,) = extract_facts_from_text("I prefer Python 3.12 for scripts.")
    assert fact.content == "prefers Python 3.12 for scripts"


def test_unicode_objects_get_distinct_keys() -> None:
    facts = extract_facts_from_text("I prefer 日本語. I like 中文. I love Ünïcödé tëxt.")
    assert [f.key for f in facts] == ["preference:日本語", "preference:中文", "preference:ünïcödé_tëxt"]


def test_slug_rules() -> None:
    assert slugify("TypeScript") == "typescript"
    assert slugify("(TypeScript)") == "typescript"
    assert slugify("a" * 60) == "a" * 40
    assert slugify("Next.js / React") == "next_js_react"


def test_lead_must_be_the_word_i() -> None:
    assert extract_facts_from_text("AI prefer nothing. Wi like x.") == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_never_fails_and_respects_limits(text: str) -> None:
    for fact in extract_facts_from_text(text):
        assert 2 <= len(fact.content) <= 500
        assert fact.key.split(":", 1)[0] in CATEGORIES
        assert fact.category == fact.key.split(":", 1)[0]
        assert fact.key.split(":", 1)[1]
        assert fact.polarity in ("positive", "negative")


def test_the_turkish_dotless_and_dotted_i_never_break_extraction() -> None:
    # Case-blind matching takes ı and İ for "i"; they crashed the turn into "they" (KeyError),
    # and the worker then failed the whole job: the turn was not kept either.
    assert [f.content for f in extract_facts_from_text("I like my ı phone")] == ["likes their ı phone"]
    assert [f.content for f in extract_facts_from_text("I like my İ phone")] == ["likes their İ phone"]


def test_a_new_statement_ends_the_previous_capture() -> None:
    assert _shape("I prefer coffee when I usually work late") == [
        ("preference:coffee", "prefers coffee", "factual", P),
        ("pattern:work_late", "usually works late", "factual", P),
    ]


def test_crafted_repetitions_give_one_fact_per_statement() -> None:
    text = "".join(f"I prefer thing{i} " for i in range(3500))
    facts = extract_facts_from_text(text)
    assert len(facts) == 3500
    assert facts[0].content == "prefers thing0"
    assert extract_facts_from_text("I prefer " * 7000) == []


def test_a_question_that_names_another_statement_is_still_a_question() -> None:
    assert extract_facts_from_text("Do I like Go or should I avoid it here?") == []
    assert _shape("I like tea. Do I like coffee?") == [("preference:tea", "likes tea", "factual", P)]


_FRAGMENTS = st.sampled_from(
    [
        "I prefer ",
        "I like ",
        "I don't like ",
        "I\u2019m using ",
        "I usually ",
        "I will ",
        "my favorite is ",
        "My ",
        "We decided to ",
        "I decided not to ",
        "I always ",
        "I'd rather ",
        "tea",
        "Next.js",
        "Go for CLI tools",
        " and ",
        ". ",
        "? ",
        "!",
        "\n",
        "Do ",
        "AI ",
        "Wi ",
        "i ",
        "im ",
        "myself ",
        "mY ",
        "I",
        "'",
        "\u00e9",
        "caf\u00e9 au lait",
        "\u0131 ",
        "\u0130",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=12).map("".join))
def test_a_text_skipped_as_factless_never_has_a_fact(text: str) -> None:
    # The gateway does not queue texts that may_state_facts() rejects; none may hold a fact.
    if extract_facts_from_text(text):
        assert may_state_facts(text)


def test_questions_and_small_talk_are_factless_statements_are_not() -> None:
    assert not may_state_facts("Which database should we use for a small web app?")
    assert not may_state_facts("You said: thanks, that helps a lot.")
    assert not may_state_facts("   ")
    assert may_state_facts("I prefer tea.")
    assert may_state_facts("My favourite is Vim.")
    assert extract_facts_from_text("We decided to use Postgres.") == []  # not a lead: no fact, no job
    assert not may_state_facts("We decided to use Postgres.")
    assert may_state_facts("I\u2019m going to use Next.js 14.")


def test_the_case_extras_are_every_character_the_ignored_case_matches_to_a_letter() -> None:
    """The quick alternations of the leads write a letter as a case-sensitive class: it must
    hold every character that the ignored case matches to the letter, no more."""
    everything = "".join(map(chr, range(0x110000)))
    found: dict[str, str] = {}
    for char in set(re.findall("[a-z]", everything, re.IGNORECASE)) - set(string.ascii_letters):
        for letter in string.ascii_lowercase:
            if re.fullmatch(letter, char, re.IGNORECASE):
                found[letter] = "".join(sorted(found.get(letter, "") + char))
    assert found == {letter: "".join(sorted(extra)) for letter, extra in CASE_EXTRAS.items()}
