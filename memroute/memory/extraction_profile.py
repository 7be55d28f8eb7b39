"""Facts about who a person is: name, where they live and come from, work, family,
pets, health and diet. Each has a stable key (`profile:name`, `work:employer`,
`family:daughter:mia`, …) so a later statement replaces an earlier one.

Precision comes first: a name or a place must look like one (capitalised and not an
everyday word, or a lone unknown word in lower-case chat), a job must be a listed
occupation unless "by profession" says so.
"""

from __future__ import annotations

import re

from memroute.memory.extraction_found import Found
from memroute.memory.extraction_grammar import (
    cut_at,
    find_date,
    is_filler,
    is_lower_name,
    is_name,
    slugify,
    split_items,
    strip_fillers,
    third_person,
    without_date,
)
from memroute.memory.extraction_statements import Draft, fact
from memroute.memory.extraction_words import (
    COMPOUND_OCCUPATIONS,
    CONDITION_ADJECTIVES,
    DIETS,
    EVALUATIVE,
    OCCUPATIONS,
    PETS,
    PRONOUN_STARTS,
    RELATIONS,
    WORKPLACES,
    words,
)

_PLACE_CUT = re.compile(
    r"\s(?:with|since|for|because|now|currently|these\s+days|at\s+the\s+moment|right\s+now|and|but|"
    r"which|where|who|when|so|though|from|lol|haha|last|this|next|recently|ago|a\s+few|two|three|four|"
    r"five|six|ten)\b|\s\d",
    re.IGNORECASE,
)
_WORK_CUT = re.compile(
    r"\s(?:as|since|now|currently|remotely|part-time|full-time|and|but|so|because|which|where|for\s+\w+\s+years?|"
    r"for\s+(?:a|the|about|almost|over|nearly)\b|these\s+days|right\s+now|lol|haha)\b|\s\d",
    re.IGNORECASE,
)


def _word(word: str) -> str:
    return word.strip(".,!?;:").removesuffix("'s")


def place(obj: str) -> str | None:
    """`obj` cut to a place ("Lisbon", "a village near Porto"), or None when it is not one."""
    text = cut_at(strip_fillers(obj), _PLACE_CUT)
    words = text.split()
    if not words or len(words) > 6 or is_filler(text):
        return None
    if any(is_name(_word(w)) for w in words) and words[0].lower() not in PRONOUN_STARTS:
        return text
    if len(words) <= 2 and all(is_lower_name(w) for w in words):
        return text
    return None


def location(match: Found, obj: str) -> list[Draft]:
    """ "I live in Lisbon" → `profile:location` "lives in Lisbon"."""
    where = place(obj)
    return [fact("profile:location", f"lives in {where}")] if where else []


_ORIGIN = {"born": "was born in", "grew": "grew up in"}


def origin(match: Found, obj: str) -> list[Draft]:
    """ "I'm from Porto" → `profile:origin` "comes from Porto" ("was born in", "grew up in")."""
    where = place(obj)
    if where is None:
        return []
    phrase = _ORIGIN.get((match.get("how") or "").lower(), "comes from")
    return [fact("profile:origin", f"{phrase} {where}")]


def _names(obj: str, *, lower: bool, most: int = 3) -> tuple[list[str], list[str]]:
    words = strip_fillers(obj).split()
    taken: list[str] = []
    for word in words[:most]:
        clean = word.strip(".,!?;:")
        if is_name(clean) and not (clean.isupper() and len(clean) > 2):
            taken.append(clean)
        elif lower and not taken and is_lower_name(clean):
            taken.append(clean.capitalize())
        else:
            break
        if clean != word:
            break
    return taken, words[len(taken) :]


def name(match: Found, obj: str) -> list[Draft]:
    """ "My name is Dana" → `profile:name` "is named Dana"."""
    taken, _ = _names(obj, lower=True)
    return [fact("profile:name", f"is named {' '.join(taken)}")] if taken else []


