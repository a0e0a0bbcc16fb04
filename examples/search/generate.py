"""Writes documents.jsonl and questions.jsonl: a fictional encyclopedia of the land of
Veltria and questions answerable only from it. Deterministic: run it again and the files
come out byte for byte the same. Rollscope does not run this script; it ships its output.

    python3 examples/search/generate.py
"""

import json
import random
from pathlib import Path

SEED = 5
HERE = Path(__file__).parent
rng = random.Random(SEED)

ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r",
          "s", "st", "t", "th", "v", "w", "z", "sk", "tr", "qu"]
VOWELS = ["a", "e", "i", "o", "u", "ae", "ei", "ou", "ia"]
CODAS = ["", "n", "r", "l", "s", "th", "m", "nd", "rk", "st", "v"]
used_names = set()


def name(syllables=None):
    while True:
        count = syllables or rng.choice([2, 2, 3])
        word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                       for _ in range(count))
        word = word.capitalize()
        if 5 <= len(word) <= 11 and word not in used_names:
            used_names.add(word)
            return word


REGIONS = [name(2) for _ in range(6)]
SEAS = [name(2) + " Sea" for _ in range(3)]
INDUSTRIES = ["weaving", "salt mining", "glassmaking", "fishing", "timber", "wine",
              "copper smelting", "shipbuilding", "pottery", "wool", "paper milling", "cheese"]
PROFESSIONS = ["astronomer", "botanist", "composer", "painter", "engineer", "poet",
               "cartographer", "physician", "chemist", "architect"]
WORKS = {"astronomer": "a catalogue of {n} stars", "botanist": "a study of {n} mountain mosses",
         "composer": "a cycle of {n} river songs", "painter": "a series of {n} harbour views",
         "engineer": "a design for canal locks", "poet": "a book of {n} sonnets",
         "cartographer": "a map of the {region} coast", "physician": "a treatise on fevers",
         "chemist": "a method for purifying salt", "architect": "the plans of {n} town halls"}
PRODUCTS = ["lanterns", "clocks", "rope", "barrels", "saddles", "bells", "compasses",
            "looms", "kettles", "maps"]

documents = []
questions = []


def add_doc(kind, title, text):
    doc_id = f"doc-{len(documents):04d}"
    documents.append({"id": doc_id, "title": title, "text": text})
    return doc_id


def ask(question, answer, docs, difficulty):
    questions.append({"id": f"lookup-{len(questions):04d}", "question": question,
                      "answer": str(answer), "documents": docs, "difficulty": difficulty})


rivers = []
for _ in range(40):
    river = {"name": name(), "length": rng.randrange(40, 900),
             "mouth": rng.choice(SEAS), "region": rng.choice(REGIONS)}
    rivers.append(river)

towns = []
for _ in range(70):
    town = {"name": name(), "region": rng.choice(REGIONS), "founded": rng.randrange(900, 1850),
            "population": rng.randrange(800, 250000), "river": rng.choice(rivers)["name"],
            "industry": rng.choice(INDUSTRIES)}
    towns.append(town)

for river in rivers:
    river["doc"] = add_doc("river", f"{river['name']} (river)",
        f"The {river['name']} is a river in the {river['region']} province of Veltria. "
        f"It is {river['length']} kilometres long and flows into the {river['mouth']}.")
    ask(f"How long is the {river['name']} river, in kilometres?", river["length"],
        [river["doc"]], 1)
    ask(f"Into which sea does the {river['name']} river flow?", river["mouth"],
        [river["doc"]], 1)

for town in towns:
    town["doc"] = add_doc("town", f"{town['name']} (town)",
        f"{town['name']} is a town in the {town['region']} province of Veltria, on the "
        f"{town['river']} river. The town was founded in {town['founded']} and has a "
        f"population of {town['population']:,}. Its main industry is {town['industry']}.")
    ask(f"In which year was the town of {town['name']} founded?", town["founded"],
        [town["doc"]], 1)
    ask(f"What is the population of the town of {town['name']}?", town["population"],
        [town["doc"]], 1)

peaks = []
for _ in range(40):
    peak = {"name": name(), "height": rng.randrange(900, 4800), "climbed": rng.randrange(1780, 1960),
            "region": rng.choice(REGIONS)}
    peaks.append(peak)
