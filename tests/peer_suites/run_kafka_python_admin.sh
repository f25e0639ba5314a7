#!/usr/bin/env bash
# kafka-python's own admin integration suite (test/integration/test_admin_integration.py)
# against a fresh kcoord. Usage:
#   tests/peer_suites/run_kafka_python_admin.sh [KAFKA_PYTHON_SOURCE_DIR] [pytest args...]
# The suite is taken from KAFKA_PYTHON_SOURCE_DIR (a checkout or an unpacked sdist) or, without
# one, from the sdist on PyPI of the installed kafka-python (`pip download`; it carries
# test/integration but not test/__init__.py or test/service.py, which kcoord supplies:
# kafka_python_test_init.py and kafka_python_service.py). Only the suite's test/ is copied:
# the installed kafka-python is the one tested.
# Prints the suite's counts; exits 0 only when every test passed (a skip is not a pass),
# 1 when any did not, 3 (with a NOT RUN banner) when the suite could not be obtained.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work
suite="kafka-python admin suite (test/integration/test_admin_integration.py)"

src="${1:-}"
if [[ -n "$src" && -d "$src" ]]; then
    shift
else
    version="$(python -c 'from importlib.metadata import version; print(version("kafka-python"))')"
    mkdir -p "$work/sdist"
    if ! timeout 300 python -m pip download -q --no-deps --no-binary :all: \
            "kafka-python==$version" -d "$work/sdist" >"$work/pip.log" 2>&1; then
        cat "$work/pip.log" >&2
        suite_not_run "$suite" "pip download of the kafka-python $version sdist failed (above)"
    fi
    tar -xzf "$work/sdist/kafka_python-$version.tar.gz" -C "$work/sdist"
    src="$work/sdist/kafka_python-$version"
fi
[[ -f "$src/test/integration/test_admin_integration.py" ]] \
    || suite_not_run "$suite" "$src has no test/integration/test_admin_integration.py"
mkdir -p "$work/suite"
cp -r "$src/test" "$work/suite/test"
[[ -f "$work/suite/test/__init__.py" ]] || cp "$here/kafka_python_test_init.py" "$work/suite/test/__init__.py"
[[ -f "$work/suite/test/service.py" ]] || cp "$here/kafka_python_service.py" "$work/suite/test/service.py"
# The suite's pytest settings (its pyproject.toml) without the DEBUG log capture.
cat >"$work/suite/pytest.ini" <<'INI'
[pytest]
addopts = --durations=10 --timeout=300 --timeout-method=thread
INI

# The broker settings the suite's own Kafka uses (peer-suites.md; its fixtures.py gives Kafka 4
# the StandardAuthorizer with allow.everyone.if.no.acl.found=true); its server.properties
# sets advertised.listeners, so kcoord is given its advertised host.
start_kcoord 1 --port 0 --host 127.0.0.1 --advertised-host 127.0.0.1 \
    -c group.initial.rebalance.delay.ms=0 -c num.partitions=2 \
    -c group.min.session.timeout.ms=1000 \
    -c authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \
    -c allow.everyone.if.no.acl.found=true
port="$(kcoord_address)"
port="${port##*:}"

mkdir -p "$work/kafka-root"
status=0
(cd "$work/suite" && KAFKA_URI="tcp://127.0.0.1:$port" KAFKA_VERSION=4.2.0 \
    KAFKA_ROOT="$work/kafka-root" KCOORD_LOG="$work/kcoord.err" PYTHONPATH="$work/suite" \
    python -m pytest test/integration/test_admin_integration.py -p no:cacheprovider -p no:trio \
    --rootdir "$work/suite" --timeout 120 -q --junitxml "$work/junit.xml" "$@") || status=$?
judge_suite "$work/junit.xml" "$suite" || status=1
exit "$status"
