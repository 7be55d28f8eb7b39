"""Themes of home life: kids, a dog, a renovation, a book club."""

from __future__ import annotations

from bench.conversations.pools import BOOKS, CHILD_NAMES, PETS
from bench.threads.model import Ask, Episode, Theme, combos, values

KIDS = Theme(
    "kids",
    pools={
        "outing": combos(
            "the {place} in {town}",
            place=values("""
                beach | seaside
                museum | exhibition hall
                farm park | petting zoo
                castle | fortress
                aquarium | sea-life centre
                pottery workshop | clay class
            """),
            town=values("""
                Whitby | the Dracula town
                Scarborough | the big Yorkshire resort
                Saltburn | the pier town
                Filey | the quiet bay town
            """),
        ),
        "made": values("""
            little clay bowls
            a sandcastle with a moat
            paper rockets
            a den out of branches
            salt dough dinosaurs
            a volcano that actually fizzed
            friendship bracelets
            sock puppets
            pine cone owls
            a kite
            a bird box
            a cardboard castle
            bug hotels
            leaf crowns
        """),
        "event": values("""
            nativity play | Christmas pageant
            sports day | athletics afternoon
            science fair | experiment showcase
            spelling bee | word contest
            harvest festival | autumn thanksgiving service
            book week parade | literary costume march
            summer concert | end-of-term music recital
            talent show | variety performance
            class assembly | form presentation to parents
            Easter bonnet parade | spring hat procession
        """),
        "role": values("""
            a wobbly sheep
            the narrator
            a tree with one line
            the king
            a very loud drummer
            dressed as Matilda
            a dancing carrot
            the star
            an astronaut
            a pirate captain
            a talking cat
        """),
        "activity": values("""
            judo
            swimming lessons
            Beavers
            ballet
            coding club
            football training
            drama club
            gymnastics
            chess club
            climbing
            tennis
        """),
        "coach": values("""
            Mr Adeyemi
            Miss Harriet
            Coach Sven
            Mrs Kowalczyk
            Sensei Hiroshi
            Miss Priyanka
            Mr Duggan
            Auntie Bola
            Mrs Featherstone
            Mr Llewellyn
        """),
        "party": values("""
            dinosaur | prehistoric reptile
            pirate | buccaneer
            space | astronaut and planets
            mermaid | underwater princess
            superhero | caped crusader
            unicorn | magical horned horse
            jungle | rainforest animals
            Minecraft | block-building video game
            circus | big top and clowns
            Pokemon | pocket monster cards
        """),
        "venue": values("""
            the church hall
            the bowling alley
            our back garden
            the soft play centre
            a climbing wall
            the leisure centre pool
            a pizza place
            the scout hut
            the park bandstand
            the village hall
        """),
    },
    fixed={"eldest": CHILD_NAMES[:9], "youngest": CHILD_NAMES[9:]},
    episodes=(
        Episode(
            says=(
                "took the kids to {outing} {when}, they made {made}",
                "{outing} with the kids, {eldest} and {youngest} came home with {made}",
                "the kids made {made} at {outing}, now every shelf is full of them",
            ),
            do="take the kids to {outing}",
            did="took the kids to {outing}",
            mentions=(
                "took the kids out again, they're shattered",
                "always looking for places to take the kids at the weekend",
                "day out with {eldest} and {youngest}, they loved it",
            ),
            asks=(
                Ask("What did {name}'s kids make at {outing}?", "{made}"),
                Ask("Where did {name}'s kids make {made}?", "{outing}"),
            ),
            paraphrases=(Ask("What did {name}'s children create during the visit to {outing_p}?", "{made}"),),
            echoes=("{made}!! so cute", "{outing} is great for kids, we went last year"),
        ),
        Episode(
            says=(
                "the school {event} was {when}, {youngest} was {role}",
                "{youngest} was {role} in the {event}, I was the proudest parent in the hall",
                "{event} today: my youngest was {role} and stole the show",
            ),
            do="watch the kids' {event}",
            did="watched their youngest in the {event}",
            mentions=(
                "another school event this week, I've lost count",
                "school events are so cute and so chaotic",
                "made a costume for a school thing at midnight again",
            ),
            asks=(
                Ask("What was {name}'s youngest in the {event}?", "{role}"),
                Ask("In which school event was {name}'s kid {role}?", "{event}"),
            ),
            paraphrases=(Ask("What part did {name}'s little one have in the {event_p}?", "{role}"),),
            echoes=("the {event}! did you film it?", "I bet the {event} was chaos"),
        ),
        Episode(
            says=(
                "signed {eldest} up for {activity} with {coach} {when}",
                "{eldest} loves {activity}, {coach} is brilliant with the kids",
                "{activity} is every Tuesday now, {coach} runs it",
            ),
            do="sign the kids up for {activity}",
            did="signed a kid up for {activity} with {coach}",
            mentions=(
                "the kids' after-school clubs are a full-time job",
                "driving the kids to activities all week",
                "{eldest} has a new favourite club every month",
            ),
            asks=(
                Ask("What did {name} sign the kids up for with {coach}?", "{activity}"),
                Ask("Who runs the {activity} that {name}'s kid goes to?", "{coach}"),
            ),
            echoes=("{activity} is so good for them", "my nephew does {activity} too"),
        ),
        Episode(
            says=(
                "did a {party} birthday party at {venue} {when}, never again",
                "{party} party at {venue} for {eldest}, twenty kids and one very tired parent",
                "booked {venue} for the {party} party, the cake alone took two nights",
            ),
            do="throw the {party} birthday party",
            did="threw a {party} birthday party at {venue}",
            mentions=(
                "planning another kids' party, send wine",
                "kids' birthday parties are my nemesis",
                "the party bags alone cost a fortune",
            ),
            asks=(
                Ask("Where did {name} have the {party} birthday party?", "{venue}"),
                Ask("What was the theme of the kids' party {name} threw at {venue}?", "{party}"),
            ),
            paraphrases=(Ask("Which place hosted the {party_p} celebration {name} organised?", "{venue}"),),
            echoes=("a {party} party, amazing", "you're a saint for doing a kids party"),
        ),
    ),
    prompts=(
        "how are the kids?",
        "how are {eldest} and {youngest}?",
        "kids behaving?",
        "how's {youngest} doing?",
    ),
    replies=(
        "your kids sound like so much fun",
        "parenting looks exhausting",
        "give them a hug from me",
        "they grow up so fast",
        "I love hearing about the kids",
    ),
    asides=(
        "{youngest} woke up at 5 again",
        "the kids have been fighting all day",
        "school run was chaos this morning",
        "{eldest} wants a phone already, help",
        "I have found lego in my shoe twice today",
    ),
)

