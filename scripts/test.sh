#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install, build, run every test, then the
# libraries' unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer and
# ThreadSanitizer (scripts/sanitize.sh). Arguments go to ctest; SYNCOPATE_SKIP_SANITIZERS=1 skips the
# sanitizers (a quick local run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
# Multi-rank tests run 4 processes on 2 cores: run tests one at a time so timings stay sane.
ctest --test-dir "$build" --output-on-failure --timeout 600 "$@"
if [ "${SYNCOPATE_SKIP_SANITIZERS:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi
