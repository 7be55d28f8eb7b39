"""Themes of commitments: volunteering, a support group, a startup, studying for an exam."""

from __future__ import annotations

from bench.threads.model import Ask, Episode, Theme, values

VOLUNTEERING = Theme(
    "volunteering",
    pools={
        "animal": values("""
            Nelson the one-eyed cat | the cat missing an eye
            Duchess the greyhound | the retired racing dog
            Pip the three-legged terrier | the terrier with a missing leg
            Marmalade the ginger tom | the orange male moggy
            Boris the bulldog | the squashed-face pup
            Hazel the lop-eared rabbit | the bunny with floppy ears
            Captain the deaf collie | the sheepdog who can't hear
            Twiglet the kitten | the tiny young cat
            Bruce the old labrador | the elderly retriever
            Sergeant the parrot | the talking bird
        """),
        "adopter": values("""
            a retired couple from Frome
            a nurse who works nights
            a family with twin boys
            a man called Lionel
            two students
            a farmer from up the valley
            a lady who already has four cats
            a young couple who just bought a house
            a firefighter
            a vicar
        """),
        "event": values("""
            dog show
            quiz night
            sponsored walk
            cake sale
            jumble sale
            charity ball
            fun run
            car wash
            raffle
            open day
        """),
        "amount": values("£1,240\n£380\n£2,900\n£615\n£4,050\n£870\n£1,560\n£230\n£3,300\n£940"),
        "task": values("""
            scrub every kennel
            walk the big dogs
            socialise the feral kittens
            sort a mountain of donated blankets
            wash forty food bowls
            answer the adoption phone line
            clean out the rabbit runs
            photograph the new arrivals for the website
            unload the food delivery
            bathe a very muddy spaniel
        """),
        "coordinator": values(
            "Hyacinth\nMr Rahman\nTamsin\nBig Kev\nMrs Ojukwu\nPercival\nLindiwe\nAshok\nFlorence\nDermot"
        ),
    },
    fixed={
        "shelter": ("Paws Rescue", "the Hillside animal shelter", "Second Chance Rescue", "Whiskers and Wags")
    },
    episodes=(
        Episode(
            says=(
                "{animal} got adopted {when} by {adopter}, I cried in the car park",
                "great news from the shelter: {adopter} took {animal} home",
                "{animal} finally has a home! {adopter}, they're perfect",
            ),
            do="see {animal} adopted",
            did="saw {animal} adopted",
            mentions=(
                "another adoption at the shelter this week",
                "watching animals leave the shelter for new homes never gets old",
                "we've had so many adoptions at {shelter} lately",
            ),
            asks=(
                Ask("Who adopted {animal} from the shelter?", "{adopter}"),
                Ask("Which shelter animal did {adopter} take home?", "{animal}"),
            ),
            paraphrases=(
                Ask("Who gave a forever home to {animal_p} that {name} looked after?", "{adopter}"),
            ),
            echoes=("{animal}!! I'm so happy", "I've been rooting for {animal}"),
        ),
        Episode(
            says=(
                "the shelter's {event} {when} raised {amount}!!",
                "{amount} from the {event} for {shelter}, best total ever",
                "our {event} made {amount}, I'm exhausted but happy",
            ),
            do="help run the shelter's {event}",
            did="helped run a {event} for the shelter",
            mentions=(
                "planning the next fundraiser for {shelter}",
                "fundraising for the shelter is exhausting but worth it",
                "the shelter needs so much money for vet bills",
            ),
            asks=(
                Ask("How much did the shelter's {event} raise?", "{amount}"),
                Ask("What fundraiser made {amount} for {name}'s shelter?", "{event}"),
            ),
            echoes=("a {event}! love it", "that's so much money for a {event}"),
        ),
        Episode(
            says=(
                "{coordinator} had me {task} all shift {when}",
                "volunteering today: {task}. {coordinator} said I was a star",
                "{coordinator} put me on {task} duty, my arms",
            ),
            do="{task} at the shelter",
            did="had to {task} at the shelter",
            mentions=(
                "long shift at the shelter today",
                "{shelter} had me on the worst jobs again",
                "volunteering shifts at the shelter are getting longer",
            ),
            asks=(
                Ask("What did {coordinator} have {name} do at the shelter?", "{task}"),
                Ask("Who asked {name} to {task}?", "{coordinator}"),
            ),
            echoes=("{coordinator} works you hard", "I could never {task} haha"),
        ),
    ),
    prompts=(
        "how's the shelter?",
        "any animals find homes?",
        "volunteering this weekend?",
        "how's {shelter}?",
    ),
    replies=(
        "you're such a good person",
        "I'd want to take them all home",
        "the shelter is lucky to have you",
        "I should volunteer more",
        "those animals are so lucky",
    ),
    asides=(
        "I smell like the kennels",
        "volunteering is the best part of my week",
        "the shelter is full again",
        "got scratched by a kitten, worth it",
        "there's a new litter of puppies at {shelter}",
    ),
)

