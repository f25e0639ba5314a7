"""Judge a peer suite's run from pytest's JUnit XML: only a run where every test passed counts.

    python tests/peer_suites/suite_result.py JUNIT_XML "SUITE NAME"

Prints one line, ``SUITE NAME: N passed, N failed, N errors, N skipped (of N)``, lists the
tests that did not pass, and exits 0 only when at least one test ran and every test passed:
a skip (or xfail) is not a pass, and neither is a run that collected nothing.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def main(argv: list[str]) -> int:
    path, name = argv[1], argv[2]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        print(f"{name}: NOT JUDGED, no readable JUnit report ({error})")
        return 1
    outcomes: dict[str, list[str]] = {"passed": [], "failed": [], "errors": [], "skipped": []}
    for case in root.iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None:
            outcomes["failed"].append(test)
        elif case.find("error") is not None:
            outcomes["errors"].append(test)
        elif case.find("skipped") is not None:
            outcomes["skipped"].append(test)
        else:
            outcomes["passed"].append(test)
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
