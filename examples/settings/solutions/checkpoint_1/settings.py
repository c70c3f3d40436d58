import argparse
import sys

import yaml


def main() -> int:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    get = commands.add_parser("get")
    get.add_argument("file")
    get.add_argument("key")
    get.add_argument("--default")
    args = parser.parse_args()
    with open(args.file) as handle:
        value = yaml.safe_load(handle)
    for part in args.key.split("."):
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError, ValueError, TypeError):
            if args.default is None:
                print(f"error: no key {args.key}", file=sys.stderr)
                return 1
            value = args.default
            break
    print(yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("\n..."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
