"""The values the conversation generator draws from: names, places, jobs, pets, hobbies …

Plain data. Each pool is long enough that two people of one conversation never share a
value and twenty people rarely do.
"""

from __future__ import annotations

FIRST_NAMES = (
    "Caroline", "Mateo", "Priya", "Jonas", "Amara", "Dmitri", "Leila", "Tomasz", "Ines", "Kwame",
    "Hannah", "Rafael", "Yuki", "Oskar", "Farah", "Declan", "Sofia", "Emeka", "Greta", "Luis",
    "Naomi", "Arjun", "Beatriz", "Callum", "Mei", "Tobias", "Zainab", "Felix", "Rosa", "Idris",
)

CITIES = (
    "Lisbon", "Porto", "Leeds", "Glasgow", "Rotterdam", "Lyon", "Valencia", "Krakow", "Gdansk",
    "Bristol", "Dublin", "Cork", "Ghent", "Bologna", "Turin", "Seville", "Brno", "Tallinn",
    "Bergen", "Aarhus", "Malmo", "Leipzig", "Graz", "Ljubljana", "Montreal", "Halifax",
    "Denver", "Austin", "Portland", "Wellington", "Adelaide", "Osaka",
)

HOMETOWNS = (
    "a tiny village outside Galway", "Coimbra", "Aberdeen", "Nantes", "Utrecht", "Bilbao",
    "Lodz", "Plymouth", "Innsbruck", "Tampere", "Split", "Cluj", "Thessaloniki", "Lagos",
    "Pune", "Kumasi", "Curitiba", "Hobart", "Sapporo", "Winnipeg", "Dundee", "Bruges",
)

JOBS = (
    ("nurse", "St. Brigid's Hospital"),
    ("primary school teacher", "Greenfield Primary"),
    ("software engineer", "a payments startup called Tallyho"),
    ("accountant", "Harlow & Finch"),
    ("barista", "the Copper Kettle cafe"),
    ("architect", "a small studio called Fold"),
    ("paramedic", "the county ambulance service"),
    ("graphic designer", "an agency named Brightside"),
    ("electrician", "my uncle's company"),
    ("pharmacist", "the Boots on the high street"),
    ("line cook", "a tapas bar called Sal"),
    ("librarian", "the central library"),
    ("physiotherapist", "a sports clinic downtown"),
    ("data analyst", "Northwind Logistics"),
    ("solicitor", "Marsh Legal"),
    ("vet", "the Riverside animal clinic"),
    ("dental hygienist", "Smile Street Dental"),
    ("journalist", "the local paper"),
    ("carpenter", "a kitchen-fitting firm"),
    ("lab technician", "the university's biology department"),
    ("translator", "an agency that does patents"),
    ("bus driver", "the city transit company"),
    ("UX researcher", "a bank's digital team"),
    ("florist", "Petal & Stem"),
)

PETS = (
    ("dog", "Rex"), ("cat", "Miso"), ("dog", "Biscuit"), ("cat", "Pickle"), ("rabbit", "Clover"),
    ("parrot", "Kiwi"), ("dog", "Juno"), ("cat", "Tofu"), ("tortoise", "Gus"), ("dog", "Pepper"),
    ("cat", "Noodle"), ("hamster", "Peanut"), ("dog", "Otis"), ("cat", "Luna"), ("gecko", "Ziggy"),
    ("dog", "Maple"), ("cat", "Sushi"), ("guinea pig", "Waffles"), ("dog", "Bruno"), ("cat", "Olive"),
)

PARTNER_NAMES = (
    "Sam", "Alex", "Jordan", "Chris", "Marta", "Ben", "Eliza", "Nico", "Tess", "Omar", "Ruth",
    "Pablo", "Ada", "Finn", "Carla", "Hugo", "Lena", "Theo", "Iris", "Milo",
)
PARTNER_WORDS = ("husband", "wife", "partner", "boyfriend", "girlfriend", "fiancé", "fiancée")

CHILD_NAMES = (
    "Mia", "Leo", "Ava", "Noah", "Ella", "Kai", "Isla", "Ezra", "Nora", "Luca", "Maya", "Arlo",
    "Zoe", "Jude", "Lily", "Oscar", "Ruby", "Eli",
)
SIBLING_NAMES = (
    "Anna", "Marco", "Sophie", "Daniel", "Clara", "Viktor", "Elena", "Patrick", "Julia", "Samir",
    "Bianca", "Stefan", "Laura", "Rory", "Nadia", "Tom",
)

HOBBIES = (
    # (noun phrase, what one does, a place or thing of it)
    ("pottery", "throwing pots", "the pottery studio"),
    ("bouldering", "bouldering", "the climbing gym"),
    ("sourdough baking", "baking sourdough", "my starter"),
    ("birdwatching", "birdwatching", "the wetlands"),
    ("salsa dancing", "dancing salsa", "the Thursday class"),
    ("knitting", "knitting", "my yarn stash"),
    ("chess", "playing chess online", "the club"),
    ("trail running", "trail running", "the hills"),
    ("watercolour painting", "painting watercolours", "my sketchbook"),
    ("woodworking", "woodworking", "the garage workshop"),
    ("gardening", "gardening", "the allotment"),
    ("film photography", "shooting film", "the darkroom"),
    ("open-water swimming", "swimming in the lake", "the lake"),
    ("board games", "playing board games", "game night"),
    ("beekeeping", "keeping bees", "the hives"),
    ("calligraphy", "practising calligraphy", "my nib pens"),
    ("kayaking", "kayaking", "the river"),
    ("crochet", "crocheting", "my hook collection"),
)

