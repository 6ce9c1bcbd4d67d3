#!/usr/bin/env bash
# End-to-end: virtio-rng in each interrupt mode; the guest's and msivm's interrupt tables must agree with the mode.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# jqv EXPR: evaluates EXPR on the last run's --stats-json.
jqv() { jq -r "$1" "$TMP/stats.json"; }

# The probe may find a completion in the used ring before its interrupt
# arrives, so interrupt counts are checked for >= 1, not = requests.
# Edge interrupts for one vector that arrive while it is still pending in the
# LAPIC's IRR are merged, so the guest may count fewer than msivm delivered.

# rng_run MODE [GUEST_ARGS] [DEVICE_EXTRA]
rng_run() {
	local mode=$1 gargs=${2:-} extra=${3:-}
	rm -f "$TMP/stats.json"
	run run --kernel "$PROBE" --cmdline "$gargs" --rng "irq=$mode$extra" --stats-json "$TMP/stats.json"
}

# check NAME CONDITION...: passes if every condition (a bash test) holds.
check() {
	local name=$1; shift
	for c in "$@"; do
		if ! eval "$c"; then fail "$name [$c]"; return; fi
	done
	pass "$name"
}

# The interrupts the guest took from the rng device (its "irq dev=" line; the all-sources total
# also counts the probe's LAPIC watchdog timer, which fires on a slow host: nested ASan, 17 vs 16).
guest_total() { grep -oE '^probe: irq dev=[0-9a-f:.]+ mode=[a-z-]+ total=[0-9]+' <<<"$out" | head -n 1 | grep -oE '[0-9]+$'; }
guest_level() { grep -oE '^probe: irq dev=[0-9a-f:.]+ mode=[a-z-]+ total=[0-9]+ level=[0-9]+' <<<"$out" | head -n 1 | grep -oE '[0-9]+$'; }

rng_run msix
check "msix: 64 KiB of non-constant entropy, one vector per queue, no level interrupts" \
	'[ "$status" = 0 ]' \
	'grep -qE "probe: rng read 65536 bytes, distinct=(2[0-9][0-9]|1[0-9][0-9])" <<<"$out"' \
	'grep -qE "probe: irq vec=0x[0-9a-f]+ count=[1-9][0-9]* level=0 src=msix 00:01.0 entry 1 \(queue 0\)" <<<"$out"' \
	'grep -q "probe: irq mode=msix total=" <<<"$out"' \
	'[ "$(guest_level)" = 0 ]' \
	'[ "$(jqv ".devices[0].vectors[1].delivered")" -ge 16 ]' \
	'[ "$(jqv ".devices[0].vectors[1].use")" = q0 ]' \
	'[ "$(jqv ".devices[0].vectors[0].use")" = config ]' \
	'[ "$(jqv ".devices[0].intx.asserts")" = 0 ]' \
	'[ "$(jqv ".devices[0].isr_reads")" = 0 ]' \
	'[ "$(guest_total)" -ge 1 ]' \
	'[ "$(jqv ".devices[0].vectors[1].delivered")" -ge "$(guest_total)" ]'

# The pool: 64 KiB of 4 KiB buffers cost 1-2 calls to the source (the guest's first buffers may
# be smaller), from the device's DRBG by default or from getrandom when asked.
check "msix: entropy from the DRBG by default, one source call per 64 KiB pool" \
	'[ "$(jqv ".devices[0].source")" = drbg ]' \
	'[ "$(jqv ".devices[0].source_calls")" -ge 1 ]' \
	'[ "$(jqv ".devices[0].source_calls")" -le 3 ]'
rng_run msix "" ",source=getrandom"
check "source=getrandom: the same entropy test, from getrandom" \
	'[ "$status" = 0 ]' \
	'grep -qE "probe: rng read 65536 bytes, distinct=(2[0-9][0-9]|1[0-9][0-9])" <<<"$out"' \
	'[ "$(jqv ".devices[0].source")" = getrandom ]' \
	'[ "$(jqv ".devices[0].source_calls")" -ge 1 ]'
