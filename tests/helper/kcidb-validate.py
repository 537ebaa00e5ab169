#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# kcidb-validate.py FILE... -- validate KCIDB documents against the official v5.3 schema
#
# Uses python3-jsonschema (Draft 7, with its format checker) and the schema in
# shared/formats/kcidb/ ($LABD_SHARED, default: the shared/ folder beside the
# repository), else the same schema in tests/data/kcidb/.  Prints "FILE: ok" or every error; exit status 1 when a file is
# invalid, 2 when the validator or the schema is missing.
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("kcidb-validate: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
shared = os.environ.get("LABD_SHARED", os.path.join(os.path.dirname(top), "shared"))
schema_path = os.path.join(shared, "formats", "kcidb", "kcidb-io.schema.v5.3.json")
if not os.path.exists(schema_path):
    # a clean clone without the shared reference folder: the copy in tests/data
    schema_path = os.path.join(top, "tests", "data", "kcidb", "kcidb-io.schema.v5.3.json")
try:
    with open(schema_path) as f:
        schema = json.load(f)
except OSError as e:
    print(f"kcidb-validate: cannot read the schema: {e}", file=sys.stderr)
    sys.exit(2)

validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
status = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        status = 1
        for e in errors:
            print(f"{path}: {'/'.join(str(p) for p in e.path)}: {e.message[:300]}")
    else:
        print(f"{path}: ok")
sys.exit(status)