def nickname(match: Found, obj: str) -> list[Draft]:
    """ "Call me Dee", "I go by Dee" → `profile:nickname` "goes by Dee"."""
    taken, _ = _names(obj, lower=False, most=2)
    return [fact("profile:nickname", f"goes by {' '.join(taken)}")] if taken else []


_AFTER_NAME = words("from btw here by lol haha and nice :) hi hello hey")


def introduction(match: Found, obj: str) -> list[Draft]:
    """ "I'm Dana" (a capitalised name alone, not "I'm Sorry") → `profile:name` "is named Dana"."""
    taken, rest = _names(obj, lower=False, most=2)
    if not taken or (rest and rest[0].lower() not in _AFTER_NAME):
        return []
    return [fact("profile:name", f"is named {' '.join(taken)}")]


def _employer(obj: str) -> str | None:
    text = cut_at(strip_fillers(obj), _WORK_CUT)
    words = text.split()
    if not words or len(words) > 6 or is_filler(text):
        return None
    if words[0].lower() in ("a", "an", "the"):
        nouns = [_word(w).lower() for w in words[1:4]]
        if any(n in WORKPLACES for n in nouns):
            return text
        if words[0].lower() == "the" and len(words) > 1 and is_name(_word(words[1])):
            return text
    if is_name(_word(words[0])) and not (words[0].isupper() and len(words[0]) > 4):
        return text
    if len(words) == 1 and is_lower_name(words[0]):
        return text
    return None


def employer(match: Found, obj: str) -> list[Draft]:
    """ "I work at Acme (as a designer)" → `work:employer` "works at Acme" (and `work:role`)."""
    where = _employer(obj)
    if where is None:
        return []
    prep = match.group("prep").lower()
    facts = [fact("work:employer", f"works {prep} {third_person(where)}")]
    role = re.search(r"\sas\s+(an?\s+.+)$", obj.strip(), re.IGNORECASE)
    if role:
        facts += _role_from(role.group(1), stated=True)
    return facts


def role(match: Found, obj: str) -> list[Draft]:
    """ "I work as a nurse" → `work:role` "works as a nurse"."""
    return _role_from(obj, stated=True)


def occupation(match: Found, obj: str) -> list[Draft]:
    """ "I'm a nurse" (a listed occupation, or "… by profession") → `work:role` "works as a nurse"."""
    return _role_from(match.group("art") + " " + obj, stated=False)


_ROLE_REST = re.compile(r"^(?:by\s+(?:profession|trade)|and|but|so|who|which|in|at|for|here|now)\b", re.I)


def _role_from(text: str, *, stated: bool) -> list[Draft]:
    words = strip_fillers(text).split()
    if len(words) < 2 or words[0].lower() not in ("a", "an"):
        return [] if not stated or not words or is_filler(text) or len(words) > 4 else _job(words, words, [])
    body = words[1:]
    for i, word in enumerate(body[:5]):
        low = word.strip(".,!").lower()
        if "'" in word:
            return []
        listed = low in OCCUPATIONS or low == "student" or (low in COMPOUND_OCCUPATIONS and i > 0)
        mods = [m.lower() for m in body[:i]]
        if listed and not any(m in EVALUATIVE or m in PRONOUN_STARTS for m in mods):
            rest = body[i + 1 :]
            if rest and not _ROLE_REST.match(" ".join(rest)):
                return []
            return _job(words[: i + 2], words, rest)
    by = re.search(r"^(an?\s+(?:\w+\s+){0,2}\w+)\s+by\s+(?:profession|trade)\b", " ".join(words), re.I)
    if by:
        return [fact("work:role", f"works as {by.group(1)}")]
    if (
        stated
        and len(body) <= 4
        and not is_filler(" ".join(body))
        and not any(w.lower() in EVALUATIVE for w in body)
    ):
        return [fact("work:role", f"works as {' '.join(words)}")]
    return []


