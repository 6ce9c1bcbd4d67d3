#!/usr/bin/env bash
# End-to-end: SIGINT/SIGTERM press the guest's ACPI power button (GED, IOAPIC pin 5) when the guest
# listens for it, stop the VM after --shutdown-timeout when it does not power off, and stop at once
# for a second signal, a guest that never enabled the button, or --shutdown-timeout 0.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# button_run SIGNALS ARGS...: msivm in the background until the probe says it waits for the button
# (or 20 s), then each signal of the comma list SIGNALS 0.3 s apart; sets status, out, err and
# secs (seconds from the first signal to msivm's exit).
button_run() {
	local sigs=$1 i=0 s t0 pid
	shift
	: >"$TMP/out" # before the start: the wait below must not see the last run's output
	"$MSIVM" run --kernel "$PROBE" "$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	while [ $i -lt 200 ] && ! grep -q 'waiting for the power button\|echo ready' "$TMP/out"; do
		sleep 0.1
		i=$((i + 1))
	done
	t0=$(date +%s.%N)
	for s in ${sigs//,/ }; do
		kill -"$s" "$pid" 2>/dev/null
		sleep 0.3
	done
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}
# faster SECS LIMIT: true when SECS < LIMIT
faster() { awk -v s="$1" -v l="$2" 'BEGIN { exit !(s < l) }'; }

button_run TERM --cmdline "button=off exit=9"
if [ "$status" = 0 ] && grep -q '^probe: power button pressed: powering off$' <<<"$out" &&
	grep -q "signal 15: pressed the guest's power button; stopping it in 10.0 s" <<<"$err" && faster "$secs" 5; then
	pass "SIGTERM presses the power button of a listening guest, which powers off: exit 0 (${secs} s)"
else
	fail "SIGTERM presses the power button of a listening guest, which powers off: exit 0 (${secs} s)"
fi

button_run INT --cmdline "button=off exit=9"
expect "SIGINT presses the power button too: exit 0" 0 '^probe: power button pressed' "signal 2: pressed"

button_run TERM --shutdown-timeout 1 --cmdline "button=ignore exit=9"
if [ "$status" = 143 ] && grep -q 'did not power off within 1000 ms of its power button' <<<"$err" &&
	! faster "$secs" 0.9 && faster "$secs" 5; then
	pass "a guest that ignores the button is stopped after --shutdown-timeout 1: exit 143 (${secs} s)"
else
	fail "a guest that ignores the button is stopped after --shutdown-timeout 1: exit 143 (${secs} s)"
fi

button_run TERM,INT --cmdline "button=ignore exit=9"
if [ "$status" = 130 ] && faster "$secs" 4; then
	pass "a second signal during the grace period stops the VM at once: exit 130 (${secs} s of 10)"
else
	fail "a second signal during the grace period stops the VM at once: exit 130 (${secs} s of 10)"
fi

# The echo probe polls COM1 and never unmasks the GED's pin: nobody would see a press.
button_run TERM -v --cmdline "echo"
if [ "$status" = 143 ] && grep -q 'does not listen for its power button' <<<"$err" && faster "$secs" 2; then
	pass "a guest that never enabled its power button is stopped at once: exit 143 (${secs} s)"
else
	fail "a guest that never enabled its power button is stopped at once: exit 143 (${secs} s)"
fi

button_run TERM --shutdown-timeout 0 --cmdline "button=off exit=9"
if [ "$status" = 143 ] && ! grep -q 'power button pressed' <<<"$out" && faster "$secs" 2; then
	pass "--shutdown-timeout 0: SIGTERM stops at once without the button: exit 143 (${secs} s)"
else
	fail "--shutdown-timeout 0: SIGTERM stops at once without the button: exit 143 (${secs} s)"
fi

# A guest that resets over and over (the i8042 pulse at once after boot): SIGTERM often lands while a
# reset is recorded, and the reset used to win (first reason wins) and reboot the guest forever.
# Now the operator's stop outlives the VM: 12 runs, each must end 143 within 5 s of the signal.
lost=0 slow=0
for i in $(seq 1 12); do
	"$MSIVM" run --kernel "$PROBE" --cmdline "power=kbd-reset" >/dev/null 2>"$TMP/err" &
	pid=$!
	sleep "0.$((i % 5 + 2))"
	kill -TERM "$pid"
	j=0
	while kill -0 "$pid" 2>/dev/null && [ $j -lt 50 ]; do sleep 0.1; j=$((j + 1)); done
	[ $j -ge 50 ] && slow=$((slow + 1)) && kill -KILL "$pid"
	wait "$pid"
	st=$?
	[ "$st" = 143 ] || lost=$((lost + 1))
done
status=$lost out="" err=$(cat "$TMP/err")
[ "$lost" = 0 ] && [ "$slow" = 0 ] && pass "SIGTERM to a guest in a reset loop ends msivm with 143, 12 of 12 times" ||
	fail "SIGTERM to a guest in a reset loop ends msivm with 143 ($lost of 12 other statuses, $slow still running after 5 s)"

run run --kernel "$PROBE" --shutdown-timeout 3601
expect "--shutdown-timeout above 3600 is refused" 125 "" "bad --shutdown-timeout '3601'"

finish
