"""Judge a peer suite's run from its report: only a run where every test passed counts.

    python tests/peer_suites/suite_result.py REPORT "SUITE NAME"

REPORT is pytest's JUnit XML (``--junitxml``) or, when its name ends in ``.json``, jest's
JSON (``--json --outputFile``).

Prints one line, ``SUITE NAME: N passed, N failed, N errors, N skipped (of N)``, lists the
tests that did not pass, and exits 0 only when at least one test ran and every test passed:
a skip (or xfail) is not a pass, and neither is a run that collected nothing.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

Outcomes = dict[str, list[str]]


def junit_outcomes(path: str) -> Outcomes:
    """Each testcase of pytest's JUnit XML: a <failure>, <error> or <skipped> child, or passed."""
    outcomes: Outcomes = {"passed": [], "failed": [], "errors": [], "skipped": []}
    for case in ET.parse(path).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None:
            outcomes["failed"].append(test)
        elif case.find("error") is not None:
            outcomes["errors"].append(test)
        elif case.find("skipped") is not None:
            outcomes["skipped"].append(test)
        else:
            outcomes["passed"].append(test)
    return outcomes


def jest_outcomes(path: str) -> Outcomes:
    """Each assertion result of jest's JSON; a test file that failed without a failed test
    (it did not load, or a hook threw) is an error."""
    outcomes: Outcomes = {"passed": [], "failed": [], "errors": [], "skipped": []}
    with open(path) as report:
        results = json.load(report)["testResults"]
    for file in results:
        statuses = []
        for test in file["assertionResults"]:
            status = test["status"]
            statuses.append(status)
            outcome = {"passed": "passed", "failed": "failed"}.get(status, "skipped")
            outcomes[outcome].append(f"{file['name']}::{test['fullName']}")
        if file["status"] == "failed" and "failed" not in statuses:
            outcomes["errors"].append(f"{file['name']}: {file.get('message', '')[:200]}")
    return outcomes


def main(argv: list[str]) -> int:
    path, name = argv[1], argv[2]
    try:
        outcomes = jest_outcomes(path) if path.endswith(".json") else junit_outcomes(path)
    except (OSError, ValueError, KeyError, ET.ParseError) as error:
        print(f"{name}: NOT JUDGED, no readable report ({error!r})")
        return 1
    total = sum(len(tests) for tests in outcomes.values())
    counts = ", ".join(f"{len(tests)} {outcome}" for outcome, tests in outcomes.items())
    print(f"{name}: {counts} (of {total})")
    for outcome in ("failed", "errors", "skipped"):
        for test in outcomes[outcome]:
            print(f"  {outcome}: {test}")
    if total == 0:
        print(f"{name}: FAILED, no test ran")
        return 1
    return 0 if len(outcomes["passed"]) == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