DOG = Theme(
    "dog",
    pools={
        "walk": combos(
            "the {place} {where}",
            place=values("""
                woods | forest
                river path | waterside track
                fields | meadows
                beach | sands
                common | village green
            """),
            where=values("""
                behind the school | beyond the classrooms
                by the station | near the railway
                near Grandma's | close to nan's house
                past the pub | beyond the tavern
            """),
        ),
        "friend": values(
            "Pudding\nBeau\nMabel\nChester\nWinnie\nHercules\nSnowball\nBiggles\nDottie\nRocket"
        ),
        "item": values("""
            my work shoes
            a whole loaf of bread
            the TV remote
            my passport
            a tube of sun cream
            the sofa cushion
            my headphones
            a birthday cake
            the kids' homework
            a bar soap
        """),
        "spot": values("""
            the laundry basket | the dirty-clothes hamper
            my work bag | the satchel I take to the office
            the recycling | the paper and plastic bin
            the shoe rack | the footwear stand
            the kitchen counter | the worktop where I cook
            the kids' bedroom | the children's room
            the car boot | the trunk of the vehicle
            the bathroom bin | the wastebasket by the loo
            the coffee table | the low table in the lounge
            the garden shed | the hut at the end of the yard
        """),
        "trick": values("""
            play dead | pretend to be lifeless
            roll over | turn onto the back
            give a paw | shake hands
            spin in a circle | twirl around
            ring a bell to go out | ding a chime before a toilet trip
            fetch the post | bring in the letters
            close the door | shut the entrance
            wave | lift a leg in greeting
            bow | stretch down in a curtsey
            high five | slap palms
        """),
        "treat": values("""
            cheese cubes
            bits of hot dog
            dried liver
            peanut butter
            chicken skin
            carrot sticks
            sprats
            a squeezy tube of pate
            kibble
            blueberries
        """),
        "issue": values("""
            an ear infection
            a grass seed in his paw
            a torn nail
            kennel cough
            a dodgy tummy
            itchy skin from pollen
            a sprained wrist
            a tooth that needs pulling
            a lump that turned out fine
            worms
        """),
        "cost": values("£180\n£95\n£420\n£60\n£250\n£135\n£75\n£310\n£48\n£520"),
    },
    fixed={"dog": tuple(name for kind, name in PETS if kind == "dog")},
    episodes=(
        Episode(
            says=(
                "took {dog} to {walk} {when}, he made friends with a spaniel called {friend}",
                "{dog} met {friend} at {walk} and now they're best friends",
                "{walk} with {dog} this morning, {friend} the spaniel was there again",
            ),
            do="take the dog to {walk}",
            did="took the dog to {walk}",
            mentions=(
                "long walk with {dog} today, he's shattered",
                "{dog} has more friends than me at the park",
                "{dog} pulled me all the way round the walk",
            ),
            asks=(
                Ask("Which dog did {name}'s dog befriend at {walk}?", "{friend}"),
                Ask("Where did {dog} meet {friend}?", "{walk}"),
            ),
            paraphrases=(
                Ask("What was the name of the pooch {name}'s pet played with on {walk_p}?", "{friend}"),
            ),
            echoes=("{dog} and {friend}, cutest friendship", "{walk} is lovely for dogs"),
        ),
        Episode(
            says=(
                "{dog} got into {spot} and chewed {item} {when}",
                "came home to find {dog} had eaten {item} from {spot}",
                "{item}. gone. {dog} found it in {spot}",
            ),
            do="find out the dog chewed {item}",
            did="had a dog that chewed {item}",
            mentions=(
                "{dog} chewed something again",
                "I have to hide everything from {dog}",
                "{dog} is in his chewing phase still",
            ),
            asks=(
                Ask("What did {name}'s dog chew from {spot}?", "{item}"),
                Ask("Where did {dog} find {item}?", "{spot}"),
            ),
            paraphrases=(Ask("What did {name}'s pet destroy after raiding {spot_p}?", "{item}"),),
            echoes=("{dog} nooo", "bad dog {dog} haha"),
        ),
        Episode(
            says=(
                "{dog} finally learned to {trick} {when}, bribed with {treat}",
                "{treat} is the secret, {dog} can {trick} now",
                "two weeks of {treat} and {dog} will {trick} on command",
            ),
            do="teach the dog to {trick}",
            did="taught their dog to {trick}",
            mentions=(
                "working on a new trick with {dog}",
                "{dog} is so smart when there are treats involved",
                "dog training session this morning, slow progress",
            ),
            asks=(
                Ask("What treat did {name} use to teach the dog to {trick}?", "{treat}"),
                Ask("What trick did {dog} learn for {treat}?", "{trick}"),
            ),
            paraphrases=(Ask("What reward did {name} give the pooch to make it {trick_p}?", "{treat}"),),
            echoes=("{dog} is a genius", "video of the trick please!!"),
        ),
        Episode(
            says=(
                "vet trip {when}, {dog} has {issue}, {cost} later",
                "{cost} at the vet for {issue}, {dog} owes me",
                "{dog} has {issue}, vet bill was {cost}, he's fine though",
            ),
            do="take the dog to the vet for {issue}",
            did="took their dog to the vet for {issue}",
            mentions=(
                "another vet trip for {dog}",
                "{dog} hates the vet so much",
                "pet insurance is the best thing I ever bought, {dog} is always at the vet",
            ),
            asks=(
                Ask("How much did the vet charge {name} for {issue}?", "{cost}"),
                Ask("What was {name}'s dog treated for at the vet for {cost}?", "{issue}"),
            ),
            echoes=("poor {dog}", "vets are so expensive"),
        ),
    ),
    prompts=("how's {dog}?", "give {dog} a scratch from me", "is {dog} behaving?", "how's the pup?"),
    replies=(
        "I need a dog so badly",
        "{dog} is the best boy",
        "dogs are just better than people",
        "send dog pics",
        "he's such a character",
    ),
    asides=(
        "{dog} is snoring next to me",
        "dog hair on every single thing I own",
        "{dog} stole my spot on the sofa again",
        "two walks a day in this rain, I'm soaked",
        "{dog} barked at the postman for ten minutes",
    ),
)