def _job(job: list[str], words: list[str], rest: list[str]) -> list[Draft]:
    text = " ".join(w.strip(".,!") for w in job)
    if job[-1].strip(".,!").lower() == "student":
        facts = [fact("work:role", f"is {text}")]
    else:
        facts = [fact("work:role", f"works as {text}")]
    if rest and rest[0].lower() in ("at", "for"):
        where = _employer(" ".join(rest[1:]))
        if where:
            facts.append(fact("work:employer", f"works {rest[0].lower()} {third_person(where)}"))
    return facts


def work_state(match: Found, obj: str) -> list[Draft]:
    """ "I'm retired" → `work:role` "is retired"."""
    rest = strip_fillers(obj).split()
    if rest and rest[0].lower() not in ("now", "and", "but", "so", "since", "for"):
        return []
    return [fact("work:role", f"is {match.group('state').lower()}")]


def _plan_of(relation: str, who: str | None, rest: list[str]) -> list[Draft]:
    if not rest or not re.fullmatch(r"(?:is|will|has|[a-z]{2,}s)", rest[0]) or rest[0] in ("was", "has"):
        return []
    tail = " ".join(rest)
    if find_date(tail) is None or is_filler(" ".join(rest[1:])):
        return []
    subject = f"a {relation} named {who}" if who else f"a {relation}"
    slug = slugify(without_date(f"{who or relation} {tail}"))
    return [fact(f"plan:{slug}", f"has {subject} who {third_person(tail)}", kind="episodic")]


def relative(match: Found, obj: str) -> list[Draft]:
    """ "My daughter Mia starts school in September" → `family:daughter:mia` "has a daughter
    named Mia" and a plan "has a daughter named Mia who starts school in September"."""
    relation = RELATIONS[match.group("rel").lower()]
    words = strip_fillers(obj).split()
    who = _word(words[0]) if words and is_name(_word(words[0])) else None
    facts = [fact(f"family:{relation}:{slugify(who)}", f"has a {relation} named {who}")] if who else []
    if match.get("named") and not who:
        return []
    return facts + _plan_of(relation, who, words[1:] if who else words)


def relative_had(match: Found, obj: str) -> list[Draft]:
    """ "I have a daughter named Mia" → `family:daughter:mia` "has a daughter named Mia"."""
    relation = RELATIONS[match.group("rel").lower()]
    words = strip_fillers(obj).split()
    who = _word(words[0]) if words and is_name(_word(words[0])) else None
    return [fact(f"family:{relation}:{slugify(who)}", f"has a {relation} named {who}")] if who else []


def _pet(species: str, who: str) -> Draft:
    return fact(f"pet:{slugify(who)}", f"has a {species} named {who}")


def pet(match: Found, obj: str) -> list[Draft]:
    """ "My dog Rex" → `pet:rex` "has a dog named Rex"."""
    species = PETS[" ".join(match.group("pet").lower().split())]
    words = strip_fillers(obj).split()
    who = _word(words[0]) if words and is_name(_word(words[0])) else None
    return [_pet(species, who)] if who else []


_RELATIVE_CUT = re.compile(r"\s(?:who|which|that|but|because|so|lol|haha)\b", re.I)
_PET_REST = words("and but so who which that at too now named called")


def pet_had(match: Found, obj: str) -> list[Draft]:
    """ "I have a dog named Rex" → `pet:rex`; "I have two cats" → `pet:cat` "has two cats"."""
    species = PETS[" ".join(match.group("pet").lower().split())]
    obj = cut_at(strip_fillers(obj), _RELATIVE_CUT)
    items = split_items(obj)
    names = [_word(i) for i in items if len(i.split()) == 1 and is_name(_word(i))]
    if names and len(names) == len(items):
        return [_pet(species, who) for who in names]
    if match.get("named"):
        return []
    rest = strip_fillers(obj).split()
    if rest and rest[0].lower() not in _PET_REST:
        return []
    count = match.group("count").lower()
    plural = match.group("plural") or ""
    return [fact(f"pet:{slugify(species)}", f"has {count} {species}{plural}")]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


_ALLERGY_CUT = re.compile(r"\s(?:so|but|which|because|since|if|when|though|lol|haha)\b", re.I)


