"""Validates ATIF documents with the `atif` package's own models (ATIF v1.8, from PyPI).

Usage: python3 examples/validate_atif.py FILE.jsonl|trajectory.json ...
Each line of a .jsonl file (or a whole .json file) is one document; every one is checked with
`atif.Trajectory.model_validate`. Prints how many passed and the first errors; exits 1 if any
document is invalid or none was read.
"""

import json
import sys

from atif import Trajectory


def documents(path):
    with open(path, encoding="utf-8") as file:
        if path.endswith(".jsonl"):
            for number, line in enumerate(file, 1):
                if line.strip():
                    yield f"{path}:{number}", json.loads(line)
        else:
            yield path, json.load(file)


def main(paths):
    valid = invalid = 0
    for path in paths:
        for where, document in documents(path):
            try:
                Trajectory.model_validate(document)
                valid += 1
            except Exception as error:  # pydantic's ValidationError, with every field named
                invalid += 1
                if invalid <= 5:
                    print(f"{where}: {error}")
    print(f"{valid} valid ATIF documents, {invalid} invalid")
    return 0 if valid and not invalid else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