RENOVATION = Theme(
    "renovation",
    pools={
        "room": combos(
            "{where} {room}",
            where=values(
                "front | street-facing\nback | rear\nupstairs | first-floor\ndownstairs | ground-floor"
            ),
            room=values(
                "bedroom | sleeping room\nbathroom | washroom\nsitting room | lounge\nstudy | office"
            ),
        ),
        "colour": values("""
            sage green
            a deep navy
            terracotta
            mustard yellow
            dusty pink
            charcoal grey
            duck egg blue
            off-white
            forest green
            burnt orange
            lavender grey
        """),
        "job": values("""
            rewire the loft
            fix the damp in the cellar
            replace the boiler
            knock through the dining room wall
            lay the oak floor
            tile the shower
            sort the leaking roof
            fit the new windows
            plaster the hallway ceiling
            put in a new staircase
        """),
        "tradie": values(
            "Gareth\nBogdan\nMr Okonkwo\nStavros\nBev\nDarren\nLuigi\nMrs Hollis\nJasper\nTerrence"
        ),
        "spot": values("""
            the old lino
            the fireplace
            the stair carpet
            the kitchen cupboards
            the bath panel
            the floorboards
            the wallpaper
            the airing cupboard
            the plasterboard
            the skirting
        """),
        "discovery": values("""
            a newspaper from 1962
            a bricked-up window
            a wasps nest the size of a football
            an old penny
            a love letter
            a pair of tiny leather shoes
            original Victorian tiles
            a cigarette tin full of buttons
            a dead mouse
            a signature from the builder in 1931
        """),
        "fixture": values("""
            range cooker
            rolltop bath
            wood burner
            kitchen island
            sash windows
            velux window
            walk-in shower
            herringbone floor
            butler sink
            log store
        """),
        "price": values("£2,400\n£850\n£1,300\n£3,900\n£640\n£5,200\n£1,750\n£980\n£4,100\n£720"),
    },
    episodes=(
        Episode(
            says=(
                "painted the {room} {colour} {when}, it looks like a magazine",
                "the {room} is {colour} now and I'm obsessed",
                "two coats of {colour} in the {room}, renovation progress!",
            ),
            do="paint the {room} {colour}",
            did="painted the {room} {colour}",
            mentions=(
                "painting another room this weekend",
                "I've looked at so many paint samples",
                "paint everywhere, renovation life",
            ),
            asks=(
                Ask("What colour did {name} paint the {room}?", "{colour}"),
                Ask("Which room did {name} paint {colour}?", "{room}"),
            ),
            paraphrases=(Ask("What shade are the walls of {name}'s {room_p} now?", "{colour}"),),
            echoes=("{colour}!! bold", "the {room} sounds gorgeous"),
        ),
        Episode(
            says=(
                "{tradie} came to {job} {when}, the house is chaos",
                "{tradie} is here to {job}, there's dust in my teeth",
                "finally got {tradie} booked to {job}, only took six months",
            ),
            do="get the builder in to {job}",
            did="had a builder in to {job}",
            mentions=(
                "builders in again this week",
                "waiting for the builder to call me back, again",
                "finding a good builder is impossible",
            ),
            asks=(
                Ask("Who came to {job} at {name}'s house?", "{tradie}"),
                Ask("What did {tradie} come round to do for {name}?", "{job}"),
            ),
            echoes=("is {tradie} any good? I need someone", "the renovation never ends haha"),
        ),
        Episode(
            says=(
                "ripped up {spot} {when} and found {discovery}!!",
                "found {discovery} behind {spot}, this house is full of secrets",
                "renovation surprise: {discovery} under {spot}",
            ),
            do="pull up {spot}",
            did="found {discovery} in the house",
            mentions=(
                "found more weird stuff in the walls",
                "this house is full of surprises",
                "every time we pull something up in this house we find something",
            ),
            asks=(
                Ask("What did {name} find under {spot}?", "{discovery}"),
                Ask("Where in the house did {name} find {discovery}?", "{spot}"),
            ),
            echoes=("{discovery}?? that's so cool", "keep it!!"),
        ),
        Episode(
            says=(
                "the {fixture} is in {when}, {price} but worth it",
                "{price} for the {fixture}, the renovation budget is crying",
                "ordered the {fixture}, {price}, can't wait to see it fitted",
            ),
            do="get the {fixture} fitted",
            did="paid for a {fixture}",
            mentions=(
                "the renovation budget is gone",
                "ordered more stuff for the house",
                "choosing fittings for the house is harder than I thought",
            ),
            asks=(
                Ask("How much did {name}'s {fixture} cost?", "{price}"),
                Ask("What did {name} spend {price} on in the renovation?", "{fixture}"),
            ),
            echoes=("a {fixture}, living the dream", "send me photos when the {fixture} is in"),
        ),
    ),
    prompts=(
        "how's the renovation?",
        "house finished yet?",
        "how's the building work?",
        "still living in dust?",
    ),
    replies=(
        "renovations are so stressful",
        "it's going to be beautiful when it's done",
        "I couldn't live through building work",
        "your house is going to be amazing",
        "how much longer have you got?",
    ),
    asides=(
        "everything I own is covered in plaster dust",
        "we've been eating takeaways for weeks with no kitchen",
        "another skip arrived today",
        "the renovation spreadsheet is my whole life now",
        "the builders left the radio on all night",
    ),
)

