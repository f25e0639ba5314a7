#!/usr/bin/env bash
# @confluentinc/kafka-javascript's own test/promisified/consumer/commit.spec.js against a fresh
# kcoord. Usage:
#   tests/peer_suites/run_kafka_javascript_commit.sh [jest args...]
# The suite ships in the npm package. CKJS_DIR names a directory where
#   CKJS_LINKING=dynamic npm install @confluentinc/kafka-javascript@VERSION jest@29
# was run (the native module builds from the package's bundled librdkafka, and needs a C/C++
# toolchain and the zlib, OpenSSL, zstd and lz4 headers: apt-get install zlib1g-dev libssl-dev
# libzstd-dev liblz4-dev); without CKJS_DIR the script runs that install itself in its scratch
# folder (CKJS_VERSION, default 1.10.0; the build takes minutes). TEST_CONSUMER_GROUP_PROTOCOL
# (classic, the suite's default, or consumer for KIP-848) is passed to the suite.
# Prints the suite's counts; exits 0 only when every test passed (a skip is not a pass),
# 1 when any did not, 3 (with a NOT RUN banner) when the package could not be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work
protocol="${TEST_CONSUMER_GROUP_PROTOCOL:-classic}"
suite="kafka-javascript consumer/commit.spec.js ($protocol group protocol)"

command -v npm >/dev/null || suite_not_run "$suite" "npm is not installed"
ckjs="${CKJS_DIR:-}"
if [[ -z "$ckjs" ]]; then
    ckjs="$work/ckjs"
    mkdir -p "$ckjs"
    echo '{"private": true}' >"$ckjs/package.json"
    if ! (cd "$ckjs" && CKJS_LINKING=dynamic timeout 1800 npm install --no-audit --no-fund \
            "@confluentinc/kafka-javascript@${CKJS_VERSION:-1.10.0}" jest@29 \
            >"$work/npm.log" 2>&1); then
        tail -40 "$work/npm.log" >&2
        suite_not_run "$suite" "npm install of @confluentinc/kafka-javascript failed (above)"
    fi
fi
package="$ckjs/node_modules/@confluentinc/kafka-javascript"
[[ -f "$package/build/Release/confluent-kafka-javascript.node" ]] \
    || suite_not_run "$suite" "$package has no built native module"
[[ -f "$package/test/promisified/consumer/commit.spec.js" ]] \
    || suite_not_run "$suite" "$package has no test/promisified/consumer/commit.spec.js"

# jest does not collect tests under node_modules: the suite runs from a copy of the package's
# JavaScript and native module (and the bundled librdkafka it links with), beside a link to
# the installed node_modules for its dependencies.
mkdir -p "$work/js/pkg/build/Release" "$work/js/pkg/build/deps"
cp -r "$package/lib" "$package/test" "$package/librdkafka.js" "$package/package.json" \
    "$work/js/pkg/"
cp "$package/build/Release/confluent-kafka-javascript.node" "$work/js/pkg/build/Release/"
cp -P "$package"/build/deps/librdkafka*.so* "$work/js/pkg/build/deps/"
ln -s "$ckjs/node_modules" "$work/js/node_modules"
echo 'module.exports = {};' >"$work/js/pkg/jest.config.js"

# The broker settings of the suite's own cluster (peer-suites.md).
start_kcoord 1 --port 0 --host 127.0.0.1 --advertised-host 127.0.0.1 \
    -c group.initial.rebalance.delay.ms=0 -c num.partitions=4 \
    -c group.consumer.min.session.timeout.ms=6000 -c group.consumer.session.timeout.ms=10000
address="$(kcoord_address)"

status=0
(cd "$work/js/pkg" && KAFKA_HOST="$address" TEST_CONSUMER_GROUP_PROTOCOL="$protocol" \
    node "$ckjs/node_modules/jest/bin/jest.js" --runInBand --ci \
    --json --outputFile "$work/jest.json" test/promisified/consumer/commit.spec.js "$@") \
    || status=$?
judge_suite "$work/jest.json" "$suite" || status=1
exit "$status"
