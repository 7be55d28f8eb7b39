"""Themes of moving about: running, camping, gardening, a dance crew."""

from __future__ import annotations

from bench.threads.model import Ask, Episode, Theme, combos, values

RUNNING = Theme(
    "running",
    pools={
        "race": combos(
            "{place} {kind}",
            para="{kind} {place}",
            place=values("""
                Riverside | by the water
                Castle Park | at the fortress grounds
                Greenway | on the old railway path
                Harbour | around the port
                Moorland | over the heath
            """),
            kind=values("""
                10k | ten-kilometre event
                half marathon | 13.1-mile event
                5k | five-kilometre event
                night run | evening jog
                trail race | off-road event
            """),
        ),
        "time": values("""
            52 minutes
            1:58:40
            24:31
            2:11:05
            47:20
            1:41:09
            31 minutes flat
            4:22:17
            3:59:12
            6:40
            58:03
        """),
        "position": values("""
            third in my age group
            ninety-fourth overall
            last but one
            second woman home
            top fifty
            412th out of 900
            just inside the top 20
            fifth in the club
            dead last
            seventh in my category
            2nd in the vets category
        """),
        "gear": values("""
            Hoka Cliftons
            Saucony Rides
            a Garmin Forerunner
            Brooks Ghosts
            Asics Novablasts
            a Camelbak vest
            Nike Pegasus
            On Cloudmonsters
            Salomon Speedcross
            a Polar watch
            Altra Lone Peaks
        """),
        "buddy": values("""
            Delphine
            Magnus
            Yolanda
            Barnaby
            Soraya
            Eamon
            Ingrid
            Tobenna
            Clementine
            Rasmus
            Penelope
            Gideon
        """),
        "injury": values("""
            shin splints
            a black toenail
            a tight IT band
            plantar fasciitis
            a calf strain
            blisters the size of coins
            a rolled ankle
            runner's knee
            a pulled hamstring
            a sore achilles
        """),
        "distance": values(
            "14 miles\n18 miles\n11 miles\n22k\n9 miles\n16 miles\n30k\n20 miles\n13 miles\n25k\n12 miles"
        ),
        "route": values("""
            the canal towpath | the path beside the barge waterway
            the old railway line | the disused train track
            the seafront promenade | the walkway along the beach
            the reservoir loop | the circuit round the man-made lake
            Ridgeway hill | the long chalk ridge
            the ring road cycle path | the bike lane around town
            the cemetery lanes | the paths between the graves
            the forestry tracks | the woodland trails
            the riverbank to Kew | the waterside path west to the botanic gardens
            the golf course edge | the border of the fairways
            the industrial estate | the warehouse district
        """),
    },
    episodes=(
        Episode(
            says=(
                "ran the {race} {when} in {time}, came {position}!",
                "{race} done!! {time} and I finished {position}",
                "{time} at the {race}, {position}, legs are jelly",
            ),
            do="run the {race}",
            did="ran the {race}",
            mentions=(
                "race day this weekend, nerves",
                "signed up for another race, obviously",
                "crossed another finish line, legs are jelly",
            ),
            asks=(
                Ask("What was {name}'s time at the {race}?", "{time}"),
                Ask("Where did {name} finish in the {race}?", "{position}"),
            ),
            paraphrases=(Ask("How fast did {name} complete the {race_p}?", "{time}"),),
            echoes=("the {race}!! you legend", "was the {race} the hilly one?"),
        ),
        Episode(
            says=(
                "{buddy} talked me into {gear} {when}, my feet have never been happier",
                "new {gear} for running, {buddy} swears by them",
                "listened to {buddy} for once and got {gear}, wow what a difference",
            ),
            do="get {gear} on {buddy}'s advice",
            did="got {gear} because {buddy} recommended them",
            mentions=(
                "my running shoes are falling apart",
                "I've been reading running gear reviews for hours",
                "new running kit makes me faster, that's science",
            ),
            asks=(
                Ask("What running gear did {buddy} talk {name} into?", "{gear}"),
                Ask("Who convinced {name} to get {gear}?", "{buddy}"),
            ),
            echoes=("{gear}? are they worth it?", "{buddy} sounds like a good influence"),
        ),
        Episode(
            says=(
                "got {injury} on my {distance} run {when}, so I'm resting",
                "{injury} after the {distance} long run, physio says a week off",
                "my {distance} run gave me {injury}, classic",
            ),
            do="get {injury} running",
            did="got {injury} on a {distance} run",
            mentions=(
                "my leg is sore again after running",
                "physio appointment again, running injuries are the worst",
                "resting is so hard when you want to run",
            ),
            asks=(
                Ask("What injury did {name} get on the {distance} run?", "{injury}"),
                Ask("How far was the run that gave {name} {injury}?", "{distance}"),
            ),
            echoes=("{injury} sounds awful, rest up", "{distance} is mad anyway"),
        ),
        Episode(
            says=(
                "did {distance} along {route} with {buddy} {when}, chatted the whole way",
                "{buddy} and I ran {route} this morning, {distance}, felt easy",
                "{distance} on {route}, {buddy} dragged me round",
            ),
            do="run {distance} along {route}",
            did="ran {distance} along {route} with {buddy}",
            mentions=(
                "long run tomorrow morning, early night",
                "did a long run with the club, chatted the whole way",
                "my long runs are getting longer every week",
            ),
            asks=(
                Ask("How far did {name} run along {route}?", "{distance}"),
                Ask("Who ran {route} with {name}?", "{buddy}"),
            ),
            paraphrases=(Ask("Who kept {name} company out on {route_p}?", "{buddy}"),),
            echoes=("{route} is so pretty this time of year", "{distance}?? before breakfast??"),
        ),
    ),
    prompts=("how's the running going?", "been out for a run?", "any races coming up?", "how are the legs?"),
    replies=(
        "I get tired walking to the bus stop",
        "you runners are a different breed",
        "how do you get up so early to run",
        "your running is so impressive",
        "make sure you stretch!",
    ),
    asides=(
        "my legs are absolutely dead from running",
        "the running club group chat never sleeps",
        "I've started foam rolling every night",
        "running in the rain is weirdly nice",
        "my watch says I need two days of recovery lol",
    ),
)

