#!/usr/bin/env bash
# Side by side: the same probe guest, unchanged, passes the virtio-rng checks under QEMU (q35, virtio-rng-pci).
set -u
here=$(dirname "$0")
. "$here/lib.sh"

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skip - qemu-system-x86_64 not installed (scripts/deps.sh installs it)"
	finish
	exit
fi

# qemu_run DEVICE_OPTS GUEST_ARGS: QEMU's isa-debug-exit turns the guest's 0 into status 1.
qemu_run() {
	timeout 120 qemu-system-x86_64 -M q35 -enable-kvm -cpu host,-arch-capabilities -m 256M \
		-nodefaults -no-user-config -nographic -serial stdio -no-reboot \
		-kernel "$PROBE" -append "$2" -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-device "virtio-rng-pci,disable-legacy=on$1" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

qemu_run "" ""
expect "QEMU msix: 64 KiB read, per-queue MSI-X vector, no level interrupts" 1 \
	'probe: irq vec=0x[0-9a-f]+ count=[1-9][0-9]* level=0 src=msix 00:0[0-9].0 entry 1 \(queue 0\)'
grep -q 'probe: irq mode=msix total=[1-9][0-9]* level=0' <<<"$out" &&
	grep -q 'probe: rng read 65536 bytes' <<<"$out" && pass "QEMU msix: summary and byte count" ||
	fail "QEMU msix: summary and byte count"

qemu_run "" "irq=msix-shared"
expect "QEMU msix-shared: one vector for the queues, no level interrupts" 1 \
	'probe: irq mode=msix-shared total=[1-9][0-9]* level=0'

qemu_run ",vectors=0" ""
expect "QEMU vectors=0: INTx through the IOAPIC, every interrupt level-triggered" 1 \
	'probe: irq vec=0x[0-9a-f]+ count=([1-9][0-9]*) level=\1 src=ioapic pin [0-9]+'

# The lab side by side: msivm and QEMU alternate, and the headline divides their VMM CPU.
timeout 300 "$MSIVM" lab --vs qemu --runs 2 --experiments rng --modes msix,msi --probe "$PROBE" \
	--out "$TMP/lab" >"$TMP/out" 2>"$TMP/err"
status=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
expect "lab --vs qemu: the headline has msivm's and QEMU's VMM CPU per request and their ratio" 0 \
	'^  rng +msix +[0-9.]+ \[[0-9.]+-[0-9.]+\] +[0-9.]+ \[[0-9.]+-[0-9.]+\] +x[0-9.]+ \['
order=$(grep -o 'rng [a-z]* [a-z-]* run [0-9]/2' <<<"$err" | tr '\n' ,)
if [ "$order" = "rng msivm msix run 1/2,rng qemu msix run 1/2,rng msivm msi run 1/2,rng msivm msix run 2/2,rng qemu msix run 2/2,rng msivm msi run 2/2," ]; then
	pass "lab --vs qemu: run order A B (msix), A (msi: no QEMU equivalent), then the next batch"
else
	fail "lab --vs qemu: run order $order"
fi
grep -Eq '^  rng +msi +[0-9.]+ .* - +- +\(QEMU: ' <<<"$out" &&
	pass "lab --vs qemu: a mode QEMU cannot run says why in the headline" || fail "headline msi row"
q=$(jq -r '.experiments[0].configs[] | select(.vmm=="qemu" and .mode=="msix") | .runs[0].work_cpu |
	[.vmm_ns > 0, .threads["CPU 0/KVM"].kind, .threads["qemu-system-x86"].kind] | @tsv' "$TMP/lab/report.json")
[ "$q" = "$(printf 'true\tvcpu\tvmm')" ] &&
	pass "lab --vs qemu: QEMU's threads by name (debug-threads): main loop counted, 'CPU 0/KVM' apart" ||
	fail "QEMU work window: $q"

echo "note - QEMU's virtio-pci has no plain MSI capability: msi mode is checked under msivm only"
finish