ALLERGENS = (
    "peanuts", "shellfish", "penicillin", "cats", "tree nuts", "sesame", "bee stings", "kiwi fruit",
    "latex", "gluten",
)
DIETS = ("vegetarian", "vegan", "pescatarian", "dairy-free", "gluten-free")

EDITORS = ("vim", "VS Code", "Emacs", "Helix", "Sublime Text", "IntelliJ", "Zed", "Neovim", "nano")
DEPLOY = ("Fly.io", "Heroku", "AWS", "Render", "a Raspberry Pi in my closet", "Vercel", "Hetzner", "Railway")
LANGS = ("Python", "Go", "Rust", "TypeScript", "Kotlin", "Elixir", "Ruby", "C#")
CARS = (
    "a 2012 Honda Civic", "an old VW Golf", "a red Fiat Panda", "a Toyota Prius", "a Skoda Octavia",
    "a Mini Cooper", "a Ford Fiesta", "a Nissan Leaf", "a Volvo estate", "a Kia Picanto",
)
PHONES = ("an iPhone 12", "a Pixel 7", "a Samsung Galaxy S21", "a Fairphone", "an old iPhone SE", "a Nokia flip phone")

DESTINATIONS = (
    "Japan", "Iceland", "Mexico City", "Crete", "Marrakech", "the Dolomites", "Vietnam", "Lapland",
    "New York", "Sicily", "Scotland", "Peru", "Copenhagen", "the Azores", "Istanbul", "Tasmania",
)

BANDS = (
    "Fleet Foxes", "Arctic Monkeys", "Björk", "The National", "Khruangbin", "Radiohead", "Lizzo",
    "Bon Iver", "Little Simz", "Tame Impala", "Florence and the Machine", "Paul Simon",
)

LANGUAGES_LEARNED = ("Japanese", "Portuguese", "Korean", "Italian", "German", "Spanish", "Welsh", "Greek", "Polish")
INSTRUMENTS = ("guitar", "piano", "cello", "ukulele", "drum kit", "saxophone", "violin", "banjo")
TEAMS = ("Celtic", "Benfica", "Ajax", "Leeds United", "the Denver Nuggets", "Bayern", "Napoli", "the Leafs")

BOOKS = (
    "Piranesi", "The Overstory", "Tomorrow, and Tomorrow, and Tomorrow", "Project Hail Mary",
    "Middlemarch", "The Remains of the Day", "Klara and the Sun", "Educated", "The Name of the Wind",
    "Braiding Sweetgrass", "A Gentleman in Moscow", "Dune",
)
SHOWS = (
    "Severance", "The Bear", "Slow Horses", "Succession", "Bluey", "Taskmaster", "Shogun",
    "Only Murders in the Building", "The Great British Bake Off", "Detectorists",
)
FOODS = (
    "ramen", "mac and cheese", "dal with rice", "pierogi", "shakshuka", "pho", "grilled cheese",
    "lasagne", "jollof rice", "bibimbap", "a proper Sunday roast", "pad thai",
)
COFFEE = (
    "black coffee", "oat milk lattes", "double espressos", "flat whites", "green tea", "chai",
    "decaf cappuccinos", "cold brew",
)

INJURIES = (
    ("sprained my ankle", "a sprained ankle", "playing five-a-side"),
    ("pulled a muscle in my back", "a pulled back muscle", "moving a sofa"),
    ("broke my wrist", "a broken wrist", "falling off my bike"),
    ("twisted my knee", "a twisted knee", "skiing"),
    ("cracked a rib", "a cracked rib", "at rugby training"),
    ("hurt my shoulder", "a hurt shoulder", "at the gym"),
)

PAST_EVENTS = (
    # (what was done, first person; the question's paraphrase of it)
    ("went hiking up Ben Lomond", "climb a mountain"),
    ("ran my first 10k", "complete a 10k race"),
    ("visited my grandma in the care home", "go to see a grandparent"),
    ("helped my cousin move flats", "help a relative move house"),
    ("went to a Thai cooking class", "take a cooking lesson"),
    ("saw the new Wes Anderson film", "go to the cinema"),
    ("tried that new ramen place on Baker Street", "eat at a new noodle restaurant"),
    ("painted the spare bedroom green", "redecorate a room"),
    ("went to a friend's wedding in the countryside", "attend a wedding"),
    ("adopted a bunch of houseplants from a neighbour", "get some plants"),
    ("went wild camping by a loch", "sleep in a tent outdoors"),
    ("did a pub quiz and actually won", "win a quiz"),
    ("got a tattoo of a fern on my arm", "get inked"),
    ("went to a pottery market and bought six mugs", "buy handmade cups"),
    ("fixed the leaking tap in the kitchen myself", "do some plumbing"),
    ("drove to the coast to watch the sunrise", "take a trip to the seaside"),
    ("went to my first ever opera", "see an opera performance"),
    ("spent the day at a spa with my mum", "have a spa day"),
    ("volunteered at the food bank", "do volunteer work"),
    ("built a bookshelf from scratch", "make a piece of furniture"),
)

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
