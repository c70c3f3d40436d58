"""wordstat, checkpoint 3: JSON, YAML or text output, and stop words."""

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


def read_stopwords(path):
    words = set()
    for line in read_text(path).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word = normalise(line)
            if word:
                words.add(word)
    return words


def top_words(texts, limit, stopwords):
    counter = Counter()
    for text in texts:
        counter.update(word for word in map(normalise, text.split())
                       if word and word not in stopwords)
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return [[word, number] for word, number in ranked[:limit]]


def quote(text):
    # A JSON string is a valid YAML double-quoted scalar and always loads as a string.
    return json.dumps(text, ensure_ascii=False)


def to_yaml(result):
    lines = [f"{key}: {result[key]}" for key in ("lines", "words", "chars")]
    if "files" in result:
        lines.append("files:")
        for entry in result["files"]:
            lines.append(f"  - path: {quote(entry['path'])}")
            lines.extend(f"    {key}: {entry[key]}" for key in ("lines", "words", "chars"))
    if "top" in result:
        if result["top"]:
            lines.append("top:")
            lines.extend(f"  - [{quote(word)}, {number}]" for word, number in result["top"])
        else:
            lines.append("top: []")
    return "\n".join(lines)


def to_text(result, paths):
    entries = result.get("files") or [{"path": paths[0], **result}]
    lines = [f"{e['lines']} {e['words']} {e['chars']} {e['path']}" for e in entries]
    if len(paths) > 1:
        lines.append(f"{result['lines']} {result['words']} {result['chars']} total")
    lines.extend(f"{number} {word}" for word, number in result.get("top", []))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wordstat")
    parser.add_argument("--top", type=positive_int, metavar="N")
    parser.add_argument("--format", choices=("json", "yaml", "text"), default="json")
    parser.add_argument("--stopwords", metavar="FILE")
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)
    texts = []
    for path in args.files:
        try:
            texts.append(read_text(path))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"wordstat: {path}: {exc}", file=sys.stderr)
            return 1
    stopwords = set()
    if args.stopwords is not None:
        try:
            stopwords = read_stopwords(args.stopwords)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"wordstat: {args.stopwords}: {exc}", file=sys.stderr)
            return 1
    per_file = [count(text) for text in texts]
    result = {key: sum(stats[key] for stats in per_file) for key in ("lines", "words", "chars")}
    if len(per_file) > 1:
        result["files"] = [{"path": path, **stats} for path, stats in zip(args.files, per_file)]
    if args.top is not None:
        result["top"] = top_words(texts, args.top, stopwords)
    if args.format == "yaml":
        print(to_yaml(result))
    elif args.format == "text":
        print(to_text(result, args.files))
    else:
        print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
