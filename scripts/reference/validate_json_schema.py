#!/usr/bin/env python3
"""Checks JSON texts against JSON schemas with the `jsonschema` package (Draft 2020-12), the
trusted reference for Loupe's grammar-constrained decoding (GrammarTests).

Reads JSON lines {"schema": {...}, "text": "..."} on stdin; writes one line per input: "ok",
or "invalid: <why>" when the text is not JSON or not valid for the schema.

  .venv-peers/bin/python scripts/reference/validate_json_schema.py < cases.jsonl
"""
import json
import sys

from jsonschema import Draft202012Validator


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        try:
            value = json.loads(case["text"])
        except ValueError as error:
            print("invalid: not JSON: %s" % error)
            continue
        errors = sorted(Draft202012Validator(case["schema"]).iter_errors(value), key=str)
        print("ok" if not errors else "invalid: %s" % errors[0].message.replace("\n", " "))


if __name__ == "__main__":
    main()
