#!/usr/bin/env bash
# End-to-end: INTx under two vCPUs: one level-triggered line hammered while the guest reads ISR and EOIs; no assertion may be lost.
# e2e: needs 2 CPUs (the AP posts requests while the BSP takes the interrupts)
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# The probe's intxstress (guest/README.md): the first AP posts and kicks N virtio-rng requests
# (4 in flight) while the BSP takes every interrupt (ISR read, completions, EOI); then 16 times a
# completion lands while the BSP sits between its ISR read and its EOI (only msivm raising the
# line again after KVM's resample can deliver it), then 16 single late requests. Exit 25 names
# the phase whose interrupt never came. Nested TCG is ~100x slower: fewer requests there.
n=2000
[ -n "${MSIVM_NESTED:-}" ] && n=1000
run run --kernel "$PROBE" --cpus 2 --rng "irq=intx" --stats --cmdline "smp intxstress=$n"
expect "intxstress=$n on 2 vCPUs: every completion's interrupt came (stress, 16 in the ISR-EOI window, 16 late)" 0 \
	"^probe: intxstress n=$n done=$((n + 48)) .* window=16/16 late=16/16\$"
asserts=$(awk '$4 == "intx(level)" { print $5 }' <<<"$err" | head -n1)
if [ "${asserts:-0}" -ge 33 ]; then
	pass "msivm asserted the line $asserts times (at least once per window and late request)"
else
	fail "msivm's intx(level) line: ${asserts:-missing} asserts"
fi

# The probe's own refusals.
run run --kernel "$PROBE" --cpus 2 --rng "irq=intx" --cmdline "smp intxstress=0"
expect "intxstress=0 is refused by the probe" 2 "probe: bad intxstress value"
run run --kernel "$PROBE" --rng "irq=intx" --cmdline "intxstress=10"
expect "intxstress without a second CPU: the probe says so (exit 22)" 22 "intxstress needs smp and a second CPU"
finish
