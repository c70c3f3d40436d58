"""Greets each name given on the command line; `--shout` first greets them in upper case."""

import re
import sys

NAME = re.compile(r"[A-Za-z-]+")


def main(argv: list[str]) -> int:
    shout = argv[:1] == ["--shout"]
    names = argv[1:] if shout else argv
    if not names:
        print("usage: greet [--shout] NAME...", file=sys.stderr)
        return 2
    for name in names:
        if not NAME.fullmatch(name):
            print(f"invalid name: {name}", file=sys.stderr)
            return 2
    for name in names:
        greeting = f"hello, {name}!"
        print(greeting.upper() if shout else greeting)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