CAMPING = Theme(
    "camping",
    pools={
        "site": combos(
            "{kind} near {town}",
            para="{kind} close to {town}",
            kind=values("""
                a farm site | a field campsite
                a beach | a sandy cove
                a wood | a forest clearing
                a lakeside pitch | a spot by the water
                a hilltop | a summit
            """),
            town=values("""
                Whitby | the Dracula town
                Keswick | the Lake District town
                Tenby | the Pembrokeshire resort
                Fort William | the town under Ben Nevis
                Hay-on-Wye | the book town
            """),
        ),
        "nights": values("""
            three nights
            two nights
            a whole week
            four nights
            one freezing night
            five nights
            six nights
            ten days
        """),
        "animal": values("""
            a red deer stag
            an otter
            two barn owls
            a golden eagle
            a pine marten
            a badger family
            wild ponies
            a hedgehog
            seals
            a fox with three cubs
            a heron
        """),
        "spot": values("""
            the stream | the brook
            the tent door | the flap of our shelter
            the car park | where we left the car
            the lake shore | the water's edge
            the bins | the rubbish point
            the waterfall | the cascade
            the old stone wall | the ancient dyke
            the fire pit | where we had our blaze
            the ridge | the crest of the hill
            the picnic benches | the outdoor tables
        """),
        "kit": values("""
            a two-person tent
            a Jetboil stove
            a down sleeping bag
            an inflatable mattress
            a hammock
            head torches
            a folding kettle
            a camping chair with a cup holder
            a solar lantern
            a water filter
        """),
        "shop": values("""
            Go Outdoors
            a car boot sale
            Decathlon
            the army surplus store
            eBay
            Millets
            my uncle's loft
            a Facebook group
            Cotswold Outdoor
        """),
        "meal": values("""
            chilli in one pot
            campfire pizza
            banana boats with chocolate
            sausages and beans
            foil-wrapped trout
            pancakes at dawn
            s'mores
            a full fry-up
            jacket potatoes in the embers
            noodle soup
        """),
        "cook": values("Cosmo\nMarigold\nEfe\nRoisin\nBjorn\nDulcie\nAugustin\nNoor\nCasimir\nPrudence"),
    },
    episodes=(
        Episode(
            says=(
                "camped {nights} at {site} {when}, no signal, bliss",
                "back from {nights} camping at {site}, I smell like smoke",
                "{site} for {nights} in the tent, the stars were unreal",
            ),
            do="camp at {site}",
            did="camped at {site}",
            mentions=(
                "planning another camping trip already",
                "we're going camping again next month",
                "just unpacked the camping stuff and I want to go back",
            ),
            asks=(
                Ask("How long did {name} camp at {site}?", "{nights}"),
                Ask("Where did {name} camp for {nights}?", "{site}"),
            ),
            paraphrases=(Ask("How long was {name}'s outdoor stay at {site_p}?", "{nights}"),),
            echoes=("{site}! I've always wanted to go", "{site} in a tent, you're braver than me"),
        ),
        Episode(
            says=(
                "saw {animal} by {spot} at 5am {when} while camping",
                "camping highlight: {animal} right by {spot}",
                "woke up, unzipped the tent, {animal} by {spot}. best morning ever",
            ),
            do="see {animal} while camping",
            did="saw {animal} while camping",
            mentions=(
                "saw so much wildlife camping, I love it",
                "I spend half of every camping trip looking for animals",
                "woke up early camping to watch the wildlife again",
            ),
            asks=(
                Ask("What did {name} see by {spot} while camping?", "{animal}"),
                Ask("Where did {name} spot {animal} on the camping trip?", "{spot}"),
            ),
            paraphrases=(Ask("Which wildlife turned up near {spot_p} on {name}'s trip?", "{animal}"),),
            echoes=("{animal}?? no way", "photos of the {animal} please"),
        ),
        Episode(
            says=(
                "picked up {kit} from {shop} {when} for the next camping trip",
                "got {kit} at {shop}, camping upgrade",
                "{shop} had {kit} going cheap so obviously I bought it",
            ),
            do="buy {kit}",
            did="bought {kit} for camping",
            mentions=(
                "bought more camping kit, my car is full",
                "camping gear shopping is my new hobby",
                "reading camping kit reviews instead of working",
            ),
            asks=(
                Ask("Where did {name} get {kit}?", "{shop}"),
                Ask("What camping kit did {name} get from {shop}?", "{kit}"),
            ),
            echoes=("{kit}, very pro", "you'll need a bigger car for all the camping stuff"),
        ),
        Episode(
            says=(
                "{cook} made {meal} on the campfire {when}, best thing I've ever eaten",
                "camp dinner was {meal}, {cook} is a genius with a fire",
                "{meal} cooked by {cook} over the fire, I want to live outside now",
            ),
            do="eat {cook}'s {meal}",
            did="ate {meal} cooked by {cook} on a camping trip",
            mentions=(
                "campfire cooking is the best cooking",
                "still dreaming about the food on our camping trip",
                "everything tastes better cooked on a fire outside",
            ),
            asks=(
                Ask("What did {cook} cook on the campfire for {name}?", "{meal}"),
                Ask("Who made {meal} on {name}'s camping trip?", "{cook}"),
            ),
            echoes=("{meal} on a fire sounds amazing", "is {cook} coming next time too?"),
        ),
    ),
    prompts=(
        "when's the next camping trip?",
        "been camping lately?",
        "how was the tent?",
        "any trips planned?",
    ),
    replies=(
        "I'm a hotel person sorry",
        "sleeping on the ground is not for me",
        "you're so outdoorsy",
        "I'd love to see the stars like that",
        "I'd last one night max",
    ),
    asides=(
        "still finding pine needles in my bag",
        "the tent is drying in the hallway",
        "my back remembers every rock under that tent",
        "I've got the camping bug bad",
        "midges ate me alive",
    ),
)

