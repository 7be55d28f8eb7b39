"""Word lists for fact extraction: what an object may not be, and what names a kind.

They keep extraction precise: a pronoun or filler is never a fact's object, a state
("I'm tired") is never a name, and only listed nouns make "I'm a nurse" a job. A list
tried at many places in a text becomes a quick alternation (`quick_alternation`).
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The set of the space-separated words of `text`."""
    return frozenset(text.split())


# Characters the ignored case matches to an ASCII letter besides its two cases ("ſ" to "s").
CASE_EXTRAS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def quick_alternation(words: str) -> str:
    """The alternation `words` ("a|b|…") with each alternative's first letter written as a
    case-sensitive class of every character the ignored case matches to it: it matches the
    same, but the engine rules an alternative out on its first character before entering it."""

    def first(word: str) -> str:
        low = word[0].lower()
        if not ("a" <= low <= "z"):
            return word
        return f"(?-i:[{low}{low.upper()}{CASE_EXTRAS.get(low, '')}]){word[1:]}"

    return "|".join(first(word) for word in words.split("|"))


# An object starting with one of these points at something said elsewhere ("I love it").
PRONOUN_STARTS = words(
    "it it's its this that these those them they you your yours u ur ya yall y'all him his her hers "
    "us our ours me myself we he she one ones what whatever which who whom whose how when whenever "
    "where why whether something anything everything nothing someone anyone everyone nobody "
    "somebody anybody everybody not no so too such very lots much more most less there here "
    "about being been am is are was were"
)
# The last word of an object that says nothing on its own ("I love to see it").
PRONOUN_ENDS = words("it this that them you u ya him her us me one those these")
# Whole objects that are filler, not things.
FILLER_OBJECTS = frozenset(
    {
        "to",
        "so",
        "too",
        "a lot",
        "lots",
        "the idea",
        "the sound of that",
        "the vibe",
        "the vibes",
        "this one",
        "that one",
        "the way",
        "the most",
        "the best",
        "the first one",
        "the second one",
        "the other one",
        "both",
        "either",
        "neither",
        "all",
        "all of them",
        "all of it",
        "some",
        "mine",
        "yours",
        "ok",
        "okay",
        "well",
        "sure",
        "more",
        "less",
    }
)
# Trailing words that add nothing ("I love hiking so much lol").
TRAILING_FILLERS = (
    "so much",
    "very much",
    "a lot",
    "lol",
    "lmao",
    "haha",
    "hahaha",
    "hehe",
    "tbh",
    "honestly",
    "though",
    "tho",
    "anyway",
    "anyways",
    "too",
    "as well",
    "btw",
    "by the way",
    "actually",
    "really",
    "for sure",
    "i guess",
    "i think",
    "imo",
    "xd",
    "now",
    "these days",
    "nowadays",
    "right now",
    "at the moment",
    "unfortunately",
    "sadly",
    "originally",
    "apparently",
    "luckily",
    "thankfully",
    "obviously",
    "basically",
    "literally",
    "again",
    "haha",
    "😅",
)
# Light verbs start a habit only with an object ("I always have coffee", not "I always have").
LIGHT_VERBS = words("do have get go make take")
# Verbs that cannot start a habit ("I always do", "I never said that").
AUXILIARIES = words(
    "do does did don't dont can could will would should shall must may might am is are was were "
    "be been being have has had get got gonna wanna just even still really also"
)
IRREGULAR_PAST = words(
    "said went did had was were thought told got made knew saw came took gave found felt left kept "
    "heard meant met paid ran sat stood understood wrote spoke broke chose drove ate fell forgot "
    "began drank sang swam threw wore won lost brought bought caught taught fought sought built sent "
    "spent lent slept swept wept dreamt learnt burnt became forgave hid rode rose shook woke"
)
# Words ending in -ed that are base forms.
ED_BASES = words("need feed bleed speed seed shed wed embed exceed proceed succeed breed heed weed shred")
# Everyday words that are never a person's name or a place by themselves.
COMMON_WORDS = words(
    "a an the and or but so if of in on at to for from with by as up out off over into about "
    "i me my you your he she it we they this that here there now then today tonight tomorrow "
    "yes no not ok okay fine good great bad well sorry sure glad happy sad tired sick ill busy "
    "free done back home away late early ready new old young hungry thirsty full bored excited "
    "nervous worried scared afraid angry upset confused lost stuck serious kidding joking "
    "fine alright alive dead awake asleep broke rich poor lucky married single divorced "
    "pregnant retired unemployed online offline available interested curious certain "
    "hopeful grateful thankful proud ashamed embarrassed annoyed stressed exhausted "
    "sleepy cold hot warm cool comfortable crazy lazy weird strange normal different same "
    "right wrong correct aware unsure positive negative honest wondering thinking going "
    "coming leaving trying looking working learning reading watching listening talking "
    "just only also still even really very pretty quite totally literally basically "
    "actually probably definitely maybe kinda sorta super so too all both some any every "
    "one two three four five six seven eight nine ten first last next few many much more "
    "work office school college university team company job support sales marketing "
    "engineering hr it finance legal design ops accounting management here there "
    "future past present moment morning evening night weekend week month year day "
    "hope fear denial peace love luck trouble charge control shape danger doubt "
    "town city country village place area house flat apartment family background "
    "mom mum dad sister brother wife husband partner friend friends kid kids son daughter "
    "dog cat team everyone someone nobody guy guys girl girls man woman people person "
    "fan boss manager developer engineer user admin guest member newbie beginner expert "
    "human bot robot ai assistant god jesus lord dude bro mate buddy pal sir madam"
)
MONTHS = tuple(
    sorted(
        words(
            "january february march april may june july august september october november december "
            "jan feb mar apr jun jul aug sep sept oct nov dec"
        ),
        key=len,
        reverse=True,
    )
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
WEEKDAYS = tuple(sorted(words(_DAYS) | {f"{day}s" for day in words(_DAYS)}, key=len, reverse=True))
# Nationalities and faiths: "I'm Italian" is not a name, "I use English" is not a tool.
DEMONYMS = words(
    "american british english scottish irish welsh canadian australian german french italian spanish "
    "portuguese dutch belgian swiss austrian swedish norwegian danish finnish polish czech greek "
    "turkish russian ukrainian romanian hungarian brazilian mexican argentinian chilean colombian "
    "peruvian cuban chinese japanese korean indian pakistani vietnamese thai filipino indonesian "
    "malaysian nigerian kenyan egyptian moroccan israeli iranian arab arabic african european asian "
    "latino latina hispanic catholic christian muslim jewish buddhist hindu atheist agnostic mormon "
    "protestant orthodox sikh gay straight bi trans queer"
)
NOT_A_NAME = COMMON_WORDS | DEMONYMS | frozenset(MONTHS) | frozenset(WEEKDAYS)

RELATIONS = {
    "daughter": "daughter",
    "son": "son",
    "wife": "wife",
    "husband": "husband",
    "partner": "partner",
    "girlfriend": "girlfriend",
    "boyfriend": "boyfriend",
    "fiance": "fiance",
    "fiancé": "fiance",
    "fiancee": "fiancee",
    "fiancée": "fiancee",
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "father": "father",
    "dad": "father",
    "daddy": "father",
    "sister": "sister",
    "brother": "brother",
    "kid": "child",
    "child": "child",
    "baby": "baby",
    "grandmother": "grandmother",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandfather": "grandfather",
    "grandpa": "grandfather",
    "aunt": "aunt",
    "uncle": "uncle",
    "cousin": "cousin",
    "niece": "niece",
    "nephew": "nephew",
    "stepson": "stepson",
    "stepdaughter": "stepdaughter",
}
PETS = {
    "dog": "dog",
    "puppy": "puppy",
    "pup": "puppy",
    "cat": "cat",
    "kitten": "kitten",
    "kitty": "cat",
    "rabbit": "rabbit",
    "bunny": "rabbit",
    "hamster": "hamster",
    "parrot": "parrot",
    "bird": "bird",
    "horse": "horse",
    "pony": "pony",
    "turtle": "turtle",
    "tortoise": "tortoise",
    "goldfish": "goldfish",
    "snake": "snake",
    "lizard": "lizard",
    "gecko": "gecko",
    "ferret": "ferret",
    "guinea pig": "guinea pig",
    "budgie": "budgie",
}
DIETS = {
    "vegetarian": "vegetarian",
    "veggie": "vegetarian",
    "vegan": "vegan",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "flexitarian": "flexitarian",
    "keto": "keto",
    "gluten-free": "gluten-free",
    "gluten free": "gluten-free",
    "dairy-free": "dairy-free",
    "dairy free": "dairy-free",
    "halal": "halal",
    "kosher": "kosher",
}
CONDITIONS = (
    "type 1 diabetes",
    "type 2 diabetes",
    "diabetes",
    "asthma",
    "celiac disease",
    "coeliac disease",
    "celiac",
    "coeliac",
    "epilepsy",
    "adhd",
    "migraines",
    "eczema",
    "arthritis",
    "high blood pressure",
    "psoriasis",
)
CONDITION_ADJECTIVES = {
    "diabetic": "diabetes",
    "asthmatic": "asthma",
    "epileptic": "epilepsy",
    "celiac": "celiac",
}
OCCUPATIONS = words(
    "nurse doctor physician surgeon dentist pharmacist teacher professor lecturer tutor engineer "
    "developer programmer designer architect accountant lawyer attorney paralegal journalist "
    "writer author photographer chef baker barista bartender waiter waitress electrician plumber "
    "carpenter mechanic pilot firefighter paramedic soldier scientist researcher analyst "
    "consultant librarian veterinarian vet therapist psychologist psychiatrist counselor "
    "counsellor midwife translator musician artist illustrator animator actor actress farmer "
    "freelancer contractor marketer recruiter receptionist cashier nanny caregiver carer "
    "hairdresser realtor economist biologist chemist physicist mathematician statistician "
    "sysadmin tester founder entrepreneur intern cto ceo cfo coo vp sre dev devops "
    "radiologist optometrist physiotherapist pediatrician paediatrician"
)
# Occupations that need a word before them ("social worker", "product manager").
COMPOUND_OCCUPATIONS = words("worker manager officer owner assistant scientist lead director")
# Modifiers that make "I'm a <x> <job>" a judgement, not a job ("a terrible driver").
EVALUATIVE = words(
    "good bad great terrible awful horrible decent mediocre huge big proud lazy poor better worse "
    "best worst real true total complete failed wannabe aspiring former ex retired"
)
WORKPLACES = words(
    "hospital school bank startup restaurant cafe café bakery factory warehouse hotel clinic "
    "university library supermarket store shop agency firm nonprofit charity consultancy lab "
    "newspaper airline pharmacy gym salon daycare bar pub studio garage farm museum "
    "kindergarten college company corporation council ministry government army navy police"
)
# Lead verbs of a dated plan ("I'm starting a new job in March").
PLAN_VERBS = words(
    "starting moving going getting having leaving visiting flying travelling traveling taking "
    "heading quitting retiring joining launching graduating finishing beginning running "
    "presenting attending hosting driving returning celebrating changing buying selling "
    "renovating adopting interviewing"
)
# Present verbs that lead a dated plan ("I start my new job on Monday").
PLAN_PRESENT = "start|begin|leave|fly|move|graduate|retire|travel|return"
# Verbs of a dated plan after "I'll" or "I'm going to" ("I'll start my new job on Monday").
PLAN_BASES = words(
    "start begin move leave visit fly travel graduate retire join quit marry return launch finish host "
    "attend run relocate celebrate adopt"
)
