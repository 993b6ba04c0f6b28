# Shared by the command-line tests (tests/<part>/cli_test.sh), sourced after they set WORK (a
# scratch directory) and failures=0.
# expect CODE PATTERN -- COMMAND...: the command exits with CODE ("nonzero": any failure) and its
# stderr+stdout matches PATTERN.
expect() {
  code=$1 pattern=$2
  shift 3
  "$@" >"$WORK/out" 2>&1
  got=$?
  if [ "$code" = nonzero ]; then ok_code=$([ "$got" -ne 0 ] && echo yes); else ok_code=$([ "$got" -eq "$code" ] && echo yes); fi
  if [ "$ok_code" != yes ] || ! grep -q -- "$pattern" "$WORK/out"; then
    echo "FAIL: $* -> exit $got (wanted $code), output:"
    sed 's/^/    /' "$WORK/out" | head -30
    echo "    (wanted a line matching: $pattern)"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}
