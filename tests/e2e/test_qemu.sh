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

echo "note - QEMU's virtio-pci has no plain MSI capability: msi mode is checked under msivm only"
finish