rng_run msix "" ",source=urandom"
check "an unknown rng source is refused, naming it" \
	'[ "$status" = 125 ]' \
	'grep -q "bad rng source .urandom.: use drbg or getrandom" <<<"$err"'

rng_run msix-shared "irq=msix-shared"
check "msix-shared: config and queue vectors split as the guest asked, no level interrupts" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: irq mode=msix-shared total=" <<<"$out"' \
	'[ "$(guest_level)" = 0 ]' \
	'[ "$(jqv ".devices[0].vectors | length")" = 2 ]' \
	'[ "$(jqv "[.devices[0].vectors[].delivered] | add")" -ge 16 ]' \
	'[ "$(jqv ".devices[0].intx.asserts")" = 0 ]'

rng_run msi
check "msi: no MSI-X capability, the MSI message carries every interrupt, no level interrupts" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: irq mode=msi total=" <<<"$out"' \
	'grep -qE "level=0 src=msi 00:01.0" <<<"$out"' \
	'! grep -q "cap 0x[0-9a-f]* msix" <<<"$out"' \
	'[ "$(guest_level)" = 0 ]' \
	'[ "$(jqv "[.devices[0].vectors[] | select(.source==\"msi\") | .delivered] | add")" -ge 16 ]' \
	'[ "$(jqv ".devices[0].intx.asserts")" = 0 ]'

rng_run intx
check "intx: level-triggered IOAPIC pin, ISR read per interrupt, no MSI" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: irq mode=intx total=" <<<"$out"' \
	'grep -qE "src=ioapic pin 17 00:01.0" <<<"$out"' \
	'[ "$(guest_level)" -ge 1 ]' \
	'[ "$(guest_level)" = "$(guest_total)" ]' \
	'[ "$(jqv ".devices[0].vectors | length")" = 0 ]' \
	'[ "$(jqv ".devices[0].intx.asserts")" -ge 1 ]' \
	'[ "$(jqv ".devices[0].isr_reads")" -ge "$(guest_total)" ]'

rm -f "$TMP/stats.json"
run run --kernel "$PROBE" --rng "vectors=0" --stats-json "$TMP/stats.json"
check "vectors=0 without irq= removes MSI-X: irq=intx (QEMU's spelling)" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: irq mode=intx total=" <<<"$out"' \
	'[ "$(guest_level)" -ge 1 ]' \
	'[ "$(jqv ".devices[0].mode")" = intx ]'
rng_run msix "" ",vectors=0"
expect "irq=msix with vectors=0 is refused: vectors=0 means no MSI-X" 125 '' \
	'vectors=0 means no MSI-X, which irq=msix needs'

rng_run msix "rng=256"
check "rng=256: 256 KiB read in msix mode" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: rng read 262144 bytes" <<<"$out"' \
	'[ "$(jqv ".devices[0].bytes")" -ge 262144 ]'

rng_run msix "" ",irqpath=signal-msi"
check "irqpath=signal-msi: MSI-X delivered by KVM_SIGNAL_MSI, no GSI route ever committed" \
	'[ "$status" = 0 ]' \
	'grep -q "probe: irq mode=msix total=[1-9]" <<<"$out"' \
	'[ "$(jqv ".devices[0].vectors[1].delivered")" -ge 16 ]' \
	'[ "$(jqv ".route_commits")" = 0 ]'
rng_run msix
check "irqpath=irqfd (default): routes committed once, in one batch" \
	'[ "$status" = 0 ]' \
	'[ "$(jqv ".route_commits")" = 1 ]'

run run --kernel "$PROBE" --rng "irq=bogus"
expect "a bad irq mode is refused" 125 '' "bad irq mode 'bogus'"
run run --kernel "$PROBE" --rng "vectors=65"
expect "too many vectors is refused" 125 '' "bad vectors '65'"
run run --kernel "$PROBE" --rng "irqpath=carrier-pigeon"
expect "a bad irqpath is refused" 125 '' "bad irqpath 'carrier-pigeon'"
run run --kernel "$PROBE" --rng "colour=blue"
expect "an unknown device option is refused" 125 '' "unknown device option 'colour=blue'"

finish
