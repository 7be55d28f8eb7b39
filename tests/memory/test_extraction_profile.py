"""Wider extraction: who a person is, their work, family, pets, health, diet, tools and
plans, each with a stable key; the speaker's name in content and key; fillers, questions,
hypotheticals and reported speech give nothing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memroute import extract_facts_from_text
from memroute.memory.extraction import extract_at_most, may_state_facts


def _pairs(text: str, speaker: str | None = None) -> list[tuple[str, str]]:
    return [(f.key, f.content) for f in extract_facts_from_text(text, speaker=speaker)]


# The new-user conversation: every statement is kept, with a key a later one replaces.
NEW_USER = [
    ("My name is Dana", [("profile:name", "is named Dana")]),
    ("I live in Lisbon", [("profile:location", "lives in Lisbon")]),
    ("I'm allergic to peanuts", [("health:allergy:peanut", "is allergic to peanuts")]),
    ("We deploy on Fly.io", [("stack:deploy", "deploys on Fly.io")]),
    (
        "my daughter Mia starts school in September",
        [
            ("family:daughter:mia", "has a daughter named Mia"),
            ("plan:mia_starts_school", "has a daughter named Mia who starts school in September"),
        ],
    ),
    ("I switched from vim to Helix", [("tool:editor", "uses Helix as editor (switched from vim)")]),
]


@pytest.mark.parametrize(("text", "expected"), NEW_USER, ids=[t for t, _ in NEW_USER])
def test_the_new_user_conversation_is_remembered(text: str, expected: list[tuple[str, str]]) -> None:
    assert _pairs(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "...and I love it.",
        "I like it",
        "I prefer not to say",
        "I never said that",
        "I love you",
        "I like that",
        "I love to",
        "I'm fine",
        "I'm sure",
        "I'm not sure",
        "I'm going",
        "I'm here",
        "I'm sorry",
        "I'm Dana's friend",
        "Do I like Python?",
        "Where do I live?",
        "if I lived in Paris I'd be happy",
        "I would love to visit Japan",
        "my boss prefers Java",
        "I don't live in Berlin anymore",
        "She says I'm vegan",
        'he wrote "I live in Rome" on his profile',
        "```\nI prefer tabs\n```",
    ],
)
def test_fillers_questions_hypotheticals_and_others_statements_give_nothing(text: str) -> None:
    assert extract_facts_from_text(text) == []


def test_the_speaker_names_the_fact_and_prefixes_its_key() -> None:
    assert _pairs("I prefer Python", speaker="Caroline") == [
        ("caroline/preference:python", "Caroline prefers Python")
    ]
    assert _pairs("I prefer Python") == [("preference:python", "prefers Python")]
    assert _pairs("My name is Dana", speaker="  Dana   Smith ") == [
        ("dana_smith/profile:name", "Dana Smith is named Dana")
    ]


def test_two_speakers_never_share_a_fact() -> None:
    first = extract_facts_from_text("I live in Lisbon", speaker="Caroline")
    second = extract_facts_from_text("I live in Porto", speaker="Melanie")
    assert first[0].key != second[0].key
    assert first[0].content.startswith("Caroline ") and second[0].content.startswith("Melanie ")


def test_a_speaker_without_letters_or_digits_adds_nothing() -> None:
    assert _pairs("I prefer tea", speaker=" 🙂 ") == [("preference:tea", "prefers tea")]


def test_a_later_statement_of_the_same_subject_wins() -> None:
    assert _pairs("I live in Porto. Last year I moved to Lisbon.") == [
        ("profile:location", "lives in Lisbon")
    ]
    assert _pairs("I use vim. I switched to Helix.") == [("tool:editor", "uses Helix as editor")]
    assert _pairs("I'm vegetarian. I'm vegan now.") == [("profile:diet", "is vegan")]


def test_habits_are_conjugated_and_first_person_words_become_theirs() -> None:
    assert _pairs("I usually walk my dog before work") == [
        ("pattern:walk_my_dog_before_work", "usually walks their dog before work")
    ]
    assert _pairs("I always fix my bugs") == [("pattern:fix_my_bugs", "always fixes their bugs")]
    assert _pairs("I often try new recipes") == [("pattern:try_new_recipes", "often tries new recipes")]


def test_every_content_is_a_third_person_verb_phrase() -> None:
    text = (
        "I'm Dana. I live in Lisbon and I work at Acme. I'm a nurse. I have a dog named Rex. "
        "I'm vegetarian. I use Helix. I usually write tests. I love hiking. I'll use Postgres."
    )
    contents = [f.content for f in extract_facts_from_text(text)]
    assert len(contents) == 10
    first_words = {c.split()[0] for c in contents}
    assert first_words <= {"is", "lives", "works", "has", "uses", "usually", "loves", "will"}


def test_we_counts_as_the_speakers_stack() -> None:
    assert _pairs("We use Postgres and our team uses GitHub Actions") == [
        ("tool:database", "uses Postgres as database"),
        ("tool:ci", "uses GitHub Actions for CI"),
    ]


def test_a_known_tool_is_keyed_by_kind_an_unknown_one_by_name() -> None:
    assert _pairs("I use Figma for design") == [("tool:figma", "uses Figma for design")]
    assert _pairs("I use Python for scripts") == [("preference:python", "uses Python for scripts")]
    assert _pairs("I'm on edge today") == []  # an everyday word is a tool only when capitalised


def test_plans_need_a_date_and_the_key_leaves_it_out() -> None:
    assert _pairs("I'm starting a new job in March") == [
        ("plan:starting_a_new_job", "is starting a new job in March")
    ]
    assert _pairs("I'm starting a new job in April") == [
        ("plan:starting_a_new_job", "is starting a new job in April")
    ]
    assert _pairs("I'm starting a new job") == []


def test_a_name_must_look_like_one() -> None:
    assert _pairs("I'm Priya") == [("profile:name", "is named Priya")]
    for text in (
        "I'm Italian",
        "I'm OK",
        "I'm Back",
        "Call me Monday",
        "call me later",
        "my name is not important",
    ):
        assert extract_facts_from_text(text) == [], text


def test_a_job_needs_a_listed_occupation_or_by_profession() -> None:
    assert _pairs("I'm a nurse") == [("work:role", "works as a nurse")]
    assert _pairs("I'm a glassblower by profession") == [("work:role", "works as a glassblower")]
    assert extract_facts_from_text("I'm a terrible driver") == []
    assert extract_facts_from_text("I'm a huge nerd") == []


def test_may_state_facts_sees_the_new_leads() -> None:
    for text in (
        "My name is Dana",
        "We deploy on Fly.io",
        "I'm allergic to peanuts",
        "call me Dee",
        "our team uses Go",
    ):
        assert may_state_facts(text), text
    assert not may_state_facts("Where do we deploy?")
    assert not may_state_facts("thanks, that helps a lot")


def test_the_limit_keeps_the_facts_stated_last() -> None:
    facts, left = extract_at_most("My name is Dana. I live in Lisbon. I love hiking.", 2)
    assert [f.key for f in facts] == ["preference:hiking", "profile:location"]
    assert left == 1


CRAFTED = {
    "names": "my daughter " * 5500,
    "allergies": "I'm allergic to " + "nuts, " * 10000,
    "switches": "I switched from vim to " * 2800,
    "deploys": "we deploy on " * 5000,
    "plans": "I'm starting a job in March " * 2300,
    "questions": ("I like tea " * 100 + "? ") * 60,
    "quotes": '"I live in Paris ' * 4000,
    "no spaces": "Imy" * 20000,
}


@pytest.mark.parametrize("name", CRAFTED)
def test_crafted_64_kib_texts_give_bounded_sane_facts(name: str) -> None:
    text = CRAFTED[name][: 64 * 1024]
    facts = extract_facts_from_text(text)
    assert len(facts) <= len(text) // 8
    for fact in facts:
        assert 2 <= len(fact.content) <= 500
        assert fact.key.split(":", 1)[1]


def test_crafted_texts_keep_one_fact_per_subject() -> None:
    assert _pairs("I switched from vim to Helix. " * 2000) == [
        ("tool:editor", "uses Helix as editor (switched from vim)")
    ]
    assert _pairs("we deploy on Fly.io. " * 3000) == [("stack:deploy", "deploys on Fly.io")]
    assert extract_facts_from_text(("I like tea " * 100 + "? ") * 60) == []  # each within reach of a "?"


_FRAGMENTS = st.sampled_from(
    [
        "I'm ",
        "im ",
        "I am ",
        "my name is ",
        "call me ",
        "we use ",
        "We deploy on ",
        "our team uses ",
        "I live in ",
        "I switched from ",
        " to ",
        "my daughter ",
        "I have a dog named ",
        "allergic to ",
        "a nurse",
        "Dana",
        "Lisbon",
        "Helix",
        "vim",
        "Fly.io",
        "peanuts",
        " in March",
        " next week",
        "starting a new job",
        "if ",
        "she says ",
        "do ",
        '"',
        "```",
        "?",
        ", ",
        ". ",
        " and ",
        "\n> ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=8)), max_size=14).map("".join))
def test_a_text_skipped_as_factless_never_has_a_fact(text: str) -> None:
    facts = extract_facts_from_text(text)
    if facts:
        assert may_state_facts(text)
    for fact in facts:
        assert 2 <= len(fact.content) <= 500
        assert fact.key.split(":", 1)[1]
        assert fact.polarity in ("positive", "negative")
