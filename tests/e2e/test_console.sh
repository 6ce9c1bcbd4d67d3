#!/usr/bin/env bash
# End-to-end: --console parsing, host file errors (exit 125), the device on the guest PCI bus and in --stats; no guest driver.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

jqv() { jq -r "$1" "$TMP/stats.json"; }

# check NAME CONDITION...: passes if every condition (a bash test) holds.
check() {
	local name=$1; shift
	for c in "$@"; do
		if ! eval "$c"; then fail "$name [$c]"; return; fi
	done
	pass "$name"
}

# --- user errors: status 125, one line naming the problem
run run --kernel "$PROBE" --console "irq=edge"
expect "a bad irq mode is refused" 125 '' "bad irq mode 'edge'"

run run --kernel "$PROBE" --console "out=$TMP/con.out,speed=9600"
expect "an unknown console option is refused" 125 '' "unknown device option 'speed=9600'"

run run --kernel "$PROBE" --console "out="
expect "an empty out= is refused" 125 '' "--console out=: needs a file name"

run run --kernel "$PROBE" --console "in=$TMP/missing"
expect "a missing input file is refused" 125 '' "cannot open console input '.*missing': No such file"

run run --kernel "$PROBE" --console "out=$TMP/no/such/dir/out"
expect "an output in a missing directory is refused" 125 '' "cannot open console output '.*no/such/dir/out'"

args=()
for i in $(seq 32); do args+=(--console ""); done
run run --kernel "$PROBE" "${args[@]}"
expect "a 32nd device is refused" 125 '' 'too many devices \(at most 31\)'

# --- the device on the guest's PCI bus, next to an rng the probe drives
echo "stale" >"$TMP/con.out"
rm -f "$TMP/stats.json"
run run --kernel "$PROBE" --rng "" --console "out=$TMP/con.out,in=/dev/null" --stats --stats-json "$TMP/stats.json"
check "console: 1af4:1043 class 078000, 8 config bytes, 5 MSI-X vectors (4 queues: port 0 and control)" \
	'[ "$status" = 0 ]' \
	'grep -q "^pci 00:02.0 1af4:1043 class 078000" <<<"$out"' \
	'grep -q "cfg_type 2 bar 0 off 0x3000 len 0x10 mult 4" <<<"$out"' \
	'grep -q "cfg_type 4 bar 0 off 0x2000 len 0x8" <<<"$out"' \
	'grep -q "msix table=bar2+0x0 pba=bar2+0x800 size 5" <<<"$out"' \
	'grep -q "probe: rng read 65536 bytes" <<<"$out"'
check "console: out=FILE truncated, zero bytes each way in --stats and --stats-json" \
	'[ -f "$TMP/con.out" ] && [ ! -s "$TMP/con.out" ]' \
	'grep -qE "con0: 0 bytes out in 0 buffers \(0 dropped\), 0 bytes in in 0 buffers" <<<"$err"' \
	'grep -qE "^  con0 +msix +msix2 " <<<"$err"' \
	'[ "$(jqv ".devices[1].name")" = con0 ]' \
	'[ "$(jqv ".devices[1].type")" = console ]' \
	'[ "$(jqv ".devices[1].bytes_out")" = 0 ]' \
	'[ "$(jqv ".devices[1].bytes_in")" = 0 ]' \
	'[ "$(jqv ".devices[1].vectors | length")" = 5 ]'

run run --kernel "$PROBE" --console "irq=intx"
check "console irq=intx: no MSI-X capability" \
	'[ "$status" = 0 ]' \
	'grep -q "^pci 00:01.0 1af4:1043 class 078000" <<<"$out"' \
	'! grep -q "msix table" <<<"$out"'

