"""Which checkpoints of a run get a section of their own in its summary (`--details`), chosen by
their results: those that fail, those that fail or changed since the baseline, or all
(outputs/summary_view.detailed selects them)."""

from __future__ import annotations

DETAILS = ("failed", "changed", "all")
DEFAULT_DETAILS = "changed"
DETAILS_HELP = (
    "which checkpoints get a section of their own in the summary. failed: those that fail "
    "the policy; changed: those, and those whose tests changed since the baseline; all: every "
    "checkpoint"
)
