"""wordstat, checkpoint 1: count the lines, words and characters of one UTF-8 file."""

import argparse
import json
import sys


def read_text(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def count(text):
    lines = text.count("\n")
    if text and not text.endswith("\n"):
        lines += 1
    return {"lines": lines, "words": len(text.split()), "chars": len(text)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wordstat")
    parser.add_argument("file")
    args = parser.parse_args(argv)
    try:
        text = read_text(args.file)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"wordstat: {args.file}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(count(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
