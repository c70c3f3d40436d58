import sys

args = sys.argv[1:]
upper = "--upper" in args
for arg in args:
    if arg.startswith("--") and arg != "--upper":
        print(f"unknown option {arg}", file=sys.stderr)
        sys.exit(2)
for word in args:
    if word != "--upper":
        print(word.upper() if upper else word)
