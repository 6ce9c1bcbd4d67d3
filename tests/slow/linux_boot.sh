#!/bin/bash
# Slow test: boots Debian's cloud kernel (a bzImage) under msivm and reads its console.
#
#   tests/slow/linux_boot.sh            (make slow-linux runs it)
#
# Environment: MSIVM (default build/msivm), LINUX_BOOT_TIMEOUT in seconds
# (default 1200: with the emulated KVM of some hosts a boot takes minutes),
# LINUX_BOOT_MEM (default 512M), LINUX_BOOT_CPUS (default 1), LINUX_BOOT_LOG
# (console log; default build/slow/linux_boot.log), LINUX_BOOT_CPUID_HIDE
# (default cmpxchg16b,xsave,movbe,invpcid,smap,pcid: instructions the
# emulated KVM of some hosts cannot emulate; passed as --cpuid-hide when
# msivm has that option; set it empty to hide nothing), LINUX_BOOT_EXTRA
# (appended to the command line; default "noxsave clearcpuid=..." for the
# same features: an emulated KVM that takes CPUID partly from its host
# cannot hide XSAVE through KVM_SET_CPUID2, so the kernel is told too).
#
# Required: the kernel prints the command line msivm passed, an e820 map equal
# to msivm's, and ACPI finds the MADT and the MCFG. When msivm has --initrd
# (and gcc and python3 are here), the kernel also gets a tiny initrd whose
# /init (tests/slow/init.S) prints a marker and restarts: then the kernel must
# report the initrd where msivm put it (RAMDISK: at the top of RAM), and the
# marker is a milestone. Also reported: how far the boot got (milestones) and
# how long it took. Without an initrd the kernel panics (no root file system); panic=-1
# reboot=t turn the panic or the restart into a triple fault, which ends msivm.
set -u
cd "$(dirname "$0")/../.."

MSIVM=${MSIVM:-build/msivm}
TIMEOUT=${LINUX_BOOT_TIMEOUT:-1200}
MEM=${LINUX_BOOT_MEM:-512M}
CPUS=${LINUX_BOOT_CPUS:-1}
LOG=${LINUX_BOOT_LOG:-build/slow/linux_boot.log}
HIDE=${LINUX_BOOT_CPUID_HIDE-cmpxchg16b,xsave,movbe,invpcid,smap,pcid}
EXTRA=${LINUX_BOOT_EXTRA-noxsave clearcpuid=cx16,movbe,pcid,invpcid,smap}
CMDLINE="console=ttyS0 earlyprintk=serial,ttyS0 msivm.test=1 panic=-1 reboot=t loglevel=7${EXTRA:+ $EXTRA}"

[ -x "$MSIVM" ] || { echo "linux_boot: $MSIVM not built (make build/msivm)"; exit 1; }
KERNEL=$(scripts/fetch-kernel.sh) || { echo "linux_boot: cannot fetch the kernel"; exit 1; }
mkdir -p "$(dirname "$LOG")"
extra=()
if [ -n "$HIDE" ]; then
	if "$MSIVM" --help 2>&1 | grep -q -- --cpuid-hide; then
		extra+=(--cpuid-hide "$HIDE")
	else
		echo "linux_boot: $MSIVM has no --cpuid-hide; booting with every CPUID feature"
	fi
fi

# The e820 map msivm gives a guest of $MEM below the MMIO hole (3 GiB):
# low RAM, the legacy hole, RAM from 1 MiB.
mem_bytes() {
	local v=${1%[KMG]} u=${1: -1}
	case $u in K) echo $((v << 10));; M) echo $((v << 20));; G) echo $((v << 30));; *) echo "$1";; esac
}
ram=$(mem_bytes "$MEM")
[ "$ram" -le $((0xC0000000)) ] || { echo "linux_boot: LINUX_BOOT_MEM must be at most 3G"; exit 1; }
expected_e820=$(printf '%s\n' \
	"[mem 0x0000000000000000-0x000000000009ffff] usable" \
	"[mem 0x00000000000a0000-0x00000000000fffff] reserved" \
	"$(printf '[mem 0x0000000000100000-0x%016x] usable' $((ram - 1)))")

INITRD=
if "$MSIVM" --help 2>&1 | grep -q -- --initrd; then
	INITRD=$(dirname "$LOG")/initrd.cpio
	if gcc -nostdlib -static -o "$INITRD.init" tests/slow/init.S &&
	   python3 tests/slow/mkinitrd.py "$INITRD.init" "$INITRD"; then
		extra+=(--initrd "$INITRD")
	else
		echo "linux_boot: cannot build the test initrd (gcc, python3); booting without one"
		INITRD=
	fi
fi

