"""wordstat, checkpoint 2: several files, standard input and the most frequent words."""

import argparse
import json
import sys
from collections import Counter


def positive_int(value):
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return number


def read_text(path):
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8")
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def count(text):
    lines = text.count("\n")
    if text and not text.endswith("\n"):
        lines += 1
    return {"lines": lines, "words": len(text.split()), "chars": len(text)}


def normalise(token):
    token = token.lower()
    start, end = 0, len(token)
    while start < end and not token[start].isalnum():
        start += 1
    while end > start and not token[end - 1].isalnum():
        end -= 1
    return token[start:end]


def top_words(texts, limit):
    counter = Counter()
    for text in texts:
        counter.update(word for word in map(normalise, text.split()) if word)
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return [[word, number] for word, number in ranked[:limit]]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wordstat")
    parser.add_argument("--top", type=positive_int, metavar="N")
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)
    texts = []
    for path in args.files:
        try:
            texts.append(read_text(path))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"wordstat: {path}: {exc}", file=sys.stderr)
            return 1
    per_file = [count(text) for text in texts]
    result = {key: sum(stats[key] for stats in per_file) for key in ("lines", "words", "chars")}
    if len(per_file) > 1:
        result["files"] = [{"path": path, **stats} for path, stats in zip(args.files, per_file)]
    if args.top is not None:
        result["top"] = top_words(texts, args.top)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
