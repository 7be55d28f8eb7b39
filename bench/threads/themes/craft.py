"""Themes of making things: painting, pottery, cooking, a band."""

from __future__ import annotations

from bench.threads.model import Ask, Episode, Theme, combos, values

PAINTING = Theme(
    "painting",
    pools={
        "subject": combos(
            "{light} {place}",
            para="a {light} {place}",
            light=values(
                "misty | foggy\nsnowy | wintry\nstormy | windswept\nsunlit | bright\nmoonlit | night-time"
            ),
            place=values("""
                harbour | port
                lake | mere
                lighthouse | coastal beacon
                vineyard | vine terrace
                cathedral | minster
                meadow | wildflower field
            """),
        ),
        "span": values("""
            three weekends
            two long evenings
            almost a month
            about forty hours
            six sittings
            nine days straight
            a fortnight
            four Sunday afternoons
            eleven hours in one go
            five weeks on and off
            two full days
            a whole bank holiday
            seven evenings
            three months
        """),
        "buyer": values(
            "Mr Pereira\nDoreen\nAgnieszka\nBertie\nMrs Lindqvist\nColm\nIfeoma\nGiles\nRosalind\nTariq"
        ),
        "price": values("£80\n£150\n£45\n£220\n£300\n£65\n£95\n£120\n£35\n£500"),
        "venue": values("""
            the library art fair
            a pop-up gallery on Mill Lane
            the open studios weekend
            the Harbour Arts cafe
            the village fete
            the Crown pub art wall
            the hospital corridor exhibition
            a craft market in Hebden
            the council spring show
            the Saltworks gallery
        """),
        "medium": values("""
            gouache
            palette knife and oils
            ink and wash
            soft pastels
            egg tempera
            watercolour pencils
            charcoal
            oil sticks
            alcohol markers
            spray paint
            encaustic wax
        """),
        "teacher": values(
            "Marguerite\nBenedikt\nMrs Achebe\nCiaran\nOttilie\nRavi\nGriselda\nLorcan\nWinifred\nAnselm"
        ),
        "recipient": values(
            "Tabitha\nFenella\nDerek\nKeziah\nJolene\nAlfie\nEsther\nKofi\nWendell\nPhilippa"
        ),
    },
    episodes=(
        Episode(
            says=(
                "finished my {subject} painting {when}, took me {span}",
                "the {subject} painting is finally done. {span} of work and my back hates me",
                "done!! the {subject} canvas took {span} but I'm actually proud of it",
            ),
            do="finish the {subject} painting",
            did="finished a {subject} painting",
            mentions=(
                "another painting finished, my back hates me",
                "I keep finishing paintings and having nowhere to hang them",
                "almost done with the next canvas, it's taking forever",
            ),
            asks=(
                Ask("How long did {name} spend on the {subject} painting?", "{span}"),
                Ask("How long did the {subject} painting take {name}?", "{span}"),
            ),
            paraphrases=(Ask("How much time did {name} need for the picture of {subject_p}?", "{span}"),),
            echoes=("omg the {subject} one? send a pic!!", "I need to see this {subject} painting"),
        ),
        Episode(
            says=(
                "sold the {subject} painting to {buyer} for {price} {when}!!",
                "{buyer} bought my {subject} painting, {price}, I nearly cried",
                "someone actually paid for my art: {buyer} took the {subject} one for {price}",
            ),
            do="sell the {subject} painting",
            did="sold a {subject} painting to {buyer}",
            mentions=(
                "someone asked if my paintings are for sale again!!",
                "selling paintings still feels weird, like who wants my art",
                "thinking about putting my painting prices up, is that mad?",
            ),
            asks=(
                Ask("Who bought {name}'s {subject} painting?", "{buyer}"),
                Ask("How much did {name} sell the {subject} painting for?", "{price}"),
            ),
            paraphrases=(
                Ask("Who purchased the picture of {subject_p} from {name}?", "{buyer}"),
                Ask("What price did {name} get for the artwork of {subject_p}?", "{price}"),
            ),
            echoes=("the {subject} one?? good for you", "your {subject} painting going to a good home then"),
        ),
        Episode(
            says=(
                "{venue} said yes {when}, my {subject} painting is going on their wall",
                "my {subject} painting is hanging at {venue} this month, come see it",
                "nervous, the {subject} painting is up at {venue} and strangers can look at it",
            ),
            do="get the {subject} painting into {venue}",
            did="had a {subject} painting shown at {venue}",
            mentions=(
                "applied to show my paintings somewhere else, fingers crossed",
                "seeing my painting on a wall in public is terrifying",
                "a gallery emailed me back about showing my paintings",
            ),
            asks=(
                Ask("Where is {name}'s {subject} painting being shown?", "{venue}"),
                Ask("Which painting did {name} get into {venue}?", "{subject}"),
            ),
            paraphrases=(Ask("Where is {name} displaying the picture of {subject_p}?", "{venue}"),),
            echoes=("{venue}?? fancy", "I'll go and see it at {venue} this weekend"),
        ),
        Episode(
            says=(
                "tried {medium} for the first time in {teacher}'s class {when}, total mess but fun",
                "{teacher} made us paint with {medium} tonight, I'm covered in it",
                "new obsession: {medium}. {teacher} at the art class says I'm a natural lol",
            ),
            do="try {medium} in {teacher}'s class",
            did="tried {medium} in {teacher}'s class",
            mentions=(
                "art class tonight, we're trying something new again",
                "the art class teacher keeps pushing us to try new stuff",
                "I always come out of art class covered in paint",
            ),
            asks=(
                Ask("What did {name} paint with in {teacher}'s class?", "{medium}"),
                Ask("Whose art class got {name} into {medium}?", "{teacher}"),
            ),
            echoes=("{medium} sounds messy haha", "is {teacher} the one you said was strict?"),
        ),
        Episode(
            says=(
                "painted a little {subject} for {recipient}'s birthday, wrapped it {when}",
                "gave {recipient} my {subject} painting and they actually teared up",
                "{recipient} is getting the {subject} painting for their birthday, don't tell",
            ),
            do="give the {subject} painting to {recipient}",
            did="gave a {subject} painting to {recipient}",
            mentions=(
                "I've started giving paintings as presents, cheaper than shops lol",
                "painting a birthday present again, deadline is tight",
                "everyone I know has one of my paintings now",
            ),
            asks=(
                Ask("What did {name} paint for {recipient}?", "{subject}"),
                Ask("Who got {name}'s {subject} painting as a present?", "{recipient}"),
            ),
            paraphrases=(Ask("Who received the picture of {subject_p} from {name}?", "{recipient}"),),
            echoes=("a {subject}? that's such a sweet present",),
        ),
    ),
    prompts=(
        "painted anything new?",
        "how's the painting going?",
        "any new art to show me?",
        "are you still painting every weekend?",
    ),
    replies=(
        "you're so talented honestly",
        "I can't even draw a stick man",
        "you should do a proper exhibition one day",
        "how do you find the patience for painting",
        "I love how much you've got into your art",
    ),
    asides=(
        "my hands are covered in paint again",
        "the spare room smells of turps permanently now",
        "I need new brushes, mine are all splayed",
        "painting is the only time my brain goes quiet",
        "ran out of titanium white halfway through a canvas, typical",
        "the easel wobbles every time I touch it",
    ),
)

