"""Greets each name given on the command line."""

import re
import sys

NAME = re.compile(r"[A-Za-z-]+")


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: greet NAME...", file=sys.stderr)
        return 2
    for name in argv:
        if not NAME.fullmatch(name):
            print(f"invalid name: {name}", file=sys.stderr)
            return 2
    for name in argv:
        print(f"hello, {name}!")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
