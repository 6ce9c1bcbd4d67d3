#!/usr/bin/env bash
# End-to-end: --log-file/--log-level (timestamps and thread names on every line) and --stats-json -.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

run run --kernel "$PROBE" --log-file "$TMP/log" --log-level info --no-reboot --cmdline "power=triple"
lines=$(wc -l <"$TMP/log" 2>/dev/null || echo 0)
if [ "$status" = 123 ] && [ -z "$err" ] && [ "$lines" -ge 2 ] &&
	! grep -vqE '^msivm: \[ *[0-9]+\.[0-9]{6} msivm(-[a-z]+[0-9]*)?\] (error|warning|info|debug): ' "$TMP/log" &&
	grep -q 'msivm-vcpu0\] warning: vCPU 0: triple fault' "$TMP/log"; then
	pass "--log-file: every line has seconds and the thread's name; stderr stays empty"
else
	fail "--log-file: every line has seconds and the thread's name ($lines lines)"
	sed 's/^/       log: /' "$TMP/log" | head -5
fi
run run --kernel "$PROBE" --log-file "$TMP/log" --log-level info --cmdline "power=off"
if [ "$status" = 0 ] && [ "$(wc -l <"$TMP/log")" -gt "$lines" ] && grep -q "guest power off" "$TMP/log"; then
	pass "--log-file appends"
else
	fail "--log-file appends"
fi
run run --kernel "$PROBE" --log-level error --no-reboot --cmdline "power=triple"
expect "--log-level error hides warnings" 123
[ -z "$err" ] && pass "no warning line at --log-level error" || fail "no warning line at --log-level error"
run run --kernel "$PROBE" --log-level loud
expect "a bad --log-level is refused" 125 '' "bad --log-level 'loud'"
run run --kernel "$PROBE" --log-file /nonexistent/dir/log
expect "an unopenable --log-file is named" 125 '' "cannot open log file '/nonexistent/dir/log'"

run run --kernel "$PROBE" --rng "" --serial "$TMP/serial" --stats-json - --cmdline "rng=4"
if [ "$status" = 0 ] && jq -e '.devices | length == 1' <<<"$out" >/dev/null 2>&1 && [ ! -e ./- ]; then
	pass "--stats-json - writes the JSON to standard output (no file named -)"
else
	fail "--stats-json - writes the JSON to standard output"
fi

finish