POTTERY = Theme(
    "pottery",
    pools={
        "piece": combos(
            "{look} {thing}",
            look=values("""
                speckled | dotted
                blue | azure
                tiny | miniature
                lidded | covered
                wonky | crooked
                white | ivory
            """),
            thing=values("""
                bowl | dish
                jug | pitcher
                vase | flower holder
                teapot | tea vessel
                mug | cup
                platter | serving plate
            """),
        ),
        "studio": values("""
            the studio on Carver Street
            the community centre
            Clayworks in Ashby
            the evening class at the college
            a barn studio near Ludlow
            my friend's garage kiln
            the Saturday drop-in at Mudlarks
            the adult ed centre
            Fired Up on the high street
            the arts centre by the canal
        """),
        "tries": values("""
            four attempts
            nine goes
            two tries
            seven attempts
            eleven tries
            three goes
            six attempts
            five tries
            a dozen goes
            eight attempts
        """),
        "glaze": values("""
            celadon green
            tenmoku brown
            speckled oatmeal
            cobalt blue
            shino white
            copper red
            matte charcoal
            honey amber
            sea-foam turquoise
            rust orange
            lilac satin
        """),
        "mishap": values("""
            cracked right down the middle
            exploded in the firing
            stuck to the kiln shelf
            came out with the glaze crawling everywhere
            warped into an oval
            lost its handle in the bisque
            got knocked off the shelf by the caretaker
            blistered all over
            fused to its lid
            shrank to half its size
        """),
        "teacher": values("""
            Bernadette
            Ollie
            Mrs Abiola
            Kenji
            Wilhelmina
            Dougie
            Saoirse
            Mr Castellanos
            Agathe
            Fergus
        """),
        "technique": values("""
            pull a handle
            trim a foot ring
            carve sgraffito
            centre the clay properly
            do slip trailing
            make a lid that fits
            throw off the hump
            burnish with a spoon
            attach a spout
            do wax resist
        """),
    },
    episodes=(
        Episode(
            says=(
                "threw a {piece} on the wheel at {studio} {when}, took me {tries}",
                "finally got a {piece} off the wheel at {studio}!! {tries} and my arms are dead",
                "{tries} at {studio} but I've got a {piece} that doesn't collapse",
            ),
            do="throw the {piece} at {studio}",
            did="threw a {piece} at {studio}",
            mentions=(
                "three hours at the wheel tonight, arms are dead",
                "I threw four pots and kept one, standard",
                "centering the clay on the wheel is still my nemesis",
            ),
            asks=(
                Ask("Where did {name} throw the {piece}?", "{studio}"),
                Ask("How many tries did the {piece} take {name}?", "{tries}"),
                Ask("What did {name} make on the wheel at {studio}?", "{piece}"),
            ),
            paraphrases=(Ask("Where did {name} create the {piece_p}?", "{studio}"),),
            echoes=("a {piece}!! I want one", "is {studio} the place near your work?"),
        ),
        Episode(
            says=(
                "glazed my {piece} in {glaze} {when}, can't wait to see it fired",
                "the {piece} is going in {glaze}, fingers crossed it comes out ok",
                "dipped the {piece} in {glaze} at pottery, it looks grey now but apparently that's normal",
            ),
            do="glaze the {piece} in {glaze}",
            did="glazed a {piece} in {glaze}",
            mentions=(
                "glazing day at pottery, everything looks grey until it's fired",
                "I never know how a glaze will come out",
                "spent the whole pottery session picking glazes",
            ),
            asks=(
                Ask("What glaze did {name} use on the {piece}?", "{glaze}"),
                Ask("Which piece did {name} glaze in {glaze}?", "{piece}"),
            ),
            paraphrases=(Ask("What colour finish did {name} choose for the {piece_p}?", "{glaze}"),),
            echoes=("{glaze} sounds gorgeous", "show me the {piece} when it's out of the kiln"),
        ),
        Episode(
            says=(
                "my {piece} {mishap} {when}. weeks of work gone",
                "so the {piece} {mishap}, I actually laughed",
                "pottery heartbreak: the {piece} {mishap}",
            ),
            do="lose the {piece}",
            did="had a {piece} that {mishap}",
            mentions=(
                "another kiln disaster this week",
                "pottery is teaching me to let things go lol",
                "opened the kiln and just sighed",
            ),
            asks=(Ask("What happened to {name}'s {piece}?", "{mishap}"),),
            paraphrases=(Ask("What went wrong with {name}'s {piece_p}?", "{mishap}"),),
            echoes=("noooo not the {piece}", "the poor {piece} haha"),
        ),
        Episode(
            says=(
                "{teacher} showed me how to {technique} {when}, game changer",
                "finally learned to {technique}, {teacher} is so patient with me",
                "{teacher} made the whole pottery class {technique} ten times over",
            ),
            do="learn to {technique} from {teacher}",
            did="learned to {technique} from {teacher}",
            mentions=(
                "our pottery teacher did a demo and made it look so easy",
                "learned a new technique at pottery, no idea if I can do it alone",
                "the pottery teacher said I'm improving!!",
            ),
            asks=(
                Ask("Who showed {name} how to {technique}?", "{teacher}"),
                Ask("What did {teacher} teach {name} at pottery?", "{technique}"),
            ),
            echoes=("{teacher} sounds like a legend", "I don't even know what it means to {technique} lol"),
        ),
    ),
    prompts=("how's pottery?", "made any new pots?", "been to the wheel this week?", "any kiln news?"),
    replies=(
        "I love that you make actual things",
        "pottery looks so relaxing",
        "can you make me a mug one day?",
        "I'd be terrible at the wheel",
        "the clay stuff is so you",
    ),
    asides=(
        "there's clay under my nails that will never come out",
        "the wheel hates me some days",
        "my whole flat is full of wonky pots now",
        "waiting for the kiln is the worst part",
        "I smell of wet clay all the time",
    ),
)

