"""The table of statement leads: a regex matched where a statement may start ("I",
"I'm", "my", "we", "our", "call me"), and the builder that turns its object into facts.

Leads are tried in table order at each start, so a specific lead ("I don't like")
comes before a general one ("I like"); only the leads of the start's first letter
are tried. A lead consumes the words up to its object; the object is captured after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memroute.memory import extraction_profile as profile
from memroute.memory import extraction_stack as stack
from memroute.memory import extraction_statements as said
from memroute.memory.extraction_statements import Builder
from memroute.memory.extraction_words import (
    CONDITIONS,
    DIETS,
    PETS,
    PLAN_PRESENT,
    PLAN_VERBS,
    RELATIONS,
    quick_alternation,
)


@dataclass(frozen=True, slots=True)
class Lead:
    build: Builder
    lists: bool = False  # the object may run past commas ("peanuts, shellfish and cats")
    needs_object: bool = True  # False when the lead itself says it all ("I'm lactose intolerant")


SUBJ_I = r"\bi\s+"
IM = r"\bi(?:\s*'m|\s+am|m)\s+"
IVE = r"\bi(?:\s*'ve|\s+have|ve)\s+"
ILL = r"\bi(?:\s*'ll|\s+will|\s+shall)\s+"
WE = r"\bwe\s+"
WERE = r"\bwe(?:\s*'re|\s+are)\s+"
WEVE = r"\bwe(?:\s*'ve|\s+have)\s+"
MY = r"\bmy\s+"
OUR = r"\bour\s+"
# Adverbs between a subject and its verb ("I really like"); tried at every "I", so quick.
ADV = (
    r"(?:(?:"
    + quick_alternation(
        r"really|rly|lowkey|def|actually|also|still|just|totally|absolutely|honestly|genuinely|definitely|truly|"
        r"kinda|personally|generally|mostly|mainly|now|currently|only|do|sort\s+of|kind\s+of|pretty\s+much"
    )
    + r")\s+){0,2}"
)
NOT = r"(?:don'?t|do\s+not|dont)\s+"
NAME = r"(?=(?-i:[A-ZÀ-ÖØ-Þ]))"


def _alt(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first, a space matching any run of spaces."""
    names = sorted(words, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in names)


_REL = rf"(?P<rel>{_alt(RELATIONS)})"
_REL_MOD = r"(?:(?:little|older|younger|big|baby|eldest|oldest|youngest|twin|new|lovely)\s+)?"
_PET = rf"(?P<pet>{_alt(PETS)})"
_DIET = rf"(?P<diet>{_alt(DIETS)})"
_CHOSE = r"(?P<dverb>chose|decided\s+not\s+to|decided\s+to|decided|selected|picked|went\s+with)\s+"
_DIET_PLAN = r"(?P<diet>keto|paleo|low[- ]carb|vegan|vegetarian|mediterranean|gluten[- ]free)"
_COUNT = r"(?P<count>a|an|one|two|three|four|five|\d)\s+"
_NAMED = r"(?:\s*,\s*|\s+(?P<named>named|called)\s+|\s+)"
_TOOLS_I = r"(?:use|rely\s+on|work\s+with)\s+"

