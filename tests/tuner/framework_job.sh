# Shared by the tests that record framework_trainer on simgpu and check a setting against a
# re-run (ddp_setting_test.sh, channels_test.sh, sharded_setting_test.sh), sourced with their
# arguments: SYNCOPATE FRAMEWORK_TRAINER PROFILE SIMGPU_LIBRARY_DIR. Sets them up, a scratch
# directory WORK, failures=0 and expect (../cli_expect.sh); finish ends the test with its verdict.
set -u
SYNCOPATE=$1
TRAINER=$2
export SIMGPU_PROFILE=$3
export LD_LIBRARY_PATH=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The Python checks read the reports through tune_report.py, beside this file.
PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

. "$(dirname "$0")/../cli_expect.sh"

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}