SUPPORT_GROUP = Theme(
    "support group",
    pools={
        "share": values("""
            my dad's diagnosis | my father's illness
            the panic attacks at work | the anxiety episodes in the office
            losing my job | being made redundant
            my divorce | the end of my marriage
            not sleeping for months | the insomnia
            my brother's addiction | my sibling's substance problem
            coming out to my parents | telling mum and dad I'm gay
            the miscarriage | the lost pregnancy
            feeling so lonely since I moved | the isolation after relocating
            my burnout | running on empty
        """),
        "person": values(
            "Gwyneth\nMarcel\nAuntie Joy\nRashid\nBronwen\nFelicity\nOlumide\nHarvey\nTrudy\nConstance"
        ),
        "speaker": values(
            "Dr Ferreira\nMaeve\nJosiah\nAnnelise\nTunde\nMr Beaumont\nSunita\nWilfred\nCressida\nBaptiste"
        ),
        "topic": values("""
            grief and anniversaries
            saying no without guilt
            breathing exercises
            setting boundaries with family
            journaling every morning
            cold water swimming
            talking to kids about feelings
            sleep hygiene
            the five-minute rule
            gratitude lists
        """),
        "outing": values("""
            a walk round the lake
            a pottery evening
            a picnic in the park
            a trip to the seaside
            a bowling night
            an art therapy session
            a curry night
            a sound bath
            a gardening morning
            a quiz
        """),
        "place": values("""
            Clumber Park
            the Methodist hall
            a cafe called Brew
            the lido
            the community allotment
            Whitstable
            the wellbeing centre
            the old boathouse
            the bowling alley in town
            the library basement
        """),
    },
    fixed={
        "group": ("the Tuesday group", "the support circle", "the Wednesday group", "the Thursday circle")
    },
    episodes=(
        Episode(
            says=(
                "opened up about {share} at {group} {when}, {person} hugged me after",
                "finally talked about {share} at group, {person} held my hand",
                "I told the support group about {share}. {person} said she'd been through the same",
            ),
            do="talk about {share} at the support group",
            did="opened up about {share} at the support group",
            mentions=(
                "I shared something hard at group again",
                "opening up at group is getting easier",
                "I cried at group but in a good way",
            ),
            asks=(
                Ask("Who comforted {name} after the talk about {share}?", "{person}"),
                Ask("What did {name} open up about before {person} hugged them?", "{share}"),
            ),
            paraphrases=(Ask("Who consoled {name} once the subject of {share_p} came up?", "{person}"),),
            echoes=("opening up about {share} is so brave", "I'm proud of you for talking about it"),
        ),
        Episode(
            says=(
                "{speaker} came to {group} {when} to talk about {topic}, really helped",
                "guest speaker at support group: {speaker} on {topic}",
                "{speaker} did a session on {topic}, I took loads of notes",
            ),
            do="hear {speaker} speak at the support group",
            did="heard {speaker} speak at the support group",
            mentions=(
                "we had another guest speaker at group",
                "the speaker at group gave me a lot to think about",
                "group had a really useful talk this week",
            ),
            asks=(
                Ask("What did {speaker} talk about at {name}'s support group?", "{topic}"),
                Ask("Who spoke about {topic} at the support group?", "{speaker}"),
            ),
            echoes=("{topic} sounds useful", "was {speaker} good?"),
        ),
        Episode(
            says=(
                "support group did {outing} at {place} {when}, it was lovely",
                "{outing} at {place} with the group, first time I've laughed in weeks",
                "the group organised {outing} at {place}, so glad I went",
            ),
            do="go on {outing} with the support group",
            did="went on a support group outing to {place}",
            mentions=(
                "the group is planning another outing",
                "support group outings are my favourite",
                "we did something fun with the group for once",
            ),
            asks=(
                Ask("Where did {name}'s support group do {outing}?", "{place}"),
                Ask("What did {name}'s group do at {place}?", "{outing}"),
            ),
            echoes=("{outing} sounds so nice", "the group sounds like good people"),
        ),
    ),
    prompts=(
        "how was group this week?",
        "still going to {group}?",
        "how are you doing, honestly?",
        "how's group?",
    ),
    replies=(
        "I'm really glad you have the group",
        "you're doing so well",
        "that group sounds like such a safe space",
        "I'm always here too, you know that",
        "proud of you for going every week",
    ),
    asides=(
        "group was heavy tonight but good",
        "I nearly didn't go to {group}, glad I did",
        "some weeks I just listen at group",
        "the support group tea is terrible but the people are great",
        "I've been going to {group} for months now",
    ),
)

