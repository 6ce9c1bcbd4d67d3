#!/usr/bin/env bash
# End-to-end: guest power-off (ACPI S5) and resets (ACPI reset register, i8042 pulse, triple fault).
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# --- power off: exit 0, data written before it is on the host
run run --kernel "$PROBE" --cmdline "power=off exit=9"
expect "power=off (ACPI S5 via the FADT sleep control register) ends msivm with 0" 0 \
	'^probe: power=off$'
if grep -q 'had no effect' <<<"$out"; then fail "power=off took effect at once"; else pass "power=off took effect at once"; fi

truncate -s 1M "$TMP/disk.img"
run run --kernel "$PROBE" --disk "path=$TMP/disk.img" --cmdline "blk=verify blkkb=64 power=off"
if [ "$status" = 0 ] && ! cmp -s -n 65536 "$TMP/disk.img" /dev/zero; then
	pass "what the guest wrote before powering off is in the image"
else
	fail "what the guest wrote before powering off is in the image"
fi

# --- resets under --no-reboot: status 123, one per path
for p in acpi-reset kbd-reset triple; do
	run run --kernel "$PROBE" --no-reboot --cmdline "power=$p exit=9"
	expect "power=$p under --no-reboot ends msivm with 123" 123 "^probe: power=$p\$"
done
run run --kernel "$PROBE" --no-reboot --cmdline "power=triple"
expect "a triple fault is logged with the guest's registers" 123 '' 'triple fault \(guest reset\) at rip 0x'

# --- resets reboot in place: the probe boots again and again until SIGTERM
# until_then_term 'TEST' ARGS...: msivm run ARGS (stdout to $TMP/out) until the shell test TEST
# holds (at most 30 s), then SIGTERM; sets status, out, err. The reboot checks used fixed windows
# (2-4 s) before, which a slow host's boots did not always fill.
until_then_term() {
	local cond=$1 i
	shift
	"$MSIVM" run --kernel "$PROBE" "$@" >"$TMP/out" 2>"$TMP/err" &
	local pid=$!
	for i in $(seq 300); do
		eval "$cond" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}
# lines RE FILE: how many lines of FILE match RE.
lines() { if [ -e "$2" ]; then grep -c -- "$1" "$2"; else echo 0; fi; }
for p in acpi-reset kbd-reset triple; do
	until_then_term '[ "$(lines "^probe: rng read 4096 bytes" "$TMP/out")" -ge 3 ]' --rng "" \
		--cmdline "power=$p rng=4"
	boots=$(grep -c '^msivm-probe v0:' <<<"$out")
	rng=$(grep -c '^probe: rng read 4096 bytes' <<<"$out")
	if [ "$status" = 143 ] && [ "$boots" -ge 3 ] && [ "$rng" -ge 3 ]; then
		pass "power=$p reboots in place with working devices ($boots boots, SIGTERM ends it)"
	else
		fail "power=$p reboots in place with working devices (boots=$boots rng=$rng)"
	fi
done

# --stats prints a block per boot, headed by its number and what ended it, each with that boot's
# own counts (a check of boot 1's traffic must not read a later boot's zeros).
until_then_term '[ "$(lines "^probe: rng read 4096 bytes" "$TMP/out")" -ge 2 ]' --rng "" --stats \
	--cmdline "power=acpi-reset rng=4"
heads=$(grep -c '^stats of boot [0-9]* (it ended: ' <<<"$err")
first=$(grep -m1 '^stats of boot' <<<"$err")
reqs=$(grep -o 'rng0: [0-9]* requests' <<<"$err" | awk '{ print $2 }' | tr '\n' ' ')
n1=${reqs%% *}
if [ "$heads" -ge 2 ] && [ "$first" = "stats of boot 1 (it ended: ACPI reset register):" ] &&
	[ "$(wc -w <<<"$reqs")" = "$heads" ] && [ "${n1:-0}" -ge 1 ]; then
	pass "--stats: one block per boot ($heads), boot 1's rng requests counted in its own ($reqs)"
else
	fail "--stats: one block per boot (headers $heads, first '$first', rng requests per block: $reqs)"
fi

# The serial and virtio-console files grow across reboots instead of starting over.
until_then_term '[ "$(lines "probe: power=acpi-reset" "$TMP/hvc.txt")" -ge 2 ]' --serial "$TMP/serial.txt" \
	--console "out=$TMP/hvc.txt" --cmdline "console=virtio power=acpi-reset rng=0"
s=$(grep -c '^msivm-probe v0:' "$TMP/serial.txt")
c=$(grep -c 'probe: power=acpi-reset' "$TMP/hvc.txt")
if [ "$status" = 143 ] && [ "$s" -ge 2 ] && [ "$c" -ge 2 ]; then
	pass "serial and console files keep every boot's output ($s and $c boots)"
else
	out=""; err=$(cat "$TMP/err")
	fail "serial and console files keep every boot's output (serial $s, console $c)"
fi

# Console input is read once: a guest reboot does not replay what an earlier boot took
# (the probe's conin prints what reached its receive buffers in each boot).
printf 'typed once\n' >"$TMP/hvc.in"
until_then_term '[ "$(lines "^probe: console input 0 bytes$" "$TMP/out")" -ge 1 ]' --rng "" \
	--console "in=$TMP/hvc.in,out=$TMP/hvc.out" --cmdline "console=virtio conin power=acpi-reset"
got=$(grep -c '^probe: console input 11 bytes$' "$TMP/out")
none=$(grep -c '^probe: console input 0 bytes$' "$TMP/out")
if [ "$status" = 143 ] && [ "$got" = 1 ] && [ "$none" -ge 1 ]; then
	pass "console input is not replayed after a guest reboot (first boot read it, $none later boots read nothing)"
else
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	fail "console input is not replayed after a guest reboot (status $status: $got boots read the 11 bytes, $none read nothing)"
fi

# Input a boot's buffers do not take stays in the file for the next boot: 600 bytes, and the
# probe posts 4 buffers of 64 bytes per boot, so three boots take 256, 256 and 88.
head -c 600 /dev/zero | tr '\0' x >"$TMP/hvc.in"
until_then_term '[ "$(lines "^probe: console input " "$TMP/out")" -ge 4 ]' --rng "" \
	--console "in=$TMP/hvc.in,out=$TMP/hvc.out" --cmdline "console=virtio conin power=acpi-reset"
counts=$(sed -n 's/^probe: console input \([0-9]*\) bytes$/\1/p' "$TMP/out" | tr '\n' ' ')
sum=0
for n in $counts; do sum=$((sum + n)); done
if [ "$status" = 143 ] && [ "$sum" = 600 ]; then
	pass "console input a boot did not take reaches the next boot (per boot: $counts)"
else
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	fail "console input a boot did not take reaches the next boot (status $status; 600 bytes in, $sum taken; per boot: $counts)"
fi

finish