COOKING = Theme(
    "cooking",
    pools={
        "dish": combos(
            "{main} {style}",
            main=values("""
                lamb | mutton
                chicken | poultry
                mushroom | fungi
                prawn | shellfish
                pork | pig-meat
                veggie | meat-free
            """),
            style=values("""
                curry | masala
                pie | pastry bake
                stew | casserole
                risotto | creamy rice
                soup | broth
                skewers | kebabs
            """),
        ),
        "guests": values("""
            my in-laws
            the book club lot
            six people from work
            my brother and his new girlfriend
            the neighbours from number 9
            my old uni housemates
            my cousin's whole family
            the football dads
            my landlord
            twelve people at the street party
        """),
        "source": values("""
            Auntie Zawadi
            Nigel Slater
            my old flatmate Ingvar
            Ottolenghi
            Grandpa Rocco
            a YouTuber called Chef Kenta
            the woman at the deli
            Madhur Jaffrey
            my colleague Brigitte
        """),
        "ingredient": values("""
            fresh curry leaves
            smoked paprika from La Vera
            black garlic
            galangal
            pandan leaves
            sumac
            fresh fenugreek
            yuzu juice
            proper saffron
            gochujang
            dried limes
        """),
        "shop": values("""
            the Turkish supermarket on Rye Lane
            the Saturday farmers market
            a tiny deli in Brixton
            the Asian grocer by the station
            the Polish shop on the corner
            Borough Market
            an online spice place
            the cash and carry
            the Korean mart in New Malden
            the organic shop my sister swears by
        """),
        "cuisine": values("""
            Sichuan
            Ethiopian
            Georgian
            Peruvian
            Lebanese
            Sri Lankan
            Oaxacan
            Nepali
            Filipino
            Basque
        """),
        "chef": values("Chef Ama\nLuc\nBabajide\nYasmin\nChef Horatio\nMarisa\nJun\nPetronella\nDaoud"),
    },
    episodes=(
        Episode(
            says=(
                "made {dish} for {guests} {when}, not a crumb left",
                "cooked {dish} for {guests}, took all afternoon but worth it",
                "{guests} came round and I did {dish}. nailed it if I say so myself",
            ),
            do="cook {dish} for {guests}",
            did="cooked {dish} for {guests}",
            mentions=(
                "having people round for dinner again this weekend",
                "cooked for a crowd again, I love feeding people",
                "planning a dinner party menu, I need help deciding",
            ),
            asks=(
                Ask("What did {name} cook for {guests}?", "{dish}"),
                Ask("Who did {name} make {dish} for?", "{guests}"),
            ),
            paraphrases=(Ask("Which visitors got {name}'s {dish_p}?", "{guests}"),),
            echoes=("{dish}?? invite me next time", "you and your {dish} haha"),
        ),
        Episode(
            says=(
                "tried {source}'s {dish} recipe {when}, it's going in the rotation",
                "{source}'s recipe for {dish} is unreal, thank me later",
                "made {dish} the way {source} does it and wow",
            ),
            do="try {source}'s {dish} recipe",
            did="tried {source}'s {dish} recipe",
            mentions=(
                "tried another new recipe tonight",
                "I've got forty recipe tabs open on my phone",
                "following a recipe exactly for once",
            ),
            asks=(
                Ask("Whose {dish} recipe did {name} try?", "{source}"),
                Ask("What recipe of {source}'s did {name} make?", "{dish}"),
            ),
            paraphrases=(Ask("Who came up with the {dish_p} instructions {name} followed?", "{source}"),),
            echoes=("send me the {dish} recipe!!", "I've heard of {source}, are they good?"),
        ),
        Episode(
            says=(
                "finally found {ingredient} at {shop} {when}, been looking for months",
                "{shop} had {ingredient}!! I bought way too much",
                "tip: {shop} sells {ingredient}, nowhere else round here does",
            ),
            do="find {ingredient} at {shop}",
            did="found {ingredient} at {shop}",
            mentions=(
                "went on a hunt for a weird ingredient again",
                "my spice cupboard is out of control",
                "spent ages in a specialist food shop looking for stuff",
            ),
            asks=(
                Ask("Where did {name} find {ingredient}?", "{shop}"),
                Ask("What did {name} finally find at {shop}?", "{ingredient}"),
            ),
            echoes=("what even is {ingredient}", "I walk past {shop} all the time"),
        ),
        Episode(
            says=(
                "did a {cuisine} cooking class with {chef} {when}, my kitchen will never be the same",
                "{chef}'s {cuisine} class was amazing, learned so much",
                "did another {cuisine} cooking session with {chef}, can't get enough",
            ),
            do="take a {cuisine} cooking class",
            did="took a {cuisine} cooking class with {chef}",
            mentions=(
                "another cooking class this week, I'm addicted",
                "the cooking class was full of couples on dates lol",
                "learned a new knife technique at the cooking class",
            ),
            asks=(
                Ask("Who taught {name}'s {cuisine} cooking class?", "{chef}"),
                Ask("What cuisine did {name} learn in {chef}'s class?", "{cuisine}"),
            ),
            echoes=("ooh {cuisine} food is so good", "is {chef} taking new students?"),
        ),
    ),
    prompts=(
        "cooked anything good lately?",
        "what's for dinner, chef?",
        "any new recipes?",
        "been cooking much?",
    ),
    replies=(
        "your cooking is honestly restaurant level",
        "I just had toast for dinner lol",
        "you need a food blog",
        "save me leftovers next time",
        "I wish I enjoyed cooking like you do",
    ),
    asides=(
        "my kitchen looks like a bomb went off",
        "I've started writing my recipes in a little notebook",
        "the knife I got for christmas is the best thing I own",
        "cooking is my therapy honestly",
        "I burned my wrist on the oven again, occupational hazard",
    ),
)

