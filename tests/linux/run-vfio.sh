#!/bin/sh
# run-vfio.sh: the host side of check-linux's `vfio` configuration, inside the nested L1 (started
# by tests/linux/l1-init; L1 runs with an emulated IOMMU with interrupt remapping and an emulated
# NVMe controller, tests/linux/check-linux.sh). Binds the NVMe to vfio-pci and passes it through to
# the L2 test guest (rdinit=/vfio-init, tests/linux/vfio-init) in three boots:
#
#   msix   msivm --device path=...: MSI-X by irqfd; the guest writes a pattern, reads it back,
#          counts its interrupts under I/O, reboots (msivm resets the device and builds the VM
#          again), drives the device again and reads the pattern back, powers off
#   intx   msivm, the guest booted pci=nomsi: the device's INTx through KVM's resampling irqfd
#   msi    msivm --device ...,irq=msi with L1's emulated vmxnet3 NIC (the one device with plain
#          MSI, an IOMMU-clean model in QEMU and a driver in Debian's cloud kernel: docs/vfio.md)
#          wired by L0's hub to L1's virtio-net: the guest (lc.dev=net) sends a 1 MiB pattern to
#          an echo server here, which keeps it, and pings this host 2000 times
#   qemu   QEMU's vfio-pci (-device vfio-pci,host=BDF,rombar=0) with MSI-X: the reference
#   qintx  the same QEMU with the guest on pci=nomsi: INTx's reference
#
# and checks beside the guest's verdicts: the VMM's exit status, VFIO's own interrupt handlers in
# L1 (tracepoint irq_handler_entry, names vfio-*) against the guest's count, KVM's injections in L1
# (tracepoints kvm_msi_set_irq / kvm_set_irq) and, for msivm, its --stats-json: no interrupt of an
# unmasked vector relayed by msivm itself, no device error. Writes LC_OUT/vfio/results.txt
# ("PASS vfio.<variant>.<check> detail" / "FAIL ...: why") and the logs beside it. The patterns
# land at 1, 2 and 3 MiB of the NVMe's image, which check-linux.sh looks for after L1 exits (and
# msi's in L0's capture of the vmxnet3's wire). lc.vfiovariants=a,b on L1's command line runs
# only those variants (check-linux.sh: LC_VFIO_VARIANTS).
set -u
OUT=${LC_OUT:-/out}
WORK=${LC_WORK:-/work}
MSIVM=${LC_MSIVM:-/lc/msivm}
QEMU=${LC_QEMU:-qemu-system-x86_64}
KERNEL=${LC_KERNEL:-/lc/l2-vmlinuz}
INITRD=${LC_INITRD:-/lc/l2-initramfs.cpio.gz}
TMO=${LC_TIMEOUT:-300}
d=$OUT/vfio
mkdir -p "$d"
: >"$d/results.txt"
up() { cut -d' ' -f1 /proc/uptime; }
stage() { echo "@@ [$(up)] vfio: $*"; }
res() { # PASS|FAIL name detail
	if [ "$1" = PASS ]; then echo "PASS vfio.$2 $3" >>"$d/results.txt"; else echo "FAIL vfio.$2: $3" >>"$d/results.txt"; fi
}
cond() { if [ "$1" = 0 ]; then res PASS "$2" "$3"; else res FAIL "$2" "$3"; fi; }
only=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^lc\.vfiovariants=//p')
want() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# bind_vfio PATH: the PCI function at PATH handed to vfio-pci; prints "driver group members".
bind_vfio() {
	echo vfio-pci >"$1/driver_override"
	[ -e "$1/driver" ] && echo "${1##*/}" >"$1/driver/unbind"
	echo "${1##*/}" >/sys/bus/pci/drivers_probe
	local drv grp
	drv=$(readlink "$1/driver" 2>/dev/null)
	grp=$(readlink "$1/iommu_group" 2>/dev/null)
	grp=${grp##*/}
	echo "${drv##*/} ${grp:-none} $(ls "/sys/kernel/iommu_groups/$grp/devices" 2>/dev/null | wc -l)"
}
# lc.vfiorom=SHA256 (check-linux.sh): L0 gave the NVMe an expansion ROM (romfile=); the msix
# variant passes it with rom=on and the guest reads it back (vfio-init's rom check)
romsha=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^lc\.vfiorom=//p')

# The NVMe controller (class 0x010802), bound to vfio-pci.
dev=
for p in /sys/bus/pci/devices/*; do
	[ "$(cat "$p/class" 2>/dev/null)" = 0x010802 ] && dev=$p && break
done
if [ -z "$dev" ]; then
	res FAIL bound "no NVMe controller in L1 ($(ls /sys/bus/pci/devices | wc -l) PCI functions)"
	exit 0
fi
bdf=$(basename "$dev")
set -- $(bind_vfio "$dev")
drv=$1 grp=$2 n=$3
[ "$drv" = vfio-pci ] && [ -c "/dev/vfio/$grp" ] && [ "$n" = 1 ]
cond $? bound "$bdf driven by $drv, IOMMU group $grp of $n device(s), /dev/vfio/$grp $([ -c "/dev/vfio/$grp" ] && echo present || echo missing)"
stage "$bdf bound to $drv, group $grp ($(dmesg | grep -c -i 'remapping') interrupt-remapping lines in dmesg)"

# KVM's injections in L1, where tracefs has them.
T=/sys/kernel/debug/tracing
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
trace_on() {
	[ -d $T/events/kvm ] || return 0
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/kvm/kvm_msi_set_irq/enable
	echo 1 >$T/events/kvm/kvm_set_irq/enable
	# VFIO's own interrupt handlers in L1 (its /proc/interrupts lines go with the VMM)
	echo 'name ~ "vfio*"' >$T/events/irq/irq_handler_entry/filter
	echo 1 >$T/events/irq/irq_handler_entry/enable
	echo 8192 >$T/buffer_size_kb
	echo 1 >$T/tracing_on
}
trace_count() { # EVENT: its lines in the trace since trace_on ("" without tracefs)
	[ -d $T/events/kvm ] || return 0
	grep -c "$1:" $T/trace
}

run() { # variant vmm irq expect power seek extra [device-path]
	v=$1 vmm=$2 irq=$3 expect=$4 power=$5 seek=$6 extra=$7 pdev=${8:-$dev}
	want "$v" || return 0
	vd=$d/$v
	mkdir -p "$vd"
	cmdline="console=ttyS0 loglevel=5 panic=-1 rdinit=/vfio-init lc.vfio=$v lc.seek=$seek lc.expect=$expect lc.power=$power${extra:+ $extra}"
	devx=
	[ "$v" = msix ] && [ -n "$romsha" ] && devx=,rom=on && cmdline="$cmdline lc.rom=$romsha"
	if [ "$vmm" = msivm ]; then
		set -- "$MSIVM" run -v --kernel "$KERNEL" --initrd "$INITRD" --cmdline "$cmdline" \
			--mem 256M --cpus 1 --serial "$vd/serial.log" --stats --stats-json "$vd/stats.json" \
			--device "path=$pdev,id=pt,irq=$irq$devx" ${LC_HIDE:+--cpuid-hide "$LC_HIDE"}
	else
		qcpu=host
		for f in $(echo "${LC_HIDE:-}" | tr ',' ' '); do qcpu="$qcpu,-$f"; done
		set -- "$QEMU" -enable-kvm -M q35 -cpu "$qcpu" -smp 1 -m 256M -nodefaults -no-user-config \
			-display none -serial "file:$vd/serial.log" -kernel "$KERNEL" -initrd "$INITRD" \
			-append "$cmdline" -device "vfio-pci,host=${pdev##*/},rombar=0"
	fi
	printf '%s\n' "$*" >"$vd/vmm.cmd"
	nreboot=$(echo "$power" | tr ',' '\n' | grep -c -x reboot)
	tmo=$((TMO + nreboot * TMO / 2))
	trace_on
	stage "$v: boot $vmm (irq=$irq expect=$expect power=$power${extra:+ $extra}, timeout ${tmo}s)"
	t0=$(up)
	timeout -k 5 "$tmo" "$@" </dev/null >"$vd/vmm.out" 2>"$vd/vmm.err"
	st=$?
	msi=$(trace_count kvm_msi_set_irq) lvl=$(trace_count kvm_set_irq)
	hi=$(trace_count irq_handler_entry)
	[ -d $T/events/kvm ] && echo 0 >$T/tracing_on
	echo "exit $st after $(awk -v a="$(up)" -v b="$t0" 'BEGIN { printf "%.0f", a - b }')s" >"$vd/vmm.status"
	stage "$v: $vmm exited $st; VFIO's handlers in L1 ran ${hi:-?} times; KVM kvm_msi_set_irq ${msi:-?} kvm_set_irq ${lvl:-?}"
	[ "$st" = 0 ]
	cond $? "$v.exit" "$vmm exit status $st ($(tail -n 1 "$vd/vmm.err" 2>/dev/null | cut -c1-100))"
	# The guest's verdicts.
	tr -d '\r' <"$vd/serial.log" | sed -n 's/.*lc: CHECK vfio\.\([^ ]*\) \(PASS\|FAIL\) *\(.*\)/\2 \1 \3/p' |
		while read -r verdict name detail; do res "$verdict" "$v.$name" "$detail"; done
	gi=$(tr -d '\r' <"$vd/serial.log" | sed -n 's/.*lc: DATA vfio.irqs \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	# VFIO in L1 took the device's interrupts (as many as the guest saw, give or take the
	# driver's setup), and KVM injected them: by irqfd (MSI) or the resampling irqfd (INTx).
	if [ -n "$msi" ]; then
		[ "$gi" -ge 1000 ] && [ "$hi" -ge "$gi" ]
		cond $? "$v.host-irqs" "VFIO's interrupt handlers in L1 ran $hi times (irq_handler_entry), the guest took $gi under I/O"
		if [ "$expect" = intx ]; then inj=$lvl; else inj=$msi; fi
		[ "$inj" -ge "$gi" ]
		cond $? "$v.kvm-inject" "KVM in L1 injected $inj ($( [ "$expect" = intx ] && echo kvm_set_irq || echo kvm_msi_set_irq)) for the guest's $gi"
	fi
	if [ "$vmm" = msivm ]; then
		j=$(tr -d ' \n' <"$vd/stats.json" 2>/dev/null)
		relayed=$(echo "$j" | sed -n 's/.*"type":"vfio"[^]]*"relayed":\([0-9]*\).*/\1/p')
		[ -z "$relayed" ] && relayed=$(echo "$j" | sed -n 's/.*"relayed":\([0-9]*\).*/\1/p')
		errs=$(echo "$j" | sed -n 's/.*"device_errors":\([0-9]*\).*/\1/p')
		[ "$relayed" = 0 ] && [ "$errs" = 0 ]
		cond $? "$v.no-relay" "msivm relayed ${relayed:-?} interrupts of unmasked vectors itself, ${errs:-?} device errors (--stats-json)"
	fi
}

# The msi variant's NIC: L1's vmxnet3 (15ad:07b0) to vfio-pci, L1's virtio-net on the same L0
# hub as its peer (10.77.0.1), an echo server that keeps what it echoes.
net_setup() {
	nic= peer=
	for p in /sys/bus/pci/devices/*; do
		[ "$(cat "$p/vendor" 2>/dev/null):$(cat "$p/device" 2>/dev/null)" = 0x15ad:0x07b0 ] && nic=$p
		[ "$(basename "$(readlink "$p/driver" 2>/dev/null)")" = virtio-pci ] && [ -d "$p"/virtio*/net ] &&
			peer=$(ls "$p"/virtio*/net | head -n 1)
	done
	if [ -z "$nic" ] || [ -z "$peer" ]; then
		res FAIL msi.bound "no vmxnet3 (${nic:-missing}) or no virtio-net peer (${peer:-missing}) in L1"
		return 1
	fi
	set -- $(bind_vfio "$nic")
	[ "$1" = vfio-pci ] && [ -c "/dev/vfio/$2" ] && [ "$3" = 1 ]
	cond $? msi.bound "vmxnet3 ${nic##*/} driven by $1, IOMMU group $2 of $3 device(s); peer $peer"
	ip addr add 10.77.0.1/24 dev "$peer" && ip link set "$peer" up
	mkdir -p "$d/msi"
	# The whole pattern first, then all of it back: echoing as it comes (tee) deadlocked now and
	# then, once the bytes in flight filled both ways' buffers while the guest's nc, blocked
	# writing, read nothing (380944 of 1048576 bytes echoed, then pings went on fine).
	printf '#!/bin/sh\ncat >%s\nexec cat %s\n' "$d/msi/received" "$d/msi/received" >"$WORK/vfio-echo"
	chmod 755 "$WORK/vfio-echo"
	timeout "$TMO" nc -l -p 5000 -e "$WORK/vfio-echo" </dev/null >/dev/null 2>&1 &
	echo_pid=$!
	stage "msi: vmxnet3 ${nic##*/} bound to $1 (group $2), peer $peer 10.77.0.1, echo server pid $echo_pid"
}

run msix msivm msix msix reboot,off 1 ""
run intx msivm msix intx off 2 pci=nomsi
if want msi && net_setup; then
	run msi msivm msi msi off 0 "lc.dev=net lc.ip=10.77.0.2/24 lc.peer=10.77.0.1" "$nic"
	kill "$echo_pid" 2>/dev/null
	yes "lcvfio-msi-pattern-0123456789abcdef" | head -c 1048576 >"$WORK/vfio-pat"
	cmp -s "$WORK/vfio-pat" "$d/msi/received"
	cond $? msi.received "the echo server in L1 kept $(wc -c <"$d/msi/received" 2>/dev/null || echo 0) bytes: $(cmp -s "$WORK/vfio-pat" "$d/msi/received" && echo the pattern || echo not the pattern)"
fi
run qemu qemu - msix off 3 ""
run qintx qemu - intx off 4 pci=nomsi
stage "done: $(grep -c '^PASS' "$d/results.txt") PASS, $(grep -c '^FAIL' "$d/results.txt") FAIL"