BOOK_CLUB = Theme(
    "book club",
    pools={
        "book": tuple((book, "") for book in BOOKS)
        + values("""
            The Salt Path
            Normal People
            Circe
            The Secret History
            Stoner
            Lessons in Chemistry
            Hamnet
            Pachinko
        """),
        "verdict": values("""
            cried on the bus at the end
            thought the ending was a cop-out
            stayed up till 3 to finish it
            gave up halfway
            loved it more than I expected
            found it so slow
            want to read it again already
            argued about it for two hours
            was the only one who liked it
        """),
        "host": values(
            "Imelda\nHoracio\nBeryl\nMrs Vasquez\nCornelius\nDelia\nGwendolyn\nOsric\nPatience\nLionel"
        ),
        "snack": values("""
            lemon drizzle cake
            homemade samosas
            a cheese board
            cinnamon buns
            baklava
            sausage rolls
            brownies
            a trifle
            empanadas
            flapjacks
        """),
        "film": values("""
            Past Lives | a Korean-American romance
            Oppenheimer | the atomic bomb biopic
            Aftersun | the Turkish holiday father-daughter story
            Poor Things | the Frankenstein-ish Emma Stone movie
            The Holdovers | the Christmas boarding school comedy
            Perfect Days | the Tokyo toilet cleaner story
            Anatomy of a Fall | the French courtroom thriller
            Saltburn | the country house satire
            Dune Part Two | the desert sci-fi sequel
            Barbie | the pink doll movie
        """),
        "companion": values(
            "Ottoline\nMarcus\nBrigid\nYusuf\nEdwina\nRamon\nVerity\nCaspian\nHortense\nJethro"
        ),
    },
    episodes=(
        Episode(
            says=(
                "finished {book} {when} and {verdict}",
                "book club pick was {book}, I {verdict}",
                "{book}: I {verdict}. discuss",
            ),
            do="finish {book}",
            did="read {book}",
            mentions=(
                "finished another book this week",
                "I'm reading two books at once again",
                "couldn't put my book down last night",
            ),
            asks=(
                Ask("What did {name} think of {book}?", "{verdict}"),
                Ask("Which book was it where {name} {verdict}?", "{book}"),
            ),
            echoes=("I've had {book} on my list forever", "{book} is on my shelf, unread lol"),
        ),
        Episode(
            says=(
                "book club at {host}'s {when}, we did {book} and ate {snack}",
                "{host} hosted book club, {snack} and a big fight about {book}",
                "{book} night at {host}'s place, the {snack} was better than the book",
            ),
            do="discuss {book} at book club",
            did="went to book club at {host}'s on {book}",
            mentions=(
                "book club was fun, mostly wine",
                "it's my turn to pick the book club book soon",
                "book club argued for hours again",
            ),
            asks=(
                Ask("Who hosted the book club about {book}?", "{host}"),
                Ask("What snack was there at {host}'s book club?", "{snack}"),
            ),
            echoes=("{host}'s book club sounds fun", "I want {snack} now"),
        ),
        Episode(
            says=(
                "saw {film} with {companion} {when}, still thinking about it",
                "{companion} dragged me to {film}, actually loved it",
                "film night: {film} with {companion}, we both cried",
            ),
            do="see {film}",
            did="saw {film} with {companion}",
            mentions=(
                "went to the cinema again",
                "I've been watching so many films lately",
                "film night was great, I cried again",
            ),
            asks=(
                Ask("Who did {name} see {film} with?", "{companion}"),
                Ask("What film did {name} watch with {companion}?", "{film}"),
            ),
            paraphrases=(Ask("Who went with {name} to watch {film_p}?", "{companion}"),),
            echoes=("{film} is on my list", "was {film} as good as people say?"),
        ),
    ),
    prompts=(
        "read anything good?",
        "what's book club reading?",
        "what are you reading now?",
        "seen any films?",
    ),
    replies=(
        "I haven't read a book in ages",
        "your book club sounds like more wine than books",
        "add it to my list",
        "you read so much",
        "I only watch films on planes honestly",
    ),
    asides=(
        "my to-read pile is taller than me",
        "book club is mostly gossip tbh",
        "I read on the train every morning",
        "I keep buying books I don't have time for",
        "the library fines are getting out of hand",
    ),
)
