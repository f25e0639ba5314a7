#!/usr/bin/env bash
# kafka-python's own admin integration suite (test/integration/test_admin_integration.py)
# against a fresh kcoord. Usage:
#   tests/peer_suites/run_kafka_python_admin.sh [KAFKA_PYTHON_SOURCE_DIR] [pytest args...]
# Without a source directory, kafka-python is cloned at KAFKA_PYTHON_REF (default 3.0.11).
# Prints pytest's summary line; exits with pytest's status.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work

src="${1:-}"
if [[ -n "$src" && -d "$src" ]]; then
    shift
else
    src="$work/kafka-python"
    git clone -q --depth 1 --branch "${KAFKA_PYTHON_REF:-3.0.11}" \
        https://github.com/dpkp/kafka-python "$src"
fi

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
cd "$src"
KAFKA_URI="tcp://127.0.0.1:$port" KAFKA_VERSION=4.2.0 KAFKA_ROOT="$work/kafka-root" \
    PYTHONPATH="$src" python -m pytest test/integration/test_admin_integration.py \
    -p no:cacheprovider -o addopts="" --timeout 120 -q "$@"
