"""`python -m protocol --schema` prints the JSON Schema of the wire contract."""

import argparse
import json
import sys

from .schema import json_schema


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m protocol", description=__doc__)
    parser.add_argument("--schema", action="store_true", help="print the JSON Schema and exit")
    args = parser.parse_args(argv)
    if not args.schema:
        parser.print_help()
        return 2
    json.dump(json_schema(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
