"""A question that names someone whose words the key holds (`metadata.speaker`): vectors
and meanings compare what it asks without the name, and that person's own memories weigh
more (memory/retrieval.py `Asked`). "What hobby has Greta taken up?" is answered by what
Greta said, which rarely holds her name, not by the lines that greet her."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from memories import open_configured

from memroute import Memory

GREETINGS = ["morning Greta", "Greta!! long time", "hi Greta, how are things?", "night Greta"]
MEI_SAYS = ["the bus was late again", "made soup for dinner", "my cat knocked over a plant"]
GRETA_SAYS = ["sleep well", "so tired today", "see you tomorrow"]


def _chat(mem: Memory, *own: str) -> list[str]:
    """Greta's and Mei's turns in key "k", with Greta's `own` lines; their ids in that order."""
    for line in [*GREETINGS, *MEI_SAYS]:
        mem.add("k", line, type="episodic", metadata={"speaker": "Mei"})
    for line in GRETA_SAYS:
        mem.add("k", line, type="episodic", metadata={"speaker": "Greta"})
    return [mem.add("k", line, type="episodic", metadata={"speaker": "Greta"}).id for line in own]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    """The bundled model off: keywords and meanings, or the source a test names."""
    with open_configured(tmp_path / "m.db", model=False) as memory:
        yield memory


def test_without_a_model_of_two_lines_as_near_the_named_persons_own_comes_first(mem: Memory) -> None:
    # The same words by Greta, then by Mei: by meaning they are as near, and newer first.
    greta = mem.add("k", "I've gotten really into board games lately", metadata={"speaker": "Greta"})
    mei = mem.add("k", "I've gotten really into board games lately!", metadata={"speaker": "Mei"})
    for line in MEI_SAYS:
        mem.add("k", line, metadata={"speaker": "Mei"})
    first = mem.retrieve("k", "What hobby has Greta taken up?", strategy="hybrid")[0]
    assert (first.memory.id, first.tier) == (greta.id, "meaning")
    assert mem.retrieve("k", "What hobby has Mei taken up?", strategy="hybrid")[0].memory.id == mei.id


@pytest.fixture
def vmem(mem: Memory) -> Memory:
    mem.update_settings(enabled=True, embedding_source="hashing")
    return mem


def test_vectors_compare_the_question_without_the_name_of_a_speaker(vmem: Memory) -> None:
    (work,) = _chat(vmem, "I work at the harbour office these days")
    items = vmem.retrieve("k", "Where does Greta work these days?", strategy="semantic")
    assert items[0].memory.id == work
    assert items[0].tier == "vector"
    assert all(item.memory.content not in GREETINGS for item in items[:3])


def test_of_two_lines_as_near_the_named_persons_own_comes_first(vmem: Memory) -> None:
    # The same words said by Mei and by Greta: asked about Greta, hers leads; about Mei, Mei's.
    vmem.add("k", "I finally booked the flights to Lisbon", type="episodic", metadata={"speaker": "Mei"})
    vmem.add("k", "I finally booked the flights to Lisbon!", type="episodic", metadata={"speaker": "Greta"})
    for line in MEI_SAYS:
        vmem.add("k", line, type="episodic", metadata={"speaker": "Mei"})
    for name in ("Greta", "Mei"):
        items = vmem.retrieve("k", f"Which flights did {name} book?", strategy="semantic")
        assert items[0].memory.speaker_word() == name.casefold()


def test_a_name_nobody_in_the_key_speaks_as_is_searched_like_any_word(vmem: Memory) -> None:
    _chat(vmem)
    kids = vmem.add("k", "Callum's kids built a volcano that actually fizzed", metadata={"speaker": "Mei"})
    vmem.add("k", "the kids built a treehouse in the garden", metadata={"speaker": "Mei"})
    items = vmem.retrieve("k", "What did Callum's kids build?", strategy="semantic")
    assert items[0].memory.id == kids.id


def test_a_question_that_is_only_a_name_still_finds_the_lines_that_hold_it(vmem: Memory) -> None:
    _chat(vmem)
    found = {i.memory.content for i in vmem.retrieve("k", "Greta?", strategy="semantic")[:4]}
    assert found == set(GREETINGS)


def test_a_question_naming_someone_does_not_match_every_fact_of_theirs_by_the_name(mem: Memory) -> None:
    # Extraction keys a speaker's facts under their name ("priya/…"): that says whose fact
    # it is, not what it says, so it matches no question by itself.
    diet = mem.add("k", "is gluten-free", key="priya/profile:diet", metadata={"speaker": "Priya"})
    origin = mem.add("k", "grew up in Split", key="priya/profile:origin", metadata={"speaker": "Priya"})
    editor = mem.add("k", "moved my whole setup over to the Zed editor", metadata={"speaker": "Priya"})
    for line in MEI_SAYS:
        mem.add("k", line, metadata={"speaker": "Mei"})
    mem.retrieve("k", "warm-up", strategy="hybrid")  # the key's first recall builds its index
    items = mem.retrieve("k", "Which editor does Priya use?", strategy="hybrid", record_access=False)
    matched = [i.memory.id for i in items if i.tier != "recent"]
    assert matched[0] == editor.id
    assert diet.id not in matched and origin.id not in matched
    # Asked what they are, the facts are found by their own words.
    found = mem.retrieve("k", "Where did Priya grow up?", strategy="hybrid", record_access=False)
    assert found[0].memory.id == origin.id