def allergy(match: Found, obj: str) -> list[Draft]:
    """ "I'm allergic to peanuts and shellfish" → `health:allergy:peanut`, `health:allergy:shellfish`."""
    facts = []
    for item in split_items(cut_at(strip_fillers(obj), _ALLERGY_CUT)):
        item = strip_fillers(item)
        if not item or is_filler(item) or len(item.split()) > 3 or not slugify(item):
            continue
        facts.append(
            fact(f"health:allergy:{_singular(slugify(item))}", f"is allergic to {third_person(item)}")
        )
    return facts


_NOT_ALLERGENS = words("severe mild serious bad slight food seasonal major minor little small terrible")


def allergy_named(match: Found, obj: str) -> list[Draft]:
    """ "I have a peanut allergy" → `health:allergy:peanut` "has a peanut allergy"."""
    what = match.group("what")
    if what.lower() in _NOT_ALLERGENS or what.lower() in PRONOUN_STARTS:
        return []
    return [fact(f"health:allergy:{_singular(slugify(what))}", f"has a {what.lower()} allergy")]


def intolerance(match: Found, obj: str) -> list[Draft]:
    """ "I'm lactose intolerant" → `health:intolerance:lactose` "is lactose intolerant"."""
    what = match.group("what").lower()
    return [fact(f"health:intolerance:{what}", f"is {what} intolerant")]


def condition(match: Found, obj: str) -> list[Draft]:
    """ "I have asthma" → `health:condition:asthma` "has asthma"; "I'm diabetic" → "is diabetic"."""
    said = " ".join(match.group("cond").split())
    low = said.lower()
    if low in CONDITION_ADJECTIVES:
        return [fact(f"health:condition:{CONDITION_ADJECTIVES[low]}", f"is {low}")]
    shown = "ADHD" if low == "adhd" else low
    return [fact(f"health:condition:{slugify(low.replace(' disease', ''))}", f"has {shown}")]


_DIET_REST = words(
    "for since now and but so btw lol haha because too actually these mostly last recently about over a ages "
    "years ever"
)


def diet(match: Found, obj: str) -> list[Draft]:
    """ "I'm vegetarian" → `profile:diet` "is vegetarian"; "I'm on a keto diet" → "follows a keto diet"."""
    rest = strip_fillers(obj).split()
    if rest and rest[0].lower().strip(",.!") not in _DIET_REST:
        return []
    style = diet_style(match.group("diet"))
    if match.get("follow") is not None:
        return [fact("profile:diet", f"follows a {style} diet")]
    return [fact("profile:diet", f"is {style}")]


_FOR_GOOD = re.compile(r"(?:now|from\s+now\s+on|for\s+good|permanently|again)\b")


def diet_change(match: Found, obj: str) -> list[Draft]:
    """ "I'm going vegan from now on", "I've gone vegetarian" → `profile:diet` "is vegan"; a
    trial ("going vegan for a week") says nothing lasting."""
    rest = strip_fillers(obj).lower().strip(" ,.!")
    if rest and not _FOR_GOOD.match(rest):
        return []
    return [fact("profile:diet", f"is {diet_style(match.group('diet'))}")]


def diet_style(said: str) -> str:
    """The diet a word names ("veggie" → "vegetarian")."""
    return DIETS.get(" ".join(said.lower().split()), said.lower())


_NOT_FOODS = words("before after at in on until much enough anything that out late early here there")


def abstains(match: Found, obj: str) -> list[Draft]:
    """ "I don't eat pork" → `diet:pork` "does not eat pork" (negative)."""
    facts = []
    for item in split_items(cut_at(strip_fillers(obj), _ALLERGY_CUT)):
        item = strip_fillers(item)
        words = item.lower().split()
        if not words or words[0] in _NOT_FOODS or is_filler(item) or len(words) > 3:
            continue
        facts.append(fact(f"diet:{slugify(item)}", f"does not eat {third_person(item)}", polarity="negative"))
    return facts