STARTUP = Theme(
    "startup",
    pools={
        "investor": values("""
            Northstar Ventures | a VC fund named after a guiding light
            an angel called Priscilla | a wealthy individual backer
            Seedcamp | a European accelerator
            Balderton | a London venture firm
            Octopus Ventures | a fund named after a sea creature
            a family office in Zurich | a Swiss wealth manager
            LocalGlobe | a Notting Hill early-stage fund
            Founders Factory | a corporate-backed incubator
            Entrepreneur First | a talent-investor programme
            a crowdfunding round | public small-ticket backers
        """),
        "offer": values("""
            £50k
            £250k
            £1.2m
            a term sheet at £4m valuation
            £80k for 5%
            £600k
            a £150k SAFE
            £2m
            nothing, just feedback
            £400k
        """),
        "feature": values("""
            the offline mode
            dark mode
            the referral scheme
            the Android app
            team accounts
            the calendar sync
            push notifications
            the export button
            voice notes
            the new onboarding
        """),
        "users": values("""
            300 signups
            1,200 new users
            45 paying customers
            2,000 downloads
            90 signups
            5,000 users
            600 trials
            18 enterprise leads
            750 signups
            12 churned
        """),
        "hire": values(
            "Anouk\nTobiah\nSiobhan\nRajesh\nMarisol\nEzekiel\nLiesel\nKwabena\nHenrietta\nIgnatius"
        ),
        "role": values("""
            head of sales
            first backend engineer
            designer
            CTO
            customer success lead
            marketing person
            data scientist
            ops manager
            product manager
            community manager
        """),
        "customer": values("""
            a chain of dental clinics
            the council
            Deliveroo
            a gym franchise
            three primary schools
            a hotel group in Spain
            the NHS trust
            a law firm
            a football club
            a supermarket
        """),
        "deal": values("""
            a two-year contract
            £30k a year
            a pilot
            £8k a month
            a three-month trial
            £120k
            a rolling contract
            £45k
        """),
    },
    fixed={"startup": ("Tandem", "Loop Labs", "Brightwell", "Nudge", "Quill", "Parcelly")},
    episodes=(
        Episode(
            says=(
                "pitched {startup} to {investor} {when}, they offered {offer}",
                "{investor} came back with {offer}, we're deciding",
                "the {investor} pitch went well, {offer} on the table",
            ),
            do="pitch to {investor}",
            did="pitched a startup to {investor}",
            mentions=(
                "another investor pitch this week",
                "fundraising for {startup} is soul-destroying",
                "practising the pitch deck in the mirror again",
            ),
            asks=(
                Ask("What did {investor} offer {name}'s startup?", "{offer}"),
                Ask("Which investor offered {name} {offer}?", "{investor}"),
            ),
            paraphrases=(
                Ask("How much money did {investor_p} put forward for {name}'s company?", "{offer}"),
            ),
            echoes=("{investor}!! that's serious", "are you going to take it?"),
        ),
        Episode(
            says=(
                "shipped {feature} {when}, {users} in the first week",
                "{feature} is live!! {users} already",
                "launched {feature} at {startup}, {users} since Monday",
            ),
            do="ship {feature}",
            did="shipped {feature}",
            mentions=(
                "we shipped another feature",
                "launch day again, nervous",
                "the team worked all weekend to ship",
            ),
            asks=(
                Ask("How did {feature} do for {name}'s startup?", "{users}"),
                Ask("What launch brought {name}'s startup {users}?", "{feature}"),
            ),
            echoes=("{feature} sounds useful", "I'll try {feature} tonight"),
        ),
        Episode(
            says=(
                "hired {hire} as our {role} {when}, first proper hire",
                "{hire} starts Monday as {role}, so excited",
                "we have a {role}!! {hire}, they're brilliant",
            ),
            do="hire {hire}",
            did="hired {hire} as {role}",
            mentions=(
                "interviewing candidates all week",
                "hiring is the hardest part of {startup}",
                "we need to hire so many people",
            ),
            asks=(
                Ask("Who did {name} hire as {role}?", "{hire}"),
                Ask("What role did {name} hire {hire} for?", "{role}"),
            ),
            echoes=("welcome {hire}!", "a {role}, you're a real company now"),
        ),
        Episode(
            says=(
                "signed {customer} {when}, {deal}!!",
                "{customer} signed up with {startup}, {deal}, I'm shaking",
                "{deal} with {customer}. we're going to make payroll",
            ),
            do="sign {customer}",
            did="signed {customer} as a customer",
            mentions=(
                "sales calls all day",
                "another customer demo tomorrow",
                "chasing a big customer, fingers crossed",
            ),
            asks=(
                Ask("What deal did {name} sign with {customer}?", "{deal}"),
                Ask("Which customer did {name} sign for {deal}?", "{customer}"),
            ),
            echoes=("{customer}?? huge", "champagne time"),
        ),
    ),
    prompts=(
        "how's {startup}?",
        "how's the startup going?",
        "still working every weekend?",
        "any investor news?",
    ),
    replies=(
        "I don't know how you do the startup thing",
        "you're going to be rich",
        "please sleep sometimes",
        "proud of you, founder",
        "startup life sounds intense",
    ),
    asides=(
        "worked till 2am on {startup} again",
        "the startup bank balance gives me nightmares",
        "investor meetings all week, I'm fried",
        "we moved into a tiny office above a chip shop",
        "my laptop is basically fused to my hands",
    ),
)

