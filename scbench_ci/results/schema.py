"""The shipped JSON schemas of results.json: the versions this scbench-ci reads, validators that
take only what the schema means (no 3.0 for an integer, no nan for a number), the parts a
streamed results.json is checked by, and an earlier version's document as the current one has it.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from scbench_ci.foundation.scbench_runner import FORMER_SCBENCH
from scbench_ci.trust.names import NAME_PATTERN, name_problem
from scbench_ci.trust.strict_json import path_of

SCHEMA_VERSION = 8
SCHEMA_FILES = {
    1: "results.v1.schema.json",
    2: "results.v2.schema.json",
    3: "results.v3.schema.json",
    4: "results.v4.schema.json",
    5: "results.v5.schema.json",
    6: "results.v6.schema.json",
    7: "results.v7.schema.json",
    8: "results.schema.json",
}


def schema_problem(document: Any, schema: Mapping[str, Any]) -> str | None:
    """Where the document first breaks the schema, and how; None when it does not."""
    validator = _StrictValidator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return None
    where = path_of(error.absolute_path) or "the document"
    return f"{where}: {_short(error)}"


def upgraded(document: Mapping[str, Any], version: int) -> Mapping[str, Any]:
    """A document of schema `version` (held to that version's schema) as the current version
    has it."""
    if version == 1:
        document = _upgrade_v1(document)
    if version <= 2:
        document = _upgrade_v2(document)
    if version <= 3:
        document = _upgrade_v3(document)
    if version <= 4:
        document = _upgrade_v4(document)
    if version <= 5:
        document = _upgrade_v5(document)
    if version <= 6:
        document = _upgrade_v6(document)
    if version <= 7:
        document = _upgrade_v7(document)
    return document


def upgraded_checkpoint(document: Any) -> Any:
    """A checkpoint's own result.json as the current version has it: one written before
    version 4 has no notices, one written before version 7 no quality, one written before
    version 8 no count of failures of the network."""
    if isinstance(document, dict) and "notices" not in document:
        document = {**document, "notices": []}
    if isinstance(document, dict) and "quality" not in document:
        document = {**document, "quality": None}
    if isinstance(document, dict) and "network" not in document:
        document = {**document, "network": None}
    return document


def _short(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern" and error.validator_value == NAME_PATTERN:
        refused = name_problem(str(error.instance), len(str(error.instance)))
        if refused is not None:
            return refused
    message = str(error.message)
    return message if len(message) <= 300 else message[:299] + "…"


def _upgrade_v1(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 1 document (one problem) as version 2 has it."""
    checkpoints = [
        {
            **checkpoint,
            "submission": "",
            "artifacts": "",
            "started_at": document["started_at"],
            "fingerprint": None,
            "reused": False,
            "phases": {},
        }
        for checkpoint in document["checkpoints"]
    ]
    return {
        **document,
        "schema_version": 2,
        "jobs": 1,
        "problems": [
            {
                **document["problem"],
                "path": "",
                "passed": document["passed"],
                "infrastructure_failure": document["infrastructure_failure"],
                "checkpoints": checkpoints,
            }
        ],
    }


def _upgrade_v2(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 2 document as version 3 has it: nothing was flaky, rerun or repeated,
    there was no comparison, and it was no check."""

    def counts(old: Mapping[str, Any]) -> dict[str, Any]:
        return {**old, "flaky": 0}

    def checkpoint(old: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **old,
            "totals": counts(old["totals"]),
            "groups": {name: counts(value) for name, value in old["groups"].items()},
            "tests": [{**test, "reruns": 0, "repeat": None} for test in old["tests"]],
        }

    return {
        **document,
        "schema_version": 3,
        "reruns": 0,
        "repeat": 1,
        "flaky_passes": False,
        "comparison": None,
        "problems": [
            {
                **problem,
                "checkpoint_order": [c["name"] for c in problem["checkpoints"]],
                "checkpoints": [checkpoint(c) for c in problem["checkpoints"]],
                "check": None,
            }
            for problem in document["problems"]
        ],
    }


def _upgrade_v3(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 3 document as version 4 has it: its benign notices were among its
    warnings, where they stay."""
    return {
        **document,
        "schema_version": 4,
        "problems": [
            {
                **problem,
                "checkpoints": [{**c, "notices": []} for c in problem["checkpoints"]],
            }
            for problem in document["problems"]
        ],
    }


def _upgrade_v4(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 4 document as version 5 has it: it carried no history."""
    return {**document, "schema_version": 5, "history": None, "trends": None}


def _upgrade_v5(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 5 document as version 6 has it: its checkpoints say no image (an
    optional field) and its `tool_versions.python` was the host's."""
    versions = dict(document["tool_versions"])
    if "python" in versions:
        versions["host-python"] = versions.pop("python")
    return {**document, "schema_version": 6, "tool_versions": versions}


def _upgrade_v6(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 6 document as version 7 has it: its checkpoints were not measured."""
    return {
        **document,
        "schema_version": 7,
        "problems": [
            {
                **problem,
                "checkpoints": [{**c, "quality": None} for c in problem["checkpoints"]],
            }
            for problem in document["problems"]
        ],
    }


def _upgrade_v7(document: Mapping[str, Any]) -> dict[str, Any]:
    """A schema_version 7 document as version 8 has it: it was judged by the paper's runner's
    rules, the only ones before `--scbench`, and its checkpoints did not count the failures of
    the network apart (the reader derives them from the tests all the same)."""
    return {
        **document,
        "schema_version": SCHEMA_VERSION,
        "scbench": FORMER_SCBENCH,
        "problems": [
            {
                **problem,
                "checkpoints": [{**c, "network": None} for c in problem["checkpoints"]],
            }
            for problem in document["problems"]
        ],
    }


def _is_integer(_: object, value: object) -> bool:
    """An int, never a bool (`True` is an int in Python) nor a float (`3.0`)."""
    return type(value) is int


def _is_number(_: object, value: object) -> bool:
    return type(value) is int or (type(value) is float and math.isfinite(value))


# jsonschema's `integer` takes 3.0, and `number` takes inf and nan.
_StrictValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)


@cache
def schema(version: int) -> dict[str, Any]:
    text = resources.files("scbench_ci").joinpath("schema", SCHEMA_FILES[version]).read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def schema_of(part: str) -> dict[str, Any]:
    """The current schema's definition `part` on its own, or one of the parts a streamed
    results.json is checked by: `envelope` (no problems), `problem_head` (no checkpoints)."""
    full = schema(SCHEMA_VERSION)
    defs = copy.deepcopy(full["$defs"])
    if part == "envelope":
        envelope = copy.deepcopy(full)
        envelope["properties"]["problems"] = {"type": "array", "maxItems": 0}
        return envelope
    if part == "problem_head":
        defs["problem_head"] = copy.deepcopy(defs["problem"])
        defs["problem_head"]["properties"]["checkpoints"] = {"type": "array", "maxItems": 0}
    return {"$schema": full["$schema"], "$defs": defs, "$ref": f"#/$defs/{part}"}


@cache
def validator(part: str) -> Any:
    return _StrictValidator(schema_of(part))