people = []
for _ in range(50):
    profession = rng.choice(PROFESSIONS)
    born = rng.randrange(1600, 1900)
    town = rng.choice(towns)
    person = {"name": f"{name(2)} {name()}", "profession": profession, "born": born,
              "town": town, "published": born + rng.randrange(22, 60),
              "work": WORKS[profession].format(n=rng.randrange(12, 400),
                                               region=rng.choice(REGIONS))}
    people.append(person)
for index, peak in enumerate(peaks):
    climber = people[index % len(people)]
    peak["climber"] = climber
    peak["doc"] = add_doc("peak", f"Mount {peak['name']}",
        f"Mount {peak['name']} is a peak in the {peak['region']} province of Veltria, "
        f"{peak['height']:,} metres high. It was first climbed in {peak['climbed']} by "
        f"{climber['name']}.")
    ask(f"How high is Mount {peak['name']}, in metres?", peak["height"], [peak["doc"]], 1)
    ask(f"Who first climbed Mount {peak['name']}?", climber["name"], [peak["doc"]], 1)

for person in people:
    person["doc"] = add_doc("person", person["name"],
        f"{person['name']} was a Veltrian {person['profession']}, born in {person['born']} in "
        f"the town of {person['town']['name']}. {person['name'].split()[0]} is best known for "
        f"{person['work']}, published in {person['published']}.")
    ask(f"In which year was the {person['profession']} {person['name']} born?", person["born"],
        [person["doc"]], 1)
    ask(f"In which town was {person['name']} born?", person["town"]["name"],
        [person["doc"]], 1)

bridges = []
for _ in range(50):
    town = rng.choice(towns)
    bridge = {"name": name() + " Bridge", "town": town, "completed": town["founded"] + rng.randrange(5, 400),
              "length": rng.randrange(20, 700)}
    bridges.append(bridge)
    bridge["doc"] = add_doc("bridge", f"The {bridge['name']}",
        f"The {bridge['name']} crosses the {town['river']} river at {town['name']}. The bridge "
        f"was completed in {bridge['completed']} and is {bridge['length']} metres long.")
    ask(f"How long is the {bridge['name']}, in metres?", bridge["length"], [bridge["doc"]], 1)
    ask(f"In which year was the {bridge['name']} completed?", bridge["completed"],
        [bridge["doc"]], 1)

companies = []
for _ in range(50):
    town = rng.choice(towns)
    company = {"name": name() + " Company", "town": town, "founded": rng.randrange(1700, 1990),
               "employees": rng.randrange(12, 9000), "product": rng.choice(PRODUCTS)}
    companies.append(company)
    company["doc"] = add_doc("company", f"The {company['name']}",
        f"The {company['name']} makes {company['product']}. The company was established in "
        f"{company['founded']} in {town['name']} and employs {company['employees']:,} people.")
    ask(f"How many people does the {company['name']} employ?", company["employees"],
        [company["doc"]], 1)
    ask(f"What does the {company['name']} make?", company["product"], [company["doc"]], 1)

# Two hops with arithmetic: two documents, one operation.
for bridge in bridges:
    town = bridge["town"]
    ask(f"How many years after the founding of the town of {town['name']} was the "
        f"{bridge['name']} completed?", bridge["completed"] - town["founded"],
        [town["doc"], bridge["doc"]], 2)
for first, second in zip(towns[0:70:2], towns[1:70:2]):
    ask(f"What is the combined population of the towns of {first['name']} and "
        f"{second['name']}?", first["population"] + second["population"],
        [first["doc"], second["doc"]], 2)
for peak_a, peak_b in zip(peaks[0:40:2], peaks[1:40:2]):
    ask(f"How many metres higher is the taller of Mount {peak_a['name']} and Mount "
        f"{peak_b['name']} than the other?", abs(peak_a["height"] - peak_b["height"]),
        [peak_a["doc"], peak_b["doc"]], 2)

# Chains: the first document names the entity the second one describes.
for person in people:
    ask(f"What is the population of the town where {person['name']} was born?",
        person["town"]["population"], [person["doc"], person["town"]["doc"]], 3)
for company in companies[:30]:
    ask(f"On which river lies the town where the {company['name']} was established?",
        company["town"]["river"], [company["doc"], company["town"]["doc"]], 3)

with open(HERE / "documents.jsonl", "w") as out:
    for document in documents:
        out.write(json.dumps(document) + "\n")
with open(HERE / "questions.jsonl", "w") as out:
    for question in questions:
        out.write(json.dumps(question) + "\n")
print(len(documents), "documents,", len(questions), "questions")