echo "linux_boot: $KERNEL ($(cat "$(dirname "$KERNEL")/version" 2>/dev/null)), $MEM, $CPUS vCPU(s), timeout ${TIMEOUT}s"
echo "linux_boot: cmdline: $CMDLINE"
echo "linux_boot: extra options: ${extra[*]:-none}"
start=$(date +%s)
timeout --foreground -k 10 "$TIMEOUT" "$MSIVM" run --kernel "$KERNEL" --mem "$MEM" --cpus "$CPUS" \
	--cmdline "$CMDLINE" --serial "$LOG" "${extra[@]}" 2>"$LOG.stderr"
status=$?
secs=$(( $(date +%s) - start ))
tr -d '\r' <"$LOG" >"$LOG.txt"
case $status in
124) how="timed out after ${TIMEOUT}s";;
126) if grep -q "emulation failed" "$LOG.stderr"; then
	how="stopped: KVM could not emulate a guest instruction (msivm's message below)"
     else
	how="ended by a guest reset (expected at the end: panic=-1 or /init's restart, reboot=t)"
     fi;;
*) how="msivm exited with status $status";;
esac
echo "linux_boot: $how, ${secs}s wall clock, $(wc -l <"$LOG.txt") console lines (log: $LOG)"
[ -s "$LOG.stderr" ] && sed 's/^/linux_boot: /' "$LOG.stderr" | head -5

FAILS=0 PASSES=0
check() { # NAME, then a command that succeeds when the check passes
	local name=$1; shift
	if "$@"; then PASSES=$((PASSES + 1)); echo "ok   - $name"
	else FAILS=$((FAILS + 1)); echo "FAIL - $name"; fi
}
has() { grep -qF -- "$1" "$LOG.txt"; }
e820_matches() {
	local got
	got=$(sed -n 's/.*BIOS-e820: \(\[mem [^]]*\] [a-z]*\).*/\1/p' "$LOG.txt")
	if [ "$got" != "$expected_e820" ]; then
		echo "       kernel's e820:"; echo "$got" | sed 's/^/         /'
		echo "       msivm's e820:"; echo "$expected_e820" | sed 's/^/         /'
		return 1
	fi
}

check "the kernel prints the command line msivm passed" has "Command line: $CMDLINE"
check "the kernel's e820 map equals msivm's" e820_matches
check "ACPI finds the MADT (APIC)" grep -qE 'ACPI: APIC 0x0*E0' "$LOG.txt"
check "ACPI finds the MCFG" grep -qE 'ACPI: MCFG 0x0*E0' "$LOG.txt"
initrd_at_top() { # the initrd's pages end at the top of RAM
	local top
	top=$(printf 'RAMDISK: [mem 0x%08x-0x%08x]' \
		$(( (ram - $(stat -c %s "$INITRD")) & ~0xfff )) $((ram - 1)))
	grep -qF -- "$top" "$LOG.txt" || { echo "       want '$top'"; return 1; }
}
[ -n "$INITRD" ] && check "the kernel finds the initrd at the top of RAM" initrd_at_top

# How far it got: milestones in boot order (informational).
echo "linux_boot: milestones:"
milestone() { # LABEL PATTERN
	local line
	line=$(grep -m1 -E -- "$2" "$LOG.txt")
	if [ -n "$line" ]; then echo "  [x] $1: ${line:0:110}"; else echo "  [ ] $1"; fi
}
milestone "kernel started" 'Linux version'
milestone "initrd reserved" 'RAMDISK: \[mem'
milestone "RSDP found" 'ACPI: RSDP'
milestone "MADT parsed (IOAPIC)" 'IOAPIC\[0\]'
milestone "SMP: CPUs from the MADT" 'smpboot: Allowing'
milestone "scheduler/timer up" 'Calibrating delay|lpj='
milestone "ACPI interpreter starts" 'ACPI: Core revision'
milestone "ACPI interpreter (DSDT loaded)" 'ACPI: [0-9]+ ACPI AML tables successfully'
milestone "ECAM used (MMCONFIG)" 'MMCONFIG for domain 0000 \[bus 00-00\] at \[mem 0xe0000000'
milestone "PCI root bridge PCI0" 'PCI Root Bridge \[PCI0\]'
milestone "PCI bus 00 window" 'pci_bus 0000:00: root bus resource \[mem 0xc0000000'
milestone "serial driver (COM1)" 'ttyS0 at I/O 0x3f8'
milestone "all CPUs up" 'smp: Brought up'
milestone "init stage (free init memory)" 'Freeing unused kernel'
milestone "initrd unpacked" 'Trying to unpack rootfs|Unpacking initramfs'
milestone "init started" 'Run /init as init process'
milestone "the initrd's /init ran" 'msivm-initrd: /init ran'
milestone "end: no root fs / panic" 'Kernel panic|VFS: Unable to mount root'
echo "linux_boot: last console line: $(tail -n 1 "$LOG.txt" | cut -c1-150)"

echo "# $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
