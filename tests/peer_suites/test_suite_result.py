"""suite_result.py judges a peer suite's JUnit report: only a run where every test passed counts.

The script is run as the glue scripts run it, on reports shaped as pytest's --junitxml writes
them (one testsuite, a testcase per test; a skip or xfail is a <skipped> child).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("suite_result.py")

PASSED = '<testcase classname="t" name="test_ok" time="0.1" />'
FAILED = '<testcase classname="t" name="test_bad"><failure message="boom">x</failure></testcase>'
ERRORED = '<testcase classname="t" name="test_setup"><error message="fixture">x</error></testcase>'
SKIPPED = '<testcase classname="t" name="test_skip"><skipped type="pytest.skip" /></testcase>'
XFAILED = '<testcase classname="t" name="test_xf"><skipped type="pytest.xfail" /></testcase>'


def run_judge(report: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(report), "suite"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return run.returncode, run.stdout


def judge(tmp_path: Path, *cases: str) -> tuple[int, str]:
    report = tmp_path / "junit.xml"
    body = "".join(cases)
    report.write_text(
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'
    )
    return run_judge(report)


def test_every_test_passed_is_a_pass(tmp_path: Path) -> None:
    status, out = judge(tmp_path, PASSED, PASSED)
    assert status == 0
    assert out.splitlines()[0] == "suite: 2 passed, 0 failed, 0 errors, 0 skipped (of 2)"


def test_a_skip_is_not_a_pass(tmp_path: Path) -> None:
    status, out = judge(tmp_path, PASSED, SKIPPED)
    assert status == 1
    assert "1 skipped (of 2)" in out
    assert "  skipped: t::test_skip" in out


def test_an_xfail_is_not_a_pass(tmp_path: Path) -> None:
    status, out = judge(tmp_path, PASSED, XFAILED)
    assert status == 1
    assert "  skipped: t::test_xf" in out


def test_failures_and_errors_are_counted_and_listed(tmp_path: Path) -> None:
    status, out = judge(tmp_path, PASSED, FAILED, ERRORED)
    assert status == 1
    assert out.splitlines()[0] == "suite: 1 passed, 1 failed, 1 errors, 0 skipped (of 3)"
    assert "  failed: t::test_bad" in out
    assert "  errors: t::test_setup" in out


def test_a_run_that_collected_nothing_is_not_a_pass(tmp_path: Path) -> None:
    status, out = judge(tmp_path)
    assert status == 1
    assert "suite: FAILED, no test ran" in out


def test_a_missing_report_is_not_a_pass(tmp_path: Path) -> None:
    status, out = run_judge(tmp_path / "absent.xml")
    assert status == 1
    assert out.startswith("suite: NOT JUDGED")


def jest_report(tmp_path: Path, files: list[dict[str, object]]) -> Path:
    report = tmp_path / "jest.json"
    report.write_text(json.dumps({"numTotalTests": 0, "testResults": files}))
    return report


def jest_file(status: str, *tests: tuple[str, str], message: str = "") -> dict[str, object]:
    results = [{"fullName": name, "status": outcome} for name, outcome in tests]
    return {"name": "c.spec.js", "status": status, "message": message, "assertionResults": results}


def test_jest_every_test_passed_is_a_pass(tmp_path: Path) -> None:
    report = jest_report(tmp_path, [jest_file("passed", ("a", "passed"), ("b", "passed"))])
    status, out = run_judge(report)
    assert status == 0
    assert out.splitlines()[0] == "suite: 2 passed, 0 failed, 0 errors, 0 skipped (of 2)"


def test_jest_pending_and_failed_tests_are_not_a_pass(tmp_path: Path) -> None:
    tests = (("a", "passed"), ("b", "failed"), ("c", "pending"), ("d", "todo"))
    status, out = run_judge(jest_report(tmp_path, [jest_file("failed", *tests)]))
    assert status == 1
    assert out.splitlines()[0] == "suite: 1 passed, 1 failed, 0 errors, 2 skipped (of 4)"
    assert "  skipped: c.spec.js::c" in out


def test_jest_file_that_failed_without_a_failed_test_is_an_error(tmp_path: Path) -> None:
    failed_hook = jest_file("failed", ("a", "passed"), message="afterEach threw")
    status, out = run_judge(jest_report(tmp_path, [failed_hook]))
    assert status == 1
    assert "  errors: c.spec.js: afterEach threw" in out