BAND = Theme(
    "band",
    pools={
        "venue": combos(
            "{pub} in {town}",
            pub=values("the Crown\nthe Fleece\nthe Half Moon\nthe Boathouse\nthe Crypt"),
            town=values("Bristol\nLeeds\nBrighton\nCamden\nGlasgow"),
        ),
        "crowd": values(
            "thirty\neighty\nabout 150\nmaybe twelve\n200\nforty-five\nsixty\n300\nninety\nabout 25\n400"
        ),
        "song": values("""
            Paper Lanterns | a track about folded-sheet lights
            Slow Tide | a number about the sea coming in gently
            Bus Stop Heart | a tune about love while waiting for transport
            Concrete Summer | a song about hot pavements
            Ghost Town Radio | a piece about an abandoned city's broadcasts
            Mango Season | a song about tropical fruit time
            Last Train Home | a number about the final carriage back
            Neon Fox | a track about a glowing animal
            Kitchen Floor | a tune about lying by the fridge
            Satellite Love | a song about romance in orbit
            Salt and Vinegar | a song about crisps
        """),
        "bandmate": values("Rufus\nMags\nDevika\nTheo the drummer\nSkye\nBartholomew\nOrla\nZeb\nKemi\nLars"),
        "cover": values("""
            Dancing in the Dark
            Jolene
            Take On Me
            Valerie
            Mr Brightside
            Superstition
            Dreams
            Tainted Love
            Hey Ya
            Wonderwall
        """),
        "occasion": values("""
            my cousin's wedding
            the pub's tenth birthday
            a charity gig for the hospice
            the Christmas party
            a battle of the bands
            the street party
            the open mic night
            the festival slot
            our first headline show
        """),
        "gear": values("""
            a Big Muff pedal
            a second-hand Rhodes piano
            a Fender Jazz bass
            a new snare
            a Vox AC15 amp
            an old Gretsch guitar
            a looper pedal
            a Shure mic of my own
            in-ear monitors
            a vintage Wurlitzer
        """),
        "price": values("£90\n£140\n£600\n£75\n£430\n£1,100\n£210\n£55\n£380\n£260"),
    },
    fixed={
        "band": (
            "the Night Buses",
            "Paper Owls",
            "Velvet Static",
            "the Lost Socks",
            "Sunday Disco",
            "Kettle Black",
        )
    },
    episodes=(
        Episode(
            says=(
                "{band} played {venue} {when}, {crowd} people turned up!!",
                "gig at {venue} done, {crowd} in the crowd, I'm still buzzing",
                "we played {venue} with {band}, {crowd} people and they sang along",
            ),
            do="play {venue} with the band",
            did="played a gig at {venue}",
            mentions=(
                "gig this weekend, nervous already",
                "we've got another gig booked!",
                "the gig was loud and sweaty and perfect",
            ),
            asks=(
                Ask("How many people came to {name}'s gig at {venue}?", "{crowd}"),
                Ask("Where did {band} play to {crowd} people?", "{venue}"),
            ),
            echoes=("{venue}!! that's a proper venue", "gutted I missed {venue}"),
        ),
        Episode(
            says=(
                "{bandmate} wrote a new song called {song} {when}, it's our best one",
                "we're rehearsing {song}, {bandmate} wrote it about an ex lol",
                "{song} is finished! {bandmate} did the lyrics, I did the bassline",
            ),
            do="start playing {song}",
            did="played a song called {song} written by {bandmate}",
            mentions=(
                "working on a new song with {band}",
                "we wrote another song at rehearsal",
                "the new songs are the best stuff {band} have done",
            ),
            asks=(
                Ask("Who wrote the band's song {song}?", "{bandmate}"),
                Ask("What song did {bandmate} write for {name}'s band?", "{song}"),
            ),
            paraphrases=(Ask("Who was the writer of {song_p} in {name}'s group?", "{bandmate}"),),
            echoes=("{song} is such a good title", "play me {song} next time"),
        ),
        Episode(
            says=(
                "we're learning {cover} for {occasion}, it's harder than it sounds",
                "{band} are doing {cover} at {occasion} {when}, pray for us",
                "{occasion} requested {cover} so that's my week gone",
            ),
            do="learn {cover} for {occasion}",
            did="learned a cover of {cover} for {occasion}",
            mentions=(
                "learning another cover, my fingers hate me",
                "we argued about which cover to do for an hour",
                "covers are harder than our own songs honestly",
            ),
            asks=(
                Ask("What cover is {name}'s band learning for {occasion}?", "{cover}"),
                Ask("What is {name}'s band learning {cover} for?", "{occasion}"),
            ),
            echoes=("{cover}?? iconic", "I will 100% dance at {occasion}"),
        ),
        Episode(
            says=(
                "bought {gear} {when}, {price}, don't tell anyone",
                "got {gear} for {price} off a guy on Gumtree",
                "{price} for {gear} and I regret nothing",
            ),
            do="buy {gear}",
            did="bought {gear} for the band",
            mentions=(
                "I spent too much on music gear again",
                "my music gear is taking over the flat",
                "looking at band gear online at 2am, send help",
            ),
            asks=(
                Ask("How much did {name} pay for {gear}?", "{price}"),
                Ask("What music gear did {name} spend {price} on?", "{gear}"),
            ),
            echoes=("{gear}, fancy", "how many things do you need for one band haha"),
        ),
    ),
    prompts=("how's {band}?", "any gigs coming up?", "still rehearsing every week?", "how's the band?"),
    replies=(
        "I still can't believe you're in a band",
        "you're basically famous",
        "let me know the next gig, I'll come",
        "rehearsals sound intense",
        "rock and roll",
    ),
    asides=(
        "rehearsal ran till midnight again",
        "my fingers are raw from practice",
        "the rehearsal room smells like old beer",
        "{band} group chat is pure chaos",
        "we spent an hour arguing about the setlist",
    ),
)
