#!/usr/bin/env bash
# confluent-kafka-python's own admin integration suite, tests/integration/admin (every file:
# basic operations with create/describe/delete_acls, describe operations over SASL PLAIN as
# User:sasl_user, delete_records, incremental_alter_configs, list_offsets, SCRAM users),
# against a fresh kcoord. Usage:
#   tests/peer_suites/run_confluent_kafka_admin.sh SOURCE_DIR [pytest args...]
# SOURCE_DIR is a confluent-kafka-python checkout (tests/ is taken from it); the installed
# confluent_kafka is the one tested. kafka_cluster comes from BROKERS (the PLAINTEXT
# listener); the suite's sasl_cluster fixture always starts trivup, so a copy of its
# tests/integration/conftest.py gets one override: sasl_cluster is a ByoFixture with the
# SASL settings trivup's cluster would hand out.
# The broker is configured as the suite's trivup cluster is: an authorizer with
# allow.everyone.if.no.acl.found=true and a SASL PLAIN user sasl_user.
# Extra arguments go to pytest (-k acls, -rA). Prints the suite's counts; exits 0 only when every
# test passed (a skip is not a pass).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work

src="${1:?usage: $0 CONFLUENT_KAFKA_PYTHON_SOURCE_DIR [pytest args...]}"
shift
mkdir -p "$work/suite"
cp -r "$src/tests" "$work/suite/tests"

start_kcoord 2 --sasl-user sasl_user:sasl_user \
    -c "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0" \
    -c authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \
    -c allow.everyone.if.no.acl.found=true \
    -c group.initial.rebalance.delay.ms=0 -c num.partitions=2
plain="$(kcoord_address PLAINTEXT)"
sasl="$(kcoord_address SASL_PLAINTEXT)"

cat >>"$work/suite/tests/integration/conftest.py" <<PY


@pytest.fixture(scope="session")
def sasl_cluster(request):  # (kcoord glue: the running broker's SASL_PLAINTEXT listener)
    yield create_byo_cluster({"bootstrap.servers": "$sasl",
                              "security.protocol": "SASL_PLAINTEXT",
                              "sasl.mechanism": "PLAIN", "sasl.username": "sasl_user",
                              "sasl.password": "sasl_user"})
PY

status=0
(cd "$work/suite" && BROKERS="$plain" python -m pytest tests/integration/admin \
    -p no:cacheprovider -o addopts="" --rootdir "$work/suite" --timeout 300 -q \
    --junitxml "$work/junit.xml" "$@") || status=$?
judge_suite "$work/junit.xml" "confluent-kafka-python admin suite (tests/integration/admin)" \
    || status=1
exit "$status"