_TABLE: tuple[tuple[str, Builder, bool], ...] = (
    # preferences
    (SUBJ_I + ADV + r"(?P<verb>prefer|like|love|enjoy|adore)\s+", said.preference, False),
    (SUBJ_I + ADV + rf"(?P<neg>{NOT})" + ADV + r"(?P<verb>like|love|enjoy)\s+", said.preference, False),
    (
        SUBJ_I + ADV + r"(?:can'?t|cannot|can\s+not)\s+stand\s+",
        said.fixed_preference("cannot stand", negative=True),
        False,
    ),
    (SUBJ_I + ADV + r"(?P<verb>hate|dislike|avoid|detest)\s+", said.preference, False),
    (
        IM + r"not\s+(?:a\s+|really\s+a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+",
        said.fixed_preference("is not a fan of", negative=True),
        False,
    ),
    (IM + r"(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of\s+", said.fixed_preference("is a fan of"), False),
    (IM + ADV + r"(?:really\s+|so\s+|very\s+)?into\s+", said.fixed_preference("is into"), False),
    (IM + ADV + r"obsessed\s+with\s+", said.fixed_preference("is obsessed with"), False),
    (
        MY + r"(?:all[- ]time\s+)?favou?rite\s+(?:(?P<thing>[^\W\d_]+(?:\s+[^\W\d_]+)?)\s+)?(?:is|are)\s+",
        said.favorite,
        False,
    ),
    # decisions
    (ILL + r"(?P<dverb>use)\s+", said.decision, False),
    (SUBJ_I + r"(?:have\s+)?" + _CHOSE, said.decision, False),
    (IVE + _CHOSE, said.decision, False),
    (IM + r"going\s+(?:to\s+)?(?P<gverb>use|adopt)\s+", said.decision, False),
    (IM + r"(?P<dverb>going\s+with)\s+", said.decision, False),
    # habits
    (
        SUBJ_I
        + r"(?P<adv>usually|typically|often|frequently|regularly|normally|generally|rarely|seldom|"
        + r"always|never)"
        + r"\s+",
        said.habit,
        False,
    ),
    (SUBJ_I + r"tend\s+to\s+", said.tendency, False),
    # name
    (MY + r"(?:first\s+|full\s+)?name(?:\s*'s|\s+is)\s+", profile.name, False),
    (SUBJ_I + r"go\s+by\s+" + NAME, profile.nickname, False),
    (r"\bcalls?\s+me\s+" + NAME, profile.nickname, False),
    # where one lives and comes from
    (SUBJ_I + ADV + r"(?:live|reside)\s+in\s+", profile.location, False),
    (IM + ADV + r"(?:living|based|located|settled)\s+(?:in|out\s+of)\s+", profile.location, False),
    (IVE + r"been\s+living\s+in\s+", profile.location, False),
    (WE + ADV + r"live\s+in\s+", profile.location, False),
    (WERE + r"(?:living|based)\s+in\s+", profile.location, False),
    (IM + r"(?:originally\s+)?from\s+", profile.origin, False),
    (SUBJ_I + ADV + r"(?:originally\s+)?come\s+from\s+", profile.origin, False),
    (SUBJ_I + r"was\s+(?P<how>born)\s+(?:and\s+raised\s+)?in\s+", profile.origin, False),
    (SUBJ_I + r"(?P<how>grew)\s+up\s+in\s+", profile.origin, False),
    # work
    (SUBJ_I + ADV + r"work\s+as\s+", profile.role, False),
    (SUBJ_I + ADV + r"work\s+(?P<prep>at|for)\s+", profile.employer, False),
    (IM + ADV + r"working\s+(?P<prep>at|for)\s+", profile.employer, False),
    (IVE + r"been\s+working\s+(?P<prep>at|for)\s+", profile.employer, False),
    # health and diet before "I'm a …"
    (IM + ADV + r"(?:severely\s+|very\s+|mildly\s+|deathly\s+)?allergic\s+to\s+", profile.allergy, True),
    (SUBJ_I + r"have\s+(?:an?\s+)?allerg(?:y|ies)\s+to\s+", profile.allergy, True),
    (
        r"\bi(?:\s+have|\s*'ve\s+got|ve\s+got)\s+an?\s+(?:(?:severe|mild|bad|serious)\s+)?(?P<what>[^\W\d_]+)\s+allerg(?:y|ies)\b",
        profile.allergy_named,
        False,
    ),
    (IM + r"(?P<what>lactose|gluten|fructose)[- ]intolerant\b", profile.intolerance, False),
    (IM + r"(?:an?\s+)?(?P<cond>diabetic|asthmatic|epileptic|celiac|coeliac)\b", profile.condition, False),
    (SUBJ_I + r"have\s+(?P<cond>" + _alt(CONDITIONS) + r")\b", profile.condition, False),
    (IM + r"(?:an?\s+)?(?:strict\s+|full\s+)?" + _DIET + r"\b", profile.diet, False),
    (IVE + r"been\s+(?:an?\s+)?" + _DIET + r"\b", profile.diet, False),
    (SUBJ_I + r"went\s+" + _DIET + r"\b", profile.diet, False),
    (IM + r"going\s+" + _DIET + r"\b", profile.diet_change, False),
    (IVE + r"(?:just\s+|finally\s+)?gone\s+" + _DIET + r"\b", profile.diet_change, False),
    (
        r"\bi(?:\s*'m|\s+am|m)\s+on\s+an?\s+(?P<follow>)" + _DIET_PLAN + r"\s+diet\b",
        profile.diet,
        False,
    ),
    (
        SUBJ_I + r"follow\s+an?\s+(?P<follow>)" + _DIET_PLAN + r"\s+diet\b",
        profile.diet,
        False,
    ),
    (SUBJ_I + NOT + r"eat\s+", profile.abstains, True),
    (IM + r"(?P<state>retired|unemployed|self-employed)\b", profile.work_state, False),
    # family and pets
    (
        MY
        + _REL_MOD
        + _PET
        + r"(?:\s*'s\s+name\s+is\s+|\s+is\s+(?P<named>named|called)\s+|\s*,\s*|\s+)"
        + NAME,
        profile.pet,
        False,
    ),
    (
        OUR
        + _REL_MOD
        + _PET
        + r"(?:\s*'s\s+name\s+is\s+|\s+is\s+(?P<named>named|called)\s+|\s*,\s*|\s+)"
        + NAME,
        profile.pet,
        False,
    ),
    (
        r"\b(?:i|we)\s+(?:have|'ve\s+got|ve\s+got)\s+"
        + _COUNT
        + _PET
        + r"(?P<plural>s|es)?"
        + r"(?:"
        + _NAMED
        + r"|\s*$|(?=[\s.,!;]))",
        profile.pet_had,
        True,
    ),
    (
        MY + _REL_MOD + _REL + r"(?:\s*'s\s+name\s+is\s+|\s+is\s+(?P<named>named|called)\s+|\s*,\s*|\s+)",
        profile.relative,
        False,
    ),
    (
        r"\b(?:i|we)\s+(?:have|'ve\s+got|ve\s+got)\s+(?:a|an|one)\s+" + _REL_MOD + _REL + _NAMED + NAME,
        profile.relative_had,
        False,
    ),
    # tools and stack
    (
        r"\b(?:i|we)\s+"
        + ADV
        + r"(?P<sw>switched|moved|migrated|changed|relocated)(?:\s+over)?(?:\s+(?:everything|it\s+all))?"
        + r"\s+(?P<dir>from|to)\s+",
        stack.switch,
        False,
    ),
    (
        r"\b(?:i|we)(?:\s*'ve|\s+have|ve)\s+(?:just\s+|recently\s+|finally\s+)?(?P<sw>switched|moved|migrated|changed|relocated)(?:\s+over)?\s+(?P<dir>from|to)\s+",
        stack.switch,
        False,
    ),
    (
        r"\b(?:i|we)\s+"
        + ADV
        + r"(?:deploy|host|ship|run)"
        + r"(?:\s+(?:everything|it\s+all|it|stuff|things|them|prod|production"
        + r"|(?:my|our)(?:\s+[\w-]+){1,3}?))?"
        + r"\s+(?:on|to)\s+",
        stack.deploy,
        False,
    ),
    (
        WERE
        + r"(?:deploying|hosting|hosted|running|deployed)(?:\s+(?:everything|it\s+all|it|our\s+\w+))?"
        + r"\s+(?:on|to)\s+",
        stack.deploy,
        False,
    ),
    (
        OUR
        + r"(?:app|apps|api|site|website|backend|frontend|stack|services?|infra|infrastructure|product"
        + r"|platform)"
        + r"\s+(?:runs|is\s+hosted|is\s+deployed|lives|is\s+running)\s+on\s+",
        stack.deploy,
        False,
    ),
    (SUBJ_I + ADV + _TOOLS_I, stack.use, True),
    (IM + ADV + r"using\s+", stack.use, True),
    (IVE + ADV + r"(?:been|started)\s+using\s+", stack.use, True),
    (WE + ADV + _TOOLS_I, stack.use, True),
    (WERE + ADV + r"using\s+", stack.use, True),
    (WEVE + ADV + r"(?:been|started)\s+using\s+", stack.use, True),
    (
        OUR + r"(?:team|company|startup|shop|stack|org)\s+(?:uses|is\s+using|runs\s+on|relies\s+on)\s+",
        stack.use,
        True,
    ),
    (
        SUBJ_I + ADV + r"(?P<cverb>code|program|write|develop)\s+(?:mostly\s+|mainly\s+)?in\s+",
        stack.code_in,
        False,
    ),
    (
        MY
        + r"(?:main\s+|daily\s+|primary\s+|go-to\s+)?(?P<kind>editor|ide|os|distro|shell|terminal|browser)"
        + r"(?:\s+of\s+choice)?\s+is\s+",
        stack.my_tool,
        False,
    ),
    (IM + r"on\s+", stack.on, False),
    (WERE + r"(?:all\s+)?on\s+", stack.on, False),
    # dated plans
    (IM + r"going\s+to\s+(?P<fverb>[^\W\d_]+)\s+", said.plan_future, False),
    (r"\bi(?P<will>\s*'ll|\s+will)\s+(?P<fverb>[^\W\d_]+)\s+", said.plan_future, False),
    (IM + r"(?P<pverb>" + "|".join(sorted(PLAN_VERBS)) + r")\s+", said.plan_progressive, False),
    (WERE + r"(?P<pverb>" + "|".join(sorted(PLAN_VERBS)) + r")\s+", said.plan_progressive, False),
    (SUBJ_I + r"(?P<sverb>" + PLAN_PRESENT + r")\s+", said.plan_present, False),
    (r"\bi(?:\s+have|\s*'ve\s+got|ve\s+got)\s+(?P<art>an?)\s+", said.plan_have, False),
    # "I'm a nurse", "I'm Dana": last, after every other "I'm …"
    (IM + r"(?P<art>an?)\s+", profile.occupation, False),
    (IM + NAME, profile.introduction, False),
)