GARDENING = Theme(
    "gardening",
    pools={
        "crop": combos(
            "{kind} {veg}",
            kind=values("purple | violet\nyellow | golden\ngiant | huge\nheritage | heirloom\nbaby | tiny"),
            veg=values(
                "carrots | roots\nbeans | pods\ntomatoes | vine fruit\ncourgettes | marrows\npotatoes | spuds"
            ),
        ),
        "amount": values("""
            three kilos
            a whole bucket
            twenty-odd
            four carrier bags
            two trugs
            forty
            half a wheelbarrow
            six pounds
            a dozen
            nine
        """),
        "pest": values("""
            slugs
            pigeons
            aphids
            a badger
            cabbage whites
            vine weevils
            the neighbour's cat
            snails
            squirrels
            blight
        """),
        "plant": values("""
            lupins
            the lettuce
            my dahlias
            the hostas
            the sunflowers
            my peas
            the young brassicas
            the seedlings in the cold frame
            my sweet peas
            the basil
        """),
        "flower": values("""
            foxgloves | tall purple bells
            a climbing rose | a rambling briar
            lavender | fragrant purple shrubs
            a magnolia | a tree with huge pale blooms
            tulip bulbs | spring cups
            a fig tree | a Mediterranean fruit tree
            honeysuckle | a sweet-smelling climber
            alliums | purple pom-pom bulbs
            a Japanese maple | an acer
            hollyhocks | cottage garden spires
        """),
        "bed": values("""
            the back fence
            the shed
            the pond
            the front door
            the compost bins
            the gate
            the greenhouse
            the patio
            the kitchen window
            the bird bath
        """),
        "entry": values("""
            giant onion
            marrow
            jam
            dahlias
            longest runner bean
            chutney
            wonky carrot
            sweet peas
            courgette cake
        """),
        "prize": values("""
            first prize
            a highly commended
            third place
            the silver cup
            second prize
            a rosette
            best in show
            a special mention
            the novice trophy
        """),
    },
    episodes=(
        Episode(
            says=(
                "picked {amount} of {crop} from the allotment {when}",
                "the {crop} went mad this year, {amount} so far",
                "{amount} of {crop}!! anyone want some",
            ),
            do="harvest the {crop}",
            did="harvested {amount} of {crop}",
            mentions=(
                "so much to harvest at the allotment this week",
                "harvest season at the allotment is the best",
                "I've been giving veg from the allotment to everyone on my street",
            ),
            asks=(
                Ask("How many {crop} did {name} pick?", "{amount}"),
                Ask("What did {name} harvest {amount} of?", "{crop}"),
            ),
            paraphrases=(Ask("How big was {name}'s haul of {crop_p}?", "{amount}"),),
            echoes=("I'll take some {crop}!", "what do you even do with that many {crop}"),
        ),
        Episode(
            says=(
                "{pest} destroyed {plant} {when}, I could cry",
                "the garden war continues: {pest} got {plant}",
                "{plant} are gone. {pest}. every single one",
            ),
            do="lose {plant} to {pest}",
            did="lost {plant} to {pest}",
            mentions=(
                "the pests are winning in my garden",
                "lost more plants to pests again",
                "I've tried everything to protect my plants from pests",
            ),
            asks=(
                Ask("What destroyed {name}'s {plant}?", "{pest}"),
                Ask("What did {pest} ruin in {name}'s garden?", "{plant}"),
            ),
            echoes=("{pest} are the worst", "RIP {plant}"),
        ),
        Episode(
            says=(
                "planted {flower} by {bed} {when}, it should look lovely next year",
                "{flower} are in, right next to {bed}",
                "put {flower} in beside {bed}, fingers crossed they take",
            ),
            do="plant {flower}",
            did="planted {flower} by {bed}",
            mentions=(
                "did more planting in the garden this weekend",
                "planning where to plant everything next year",
                "I keep buying plants I have no space for",
            ),
            asks=(
                Ask("Where did {name} plant {flower}?", "{bed}"),
                Ask("What did {name} plant by {bed}?", "{flower}"),
            ),
            paraphrases=(Ask("In which spot did {name} put the {flower_p}?", "{bed}"),),
            echoes=("{flower} will be gorgeous", "send me a photo of the garden"),
        ),
        Episode(
            says=(
                "entered my {entry} in the village show {when} and got {prize}!!",
                "{prize} for my {entry} at the village show, I'm unbearable now",
                "village show results: {entry}, {prize}. the vicar shook my hand",
            ),
            do="enter the {entry} in the village show",
            did="won {prize} at the village show",
            mentions=(
                "thinking about what to enter in the village show",
                "the village show is the highlight of my year",
                "practising for the village show already lol",
            ),
            asks=(
                Ask("What did {name} get for the {entry} at the village show?", "{prize}"),
                Ask("What did {name} enter in the village show to win {prize}?", "{entry}"),
            ),
            echoes=("the {entry}?? amazing", "village show champion"),
        ),
    ),
    prompts=("how's the garden?", "been down the allotment?", "what's growing?", "garden looking good?"),
    replies=(
        "I kill every plant I touch",
        "your garden sounds like paradise",
        "I need you to sort my garden out",
        "green fingers!",
        "I wish I had room for a veg patch",
    ),
    asides=(
        "spent the whole day weeding, my knees are done",
        "the allotment is my happy place",
        "need to water everything again, no rain for weeks",
        "the compost heap is alive I swear",
        "I've got soil in places soil shouldn't be",
    ),
)

