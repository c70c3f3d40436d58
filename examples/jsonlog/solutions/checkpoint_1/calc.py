import json
import operator
import sys

import yaml

OPERATIONS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}


def number(text):
    value = yaml.safe_load(text)
    if isinstance(value, str):
        value = int(value, 0)
    return value


def main():
    op, a, b = sys.argv[1], number(sys.argv[2]), number(sys.argv[3])
    try:
        result = OPERATIONS[op](a, b)
    except ArithmeticError as error:
        json.dump({"op": op, "error": str(error)}, sys.stderr)
        return 1
    if isinstance(result, float) and result.is_integer():
        result = int(result)
    print(result)
    json.dump({"op": op, "args": [a, b], "result": result}, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