# Builders whose lead states the whole fact, so they run even with nothing after it.
_WHOLE = (
    profile.allergy_named,
    profile.intolerance,
    profile.condition,
    profile.diet,
    profile.diet_change,
    profile.work_state,
)
LEADS: tuple[Lead, ...] = tuple(
    Lead(b, lists, needs_object=b not in _WHOLE and b is not profile.pet_had) for _, b, lists in _TABLE
)


def _renamed(pattern: str, index: int) -> str:
    """`pattern` with each named group `x` renamed `x_<index>`, unique in the alternation."""
    return re.sub(r"[(][?]P<([a-z]+)>", lambda m: f"(?P<{m.group(1)}_{index}>", pattern)


# Subjects shared by many leads, longest first: a lead that starts with one is tried after
# its subject (and optional adverbs) matched once, so the alternation stays fast.
_SUBJECTS = (IVE, ILL, WERE, WEVE, IM, WE, MY, OUR, SUBJ_I)


# Subjects whose second word is fixed ("I'm", "I've", "we're") fail fast, so they are tried
# before the plain "I"; leads of their own shape come last (a subject's lead wins a tie).
_GROUP_ORDER = (*(s + ADV for s in (IM, IVE, ILL, WERE, WEVE, WE)), MY, OUR, SUBJ_I + ADV, "")