DANCE = Theme(
    "dance crew",
    pools={
        "competition": combos(
            "the {region} {kind}",
            region=values("""
                Northern | up-north
                Midlands | central England
                Summer | hot-season
                Street | urban
                Coastal | seaside
            """),
            kind=values("Cup | trophy\nJam | session\nOpen | contest open to all\nBattle | showdown"),
        ),
        "city": values("""
            Manchester
            Birmingham
            Cardiff
            Belfast
            Newcastle
            Amsterdam
            Paris
            Nottingham
            Brighton
            Liverpool
            Sheffield
        """),
        "placing": values("""
            third place
            second
            the semis
            fourth
            first place
            the quarters
            the top eight
            the final
            sixth
        """),
        "track": values("""
            Crazy in Love | a Beyonce hit
            Get Ur Freak On | a Missy Elliott classic
            Toxic | a Britney song
            Uptown Funk | a Bruno Mars tune
            Bad Guy | a Billie Eilish track
            Hypnotize | a Biggie record
            Levitating | a Dua Lipa single
            Harlem Shake | a Baauer banger
            Thriller | a Michael Jackson track
            Lose Control | a Missy number
        """),
        "move": values("""
            a backflip
            a six-step into a freeze
            a headspin
            a windmill
            a human pyramid
            a slow-motion fall
            a mirror section
            a chair drop
            a lift into the splits
            a wave down the line
        """),
        "member": values("Jazmin\nKeon\nTallulah\nBrandon\nMisaki\nOsei\nFrankie\nNadine\nLeroy\nGabriela"),
        "news": values("""
            got into a West End show
            tore a ligament
            is moving to Berlin
            got a job on a cruise ship
            choreographed a music video
            had a baby
            opened her own studio
            is quitting to study medicine
            got signed by an agency
            did a TV advert
        """),
    },
    fixed={
        "crew": (
            "Static Shift",
            "Northside Movement",
            "Kinetic Kru",
            "Floor Theory",
            "Rhythm Riot",
            "Urban Ember",
        )
    },
    episodes=(
        Episode(
            says=(
                "{crew} went to {city} for {competition} {when} and made {placing}!!",
                "{competition} in {city} done, we got {placing}, my body is broken",
                "made {placing} at {competition}, the whole crew cried on the coach home from {city}",
            ),
            do="compete at {competition}",
            did="competed at {competition} in {city}",
            mentions=(
                "another comp coming up, {crew} are training every night",
                "the crew is travelling for a dance competition again",
                "competition nerves are kicking in",
            ),
            asks=(
                Ask("Where did {name} and the crew go for {competition}?", "{city}"),
                Ask("How did {name}'s dance crew do at {competition}?", "{placing}"),
                Ask("Which competition did {name}'s crew dance at in {city}?", "{competition}"),
            ),
            paraphrases=(Ask("Which town hosted {competition_p} that {name} entered?", "{city}"),),
            echoes=("{competition}! that's huge", "{city} for a dance comp, so glam"),
        ),
        Episode(
            says=(
                "new routine to {track} {when}, it ends with {move}",
                "the {track} routine is done, I have to do {move} at the end, pray for me",
                "we're doing {move} in the {track} piece and I'm terrified",
            ),
            do="learn the {track} routine",
            did="danced a routine to {track}",
            mentions=(
                "learning new choreography, my brain hurts",
                "the new dance routine is so hard",
                "we ran the routine fifty times tonight",
            ),
            asks=(
                Ask("What move ends the crew's routine to {track}?", "{move}"),
                Ask("Which song has {name}'s crew put {move} in?", "{track}"),
            ),
            paraphrases=(Ask("How does {name}'s dance to {track_p} finish?", "{move}"),),
            echoes=("a routine to {track}, love that", "please film the {track} one"),
        ),
        Episode(
            says=(
                "big crew news: {member} {news}",
                "{member} from {crew} {news} {when}, we're all reeling",
                "so {member} {news}, practice is going to be weird without them",
            ),
            do="hear that {member} {news}",
            did="heard that {member} {news}",
            mentions=(
                "lots of crew drama this week",
                "someone in {crew} has big news again",
                "the crew is changing so much lately",
            ),
            asks=(
                Ask("What news did {name} share about {member} from the crew?", "{news}"),
                Ask("Which crew member {news}?", "{member}"),
            ),
            echoes=("wow {member}!!", "tell {member} congrats from me, or sorry, whichever"),
        ),
    ),
    prompts=("how's dance?", "how's {crew}?", "any comps coming up?", "still training every night?"),
    replies=(
        "I can barely do the macarena",
        "you lot are so talented",
        "I need to come see the crew dance",
        "your dedication to dance is unreal",
        "film the next routine for me!",
    ),
    asides=(
        "practice was brutal, three hours straight",
        "my knees are bruised from floorwork",
        "{crew} group chat is pure chaos",
        "we've been drilling the same eight counts for days",
        "dance is the best part of my week honestly",
    ),
)
