"""What fails a run (`--fail-on`): a mode (its verdict, only its regressions, or never) and
limits on the code-quality measures, as the option's text is given and as the exit status reads it
back."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from scbench_ci.foundation.option_values import BadValue, did_you_mean

FAIL_ON = ("policy", "regressions", "never")
DEFAULT_FAIL_ON = "policy"
QUALITY_GATED = ("erosion", "verbosity")
"""The code-quality measures `--fail-on` can hold to a limit (`erosion>0.5`)."""
IF_MEASURED = "if-measured"
"""The word that holds the quality limits only to what was measured."""
FAIL_ON_HELP = (
    "policy: fail when a checkpoint fails its policy; regressions: only when a test that passed "
    "in the baseline fails now (for suites that never pass completely); never: only on an "
    "infrastructure failure; followed by any of erosion>X, verbosity>X (X from 0 to 1): also "
    "fail when a checkpoint's measure is above X, and erosion>+X, verbosity>+X: when it rose by "
    "more than X since the baseline's same checkpoint. With a limit, a checkpoint whose measure "
    "is missing, or that left a source file of the submission unmeasured, fails too (and one "
    "whose baseline checkpoint was not measured, for a rise), unless if-measured is given: then "
    "the limits hold only the figures that were measured"
)
_LIMIT = re.compile(r"(?P<measure>[a-z_]+)>(?P<rise>\+)?(?P<most>[0-9.]+)")


@dataclass(frozen=True)
class QualityLimit:
    """`erosion>0.5`: a checkpoint whose erosion is above 0.5 fails the run; `erosion>+0.05`
    (`rise`): one whose erosion rose by more than 0.05 since the baseline's same checkpoint."""

    measure: str
    most: float
    rise: bool = False

    @property
    def text(self) -> str:
        return f"{self.measure}>{'+' if self.rise else ''}{self.most:g}"


def parse_fail_on(option: str, value: str) -> str:
    """A mode (policy, regressions, never; policy when none is given), quality limits and
    `if-measured`, separated by spaces, as one normalized text; a BadValue naming the word that
    is wrong."""
    words = value.split()
    modes = [word for word in words if word in FAIL_ON]
    if len(modes) > 1:
        raise BadValue(option, f"give one of {', '.join(FAIL_ON)}, not {' and '.join(modes)}")
    limits = []
    for word in words:
        if word in FAIL_ON or word == IF_MEASURED:
            continue
        limits.append(_limit(option, word))
    kinds = [(limit.measure, limit.rise) for limit in limits]
    if len(set(kinds)) < len(kinds):
        raise BadValue(option, "a quality limit is given twice for one measure")
    if not words:
        raise BadValue(option, f"'' is not one of {', '.join(FAIL_ON)}")
    lenient = IF_MEASURED in words
    if lenient and not limits:
        raise BadValue(option, f"{IF_MEASURED} qualifies quality limits, and none is given")
    return " ".join(
        [
            modes[0] if modes else DEFAULT_FAIL_ON,
            *(limit.text for limit in limits),
            *([IF_MEASURED] if lenient else []),
        ]
    )


def _limit(option: str, word: str) -> QualityLimit:
    found = _LIMIT.fullmatch(word)
    if found is None:
        hint = did_you_mean(word, FAIL_ON)
        raise BadValue(
            option,
            f"{word!r} is not one of {', '.join(FAIL_ON)}, nor a quality limit such as "
            f"erosion>0.5{hint}",
        )
    if found["measure"] not in QUALITY_GATED:
        raise BadValue(
            option,
            f"{found['measure']!r} is not a measure a limit can be set on "
            f"({', '.join(QUALITY_GATED)})",
        )
    try:
        most = float(found["most"])
    except ValueError:
        raise BadValue(option, f"{found['most']!r} in {word!r} is not a number") from None
    if not (math.isfinite(most) and 0 <= most < 1):
        raise BadValue(option, f"{word!r}: the limit must be from 0 to less than 1")
    return QualityLimit(found["measure"], most, rise=found["rise"] is not None)


def fail_on_mode(fail_on: str) -> str:
    """policy, regressions or never."""
    return next((word for word in fail_on.split() if word in FAIL_ON), DEFAULT_FAIL_ON)


def quality_limits(fail_on: str) -> tuple[QualityLimit, ...]:
    return tuple(
        _limit("--fail-on", word)
        for word in fail_on.split()
        if word not in FAIL_ON and word != IF_MEASURED
    )