def _split(pattern: str) -> tuple[str, str]:
    """(shared subject, rest of the lead); ("", pattern) for a lead of its own shape."""
    for subject in _SUBJECTS:
        if pattern.startswith(subject):
            rest = pattern[len(subject) :].removeprefix(ADV)
            return (subject if subject in (MY, OUR) else subject + ADV), rest
    return "", pattern


def _alternatives() -> str:
    """Every lead as one alternation, grouped by subject in `_GROUP_ORDER`, each lead in table
    order within its group. A lead ends with an empty group `p<index>` that names it: the last
    group to close, so `lastgroup` says which lead matched and where it ends, and no group opens
    an alternative (the engine skips an alternative on its first letter only then)."""
    groups: dict[str, list[str]] = {subject: [] for subject in _GROUP_ORDER}
    for i, (pattern, _, _) in enumerate(_TABLE):
        subject, rest = _split(pattern)
        groups[subject].append(f"(?:{_renamed(rest, i)})(?P<p{i}>)")
    return "|".join(f"{subject}(?:{'|'.join(parts)})" for subject, parts in groups.items() if parts)


# Where a lead may start: a word "i…", "my", "we", "our", "call(s)", not after a letter or `'`.
_CANDIDATE = (
    r"(?:[iI](?=[\s'mMvV])|[mM](?=[yY]\s)|[wW](?=[eE][\s'])|[oO](?=[uU][rR]\s)|[cC](?=[aA][lL][lL][sS]?\s))"
)
# Every lead in the text, each found as the one letter it starts at, so leads may overlap
# ("I deploy my app on" holds "my app …" too) and one scan finds them all. The first letter
# comes first, outside the ignored case, so the engine looks for it in a fast loop; the look
# back then checks the character before it, the candidate shape and the leads from that letter.
LEAD = re.compile(
    r"(?-i:[iImMwWoOcC])(?<![\w'].)(?<=(?=(?-i:" + _CANDIDATE + r"))(?=" + _alternatives() + r").)",
    re.IGNORECASE,
)


def _groups_by_lead() -> tuple[dict[str, int], ...]:
    """By lead, the numbers of its named groups under their names without the lead's index."""
    groups: list[dict[str, int]] = [{} for _ in _TABLE]
    for name, number in LEAD.groupindex.items():
        base, _, index = name.rpartition("_")
        if base:
            groups[int(index)][base] = number
    return tuple(groups)


# By lead, its groups' numbers in `LEAD`, read once instead of by name per match.
LEAD_GROUPS = _groups_by_lead()


def _lead_of_group() -> tuple[int, ...]:
    """By group number, the lead whose empty group `p<index>` it is (-1 for other groups)."""
    leads = [-1] * (LEAD.groups + 1)
    for name, number in LEAD.groupindex.items():
        if re.fullmatch(r"p\d+", name):
            leads[number] = int(name[1:])
    return tuple(leads)


# Which lead a match found: the lead of its last group to close (`lastindex`).
LEAD_OF_GROUP = _lead_of_group()
