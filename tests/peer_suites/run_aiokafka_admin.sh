#!/usr/bin/env bash
# aiokafka's own tests/test_admin.py and tests/test_consumer.py::test_exclude_internal_topics
# against a fresh kcoord. Usage:
#   tests/peer_suites/run_aiokafka_admin.sh [AIOKAFKA_SOURCE_DIR] [pytest args...]
# AIOKAFKA_SOURCE_DIR (the argument, or else the environment variable) is an aiokafka checkout
# (its tests/ is copied; the installed aiokafka is the one tested). Without one, aiokafka is
# cloned at AIOKAFKA_REF (default: the installed version's tag) from a local bare mirror,
# $GIT_MIRRORS/aio-libs+aiokafka/repo (GIT_MIRRORS defaults to /work/.mirror), when it has that
# tag, else from GitHub: no PyPI artifact carries the tests (the 0.14.0 sdist has none), so
# where neither can be reached the suite cannot be obtained.
# Prints the suite's counts; exits 0 only when every test passed (a skip is not a pass),
# 1 when any did not, 3 (with a NOT RUN banner) when the suite could not be obtained.
#
# The suite starts Kafka in docker from its tests/conftest.py; the copy of that conftest gets
# overrides appended: kafka_server yields kcoord's host and port, the docker-only fixtures
# (ssl_folder, acl_manager, kafka_config, kerberos_utils) skip a test that uses them, and
# --docker-image names upstream CI's image (aiolibs/kafka:2.13_2.8.1), so kafka_version is 2.8.1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work
suite="aiokafka admin suite (tests/test_admin.py, test_consumer.py::test_exclude_internal_topics)"

if [[ -n "${1:-}" && -d "$1" ]]; then
    src="$1"
    shift
elif [[ -n "${AIOKAFKA_SOURCE_DIR:-}" ]]; then
    src="$AIOKAFKA_SOURCE_DIR"
else
    ref="${AIOKAFKA_REF:-v$(python -c 'import aiokafka; print(aiokafka.__version__)')}"
    src="$work/aiokafka"
    mirror="${GIT_MIRRORS:-/work/.mirror}/aio-libs+aiokafka/repo"
    url=https://github.com/aio-libs/aiokafka
    if git -C "$mirror" rev-parse -q --verify "refs/tags/$ref" >/dev/null 2>&1; then
        url="file://$mirror"
    fi
    if ! GIT_TERMINAL_PROMPT=0 timeout 120 git clone -q --depth 1 --branch "$ref" \
            "$url" "$src" >"$work/git.log" 2>&1; then
        cat "$work/git.log" >&2
        suite_not_run "$suite" "git clone of github.com/aio-libs/aiokafka at $ref failed (above); no PyPI artifact carries aiokafka's tests: give a checkout as AIOKAFKA_SOURCE_DIR"
    fi
fi
[[ -f "$src/tests/test_admin.py" && -f "$src/tests/conftest.py" ]] \
    || suite_not_run "$suite" "$src has no tests/test_admin.py and tests/conftest.py"
mkdir -p "$work/suite"
cp -r "$src/tests" "$work/suite/tests"

# The broker settings of the suite's docker image (docker/scripts/start-kafka.sh: num.partitions=2,
# auto.create.topics.enable, an ACL authorizer allowing everyone when no ACL is found,
# super.users=User:admin) and peer-suites.md's group.initial.rebalance.delay.ms=0.
start_kcoord 1 --port 0 --host 127.0.0.1 --advertised-host 127.0.0.1 \
    -c group.initial.rebalance.delay.ms=0 -c num.partitions=2 \
    -c auto.create.topics.enable=true \
    -c authorizer.class.name=kafka.security.authorizer.AclAuthorizer \
    -c allow.everyone.if.no.acl.found=true -c super.users=User:admin
port="$(kcoord_address)"
port="${port##*:}"

cat >>"$work/suite/tests/conftest.py" <<PY


# --- kcoord glue: the broker is the running kcoord, not a docker container ---
class _NeedsDocker:
    def __getattr__(self, name):
        pytest.skip("needs the suite's docker container (kcoord glue)")


@pytest.fixture(scope="session")
def kafka_server():
    yield KafkaServer("127.0.0.1", $port, 0, 0, 0, None)


@pytest.fixture(scope="session")
def ssl_folder():
    return pathlib.Path("tests/ssl_cert")


@pytest.fixture(scope="class")
def acl_manager():
    return _NeedsDocker()


@pytest.fixture(scope="class")
def kafka_config():
    return _NeedsDocker()


@pytest.fixture(scope="class")
def kerberos_utils():
    return _NeedsDocker()
PY

# The suite's pytest settings (pyproject.toml) without asyncio_mode: these tests run their
# own event loop (run_until_complete), so pytest-asyncio is not needed.
cat >"$work/suite/pytest.ini" <<'INI'
[pytest]
markers =
    ssl: Tests that require SSL certificates to run
filterwarnings =
    error
    default:unclosed event loop:ResourceWarning
INI

status=0
(cd "$work/suite" && python -m pytest tests/test_admin.py \
    tests/test_consumer.py::TestConsumerIntegration::test_exclude_internal_topics \
    -p no:cacheprovider -p no:trio --rootdir "$work/suite" \
    --docker-image aiolibs/kafka:2.13_2.8.1 --no-pull --timeout 120 -q \
    --junitxml "$work/junit.xml" "$@") || status=$?
judge_suite "$work/junit.xml" "$suite" || status=1
exit "$status"
