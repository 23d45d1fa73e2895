#!/usr/bin/env python3
"""Removes environment variables from an Nsight Systems SQLite export, in place.

nsys records every process's environment: as META_DATA_CAPTURE rows named
PROCESS_n:ENVIRONMENT_VARIABLE, as whole NUL-separated environment blocks in StringIds (one per
process it saw), and as TARGET_INFO_SYSTEM_ENV's DeviceEnvironment (';'-separated from 2023). Environments can hold
secrets (one of these exports held a PMI_SHARED_SECRET), so the committed fixtures keep none:
the rows are deleted, the blocks replaced by '[environment removed]' (ids kept, so nothing
that names them dangles), and the file vacuumed so no old page keeps the text.

Usage: python3 scrub.py FILE.sqlite [...]
"""

import re
import sqlite3
import sys

ENTRY = re.compile(rb"(?:^|[\x00;])[A-Za-z_][A-Za-z0-9_]*=")
REMOVED = "[environment removed]"


def is_environment(value):
    """A NUL- or ';'-separated block of three or more NAME=value entries (bytes: some strings in these
    exports are not UTF-8)."""
    return value is not None and len(ENTRY.findall(value)) >= 3


def scrub(path):
    db = sqlite3.connect(path)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    counts = {}
    if "META_DATA_CAPTURE" in tables:
        cursor = db.execute("DELETE FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE'")
        counts["META_DATA_CAPTURE rows deleted"] = cursor.rowcount
    for table, key in (("StringIds", "id"), ("TARGET_INFO_SYSTEM_ENV", "rowid")):
        if table not in tables:
            continue
        rows = [row for row in db.execute(f"SELECT {key}, CAST(value AS BLOB) FROM {table}") if is_environment(row[1])]
        db.executemany(f"UPDATE {table} SET value = ? WHERE {key} = ?", [(REMOVED, row[0]) for row in rows])
        counts[f"{table} environment blocks replaced"] = len(rows)
    db.commit()
    db.execute("VACUUM")
    db.close()
    return counts


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(path, scrub(path))
