"""The irregular forms of English words, so a keyword search finds "I ran a charity race"
for "When did she run it?" and "I met my mentors" for "When did he meet them?".

FTS5's porter stemmer joins regular forms ("paint", "painted", "painting") but not
irregular ones ("run" and "ran", "meet" and "met", "child" and "children"). A query word
in this table is searched with its other forms, and a memory that holds any of them
counts as holding the word (one term in bm25, not several). Left out: forms that are
stop words ("was", "did", "had", "won"), forms whose stem is a common word ("ate" stems
to "at"), and forms that are mostly other words ("rose", "ground", "wound", "lay").
"""

from __future__ import annotations

import functools

# One word per line: its forms, separated by spaces.
_FAMILIES = """
arise arose arisen
awake awoke awoken
bear bore borne
beat beaten
become became
begin began begun
bend bent
bite bitten
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
burn burnt
buy bought
catch caught
choose chose chosen
cling clung
come came
creep crept
deal dealt
dig dug
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat eaten
fall fell fallen
feed fed
feel felt
fight fought
find found
flee fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone
grow grew grown
hang hung
hear heard
hide hid hidden
hold held
keep kept
kneel knelt
lead led
lean leant
leap leapt
learn learnt
leave left
lend lent
lose lost
make made
mean meant
meet met
pay paid
prove proven
ride rode ridden
ring rang rung
rise risen
run ran
say said
see saw seen
seek sought
sell sold
send sent
shake shook shaken
shine shone
shoot shot
show shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat
sleep slept
slide slid
speak spoke spoken
speed sped
spend spent
spill spilt
spin spun
spring sprang sprung
stand stood
steal stole stolen
stick stuck
sting stung
stink stank stunk
strike struck
swear swore sworn
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tear tore torn
think thought
throw threw thrown
understand understood
wake woke woken
wear wore worn
weep wept
write wrote written
child children
man men
woman women
person people
foot feet
tooth teeth
mouse mice
goose geese
"""


@functools.cache
def _forms() -> dict[str, tuple[str, ...]]:
    forms: dict[str, tuple[str, ...]] = {}
    for line in _FAMILIES.split("\n"):
        family = tuple(line.split())
        for word in family:
            forms[word] = family
    return forms


def forms_of(word: str) -> tuple[str, ...]:
    """`word` and its other forms, `word` first (just `word` when it has none here)."""
    family = _forms().get(word)
    if family is None:
        return (word,)
    return (word, *(form for form in family if form != word))
