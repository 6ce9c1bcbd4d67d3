#!/usr/bin/env bash
# End-to-end: boot the probe guest under msivm; banner, exit status, every user-error path.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# --- booting the probe guest
run run --kernel "$PROBE"
expect "probe boots, prints its banner and exits 0" 0 '^msivm-probe v0: cmdline=""$'

run run --kernel "$PROBE" --cmdline "exit=7"
expect "exit=7 ends msivm with status 7" 7 '^msivm-probe v0: cmdline="exit=7"$'

run run --kernel "$PROBE" --cmdline "exit=255"
expect "exit=255 is passed through unchanged" 255

run run --kernel "$PROBE" --cmdline "verbose exit=3" --mem 64M
expect "the guest sees msivm's e820 map for 64M" 3 \
	'probe: e820 0x0000000000100000-0x0000000004000000 type 1'

run run --kernel "$PROBE" --cmdline "exit=9" --cpus 2
expect "two vCPUs: the boot CPU runs the probe, the AP waits, the VM stops" 9

run run --kernel "$PROBE" --cpus 2 --cmdline "smp"
expect "--cpus 2: the probe brings up the AP (INIT/SIPI) and both CPUs answer" 0 \
	'^probe: cpus expected=2 answered=2 apic_ids=0,1$'
run run --kernel "$PROBE" --cpus 4 --cmdline "smp"
expect "--cpus 4: four CPUs answer with APIC IDs 0-3" 0 \
	'^probe: cpus expected=4 answered=4 apic_ids=0,1,2,3$'
# Regression: statistics taken while an AP sat in KVM_RUN (INIT wait) used to
# block on its vCPU mutex and hang every multi-vCPU VM with a device.
run run --kernel "$PROBE" --cpus 2 --rng "" --cmdline "smp"
expect "--cpus 2 with virtio-rng: the devices work while the AP waits" 0 'probe: rng read 65536 bytes'

run run --kernel "$PROBE" --serial "$TMP/console.txt" --cmdline "exit=4"
if [ "$status" = 4 ] && grep -q '^msivm-probe v0: cmdline="exit=4"$' "$TMP/console.txt" && [ -z "$out" ]; then
	pass "--serial FILE sends the console to the file"
else
	fail "--serial FILE sends the console to the file"
fi

run run --kernel "$PROBE" --cmdline "exit=foo"
expect "a bad exit= value is reported by the guest (status 2)" 2 'probe: bad exit value'

