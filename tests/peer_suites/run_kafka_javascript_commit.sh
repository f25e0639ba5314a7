#!/usr/bin/env bash
# @confluentinc/kafka-javascript's own test/promisified/consumer/commit.spec.js against a fresh
# kcoord. Usage:
#   tests/peer_suites/run_kafka_javascript_commit.sh [jest args...]
# CKJS_DIR is a directory where
#   CKJS_LINKING=dynamic npm install @confluentinc/kafka-javascript@VERSION jest@29
# was run; when it holds no built package the script runs that install there (default: in its
# scratch folder; CKJS_VERSION, default 1.10.0). The native module builds from the package's
# bundled librdkafka (minutes) and needs a C/C++ toolchain and the zlib, OpenSSL, zstd and lz4
# headers: apt-get install zlib1g-dev libssl-dev libzstd-dev liblz4-dev.
# The npm package does not ship its tests: test/promisified comes from CKJS_SOURCE_DIR (a
# confluent-kafka-javascript checkout at the package's tag) or, without one, a GitHub clone
# of tag v<installed version>. TEST_CONSUMER_GROUP_PROTOCOL (classic, the suite's default,
# or consumer for KIP-848) is passed to the suite.
# Prints the suite's counts; exits 0 only when every test passed (a skip is not a pass),
# 1 when any did not, 3 (with a NOT RUN banner) when the package or the suite could not be
# obtained.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/peer_suites/start_kcoord.sh
. "$here/start_kcoord.sh"  # $work, and the trap that kills kcoord and removes $work
protocol="${TEST_CONSUMER_GROUP_PROTOCOL:-classic}"
suite="kafka-javascript consumer/commit.spec.js ($protocol group protocol)"

command -v npm >/dev/null || suite_not_run "$suite" "npm is not installed"
ckjs="${CKJS_DIR:-$work/ckjs}"
package="$ckjs/node_modules/@confluentinc/kafka-javascript"
# The suite's source first: a failed clone should not cost a build.
if [[ -f "$package/package.json" ]]; then
    version="$(node -p "require('$package/package.json').version")"
else
    version="${CKJS_VERSION:-1.10.0}"
fi
if [[ -n "${CKJS_SOURCE_DIR:-}" ]]; then
    tests="$CKJS_SOURCE_DIR/test"
else
    tests="$work/ckjs-source/test"
    if ! GIT_TERMINAL_PROMPT=0 timeout 120 git clone -q --depth 1 --branch "v$version" \
            https://github.com/confluentinc/confluent-kafka-javascript "$work/ckjs-source" \
            >"$work/git.log" 2>&1; then
        cat "$work/git.log" >&2
        suite_not_run "$suite" "git clone of github.com/confluentinc/confluent-kafka-javascript at v$version failed (above); the npm package does not ship its tests: give a checkout as CKJS_SOURCE_DIR"
    fi
fi
[[ -f "$tests/promisified/consumer/commit.spec.js" ]] \
    || suite_not_run "$suite" "$tests has no promisified/consumer/commit.spec.js"

if [[ ! -f "$package/build/Release/confluent-kafka-javascript.node" ]]; then
    mkdir -p "$ckjs"
    [[ -f "$ckjs/package.json" ]] || echo '{"private": true}' >"$ckjs/package.json"
    if ! (cd "$ckjs" && CKJS_LINKING=dynamic timeout 1800 npm install --no-audit --no-fund \
            "@confluentinc/kafka-javascript@$version" jest@29 \
            >"$work/npm.log" 2>&1); then
        tail -40 "$work/npm.log" >&2
        suite_not_run "$suite" "npm install of @confluentinc/kafka-javascript failed (above)"
    fi
fi
[[ -f "$package/build/Release/confluent-kafka-javascript.node" ]] \
    || suite_not_run "$suite" "$package has no built native module"

# The suite requires the package by relative path (../../lib), and jest does not collect tests
# under node_modules: the suite runs beside a copy of the package's JavaScript and native
# module (and the bundled librdkafka it links with), with a link to the installed
# node_modules for its dependencies.
mkdir -p "$work/js/pkg/build/Release" "$work/js/pkg/build/deps"
cp -r "$package/lib" "$package/librdkafka.js" "$package/package.json" "$work/js/pkg/"
cp -r "$tests" "$work/js/pkg/test"
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
