"""The kinds of fact a person of a generated conversation states, each with its own phrasings.

A `Kind` draws its values for one person, says them in many ways (`state`), is asked about
in other words (`asks`: the questions paraphrase rather than repeat the statement), may be
changed later (`change`: a turn that supersedes the first), is remarked on by the other
person (`mention`: turns that name the value but are not the evidence) and restated in
passing by its owner (`restate`: another turn that holds the same fact).

Templates are `str.format` strings over the drawn values; `{when}` and `{date}` are filled
by the generator for dated kinds (`timing`), from the date of the session.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.conversations import pools

Values = dict[str, str]
Profile = dict[str, Values]
Draw = Callable[[random.Random, Profile, set[str]], Values | None]


@dataclass(frozen=True, slots=True)
class Ask:
    """A question template and the template of its short answer."""

    text: str
    answer: str


@dataclass(frozen=True, slots=True)
class Change:
    """A later turn that replaces the value: new values (the old ones stay as `old_*`)."""

    draw: Callable[[random.Random, Values, set[str]], Values]
    state: tuple[str, ...]
    asks: tuple[Ask, ...]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    draw: Draw
    state: tuple[str, ...]
    asks: tuple[Ask, ...]
    category: str = "single-hop"
    timing: str = ""  # "future" | "past": the generator adds {when} and {date}
    who: tuple[Ask, ...] = ()
    mention: tuple[str, ...] = ()
    restate: tuple[str, ...] = ()
    change: Change | None = None
    needs: str = ""  # the kind whose values this one builds on
    techy: bool | None = None  # only for people who code (True) or who do not (False)
    extra: dict[str, Any] = field(default_factory=dict)


def pick(rng: random.Random, pool: Sequence[Any], taken: set[str]) -> Any:
    """A value of `pool` not yet used in this conversation (marked as used)."""
    free = [v for v in pool if repr(v) not in taken]
    value = rng.choice(free or list(pool))
    taken.add(repr(value))
    return value


def _home(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"city": pick(rng, pools.CITIES, taken), "years": str(rng.randint(2, 11))}


def _moved(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return {"city": pick(rng, pools.CITIES, taken)}


HOME = Kind(
    "home",
    _home,
    state=(
        "I live in {city}, in a tiny flat near the river",
        "we're based in {city} these days, been here {years} years",
        "{city} is home for me. the rent is brutal but I love it",
        "my place in {city} has the worst heating honestly",
        "yeah I'm in {city}, it's been pouring all day here",
        "living in {city} for {years} years now and I still get lost in the old town",
        "the tram in {city} was packed again, I swear everyone here commutes at the same time",
    ),
    asks=(
        Ask("Where does {name} live?", "{city}"),
        Ask("Which city is {name}'s home?", "{city}"),
        Ask("In what town is {name} based?", "{city}"),
    ),
    who=(Ask("Which of the two lives in {city}?", "{name}"),),
    mention=(
        "how's the weather in {city}?",
        "I might visit {city} in the spring, any tips?",
        "is {city} still as expensive as you said?",
    ),
    restate=("back home in {city} now, what a day", "nothing beats a quiet evening in {city}"),
    change=Change(
        _moved,
        state=(
            "big news, we finally moved to {city}! boxes everywhere",
            "I've relocated to {city} for good, left {old_city} on Friday",
            "update: I don't live in {old_city} anymore, I'm in {city} now",
            "so the move happened, new flat in {city}, goodbye {old_city}",
        ),
        asks=(
            Ask("Where does {name} live now?", "{city}"),
            Ask("Which city did {name} move to?", "{city}"),
            Ask("What is {name}'s current city?", "{city}"),
        ),
    ),
)


def _hometown(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"town": pick(rng, pools.HOMETOWNS, taken)}


HOMETOWN = Kind(
    "hometown",
    _hometown,
    state=(
        "I grew up in {town}, so this city still feels huge",
        "originally I'm from {town}",
        "{town} born and raised, don't let the accent fool you",
        "my whole family is still back in {town}",
        "when I was a kid in {town} we had snow every winter",
    ),
    asks=(
        Ask("Where did {name} grow up?", "{town}"),
        Ask("What is {name}'s hometown?", "{town}"),
        Ask("Where is {name} originally from?", "{town}"),
    ),
    who=(Ask("Which of them spent their childhood in {town}?", "{name}"),),
    mention=("do you ever miss {town}?", "I've never been to {town}, what's it like?"),
)


def _job(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    role, employer = pick(rng, pools.JOBS, taken)
    return {"role": role, "employer": employer, "years": str(rng.randint(2, 15))}


def _new_job(rng: random.Random, old: Values, taken: set[str]) -> Values:
    role, employer = pick(rng, pools.JOBS, taken)
    return {"role": role, "employer": employer}


JOB = Kind(
    "job",
    _job,
    state=(
        "I work as a {role} at {employer}",
        "I'm a {role}, and {employer} keeps me busy",
        "my shift at {employer} ran late again. being a {role} is exhausting some weeks",
        "I've been a {role} for {years} years now, still love it mostly",
        "work was mad today, {employer} is short-staffed and I'm the only {role} on",
        "being a {role} means I never get weekends off lol",
    ),
    asks=(
        Ask("What does {name} do for a living?", "{role}"),
        Ask("What is {name}'s profession?", "{role}"),
        Ask("Who is {name}'s employer?", "{employer}"),
    ),
    who=(Ask("Which of the two works as a {role}?", "{name}"),),
    mention=(
        "how's work at {employer}?",
        "I could never be a {role}, you're a hero",
        "is {employer} still making you do overtime?",
    ),
    restate=("another long day at {employer}", "the {role} life, tired but happy"),
    change=Change(
        _new_job,
        state=(
            "I quit {old_employer}! starting as a {role} at {employer} on Monday",
            "new job news: I'm a {role} at {employer} now",
            "handed in my notice at {old_employer}, I've taken a {role} job with {employer}",
            "first week as a {role} done, {employer} is so different from {old_employer}",
        ),
        asks=(
            Ask("What is {name}'s job now?", "{role} at {employer}"),
            Ask("Where does {name} work these days?", "{employer}"),
            Ask("What role did {name} move into?", "{role}"),
        ),
    ),
)


def _pet(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    species, pet = pick(rng, pools.PETS, taken)
    return {"species": species, "pet": pet}


PET = Kind(
    "pet",
    _pet,
    state=(
        "I have a {species} named {pet}",
        "my {species} {pet} knocked my coffee over this morning",
        "{pet}, my {species}, has been so clingy this week",
        "we adopted a {species} last year, the name is {pet}",
        "sorry, late reply, {pet} (my {species}) needed the vet",
        "got home and my {species} {pet} had shredded a cushion",
    ),
    asks=(
        Ask("What pet does {name} have?", "a {species} called {pet}"),
        Ask("What animal does {name} keep at home, and what is it called?", "a {species}, {pet}"),
        Ask("Does {name} own any animals?", "yes, a {species} named {pet}"),
    ),
    who=(Ask("Whose {species} is {pet}?", "{name}'s"),),
    mention=("give {pet} a cuddle from me", "how is {pet} doing?", "{pet} sounds like a menace haha"),
    restate=("{pet} says hi", "{pet} is asleep on my feet as I type"),
)


def _partner(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {
        "partner": pick(rng, pools.PARTNER_NAMES, taken),
        "rel": rng.choice(pools.PARTNER_WORDS),
        "years": str(rng.randint(2, 14)),
    }


PARTNER = Kind(
    "partner",
    _partner,
    state=(
        "my {rel} {partner} is making dinner tonight, thank god",
        "{partner} and I have been together {years} years this month",
        "my {rel} {partner} says hi by the way",
        "{partner} (my {rel}) thinks I work too much",
        "we're celebrating {years} years, me and {partner}",
    ),
    asks=(
        Ask("What is the name of {name}'s {rel}?", "{partner}"),
        Ask("Who is {name} in a relationship with?", "{partner}"),
        Ask("Who does {name} share a life with?", "{partner}"),
    ),
    mention=("say hi to {partner} from me!", "is {partner} coming on Saturday?"),
    restate=("{partner} and I finally watched that film",),
)


def _child(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {
        "child": pick(rng, pools.CHILD_NAMES, taken),
        "kid": rng.choice(("daughter", "son")),
        "age": str(rng.randint(3, 9)),
    }


CHILD = Kind(
    "child",
    _child,
    state=(
        "my {kid} {child} just turned {age}",
        "{child}, my {kid}, drew a dinosaur on the wall. {age} years old and fearless",
        "{child} is {age} now and already smarter than me",
        "had to leave early, my {kid} {child} had a fever",
        "bedtime with a {age} year old is a negotiation. {child} wins every time",
    ),
    asks=(
        Ask("How old is {name}'s {kid}?", "{age}"),
        Ask("What is the name of {name}'s child?", "{child}"),
        Ask("Does {name} have kids?", "yes, a {kid} called {child}"),
    ),
    mention=("how is little {child}?", "tell {child} I said happy birthday"),
)


def _school(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return dict(p["child"])


SCHOOL = Kind(
    "school",
    _school,
    state=(
        "{child} starts school {when}, I'm not ready",
        "my {kid} {child} starts at the village school {when}",
        "big milestone coming, {child} begins school {when}",
    ),
    asks=(
        Ask("When does {name}'s {kid} start school?", "{date}"),
        Ask("When is {child} going to begin school?", "{date}"),
    ),
    category="temporal",
    timing="future",
    needs="child",
)


def _sibling(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {
        "sib": pick(rng, pools.SIBLING_NAMES, taken),
        "sibrel": rng.choice(("sister", "brother")),
        "sibcity": pick(rng, pools.CITIES, taken),
    }


SIBLING = Kind(
    "sibling",
    _sibling,
    state=(
        "my {sibrel} {sib} is visiting next week",
        "{sib} (my {sibrel}) called for two hours last night",
        "my little {sibrel} {sib} got engaged!!",
        "{sib}, my big {sibrel}, always beats me at cards",
    ),
    asks=(
        Ask("What is the name of {name}'s {sibrel}?", "{sib}"),
        Ask("Who is {name}'s sibling?", "{sib}"),
    ),
    mention=("tell {sib} congrats from me",),
)


def _sibling_city(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return dict(p["sibling"])


SIBLING_CITY = Kind(
    "sibling_city",
    _sibling_city,
    state=(
        "{sib} just moved to {sibcity}, I'm jealous",
        "{sib} lives in {sibcity} so we only see each other at Christmas",
        "flying out to see {sib} in {sibcity} soon",
    ),
    asks=(Ask("Where does {sib} live?", "{sibcity}"),),
    needs="sibling",
)


def _hobby(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    noun, doing, place = pick(rng, pools.HOBBIES, taken)
    return {"hobby": noun, "doing": doing, "place": place}


def _new_hobby(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return _hobby(rng, {}, taken)


HOBBY = Kind(
    "hobby",
    _hobby,
    state=(
        "I've gotten really into {hobby} lately",
        "spent the whole Sunday {doing}, my new obsession",
        "{hobby} tonight, wish me luck",
        "I think {hobby} is the only thing keeping me sane this year",
        "started {doing} a few months ago and I'm hooked",
        "can't talk long, off to {place} for some {hobby}",
    ),
    asks=(
        Ask("What hobby has {name} taken up?", "{hobby}"),
        Ask("What does {name} do for fun?", "{hobby}"),
        Ask("How does {name} like to spend free time?", "{doing}"),
    ),
    who=(Ask("Which of them is into {hobby}?", "{name}"),),
    mention=("how's the {hobby} going?", "show me what you made at {place}!"),
    restate=("{hobby} again this weekend, can't stop",),
    change=Change(
        _new_hobby,
        state=(
            "I gave up {old_hobby}, it's all about {hobby} now",
            "ok confession: I stopped {old_doing}. I'm {doing} instead",
            "so {old_hobby} didn't stick. signed up for {hobby} and I love it",
        ),
        asks=(
            Ask("What is {name}'s hobby now?", "{hobby}"),
            Ask("What pastime has {name} switched to?", "{hobby}"),
        ),
    ),
)


def _allergy(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"allergen": pick(rng, pools.ALLERGENS, taken)}


ALLERGY = Kind(
    "allergy",
    _allergy,
    state=(
        "I'm allergic to {allergen}, so I always check the label",
        "can't go near {allergen}, I swell up like a balloon",
        "ugh, the restaurant forgot about my {allergen} allergy again",
        "reminder to self: carry the epipen, {allergen} is no joke for me",
        "the doctor confirmed it, I react to {allergen}",
    ),
    asks=(
        Ask("What is {name} allergic to?", "{allergen}"),
        Ask("Does {name} have any allergies?", "yes, {allergen}"),
        Ask("What must {name} stay away from for health reasons?", "{allergen}"),
    ),
    who=(Ask("Who in the conversation reacts badly to {allergen}?", "{name}"),),
    mention=("I'll make sure there's no {allergen} in the food",),
)


def _diet(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"diet": pick(rng, pools.DIETS, taken), "since": rng.choice(("uni", "2019", "last spring"))}


def _new_diet(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return {"diet": pick(rng, [d for d in pools.DIETS if d != old["diet"]], taken)}


DIET = Kind(
    "diet",
    _diet,
    state=(
        "I've been {diet} since {since}",
        "being {diet} at a barbecue is tough haha",
        "I'm {diet}, so the menu options were grim",
        "{diet} life means I cook a lot at home",
    ),
    asks=(
        Ask("What diet does {name} follow?", "{diet}"),
        Ask("Are there foods {name} doesn't eat by choice?", "{diet}"),
    ),
    change=Change(
        _new_diet,
        state=(
            "I'm not {old_diet} anymore, going {diet} from now on",
            "changed my diet again: {diet} now, {old_diet} wasn't working for me",
            "after a lot of thought I've switched from {old_diet} to {diet}",
        ),
        asks=(
            Ask("What diet does {name} follow now?", "{diet}"),
            Ask("How does {name} eat these days?", "{diet}"),
        ),
    ),
)


def _editor(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"editor": pick(rng, pools.EDITORS, taken), "lang": pick(rng, pools.LANGS, taken)}


def _new_editor(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return {"editor": pick(rng, [e for e in pools.EDITORS if e != old["editor"]], taken)}


EDITOR = Kind(
    "editor",
    _editor,
    state=(
        "I do all my coding in {editor}, mostly {lang} these days",
        "my {editor} config is a mess but it works",
        "spent an hour tweaking {editor} instead of actually writing {lang}",
        "{editor} is the only editor that doesn't make me angry",
    ),
    asks=(
        Ask("Which code editor does {name} use?", "{editor}"),
        Ask("What text editor does {name} write programs in?", "{editor}"),
    ),
    mention=("still fighting with {editor}?",),
    change=Change(
        _new_editor,
        state=(
            "I switched from {old_editor} to {editor} last week",
            "goodbye {old_editor}, I'm on {editor} now and not looking back",
            "finally moved my whole setup over to {editor}, {old_editor} is uninstalled",
        ),
        asks=(
            Ask("Which editor does {name} use now?", "{editor}"),
            Ask("What did {name} replace the old editor with?", "{editor}"),
        ),
    ),
    techy=True,
)


def _language(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return dict(p["editor"])


CODE_LANGUAGE = Kind(
    "code_language",
    _language,
    state=(
        "rewrote the whole service in {lang} over the weekend",
        "{lang} is my main language at work, for better or worse",
        "honestly {lang} is just nicer for backend stuff",
    ),
    asks=(
        Ask("Which programming language does {name} mostly work in?", "{lang}"),
        Ask("What does {name} write backend code with?", "{lang}"),
    ),
    needs="editor",
    techy=True,
)


def _deploy(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"host": pick(rng, pools.DEPLOY, taken)}


DEPLOY = Kind(
    "deploy",
    _deploy,
    state=(
        "we deploy on {host} at work",
        "our side project runs on {host}, it's cheap at least",
        "{host} had an outage and our app went down with it",
        "moved the app to {host} and the bills halved",
    ),
    asks=(
        Ask("Where does {name}'s team host their software?", "{host}"),
        Ask("What platform does {name}'s app run on?", "{host}"),
    ),
    techy=True,
)


def _car(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"car": pick(rng, pools.CARS, taken)}


def _new_car(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return {"car": pick(rng, pools.CARS, taken)}


CAR = Kind(
    "car",
    _car,
    state=(
        "I drive {car}, it's falling apart but it's mine",
        "my car is {car} and the clutch is making noises again",
        "took {car} for its MOT, passed somehow",
    ),
    asks=(
        Ask("What car does {name} drive?", "{car}"),
        Ask("What vehicle does {name} own?", "{car}"),
    ),
    change=Change(
        _new_car,
        state=(
            "sold {old_car}! I'm driving {car} now",
            "the old car finally died, so I got {car}",
            "traded in {old_car} for {car}, so much quieter",
        ),
        asks=(
            Ask("What does {name} drive now?", "{car}"),
            Ask("Which car did {name} get?", "{car}"),
        ),
    ),
    techy=False,
)


def _phone(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"phone": pick(rng, pools.PHONES, taken)}


PHONE = Kind(
    "phone",
    _phone,
    state=(
        "my phone is {phone} and the battery lasts about an hour",
        "still using {phone}, it refuses to die",
        "dropped {phone} in the bath, it survived!!",
    ),
    asks=(
        Ask("What phone does {name} have?", "{phone}"),
        Ask("Which mobile does {name} use?", "{phone}"),
    ),
)


def _trip(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"dest": pick(rng, pools.DESTINATIONS, taken)}


def _same(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return {}


TRIP = Kind(
    "trip",
    _trip,
    state=(
        "we're flying to {dest} {when}!!",
        "booked {dest}, we leave {when}",
        "counting down to {dest}, flight is {when}",
        "holiday planned: {dest}, {when}. need it so badly",
    ),
    asks=(
        Ask("When is {name} travelling to {dest}?", "{date}"),
        Ask("Where is {name} going on holiday?", "{dest}"),
        Ask("When does {name}'s big trip start?", "{date}"),
    ),
    category="temporal",
    timing="future",
    mention=("so jealous of your {dest} trip", "bring me something back from {dest}"),
    change=Change(
        _same,
        state=(
            "the {dest} trip got pushed back, now we fly {when}",
            "change of plans, {dest} is now {when}",
            "airline cancelled, so {dest} is happening {when} instead",
        ),
        asks=(
            Ask("When is {name}'s trip to {dest} now?", "{date}"),
            Ask("What is the new date of {name}'s {dest} holiday?", "{date}"),
        ),
    ),
)


def _gig(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"band": pick(rng, pools.BANDS, taken)}


GIG = Kind(
    "gig",
    _gig,
    state=(
        "got tickets to see {band} {when}",
        "{band} are playing {when} and I'm going!!",
        "my friend scored us {band} tickets for {when}",
    ),
    asks=(
        Ask("When is {name} seeing {band} play?", "{date}"),
        Ask("Which artist is {name} going to see live?", "{band}"),
    ),
    category="temporal",
    timing="future",
    who=(Ask("Who has tickets for {band}?", "{name}"),),
)


def _race(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"race": rng.choice(("half marathon", "10k", "triathlon", "marathon", "5k fun run"))}


RACE = Kind(
    "race",
    _race,
    state=(
        "signed up for a {race} {when}, what have I done",
        "training plan for the {race} {when} starts now",
        "my {race} is {when} and I've barely trained",
    ),
    asks=(
        Ask("When is {name}'s {race}?", "{date}"),
        Ask("What race has {name} entered?", "{race}"),
    ),
    category="temporal",
    timing="future",
)


def _past(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    did, paraphrase = pick(rng, pools.PAST_EVENTS, taken)
    return {"did": did, "para": paraphrase}


PAST = Kind(
    "past",
    _past,
    state=(
        "{when} I {did}",
        "so {when} I {did}, still buzzing",
        "guess what, {when} I {did}",
        "{when} I {did}. best part of the month",
    ),
    asks=(
        Ask("When did {name} {para}?", "{date}"),
        Ask("On what date did {name} {para}?", "{date}"),
    ),
    category="temporal",
    timing="past",
)


def _injury(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    did, noun, how = pick(rng, pools.INJURIES, taken)
    return {"hurt": did, "injury": noun, "how": how}


INJURY = Kind(
    "injury",
    _injury,
    state=(
        "{when} I {hurt} {how}, so I'm hobbling around",
        "I {hurt} {how} {when}, ice packs all weekend",
    ),
    asks=(
        Ask("What injury did {name} suffer?", "{injury}"),
        Ask("When did {name} get hurt?", "{date}"),
    ),
    category="temporal",
    timing="past",
    mention=("hope the {injury} heals fast",),
)


def _book(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"book": pick(rng, pools.BOOKS, taken)}


BOOK = Kind(
    "book",
    _book,
    state=(
        "I'm halfway through {book} and can't put it down",
        "reading {book} on the train, highly recommend",
        "book club picked {book} this month",
    ),
    asks=(
        Ask("What novel is {name} reading?", "{book}"),
        Ask("Which book has {name} been enjoying?", "{book}"),
    ),
    mention=("did you finish {book} yet?",),
)


def _show(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"show": pick(rng, pools.SHOWS, taken)}


SHOW = Kind(
    "show",
    _show,
    state=(
        "currently binging {show}, send help",
        "stayed up till 2 watching {show}",
        "{show} is the best thing on TV right now, fight me",
    ),
    asks=(
        Ask("What TV series is {name} watching?", "{show}"),
        Ask("Which show kept {name} up late?", "{show}"),
    ),
)


def _food(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"food": pick(rng, pools.FOODS, taken)}


FOOD = Kind(
    "food",
    _food,
    state=(
        "my go-to comfort food is {food}",
        "nothing fixes a bad day like {food}",
        "I could eat {food} every single night",
    ),
    asks=(
        Ask("What is {name}'s comfort food?", "{food}"),
        Ask("What dish does {name} turn to after a bad day?", "{food}"),
    ),
)


def _coffee(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"drink": pick(rng, pools.COFFEE, taken)}


def _new_coffee(rng: random.Random, old: Values, taken: set[str]) -> Values:
    return _coffee(rng, {}, taken)


COFFEE = Kind(
    "coffee",
    _coffee,
    state=(
        "I only drink {drink} in the morning",
        "three {drink} before noon, don't judge",
        "my order is always {drink}",
    ),
    asks=(Ask("What does {name} usually drink in the morning?", "{drink}"),),
    change=Change(
        _new_coffee,
        state=(
            "I've switched to {drink}, no more {old_drink}",
            "new morning routine: {drink} instead of {old_drink}",
        ),
        asks=(Ask("What is {name}'s morning drink now?", "{drink}"),),
    ),
)


def _learning(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"tongue": pick(rng, pools.LANGUAGES_LEARNED, taken), "months": str(rng.randint(2, 18))}


LEARNING = Kind(
    "learning",
    _learning,
    state=(
        "I've been learning {tongue} for {months} months",
        "{tongue} lessons are kicking my butt",
        "my {tongue} tutor says my accent is improving",
    ),
    asks=(
        Ask("Which foreign language is {name} studying?", "{tongue}"),
        Ask("What language is {name} trying to pick up?", "{tongue}"),
    ),
    who=(Ask("Which of the two takes {tongue} lessons?", "{name}"),),
)


def _instrument(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"instrument": pick(rng, pools.INSTRUMENTS, taken)}


INSTRUMENT = Kind(
    "instrument",
    _instrument,
    state=(
        "practising the {instrument} every evening, the neighbours love me",
        "I bought a second-hand {instrument}",
        "my {instrument} teacher gave me a really hard piece to learn",
    ),
    asks=(
        Ask("What musical instrument does {name} play?", "{instrument}"),
        Ask("Which instrument is {name} learning?", "{instrument}"),
    ),
)


def _team(rng: random.Random, p: Profile, taken: set[str]) -> Values:
    return {"team": pick(rng, pools.TEAMS, taken)}


TEAM = Kind(
    "team",
    _team,
    state=(
        "I support {team}, have done since I was six",
        "{team} lost again, I'm devastated",
        "watching {team} tonight with the lads",
    ),
    asks=(
        Ask("Which sports team does {name} follow?", "{team}"),
        Ask("Who does {name} cheer for?", "{team}"),
    ),
)


KINDS: tuple[Kind, ...] = (
    HOME, HOMETOWN, JOB, PET, PARTNER, CHILD, SCHOOL, SIBLING, SIBLING_CITY, HOBBY, ALLERGY,
    DIET, EDITOR, CODE_LANGUAGE, DEPLOY, CAR, PHONE, TRIP, GIG, RACE, PAST, INJURY, BOOK, SHOW,
    FOOD, COFFEE, LEARNING, INSTRUMENT, TEAM,
)  # fmt: skip
BY_NAME = {k.name: k for k in KINDS}
# Always drawn for everyone; the rest are drawn at random.
CORE = ("home", "hometown", "job", "pet", "hobby", "allergy")