# --- bad user input: one line naming the problem, status 125
run
expect "no command prints usage and fails" 125 '' 'usage: msivm'
run --version
expect "--version" 0 '^msivm [0-9]+\.[0-9]+'
run --help
expect "--help" 0 'usage: msivm run'
run frobnicate
expect "unknown command" 125 '' "unknown command 'frobnicate'"
run run --kernel "$PROBE" --bogus
expect "unknown option" 125 '' "unknown option --bogus \\(see msivm --help\\)"
run run
expect "missing --kernel" 125 '' 'kernel FILE is required'
run run --kernel "$PROBE" --mem 12X
expect "bad --mem size" 125 '' "bad --mem size '12X'"
run run --kernel "$PROBE" --mem 1M
expect "--mem too small" 125 '' 'out of range'
run run --kernel "$PROBE" --cpus 0
expect "bad --cpus" 125 '' "bad --cpus '0'"
run run --kernel "$TMP/does-not-exist"
expect "missing kernel file" 125 '' "cannot open kernel '.*does-not-exist': No such file"
echo "plain text" >"$TMP/not-elf"
run run --kernel "$TMP/not-elf"
expect "a non-ELF kernel" 125 '' 'not an ELF file'
# Broken kernels made from the probe itself with objcopy.
objcopy -R .note.Xen "$PROBE" "$TMP/nonote.elf"
run run --kernel "$TMP/nonote.elf"
expect "an ELF without the PVH note" 125 '' 'no PVH entry point'
run run --kernel "$MSIVM"
expect "a position-independent ELF (not a kernel)" 125 '' 'not an executable kernel'
objcopy --change-section-lma .text+0x10000000 "$PROBE" "$TMP/high.elf"
run run --kernel "$TMP/high.elf" --mem 64M
expect "a segment outside guest RAM" 125 '' 'segment 0 at 0x10100000-.* is outside guest RAM'
objcopy --change-section-lma .text+0xbff00000 "$PROBE" "$TMP/hole.elf"
run run --kernel "$TMP/hole.elf" --mem 64M
expect "a segment over the MMIO hole" 125 '' 'lies over the MMIO hole'
run run --kernel "$PROBE" --kvm-device "$TMP/no-kvm"
expect "no KVM device" 125 '' 'does not exist'
run run --kernel "$PROBE" --kvm-device /dev/null
expect "a device that is not KVM" 125 '' 'is not a KVM device'
run run --kernel "$PROBE" --serial /nonexistent-dir/console
expect "unwritable --serial file" 125 '' "cannot open serial output"
# A bzImage on a PVM host: one warning at start that a stock kernel does not boot there (not a
# refusal: this one, a minimal bzImage whose 64-bit entry writes 7 to the debug-exit port, runs).
python3 - "$TMP/tiny.bzImage" <<'PY'
import struct, sys
img = bytearray(1024 + 0x200 + 16)       # setup: 1 sector + the boot sector; then the kernel
img[0x1f1] = 1                            # setup_sects
struct.pack_into('<H', img, 0x1fe, 0xaa55)
img[0x201] = 0x66                         # the header runs to 0x268
img[0x202:0x206] = b'HdrS'
struct.pack_into('<H', img, 0x206, 0x020c)
img[0x211] = 0x01                         # loadflags: LOADED_HIGH
struct.pack_into('<I', img, 0x230, 0x200000)  # kernel_alignment
struct.pack_into('<H', img, 0x236, 0x0001)    # xloadflags: XLF_KERNEL_64
struct.pack_into('<I', img, 0x238, 255)       # cmdline_size
struct.pack_into('<I', img, 0x260, 0x10000)   # init_size
img[1024 + 0x200:1024 + 0x206] = bytes([0xb0, 0x07, 0xe6, 0xf4, 0xeb, 0xfe])  # mov al,7; out 0xf4,al; jmp .
open(sys.argv[1], 'wb').write(img)
PY
case "$("$MSIVM" host 2>&1)" in
pvm:*)
	run run --kernel "$TMP/tiny.bzImage" --serial off
	if [ "$status" = 7 ] && [ "$(grep -c 'a stock Linux bzImage does not boot on it' <<<"$err")" = 1 ]; then
		pass "a bzImage on a PVM host: one warning at start, the kernel still boots (exit 7)"
	else
		fail "a bzImage on a PVM host: want exit 7 and one warning"
	fi
	run run --kernel "$PROBE" --serial off --cmdline "exit=3"
	expect "an ELF (PVH) kernel on a PVM host: no such warning" 3 '' '^$' ;;
*)
	run run --kernel "$TMP/tiny.bzImage" --serial off
	expect "a bzImage on a non-PVM host: no PVM warning" 7 '' '^$' ;;
esac
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -c /dev/kvm ] &&
	[ "$(stat -c %a /dev/kvm)" = 600 ]; then
	cp "$PROBE" "$TMP/probe.elf" && chmod 755 "$TMP" && chmod 644 "$TMP/probe.elf"
	status=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MSIVM" run --kernel "$TMP/probe.elf" \
		>"$TMP/out" 2>"$TMP/err" || status=$?
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	expect "no permission on /dev/kvm: the node's owner, group and mode named" 125 '' \
		'no permission to open /dev/kvm \(owner root, group root, mode 0600; you are uid 65534: only root may open it: run as root'
else
	echo "skip - no permission on /dev/kvm (needs root and a 0600 /dev/kvm)"
fi

finish