# --- endless input and no driver: nothing is read, nothing spins
mkfifo "$TMP/fifo"
yes console-input >"$TMP/fifo" &
writer=$!
rm -f "$TMP/stats.json"
run run --kernel "$PROBE" --rng "" --console "in=$TMP/fifo,out=$TMP/con.out" --stats-json "$TMP/stats.json"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
check "console: input waiting without receive buffers costs no I/O-thread CPU" \
	'[ "$status" = 0 ]' \
	'[ "$(jqv ".devices[1].bytes_in")" = 0 ]' \
	'[ "$(jqv ".cpu.io_ns")" -lt 200000000 ]'

# A FIFO's writer that comes after boot (no writer when msivm first reads, as when an operator
# types `echo ... >fifo` once the guest is up): its line reaches the guest. Read-only, msivm read
# end of input at the first read and latched it, and the line was lost (issue 29).
rm -f "$TMP/late.fifo" "$TMP/late.ser" "$TMP/stats.json"
mkfifo "$TMP/late.fifo"
timeout "$E2E_TIMEOUT" "$MSIVM" run --kernel "$PROBE" --serial "$TMP/late.ser" --rng "" \
	--cmdline "console=virtio conin=8000" --console "in=$TMP/late.fifo,out=$TMP/late.out" \
	--stats-json "$TMP/stats.json" >"$TMP/out" 2>"$TMP/err" &
vmm=$!
for _ in $(seq 200); do grep -q 'virtio-console .* ready' "$TMP/late.ser" 2>/dev/null && break; sleep 0.05; done
sleep 0.2 # past the driver's first receive buffers, which msivm met with no writer
echo "typed after boot" >"$TMP/late.fifo"
wait "$vmm"
status=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
check "console input from a FIFO writer that comes after boot reaches the guest (17 bytes)" \
	'[ "$status" = 0 ]' \
	'grep -q "^probe: console input 17 bytes$" "$TMP/late.ser"' \
	'! grep -q "end of console input" "$TMP/err"'

# The probe as a virtio-console driver: from its ready line on, everything it
# prints reaches the console file byte for byte, in an MSI-X and an INTx run.
for mode in msix intx; do
	rm -f "$TMP/u.txt" "$TMP/f.txt"
	run run --kernel "$PROBE" --serial "$TMP/u.txt" --cmdline "console=virtio" \
		--console "out=$TMP/f.txt,irq=$mode" --rng "irq=$mode"
	if [ "$status" = 0 ] && grep -q '^probe: virtio-console 00:0[0-9].0 ready$' "$TMP/f.txt" &&
		{ head -1 "$TMP/u.txt"; sed -n '/^probe: virtio-console .* ready$/,$p' "$TMP/u.txt"; } |
		cmp -s - "$TMP/f.txt" && [ "$(wc -l <"$TMP/f.txt")" -ge 5 ]; then
		pass "$mode: the probe's output reaches the virtio console byte for byte"
	else
		fail "$mode: console file ($(wc -l <"$TMP/f.txt" 2>/dev/null) lines) differs from the UART"
	fi
done

# --console socket=PATH: one client, the console both ways (output read, input taken by the driver).
python3 "$here/sock_client.py" "$TMP/hvc.sock" "virtio-console" 'typed into the console\n' >"$TMP/hvc.out" &
client=$!
run run --kernel "$PROBE" --cmdline "console=virtio" --console "socket=$TMP/hvc.sock" --rng "" \
	--stats-json "$TMP/stats.json"
wait "$client"
check "--console socket=PATH: the client gets the guest's console output and its input reaches the guest" \
	'[ "$status" = 0 ]' \
	'grep -q "^probe: virtio-console 00:0[0-9].0 ready" "$TMP/hvc.out"' \
	'[ "$(jq "[.devices[] | select(.type == \"console\")][0].bytes_in" "$TMP/stats.json")" -gt 0 ]'
run run --kernel "$PROBE" --console "socket=$TMP/x.sock,out=$TMP/o"
expect "--console socket= with out= is refused" 125 "" "socket= carries the console both ways"

finish
