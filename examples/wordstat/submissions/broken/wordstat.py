"""A deliberately broken wordstat: it runs and prints JSON, but counts the wrong way.

- words are split on single spaces only (tabs, newlines, runs of spaces and even an empty
  file miscount);
- lines are just the number of newline characters (a last line without one is lost);
- chars are UTF-8 bytes, not characters;
- only one FILE and no options are understood (argparse rejects the rest with status 2).
"""

import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(prog="wordstat")
    parser.add_argument("file")
    args = parser.parse_args()
    try:
        with open(args.file, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        print(f"wordstat: {exc}", file=sys.stderr)
        return 1
    text = data.decode("utf-8", errors="replace")
    words = len(text.split(" "))
    print(json.dumps({"lines": text.count("\n"), "words": words, "chars": len(data)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
