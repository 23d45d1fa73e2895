"""Validates ATIF files against the `atif` package's pydantic models (the format's reference
implementation): `loupe trace export ID --format atif -o F` then this script on F.

Usage: .venv-fixtures/bin/python scripts/reference/validate_atif.py FILE...   (pip install atif)"""
import json
import sys

from atif import Trajectory

failed = 0
for path in sys.argv[1:]:
    try:
        trajectory = Trajectory.model_validate(json.load(open(path)))
        print(f"{path}: valid {trajectory.schema_version}, {len(trajectory.steps)} steps")
    except Exception as error:  # noqa: BLE001 — report every file
        failed += 1
        print(f"{path}: INVALID\n{error}")
sys.exit(1 if failed else 0)
