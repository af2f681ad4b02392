"""The offline corpus's vocabulary: words by role, sentence templates, name parts.

Data, not logic (txl_mini.corpus builds the text from it). Changing any of it changes
every generated corpus, and so every number the chapters measure on one.
"""

# A few hundred common words by role; sentences are drawn from TEMPLATES below.
WORDS = {
    "adj": (
        "tall new good great small large long little young big high famous "
        "strange noble few public bad same fine local sure free real best "
        "strong whole clear full special sad hard quiet dark bright cold warm "
        "green red blue white black deep wide short simple happy kind brave "
        "wise poor rich fast slow calm wild gentle proud"
    ).split(),
    "noun": (
        "time year people way day man woman child world life hand part place "
        "case week system program question work government number night point "
        "home water room mother area money story fact month lot right study "
        "book eye job word business issue side kind head house service friend "
        "father power hour game line end member law car city name team minute "
        "idea body information back parent face level office door health person "
        "art war history party result change morning reason research girl guy "
        "moment air teacher force education farmer king queen river mountain "
        "island village garden letter song ship road bridge tree stone horse "
        "bird forest market church school castle valley"
    ).split(),
    "verb": (
        "saw made found took gave told felt left kept began brought wrote heard "
        "met built sold carried opened followed watched helped loved knew "
        "remembered painted visited crossed found asked called moved changed "
        "lost won reached"
    ).split(),
    "intr": (
        "arrived returned waited slept laughed smiled worked travelled listened "
        "sang spoke rested stayed wandered danced prayed"
    ).split(),
    "adv": (
        "slowly quickly often always never again later soon early quietly "
        "together alone happily carefully suddenly finally"
    ).split(),
    "prep": (
        "near behind beyond across under over along around inside outside"
    ).split(),
    "pron": (
        "he she they we it"
    ).split(),
    "det": (
        "the the this that every no some"
    ).split(),
    "time": (
        "in the morning|at night|after the war|before the winter|every day|in "
        "the spring|during the summer|for many years|in those days|on the next "
        "day"
    ).split("|"),
}

# Each template is a list of roles; a role not in WORDS is a literal word.
TEMPLATES = [t.split() for t in [
    "det adj noun verb det noun",
    "pron verb det adj noun prep det noun",
    "det noun intr adv",
    "time det adj noun intr prep det noun",
    "pron intr and pron verb det noun",
    "det noun of det noun was adj",
    "pron verb that det noun was adj and adj",
    "det adj noun intr time",
    "there was det adj noun prep det noun",
    "many people verb det noun time",
]]

# made-up names are 2 or 3 of these syllables
SYLLABLES = (
    "ka zor mil vex dra tul quin bor sel yam grik lo pha nev tas rum jo wex "
    "fen ostr ix ul ba zen thar cru vim ock del"
).split()
# how a name is introduced (its first mention, the cue) ...
INTROS = [
    "there was a adj noun called",
    "one day pron met a adj noun named",
    "the noun of the village was called",
    "long ago lived a adj noun known as",
]
# ... how its second mention is led into and followed
LEADS = ["and then", "later", "after that", "so", "one day", "at last"]
OUTROS = [
    "said the noun",
    "verb det noun",
    "intr adv",
    "was adj",
    "intr prep det noun",
]
