"""shout [--exclaim] WORD...: prints each word in capitals, one a line, with "!" if asked."""

import sys


def main(argv):
    exclaim = "--exclaim" in argv
    words = [arg for arg in argv if arg != "--exclaim"]
    if not words:
        print("usage: shout [--exclaim] WORD...", file=sys.stderr)
        return 2
    for word in words:
        print(word.upper() + ("!" if exclaim else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
