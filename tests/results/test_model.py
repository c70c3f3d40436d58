from scbench_ci.results.model import INFRASTRUCTURE_KINDS, FailureKind


def test_only_causes_outside_the_submission_are_infrastructure() -> None:
    assert {FailureKind.INFRASTRUCTURE, FailureKind.INTERNAL} == INFRASTRUCTURE_KINDS
