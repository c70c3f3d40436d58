"""Imported by the hostile startup hooks: forces every test's report to `passed`."""

import _pytest.reports

_original = _pytest.reports.TestReport.from_item_and_call


def _forced(item, call):
    report = _original(item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


_pytest.reports.TestReport.from_item_and_call = staticmethod(_forced)