EXAM = Theme(
    "exam",
    pools={
        "paper": values("""
            pharmacology | drugs and dosages
            contract law | agreements and their enforcement
            tax | revenue rules
            anatomy | the structure of the body
            audit | checking the accounts
            ethics | moral principles
            statistics | numbers and probability
            criminal law | offences and prosecution
            microbiology | germs and bacteria
            financial reporting | company accounts
        """),
        "score": values("62%\n48%\n71%\n55%\n83%\n39%\n67%\n76%\n58%\n91%"),
        "spot": values("""
            the British Library
            the cafe under my flat
            my car in the hospital car park
            the uni library's silent floor
            my mum's kitchen table
            a 24-hour McDonald's
            the train to work
            the back room of the pub
            the park bench by the pond
            my wardrobe with a desk lamp
        """),
        "hours": values("""
            six hours
            nine hours straight
            four hours
            twelve hours
            three hours
            five hours
            eight hours
            seven hours
        """),
        "tutor": values("""
            Professor Ng
            Mrs Obi
            Dr Kaminski
            Theodora
            Mr Villanueva
            Seamus
            Dr Adebayo
            Rosamund
            Mr Petrakis
            Dr Lindgren
        """),
        "topic": values("""
            deferred tax
            the Krebs cycle
            consideration
            hypothesis testing
            the brachial plexus
            consolidation
            mens rea
            drug half-lives
            going concern
            vaccine schedules
        """),
        "resource": values("""
            the Kaplan flashcards
            a YouTube channel called Study Owl
            the BPP question bank
            Anki decks
            the blue revision guide
            an old exam paper bundle
            a podcast called Pass Notes
            the Osmosis videos
            a mnemonic book
            the Quizlet sets
        """),
        "recommender": values(
            "Fatima\nRupert\nMs Delacroix\nAyodele\nWillow\nMr Hartley\nDanika\nCormac\nPriscilla\nEsteban"
        ),
    },
    fixed={"exam": ("the bar exam", "my nursing finals", "the ACCA exams", "my pharmacy board exam")},
    episodes=(
        Episode(
            says=(
                "got {score} on the {paper} mock {when}, need to do better",
                "{paper} mock came back: {score}. ugh",
                "{score} in {paper}!! revision for {exam} is working",
            ),
            do="sit the {paper} mock",
            did="sat a {paper} mock exam",
            mentions=(
                "another mock exam this week",
                "mock results come out tomorrow",
                "mocks are more stressful than the real thing",
            ),
            asks=(
                Ask("What did {name} score on the {paper} mock?", "{score}"),
                Ask("Which mock did {name} get {score} in?", "{paper}"),
            ),
            paraphrases=(Ask("What was {name}'s result in the practice test on {paper_p}?", "{score}"),),
            echoes=("{score} in {paper} is decent!", "{paper} sounds horrible"),
        ),
        Episode(
            says=(
                "studied for {hours} at {spot} {when}, brain is soup",
                "{hours} of revision at {spot}, no one bothered me",
                "new study spot: {spot}. did {hours} there today",
            ),
            do="revise at {spot}",
            did="revised at {spot}",
            mentions=(
                "long study session today",
                "trying a new place to study again",
                "I studied all day and remember nothing",
            ),
            asks=(
                Ask("How long did {name} study at {spot}?", "{hours}"),
                Ask("Where did {name} revise for {hours}?", "{spot}"),
            ),
            echoes=("{spot}?? weird but ok", "{hours}, you machine"),
        ),
        Episode(
            says=(
                "{tutor} finally explained {topic} {when} and it clicked",
                "{topic} makes sense now thanks to {tutor}",
                "spent the tutorial on {topic}, {tutor} is a saint",
            ),
            do="get {topic} explained by {tutor}",
            did="had {topic} explained by {tutor}",
            mentions=(
                "tutorial this afternoon, need to prep",
                "my tutor explained something and it finally clicked",
                "I have so many questions for my tutor",
            ),
            asks=(
                Ask("Who explained {topic} to {name}?", "{tutor}"),
                Ask("What did {tutor} finally make clear for {name}?", "{topic}"),
            ),
            echoes=("I don't even know what {topic} is", "{tutor} sounds great"),
        ),
        Episode(
            says=(
                "{recommender} put me onto {resource} {when}, game changer for {exam}",
                "using {resource} now, {recommender} swore by it",
                "{resource} is saving me, thank god for {recommender}",
            ),
            do="start using {resource}",
            did="started using {resource}",
            mentions=(
                "trying a new revision resource",
                "I've tried every revision app going",
                "someone recommended another study tool",
            ),
            asks=(
                Ask("Who recommended {resource} to {name}?", "{recommender}"),
                Ask("What study aid did {recommender} suggest to {name}?", "{resource}"),
            ),
            echoes=("does {resource} actually help?", "send me {resource} too"),
        ),
    ),
    prompts=("how's revision?", "how long till {exam}?", "studying tonight?", "how's the exam prep?"),
    replies=(
        "you're going to smash it",
        "I could never study that much",
        "take breaks!!",
        "exams are the worst",
        "you've got this",
    ),
    asides=(
        "revision timetable is on the fridge now",
        "I dream about flashcards",
        "{exam} is all I think about",
        "my desk is buried in notes",
        "three more weeks of studying, then freedom",
    ),
)
