"""shout WORD...: prints each word in capitals, one a line."""

import sys


def main(argv):
    if not argv:
        print("usage: shout WORD...", file=sys.stderr)
        return 2
    for word in argv:
        print(word.upper())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
