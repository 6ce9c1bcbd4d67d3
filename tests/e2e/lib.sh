# End-to-end test helpers: run msivm, capture output and status, count failures.
# Sourced by tests/e2e/*.sh; expects MSIVM and PROBE in the environment.

: "${MSIVM:?MSIVM must name the msivm binary}"
: "${PROBE:?PROBE must name the probe guest ELF}"
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0

# run ARGS...: runs msivm with a timeout; sets $status, $out (stdout), $err (stderr).
run() {
	timeout "$E2E_TIMEOUT" "$MSIVM" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

pass() { PASSES=$((PASSES + 1)); echo "ok   - $1"; }
fail() {
	FAILS=$((FAILS + 1))
	echo "FAIL - $1"
	echo "       status=$status"
	echo "$out" | sed 's/^/       stdout: /' | head -20
	echo "$err" | sed 's/^/       stderr: /' | head -20
}

# expect NAME STATUS [REGEX_STDOUT] [REGEX_STDERR]
expect() {
	local name=$1 want=$2 re_out=${3:-} re_err=${4:-}
	if [ "$status" != "$want" ]; then fail "$name (want status $want)"; return; fi
	if [ -n "$re_out" ] && ! grep -Eq -- "$re_out" <<<"$out"; then fail "$name (stdout !~ /$re_out/)"; return; fi
	if [ -n "$re_err" ] && ! grep -Eq -- "$re_err" <<<"$err"; then fail "$name (stderr !~ /$re_err/)"; return; fi
	pass "$name"
}

finish() {
	echo "# $PASSES passed, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}
