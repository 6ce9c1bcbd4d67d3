#!/bin/sh
# run-checks.sh: the host side of `make check-linux`. Runs inside the nested L1 (busybox sh, started
# by tests/linux/l1-init) or directly on a host with hardware KVM (started by check-linux.sh).
#
#   run-checks.sh CONFIG...      CONFIG: msix msi intx nomsi vhost qemu qnomsi (kata: run-kata.sh)
#   run-checks.sh --bootloop N CONFIG...   the unexpected-reset experiment (see bootloop below)
#
# For each configuration it prepares the disk images, a tap with the host address, an iperf3
# server and one-shot nc listeners, boots the L2 test guest (tests/linux/guest-init) under msivm
# or QEMU, waits for the VMM to exit (with a timeout), then checks its exit status and the disk
# images and collects the guest's verdicts from the serial log. It writes LC_OUT/CONFIG/results.txt
# ("PASS name detail" / "FAIL name: why") and the logs (serial.log, hvc.out, vmm.err, vmm.out,
# host.log) next to it. Progress lines start with "@@ "; live guest verdicts with "  CONFIG | lc:".
#
# Environment (defaults are the paths inside L1):
#   LC_OUT (/out), LC_WORK (/work: images and scratch, a tmpfs in L1), LC_MSIVM (/lc/msivm),
#   LC_QEMU (qemu-system-x86_64), LC_QEMU_DATA (firmware dir for qemu -L, empty: QEMU's default),
#   LC_KERNEL, LC_INITRD (the L2 guest), LC_BB (busybox, for nc), LC_IP (iproute2's ip), LC_TAP (lctap0),
#   LC_NET (10.0.2: host .2, guest .15), LC_PORT (5211: iperf3; +1..+4 the nc listeners),
#   LC_TIMEOUT (seconds per configuration boot, default 300; each reboot adds half of it),
#   LC_FIO, LC_IPERF (workload seconds, default 4 and 3), LC_MIB (transfer size, default 2),
#   LC_SEQMIB (the sequential disk pattern, default LC_MIB), LC_L2EXTRA (appended to the L2 command line),
#   LC_MSIX_POWER (msix's power sequence, default acpi,kbd,triple,off; the nested L1 drops triple),
#   LC_LOOPDISK (configurations whose vda is a loop device, default msi), LC_DUMPALL (1: crash
#   dumps in every msivm configuration; each dump's JSON and the kernel messages in its RAM kept),
#   LC_KEEPCORE (1: the vhost configuration's panic core is kept, gzip'd, as panic.core.gz),
#   LC_SNAPSHOT (msi: only msi is snapshotted and restored mid-run; default: msix, msi and intx)
set -u
OUT=${LC_OUT:-/out}
WORK=${LC_WORK:-/work}
MSIVM=${LC_MSIVM:-/lc/msivm}
QEMU=${LC_QEMU:-qemu-system-x86_64}
QEMU_DATA=${LC_QEMU_DATA:-}
KERNEL=${LC_KERNEL:-/lc/l2-vmlinuz}
INITRD=${LC_INITRD:-/lc/l2-initramfs.cpio.gz}
BB=${LC_BB:-busybox}
VSK=${LC_VSK:-vsk} # tests/linux/vsk.c: the vsock checks' host ends
IP=${LC_IP:-ip} # iproute2 (busybox's ip has no tuntap; busybox sh prefers its applets, hence a path)
TAP=${LC_TAP:-lctap0}
NET=${LC_NET:-10.0.2}
PORT=${LC_PORT:-5211}
TMO=${LC_TIMEOUT:-300}
FIO=${LC_FIO:-4}
IPERF=${LC_IPERF:-3}
MIB=${LC_MIB:-2}
SEQMIB=${LC_SEQMIB:-$MIB}
BIGMTU=9000
VDA_MIB=$((48 + SEQMIB + 1)) # layout: see guest-init
VDB_MIB=4

up() { cut -d' ' -f1 /proc/uptime; }
T0=$(up)
el() { awk -v a="$(up)" -v b="$T0" 'BEGIN { printf "%.0f", a - b }'; }
stage() { echo "@@ [$(el)s] $*"; }
sha() { sha256sum "$@" | cut -d' ' -f1; }
short() { echo "$1" | cut -c1-12; }

pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -n "${vmm_pid:-}" ] && kill -TERM "$vmm_pid" 2>/dev/null && sleep 1 && kill -KILL "$vmm_pid" 2>/dev/null
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	pids= vmm_pid=
	$IP link del "$TAP" 2>/dev/null
	[ -n "${loopdev:-}" ] && losetup -d "$loopdev" 2>/dev/null
	loopdev=
	return 0
}
# The block topology Linux must show for a disk backed by $1 (a file or a block device), as
# "logical,physical,minimum_io,optimal_io" bytes: a block device's own; a file's 512-byte
# logical blocks and its I/O block size (a power of two in [512, 4096]) as physical block.
topo_of() {
	if [ -b "$1" ]; then
		q=/sys/block/$(basename "$1")/queue
		l=$(cat $q/logical_block_size) p=$(cat $q/physical_block_size)
		m=$(cat $q/minimum_io_size) o=$(cat $q/optimal_io_size)
	else
		b=$(stat -c %o "$1") l=512 p=512 o=0
		while [ $((p * 2)) -le "$b" ] && [ $((p * 2)) -le 4096 ]; do p=$((p * 2)); done
		m=$p
	fi
	[ "$m" -ge "$p" ] || m=$p # Linux's minimum_io_size is at least the physical block
	echo "$l,$p,$m,$o"
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup' EXIT

# Configuration -> VMM, irq mode of every device, expected Linux mode, power sequence, extras.
config() {
	vmm=msivm irq=msix expect=msix power=off extra= noreboot= loopdisk= cpus=2 mem=1G api= net=tap dump=
	vsock= snap=
	case "$1" in
	# msix also pauses and resumes the running guest through the API socket; it then
	# snapshots it, kills its msivm and goes on in the msivm restored from the snapshot
	# (snap=after: its vsock connections are reset, its reboots are the restored msivm's;
	# intx is snapshotted like msi; LC_SNAPSHOT=msi leaves msix and intx out); msix and intx
	# carry a virtio-vsock device (--vsock: streams both ways through unix sockets, vsock=unix)
	msix) power=${LC_MSIX_POWER:-acpi,kbd,triple,off} api=1 vsock=unix
		[ "${LC_SNAPSHOT:-}" != msi ] && snap=after ;;
	# msi, intx and qemu end with the host pressing the guest's power button (msivm: SIGTERM;
	# QEMU: system_powerdown on its monitor), on which the guest's init powers off.
	# msi is snapshotted mid-run through the API, its msivm killed, and the rest of its checks
	# run in the msivm restored from the snapshot (snap=1), and so is intx
	msi) irq=msi expect=intx power=button api=1 snap=1 ;;
	intx) irq=intx expect=intx power=button vsock=unix
		[ "${LC_SNAPSHOT:-}" != msi ] && api=1 snap=1 ;;
	# nomsi's vsock is vhost-vsock's (the host's AF_VSOCK), its interrupts INTx through msivm
	nomsi) extra=pci=nomsi expect=intx power=reboot noreboot=1 vsock=vhost ;;
	# the NIC's data path in the host kernel (vhost-net on the same tap), otherwise like msix;
	# a keyboard-controller reboot (msivm rebuilds the NIC: a new vhost-net owner under seccomp),
	# then a kernel panic (sysrq c) that Linux's pvpanic driver reports: msivm exits 126 and
	# leaves a crash dump (--dump-on-crash)
	# vhost-vsock too (--vsock backend=vhost: the host's AF_VSOCK, interrupts by irqfd)
	vhost) net=vhost power=kbd,panic dump=1 vsock=vhost ;;
	# QEMU is the reference for the checks, not for msivm's reset paths: it only powers off
	# (under nested TCG its reboots hung: once after a triple-fault reset, once after an
	# ACPI reset, each until the configuration's timeout).
	# Its vsock is vhost-vsock-pci, the reference for the vsock checks (vectors=4: a vector per
	# queue and one for config, as msivm offers; with QEMU's default 3 Linux shares one)
	# It is migrated to a file mid-run and restored in a new QEMU (-incoming), the reference for
	# msivm's api.snapshot-restore (LC_SNAPSHOT=msi leaves it out).
	qemu) vmm=qemu irq= power=button vsock=vhost
		[ "${LC_SNAPSHOT:-}" != msi ] && api=1 snap=1 ;;
	# qnomsi: QEMU's guest booted pci=nomsi (every device on INTx through QEMU's IOAPIC), the
	# reference for nomsi (issue 29's rounds compare INTx under both VMMs); not in the defaults
	qnomsi) vmm=qemu irq= extra=pci=nomsi expect=intx power=button vsock=vhost ;;
	# variants for the reset experiment (--bootloop): no irqfd (KVM_SIGNAL_MSI), one vCPU
	msixsig) irq=msix,irqpath=signal-msi ;;
	msix1) cpus=1 ;;
	msix2g) mem=2G ;; # the Linux lab's guest size
	qemu2g) vmm=qemu irq= mem=2G ;;
	*) return 1 ;;
	esac
	# vda through a loop device (BLKDISCARD, the block-device topology ioctls, asynchronous
	# io_uring completions) in the configurations LC_LOOPDISK names (default msi)
	case ",${LC_LOOPDISK-msi}," in *",$1,"*) loopdisk=1 ;; esac
	# LC_DUMPALL=1: every msivm configuration keeps a crash dump's JSON view and the kernel
	# messages found in its RAM (an unasked triple fault's evidence, issue 29)
	[ -n "${LC_DUMPALL:-}" ] && [ "$vmm" = msivm ] && dump=1
	return 0
}

res() { # PASS|FAIL name detail
	if [ "$1" = PASS ]; then
		echo "PASS $2 $3" >>"$d/results.txt"
	else
		echo "FAIL $2: $3" >>"$d/results.txt"
	fi
}
cond() { # status name detail
	if [ "$1" = 0 ]; then res PASS "$2" "$3"; else res FAIL "$2" "$3"; fi
}
# The value of "lc: DATA KEY VALUE" in the serial log.
data() { tr -d '\r' <"$d/serial.log" | sed -n "s/.*lc: DATA $1 \([^ ]*\).*/\1/p" | head -n1; }

# Disk images, the tap with the host address, the iperf3 server and the nc listeners for
# configuration $cfg (variables from config()); sets vda vdb vdbsum txsum vdapath loopdev topo.
prepare_host() {
	vda=$WORK/vda.img vdb=$WORK/vdb.img
	rm -f "$vda" "$vdb"
	truncate -s ${VDA_MIB}M "$vda"
	# data where the guest will discard: zeroes there afterwards mean the discard reached the image
	dd if=/dev/urandom of="$vda" bs=1M seek=40 count=1 conv=notrunc 2>/dev/null
	dd if=/dev/urandom of="$vdb" bs=1M count=$VDB_MIB 2>/dev/null
	vdbsum=$(sha "$vdb")
	[ -s "$WORK/tx.bin" ] || dd if=/dev/urandom of="$WORK/tx.bin" bs=1M count="$MIB" 2>/dev/null
	txsum=$(sha "$WORK/tx.bin")
	vdapath=$vda loopdev=
	if [ -n "$loopdisk" ] && [ "$vmm" = msivm ]; then
		loopdev=$(losetup -f) && losetup "$loopdev" "$vda" && vdapath=$loopdev ||
			{ stage "$cfg: losetup failed; vda stays a file"; loopdev=; }
	fi
	topo=$(topo_of "$vdapath")
	printf 'lc-hvc-in %s\n' "$cfg" >"$d/hvc.in"

	$IP link del "$TAP" 2>/dev/null
	{
		$IP tuntap add dev "$TAP" mode tap &&
			$IP link set "$TAP" mtu $BIGMTU &&
			$IP addr add "$NET.2/24" dev "$TAP" &&
			$IP link set "$TAP" up
	} >"$d/host.log" 2>&1 || { stage "$cfg: tap setup failed: $(cat "$d/host.log")"; }
	iperf3 -s -p "$PORT" >"$d/iperf3-server.log" 2>&1 &
	pids="$pids $!"
	# guest -> host (normal and big MTU), host -> guest (both)
	$BB nc -l -p $((PORT + 1)) -e sh -c "cat >$d/nc-tx.bin" </dev/null >>"$d/host.log" 2>&1 &
	pids="$pids $!"
	$BB nc -l -p $((PORT + 2)) -e cat "$WORK/tx.bin" </dev/null >>"$d/host.log" 2>&1 &
	pids="$pids $!"
	$BB nc -l -p $((PORT + 3)) -e sh -c "cat >$d/nc-tx-bigmtu.bin" </dev/null >>"$d/host.log" 2>&1 &
	pids="$pids $!"
	$BB nc -l -p $((PORT + 4)) -e cat "$WORK/tx.bin" </dev/null >>"$d/host.log" 2>&1 &
	pids="$pids $!"
	# vsock: the guest's stream to host port 5000 lands at PATH_5000 (unix) or on this host's
	# AF_VSOCK port 5000 (vhost)
	rm -f "$WORK/vsock.sock" "$WORK/vsock.sock_5000" "$d/vsock-tx.bin"
	vsock_sent=
	# ... and an echo service on host port 5003 for the guest's 64 connections at once
	rm -f "$WORK/vsock.sock_5003"
	case "$vsock" in
	unix) $VSK unix-listen "$WORK/vsock.sock_5000" >"$d/vsock-tx.bin" 2>>"$d/host.log" &
		pids="$pids $!"
		$VSK unix-echo "$WORK/vsock.sock_5003" 64 2>>"$d/host.log" & ;;
	vhost) $VSK vsock-listen 5000 >"$d/vsock-tx.bin" 2>>"$d/host.log" &
		pids="$pids $!"
		$VSK vsock-echo 5003 64 2>>"$d/host.log" & ;;
	esac
	[ -n "$vsock" ] && pids="$pids $!"

}

# Boots the L2 guest under $vmm in the background (vmm_pid), logs in $d; sets tmo and t_start.
start_vmm() {
	# loglevel=5: errors and warnings reach the console, the info lines (slow under nested TCG) do not
	cmdline="console=ttyS0 loglevel=5 panic=-1 lc.cfg=$cfg lc.expect=$expect lc.power=$power lc.host=$NET.2"
	cmdline="$cmdline lc.ip=$NET.15 lc.ports=$PORT,$((PORT + 1)),$((PORT + 2)),$((PORT + 3)),$((PORT + 4))"
	cmdline="$cmdline lc.mtu=$BIGMTU lc.rxsum=$txsum lc.vda=$((VDA_MIB * 1048576)) lc.vdb=$((VDB_MIB * 1048576))"
	[ "$vmm" = msivm ] && cmdline="$cmdline lc.topo=$topo lc.hvcin=1"
	[ -n "$vsock" ] && cmdline="$cmdline lc.vsock=1"
	[ -n "$api" ] && cmdline="$cmdline lc.tick=30"
	cmdline="$cmdline lc.vdbsum=$vdbsum lc.fio=$FIO lc.iperf=$IPERF lc.mib=$MIB lc.seqmib=$SEQMIB${extra:+ $extra}${LC_L2EXTRA:+ $LC_L2EXTRA}"
	: >"$d/serial.log"
	: >"$d/hvc.out"
	if [ "$vmm" = msivm ]; then
		set -- "$MSIVM" run -v --kernel "$KERNEL" --initrd "$INITRD" --cmdline "$cmdline" \
			--mem "$mem" --cpus "$cpus" --serial "$d/serial.log" \
			--disk "path=$vdapath,irq=$irq" --disk "path=$vdb,ro,irq=$irq" \
			--net "backend=$net,ifname=$TAP,mtu=$BIGMTU,irq=$irq" \
			--console "in=$d/hvc.in,out=$d/hvc.out,irq=$irq" --rng "irq=$irq" --stats ${noreboot:+--no-reboot} \
			${api:+--api-socket "$WORK/api.sock"} ${dump:+--dump-on-crash "$WORK/dump"} \
			${LC_HIDE:+--cpuid-hide "$LC_HIDE"} \
			${vsock:+--vsock "cid=3,irq=$irq,$([ "$vsock" = vhost ] && echo backend=vhost || echo "path=$WORK/vsock.sock")"}
	else
		qcpu=host
		for f in $(echo "${LC_HIDE:-}" | tr ',' ' '); do qcpu="$qcpu,-$f"; done
		set -- "$QEMU" ${QEMU_DATA:+-L "$QEMU_DATA"} -enable-kvm -M q35 -cpu "$qcpu" -smp 2 -m "$mem" \
			-nodefaults -no-user-config -display none -serial "file:$d/serial.log" ${noreboot:+-no-reboot} \
			-monitor "pipe:$WORK/mon" \
			-kernel "$KERNEL" -initrd "$INITRD" -append "$cmdline" \
			-drive "file=$vda,if=none,id=d0,format=raw,discard=unmap" -device virtio-blk-pci,drive=d0 \
			-drive "file=$vdb,if=none,id=d1,format=raw,readonly=on" -device virtio-blk-pci,drive=d1 \
			-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
			-device "virtio-net-pci,netdev=n0,host_mtu=$BIGMTU,romfile=" \
			-device virtio-serial-pci,max_ports=1,vectors=5 -chardev "file,id=c0,path=$d/hvc.out" \
			-device virtconsole,chardev=c0 \
			-device virtio-rng-pci ${vsock:+-device vhost-vsock-pci,guest-cid=3,vectors=4}
	fi
	rm -rf "$WORK/mon.in" "$WORK/mon.out" "$WORK/api.sock" "$WORK/api.res" "$WORK/snap.res" "$WORK/dump" \
		"$WORK/snap.state" "$WORK/snap.mem" "$d/serial2.log"
	mkdir -p "$WORK/dump"
	[ "$vmm" = qemu ] && mkfifo "$WORK/mon.in" "$WORK/mon.out" # QEMU's monitor (opened read-write)
	printf '%s\n' "$*" >"$d/vmm.cmd"
	[ "$vmm" = qemu ] && printf '%s\n' "$@" >"$WORK/qemu.argv" # for qemu_snapshot_restore
	nreboot=$(echo "$power" | tr ',' '\n' | grep -c -v -x 'off\|button')
	tmo=$((TMO + nreboot * TMO / 2))
	stage "$cfg: boot $vmm (irq=${irq:-qemu-default}$([ "$vmm" = msivm ] && echo " net=$net") expect=$expect power=$power${extra:+ $extra}${noreboot:+ no-reboot}, timeout ${tmo}s)"
	t_start=$(up)
	"$@" </dev/null >"$d/vmm.out" 2>"$d/vmm.err" &
	vmm_pid=$!
}

# The host presses the guest's power button: msivm on SIGTERM, QEMU on system_powerdown.
press_button() {
	if [ "$vmm" = msivm ]; then
		kill -TERM "$vmm_pid" 2>/dev/null
	else
		echo system_powerdown >"$WORK/mon.in"
		cat "$WORK/mon.out" >/dev/null 2>&1 & # drain the monitor's answers
		pids="$pids $!"
	fi
}

# Pauses the running guest through msivm's API for 2 s and resumes it; prints what it saw as
# "pause=RC state=STATE grew=BYTES resume=RC ticks=BEFORE,AFTER" (grew: console bytes written
# while paused; the guest prints a tick every 0.25 s from just before the pause (lc.tick), so a
# tick before it and one after the resume show the guest was busy printing all through: a quiet
# console then means paused, not idle). Each request gives up after API_TIMEOUT s (status 124):
# an msivm that stopped answering is its failure, and this loop (and its progress lines) go on.
API_TIMEOUT=${LC_API_TIMEOUT:-60}
api_pause_resume() {
	local r=$WORK/api.sock p q st n1 n2 k1 k2 after=0 i=0
	"$MSIVM" remote --api-socket "$r" --timeout "$API_TIMEOUT" pause >/dev/null 2>"$WORK/api.err"
	p=$?
	st=$("$MSIVM" remote --api-socket "$r" --timeout "$API_TIMEOUT" info 2>>"$WORK/api.err" |
		sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')
	n1=$(wc -c <"$d/serial.log")
	k1=$(grep -c 'lc: tick' "$d/serial.log")
	sleep 2
	n2=$(wc -c <"$d/serial.log")
	k2=$(grep -c 'lc: tick' "$d/serial.log")
	"$MSIVM" remote --api-socket "$r" --timeout "$API_TIMEOUT" resume >/dev/null 2>>"$WORK/api.err"
	q=$?
	while [ $i -lt 100 ] && [ "$after" = 0 ]; do # up to 20 s for the next tick
		[ "$(grep -c 'lc: tick' "$d/serial.log")" -gt "$k2" ] && after=1
		sleep 0.2
		i=$((i + 1))
	done
	echo "pause=$p state=${st:-none} grew=$((n2 - n1)) resume=$q ticks=$k1,$after$([ -s "$WORK/api.err" ] && echo " ($(head -c 160 "$WORK/api.err" | tr '\n' ' '))")"
}

# The restored VMM (vmm_pid) writes its serial console to serial2.log: copies it into serial.log
# as it comes and waits up to 60 s for a tick after the k1 seen before the snapshot; sets after
# (1: the restored guest printed one) and alive (1: the VMM still runs).
follow_restored() {
	local i=0
	while [ ! -e "$d/serial2.log" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	tail -n +1 -f "$d/serial2.log" >>"$d/serial.log" 2>/dev/null &
	pids="$pids $!"
	i=0
	while [ $i -lt 300 ] && [ "$after" = 0 ]; do
		[ "$(grep -c 'lc: tick' "$d/serial.log")" -gt "$k1" ] && after=1
		sleep 0.2
		i=$((i + 1))
	done
	kill -0 "$vmm_pid" 2>/dev/null && alive=1
}

# Snapshots the running guest through the API (it stays paused), kills its msivm with SIGKILL
# (the snapshot is all that is left of it), and restores it in a new msivm process on the same
# disks, tap and console files (serial output to serial2.log, copied into serial.log as it comes);
# vmm_pid becomes the new process. Prints "snapshot=RC ms=MS state=BYTES mem=KIB killed=RC
# restored=0|1 ticks=BEFORE,AFTER" (AFTER 1: the restored guest printed a tick within 60 s).
api_snapshot_restore() {
	local r=$WORK/api.sock s k1 after=0 i=0 kr alive=0
	rm -f "$WORK/snap.state" "$WORK/snap.mem" # a snapshot never replaces a file
	"$MSIVM" remote --api-socket "$r" --timeout "$API_TIMEOUT" snapshot --state "$WORK/snap.state" \
		--mem "$WORK/snap.mem" --paused >"$WORK/api.snap" 2>"$WORK/api.err"
	s=$?
	k1=$(grep -c 'lc: tick' "$d/serial.log")
	kill -KILL "$vmm_pid" 2>/dev/null
	kr=$?
	wait "$vmm_pid" 2>/dev/null
	rm -f "$r" "$WORK/vsock.sock" # what the killed msivm could not remove
	"$MSIVM" run -v --restore "state=$WORK/snap.state,mem=$WORK/snap.mem" --serial "$d/serial2.log" \
		--stats --api-socket "$r" ${dump:+--dump-on-crash "$WORK/dump"} </dev/null >>"$d/vmm.out" \
		2>>"$d/vmm.err" &
	vmm_pid=$!
	follow_restored
	echo "snapshot=$s ms=$(sed -n 's/.*"ms":\([0-9]*\).*/\1/p' "$WORK/api.snap") state=$(stat -c %s "$WORK/snap.state" 2>/dev/null) mem=$(du -k "$WORK/snap.mem" 2>/dev/null | cut -f1) killed=$kr restored=$alive ticks=$k1,$after$([ -s "$WORK/api.err" ] && echo " ($(head -c 160 "$WORK/api.err" | tr '\n' ' '))")"
}

# QEMU's side of api_snapshot_restore, the reference: the running guest migrated through the
# monitor into a file (HMP migrate "exec:cat >FILE"; QEMU's source ends paused), its QEMU killed
# with SIGKILL, a new QEMU on the same command line with -incoming "exec:cat FILE" (the serial
# console to serial2.log, copied into serial.log as it comes; the virtconsole's file appended to),
# which runs the guest on once the stream is loaded. Prints api_snapshot_restore's line (ms: the
# migration as the host saw it; state: the stream, RAM included; mem=0).
qemu_snapshot_restore() {
	local s=1 st= k1 after=0 i=0 kr alive=0 t0 ms reader a
	cat "$WORK/mon.out" >"$WORK/mon.log" 2>/dev/null &
	reader=$!
	t0=$(up)
	echo "migrate \"exec:cat >$WORK/snap.state\"" >"$WORK/mon.in"
	while [ $i -lt 600 ]; do # up to 120 s; the monitor answers once the migration ended
		echo "info migrate" >"$WORK/mon.in"
		sleep 0.2
		st=$(tr -d '\r' <"$WORK/mon.log" | sed -n 's/^Migration status: \([a-z-]*\).*/\1/p' | tail -n1)
		case "$st" in completed) s=0 && break ;; failed | cancelled) break ;; esac
		i=$((i + 1))
	done
	ms=$(awk -v a="$(up)" -v b="$t0" 'BEGIN { printf "%.0f", (a - b) * 1000 }')
	k1=$(grep -c 'lc: tick' "$d/serial.log")
	kill -KILL "$vmm_pid" 2>/dev/null
	kr=$?
	wait "$vmm_pid" 2>/dev/null
	kill "$reader" 2>/dev/null
	set --
	while IFS= read -r a; do
		case "$a" in
		"file:$d/serial.log") a="file:$d/serial2.log" ;;
		"file,id=c0,path=$d/hvc.out") a="$a,append=on" ;;
		esac
		set -- "$@" "$a"
	done <"$WORK/qemu.argv"
	"$@" -incoming "exec:cat $WORK/snap.state" </dev/null >>"$d/vmm.out" 2>>"$d/vmm.err" &
	vmm_pid=$!
	follow_restored
	echo "snapshot=$s ms=$ms state=$(stat -c %s "$WORK/snap.state" 2>/dev/null) mem=0 killed=$kr restored=$alive ticks=$k1,$after$([ "$s" != 0 ] && echo " (migration status: ${st:-none})")"
}

# The vhost-net worker of the running msivm: prints "vhost-TID (how)" and returns 0 when there is
# one. The kernel names it after the thread that made msivm the owner (VHOST_SET_OWNER): a thread
# of msivm itself since Linux 6.4 (vhost_task), a kernel thread before.
vhost_worker() {
	local t c
	for t in /proc/$vmm_pid/task/*; do
		c=$(cat "$t/comm" 2>/dev/null)
		case "$c" in vhost-*) echo "$c (a thread of msivm)" && return 0 ;; esac
	done
	for t in /proc/[0-9]*/comm; do
		c=$(cat "$t" 2>/dev/null)
		case "$c" in vhost-[0-9]*) [ -d "/proc/$vmm_pid/task/${c#vhost-}" ] && echo "$c (a kernel thread)" && return 0 ;; esac
	done
	return 1
}

# Follows the VMM started by start_vmm until it exits or its timeout passes (then stops it);
# sets rc why t_start t_off t_boot1 t_end. Returns 1 when the VMM survived SIGKILL (an L1 fault).
# The VMM's threads as the host kernel sees them: name, state (R running or runnable, S sleeping),
# the CPU it last ran on, what it waits in, its system call. Taken before a stuck guest's VMM is
# stopped: a vCPU thread runnable behind another vCPU's on one L1 CPU is the nested rig's lock-
# holder stall (docs/linux-guests.md); one asleep in a futex is the VMM's own lock.
vmm_threads() {
	local t st
	for t in /proc/"$vmm_pid"/task/*; do
		st=$(cat "$t/stat" 2>/dev/null) || continue
		echo "$(cat "$t/comm" 2>/dev/null) state=$(echo "$st" | awk '{ print $3 }') cpu=$(echo "$st" | awk '{ print $39 }') wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
	done
}

wait_vmm() {
	# Live guest verdicts and progress.
	rm -f "$WORK/live"
	mkfifo "$WORK/live"
	awk -v c="$cfg" '/lc: (CHECK|pass|power)/ { sub(/\r$/, ""); sub(/.*lc: /, "lc: "); print "  " c " | " $0; fflush() }' <"$WORK/live" &
	pids="$pids $!"
	tail -f "$d/serial.log" 2>/dev/null >"$WORK/live" &
	pids="$pids $!"
	why=exited t_off= t_boot1= t_press= t_note=$(up) vworker=
	while kill -0 "$vmm_pid" 2>/dev/null; do
		if awk -v a="$(up)" -v b="$t_note" 'BEGIN { exit !(a - b > 60) }'; then
			t_note=$(up)
			stage "$cfg: running for $(awk -v a="$t_note" -v b="$t_start" 'BEGIN { printf "%.0f", a - b }')s; L2 console: $(tr -d '\r' <"$d/serial.log" | grep -v '^ *$' | tail -n1 | cut -c1-110)"
		fi
		if [ -z "$t_off" ] && cat "$d/serial.log" "$d/serial2.log" 2>/dev/null |
			grep -q 'lc: power [0-9]* poweroff'; then t_off=$(up); fi
		if [ -z "$t_boot1" ] && grep -q 'lc: pass 1 begin' "$d/serial.log"; then t_boot1=$(up); fi
		if [ -n "$api" ] && [ ! -e "$WORK/api.res" ] && grep -q 'lc: CHECK blk.ro-read' "$d/serial.log"; then
			if [ "$snap" = 1 ] && [ "$vmm" = qemu ]; then qemu_snapshot_restore >"$WORK/api.res"
			elif [ "$snap" = 1 ]; then api_snapshot_restore >"$WORK/api.res"
			else api_pause_resume >"$WORK/api.res"; fi
		fi
		if [ "$snap" = after ] && [ -e "$WORK/api.res" ] && [ ! -e "$WORK/snap.res" ]; then
			api_snapshot_restore >"$WORK/snap.res"
		fi
		# net=vhost: look for msivm's vhost-net worker while the guest uses its NIC
		if [ "$net" = vhost ] && [ -z "$vworker" ] && grep -q 'lc: CHECK net' "$d/serial.log" &&
			! grep -q 'lc: CHECK net.rx-errors' "$d/serial.log"; then
			vworker=$(vhost_worker)
		fi
		# vsock: once the guest listens on port 53, the host sends and closes at once
		if [ -n "$vsock" ] && [ "$vsock_sent" = 1 ] && grep -q 'lc: vsock listening 53' "$d/serial.log"; then
			vsock_sent=2
			if [ "$vsock" = unix ]; then
				$VSK unix-connect-close "$WORK/vsock.sock" 53 <"$WORK/tx.bin" >/dev/null 2>>"$d/host.log" &
			else
				$VSK vsock-send-close 3 53 <"$WORK/tx.bin" 2>>"$d/host.log" &
			fi
		fi
		# vsock: once the guest listens on port 52, the host connects to it through PATH
		if [ -n "$vsock" ] && [ -z "$vsock_sent" ] && grep -q 'lc: vsock listening 52' "$d/serial.log"; then
			vsock_sent=1
			if [ "$vsock" = unix ]; then
				$VSK unix-connect "$WORK/vsock.sock" 52 <"$WORK/tx.bin" >/dev/null 2>>"$d/host.log" &
			else
				$VSK vsock-send 3 52 <"$WORK/tx.bin" 2>>"$d/host.log" &
			fi
			pids="$pids $!"
		fi
		if [ -z "$t_press" ] && grep -q 'lc: power [0-9]* button wait' "$d/serial.log"; then
			t_press=$(up)
			press_button
		fi
		if awk -v a="$(up)" -v b="$t_start" -v t="$tmo" 'BEGIN { exit !(a - b > t) }'; then
			why=timeout
			vmm_threads >"$d/vmm.threads"
			stage "$cfg: timeout; the VMM's threads: $(tr '\n' ';' <"$d/vmm.threads")"
			kill -TERM "$vmm_pid" 2>/dev/null
			sleep 3
			kill -KILL "$vmm_pid" 2>/dev/null
			break
		fi
		sleep 0.2
	done
	# A process SIGKILL cannot end within 20 s is stuck inside the kernel (here: L1's KVM under
	# TCG), which no VMM can cause legitimately: say so and end this host (exit 99) instead of
	# waiting for it forever.
	i=0
	while kill -0 "$vmm_pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
	if kill -0 "$vmm_pid" 2>/dev/null; then
		st=$(awk '{ print $3 }' "/proc/$vmm_pid/stat" 2>/dev/null)
		stage "$cfg: L1 fault: $vmm (pid $vmm_pid, state ${st:-?}) survived SIGKILL for 20 s: stuck in the host kernel"
		res FAIL vmm.stuck "$vmm survived SIGKILL (state ${st:-?}): stuck in the host kernel ($why)"
		echo "rc=stuck why=$why" >"$d/vmm.status"
		return 1
	fi
	wait "$vmm_pid"
	rc=$?
	t_end=$(up)
	vmm_pid=
	# A restored msivm's console (serial2.log) reaches serial.log through a tail -f that looks once a
	# second: let it copy the last bytes before the checks read serial.log (up to 5 s; a round of
	# 2026-12-06 failed power.poweroff on a "lc: power 3 poweroff" that serial2.log had and the copy
	# did not yet, 0.3 s after the exit).
	if [ -e "$d/serial2.log" ]; then
		i=0
		while [ $i -lt 25 ] &&
			[ "$(tail -c 256 "$d/serial2.log" | md5sum)" != "$(tail -c 256 "$d/serial.log" | md5sum)" ]; do
			sleep 0.2
			i=$((i + 1))
		done
	fi
	# a VMM that exited within one 0.2 s look of the guest's poweroff line: the line came at the end
	# (a restored msivm's console is serial2.log, copied into serial.log by a tail that may lag)
	if [ -z "$t_off" ] && cat "$d/serial.log" "$d/serial2.log" 2>/dev/null |
		grep -q 'lc: power [0-9]* poweroff'; then t_off=$t_end; fi
}

# The last pass panicked on purpose (sysrq c): Linux's pvpanic-mmio driver must have bound
# msivm's QEMU0001 device and reported the panic, msivm must have exited 126 and left an x86-64
# ELF core with one NT_PRSTATUS note per vCPU and the guest's RAM (the core stays in L1).
panic_check() {
	local i=$1 core bound said seen typ notes size ram=$(($(echo "$mem" | tr -d G) * 1073741824))
	bound=$(sed -n "s/.*lc: power $i panic (pvpanic-mmio bound to \([0-9]*\) QEMU0001.*/\1/p" "$d/serial.log" | head -n1)
	grep -q 'Kernel panic - not syncing' "$d/serial.log"
	said=$?
	grep -q 'pvpanic: the guest panicked' "$d/vmm.err"
	seen=$?
	core=$(ls "$WORK"/dump/*.core 2>/dev/null | head -n1)
	typ=$([ -n "$core" ] && dd if="$core" bs=1 skip=16 count=2 2>/dev/null | $BB od -An -tu2 | tr -d ' ')
	notes=$([ -n "$core" ] && head -c 8192 "$core" | tr -c 'A-Z' '\n' | grep -cx CORE)
	size=$([ -n "$core" ] && ls -ln "$core" | awk '{ print $5 }')
	[ "$bound" = 1 ] && [ $said = 0 ] && [ $seen = 0 ] && [ "$rc" = 126 ] && [ "$typ" = 4 ] &&
		[ "${notes:-0}" -ge "$cpus" ] && [ "${size:-0}" -ge "$ram" ]
	r=$?
	# LC_KEEPCORE=1: the core leaves L1 with the results (gzip'd), for `crash` on the host
	[ -n "${LC_KEEPCORE:-}" ] && [ -n "$core" ] && $BB gzip -1 -c "$core" >"$d/panic.core.gz"
	cond $r power.panic "pass $i: pvpanic-mmio bound ${bound:-no} QEMU0001 device, kernel panic on the console: $([ $said = 0 ] && echo yes || echo no), msivm saw it: $([ $seen = 0 ] && echo yes || echo no), exit status $rc ($why); dump: $([ -n "$core" ] && echo "$(basename "$core") ELF type ${typ:-?}, ${notes:-0} CORE notes (want $cpus), $size bytes (RAM $ram)" || echo none)"
	rm -rf "$WORK/dump"
}

# LC_DUMPALL: each crash dump of this configuration leaves its JSON view (msivm's devices at
# the crash) and the kernel's messages found in the guest's RAM (the printk ring holds what
# loglevel=5 kept off the console) in the results; the core itself stays in L1.
keep_dumps() {
	local j stem
	for j in "$WORK"/dump/*.json; do
		[ -f "$j" ] || continue
		stem=${j%.json}
		cp "$j" "$d/"
		$BB strings -n 12 "$stem.core" 2>/dev/null | grep -a -E '^(<[0-7]>)?[A-Za-z_ -]{0,40}[:\[]|RIP|Call Trace|fault|BUG|WARN|panic' |
			tail -n 400 >"$d/$(basename "$stem").msgs"
		stage "$cfg: crash dump $(basename "$stem"): JSON and $(wc -l <"$d/$(basename "$stem").msgs") message-like strings of its RAM kept"
	done
}

run_config() {
	cfg=$1
	config "$cfg" || { echo "@@ unknown configuration $cfg"; return 1; }
	d=$OUT/$cfg
	rm -rf "$d"
	mkdir -p "$d" "$WORK"
	: >"$d/results.txt"
	if [ "$net" = vhost ] && [ ! -c /dev/vhost-net ]; then
		modprobe vhost_net 2>/dev/null # a hardware host (direct mode); L1 loaded it in l1-init
		if [ ! -c /dev/vhost-net ]; then
			stage "$cfg: FAIL: no /dev/vhost-net on this host (the vhost_net module is not loaded$([ -e /lc/kver ] && echo ': see the "@@ L1: insmod" lines')); $cfg not run"
			res FAIL net.vhost-worker "no /dev/vhost-net on the VMM's host (vhost_net not loaded): configuration $cfg not run"
			return 0
		fi
	fi
	stage "$cfg: prepare (disks$([ -n "$loopdisk" ] && [ "$vmm" = msivm ] && echo ', vda on a loop device'), tap $TAP $NET.2/24 mtu $BIGMTU, iperf3 and nc listeners)"
	prepare_host
	start_vmm
	wait_vmm || exit 99
	sleep 0.5 # let the last serial lines reach the live view
	cleanup
	wall=$(awk -v a="$t_end" -v b="$t_start" 'BEGIN { printf "%.1f", a - b }')
	boot1=$([ -n "$t_boot1" ] && awk -v a="$t_boot1" -v b="$t_start" 'BEGIN { printf "%.1f", a - b }' || echo -)
	stage "$cfg: $vmm exited rc=$rc ($why) after ${wall}s (guest init ran at ${boot1}s)"
	echo "rc=$rc why=$why wall=$wall init=$boot1" >"$d/vmm.status"
	[ "$why" = timeout ] && res FAIL vmm.timeout "no exit within ${tmo}s (stopped it; rc=$rc)"
	[ -n "${LC_DUMPALL:-}" ] && keep_dumps

	# --- guest verdicts, first one per name
	tr -d '\r' <"$d/serial.log" | sed -n 's/.*lc: CHECK \([^ ]*\) \(PASS\|FAIL\) *\(.*\)$/\2 \1 \3/p' |
		awk '!seen[$2]++' | while read -r v n detail; do res "$v" "$n" "$detail"; done

	# --- host-side checks
	s=$(data blk.seq.sha256)
	if [ -n "$s" ]; then
		h=$(dd if="$vda" bs=1M skip=48 count="$SEQMIB" 2>/dev/null | sha256sum | cut -d' ' -f1)
		[ "$h" = "$s" ]
		cond $? blk.seq-image "image bytes at 48M: $(short "$h"), guest wrote $(short "$s")"
	fi
	zh=$(dd if=/dev/zero bs=1M count=1 2>/dev/null | sha256sum | cut -d' ' -f1)
	h=$(dd if="$vda" bs=1M skip=40 count=1 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$h" = "$zh" ]
	cond $? blk.discard-image "the discarded MiB at 40M of the image (random data before the boot) $([ "$h" = "$zh" ] && echo reads zeroes || echo holds data) (image uses $(du -k "$vda" | cut -f1) KiB of ${VDA_MIB} MiB)"
	h=$(sha "$vdb")
	tried=$(grep -c 'lc: CHECK blk.ro-write-fails' "$d/serial.log")
	[ "$h" = "$vdbsum" ] && [ "$tried" -ge 1 ]
	cond $? blk.ro-image "read-only image $([ "$h" = "$vdbsum" ] && echo unchanged || echo CHANGED) after $tried write attempt(s) by the guest (blk.ro-write-fails lines)"
	for p in net net-bigmtu; do
		s=$(data "$p.nc-tx.sha256")
		[ -n "$s" ] || continue
		f=$d/nc-tx.bin
		[ "$p" = net-bigmtu ] && f=$d/nc-tx-bigmtu.bin
		h=$(sha "$f" 2>/dev/null)
		[ "$h" = "$s" ]
		cond $? "$p.nc-tx" "host received $(wc -c <"$f" 2>/dev/null || echo 0) bytes, sha256 $(short "$h") (guest sent $(short "$s"), guest nc status $(data "$p.nc-tx.status"))"
	done
	if [ -n "$vsock" ]; then
		s=$(data vsock.tx.sha256)
		h=$(sha "$d/vsock-tx.bin" 2>/dev/null)
		[ -n "$s" ] && [ "$h" = "$s" ]
		cond $? vsock.guest-to-host "the host's $([ "$vsock" = unix ] && echo PATH_5000 || echo "AF_VSOCK port 5000") got $(wc -c <"$d/vsock-tx.bin" 2>/dev/null || echo 0) bytes, sha256 $(short "$h") (guest sent $(short "$s"), guest vsk status $(tr -d '\r' <"$d/serial.log" | sed -n 's/.*lc: DATA vsock.tx.status \(.*\)/\1/p' | head -n1))"
		rm -f "$d/vsock-tx.bin"
	fi
	tr -d '\r' <"$d/hvc.out" >"$d/hvc.txt"
	grep -q "lc-hvc $cfg pass 1" "$d/hvc.txt" && grep -q "lc-hvc $cfg line 19" "$d/hvc.txt"
	cond $? console.hvc "$(wc -l <"$d/hvc.out") lines in the console file (want 'lc-hvc $cfg pass 1' and 20 workload lines)"
	# (up to a panic the guest was asked for: lc.power's "panic")
	p=$(tr -d '\r' <"$d/serial.log" | sed '/lc: power [0-9]* panic/q' | grep -E 'Kernel panic|BUG:|Oops:|general protection fault' | head -n 2 | tr '\n' ' ')
	w=$(tr -d '\r' <"$d/serial.log" | grep -c 'WARNING: CPU')
	[ -z "$p" ]
	cond $? guest.no-panic "${p:-no panic, oops or BUG on the L2 console} ($w kernel WARNINGs$([ "$w" = 0 ] || echo ": $(tr -d '\r' <"$d/serial.log" | grep -m1 -B1 'WARNING: CPU' | head -n1 | sed 's/^\[[ 0-9.]*\] //' | cut -c1-70)"))"
	if [ "$net" = vhost ] && [ "$vmm" = msivm ]; then
		# ... and msivm itself moved no frame in any boot: --stats prints a block per boot, and its
		# net0 line counts what the NIC moved through msivm in that boot (boot 1 carries the traffic)
		boots=$(grep -c '^stats of boot [0-9]* (it ended' "$d/vmm.err")
		relayed=$(grep -o 'net0: vhost-net on [^;]*; tx [0-9]* frames [0-9]* bytes, rx [0-9]* frames' "$d/vmm.err" | sed 's/.*; //')
		nrel=$(printf '%s\n' "$relayed" | grep -c .)
		[ -n "$vworker" ] && [ "$boots" -ge 1 ] && [ "$nrel" = "$boots" ] &&
			! printf '%s\n' "$relayed" | grep -qvx 'tx 0 frames 0 bytes, rx 0 frames'
		cond $? net.vhost-worker "msivm's vhost-net worker while the guest used its NIC: ${vworker:-none seen (no thread of msivm named vhost-TID, nor a kernel thread named after one of its threads)}; frames msivm moved itself, per boot ($boots boots, $nrel net0 vhost-net lines): $(echo "${relayed:-none}" | tr '\n' ';' | sed 's/;$//')"
	fi
	if [ "$vmm" = msivm ] && { [ "$cfg" = msix ] || [ "$cfg" = intx ]; }; then
		# coalesce= (on for disks by default): while fio (iodepth 8) kept submitting, vda's held
		# interrupts were joined by later completions, and it took fewer interrupts than
		# completions (--stats' per-queue table: device queue completions interrupts suppressed
		# held joined held-us, summed over the boots)
		read -r bc bn bh bj <<-EOF
			$(awk '$1 == "blk0" && $2 ~ /^[0-9]+$/ && NF == 8 { c += $3; n += $4; h += $6; j += $7 }
				END { print c + 0, n + 0, h + 0, j + 0 }' "$d/vmm.err")
		EOF
		[ "$bj" -gt 0 ] && [ "$bn" -lt "$bc" ]
		cond $? blk.coalesce "vda over every boot: $bc completions, $bn interrupts, $bh held, $bj of them joined by later completions"
	fi
	if [ -n "$snap" ]; then
		res=$(cat "$WORK/$([ "$snap" = 1 ] && echo api || echo snap).res" 2>/dev/null)
		case "$res" in "snapshot=0 "*" killed=0 restored=1 ticks="[1-9]*",1") r=0 ;; *) r=1 ;; esac
		[ "$r" = 0 ] && grep -q 'lc: pass 1 end' "$d/serial.log"
		cond $? api.snapshot-restore "${res:-the API was never asked (no blk.ro-read line)}; the restored guest's pass 1 went on to its end: $(grep -q 'lc: pass 1 end' "$d/serial.log" && echo yes || echo no)"
	fi
	if [ -n "$api" ] && [ "$snap" != 1 ]; then
		res=$(cat "$WORK/api.res" 2>/dev/null)
		case "$res" in "pause=0 state=paused grew=0 resume=0 ticks="[1-9]*",1") r=0 ;; *) r=1 ;; esac
		[ "$r" = 0 ] && grep -q 'lc: pass 1 end' "$d/serial.log"
		cond $? api.pause-resume "${res:-the API was never asked (no blk.ro-read line)}; the guest's pass 1 went on to its end after the resume: $(grep -q 'lc: pass 1 end' "$d/serial.log" && echo yes || echo no)"
	fi

	# --- power: the action of each pass (the last one ends the VMM)
	n=$(echo "$power" | tr ',' '\n' | wc -l)
	i=1
	for a in $(echo "$power" | tr ',' ' '); do
		if [ "$i" -lt "$n" ]; then
			# a reboot in the middle of the sequence: the next pass must begin
			grep -q "lc: power $i reboot $a" "$d/serial.log"
			said=$?
			grep -q "lc: pass $((i + 1)) begin" "$d/serial.log"
			again=$?
			why_r=ok
			if [ "$vmm" = msivm ]; then
				case "$a" in
				acpi) cause="ACPI reset register" ;;
				kbd) cause="i8042 reset pulse" ;;
				triple) cause="triple fault" ;;
				*) cause= ;;
				esac
				# msivm -v names the cause: "guest reset (CAUSE): reboot N"
				grep -q "guest reset ($cause): reboot $i" "$d/vmm.err" || why_r="msivm did not log 'guest reset ($cause): reboot $i'"
			fi
			[ $said = 0 ] && [ $again = 0 ] && [ "$why_r" = ok ]
			cond $? "power.reboot-$a" "pass $i rebooted ($a): $([ $said = 0 ] && echo asked || echo 'never asked') and init ran again: $([ $again = 0 ] && echo yes || echo no)$([ "$why_r" = ok ] || echo "; $why_r")"
		elif [ "$a" = button ]; then
			grep -q "lc: power $i button wait" "$d/serial.log"
			said=$?
			grep -q "lc: power $i button pressed" "$d/serial.log"
			seen=$?
			lat=-
			[ -n "$t_press" ] && lat=$(awk -v a="$t_end" -v b="$t_press" 'BEGIN { printf "%.1f", a - b }')
			logged=0
			[ "$vmm" = msivm ] && { grep -q "pressed the guest's power button" "$d/vmm.err"; logged=$?; }
			[ $said = 0 ] && [ $seen = 0 ] && [ $logged = 0 ] && [ "$rc" = 0 ] && [ "$why" = exited ] &&
				awk -v l="$lat" 'BEGIN { exit !(l != "-" && l < 10) }'
			cond $? power.button "host pressed the power button ($([ "$vmm" = msivm ] && echo SIGTERM || echo system_powerdown)$([ $logged = 0 ] || echo ', msivm did not log the press')), guest saw KEY_POWER: $([ $seen = 0 ] && echo yes || echo no), exit status $rc ($why) ${lat}s after the press (pass $i)"
		elif [ "$a" = panic ]; then
			panic_check "$i"
		elif [ "$a" = off ]; then
			grep -q "lc: power $i poweroff" "$d/serial.log"
			said=$?
			lat=-
			[ -n "$t_off" ] && lat=$(awk -v a="$t_end" -v b="$t_off" 'BEGIN { printf "%.1f", a - b }')
			[ $said = 0 ] && [ "$rc" = 0 ] && [ "$why" = exited ] && awk -v l="$lat" 'BEGIN { exit !(l != "-" && l < 10) }'
			cond $? power.poweroff "exit status $rc ($why), ${lat}s from the guest's poweroff line to the VMM's exit (pass $i)"
		else
			grep -q "lc: power $i reboot" "$d/serial.log"
			said=$?
			grep -q "lc: pass $((i + 1)) begin" "$d/serial.log"
			again=$?
			[ $said = 0 ] && [ $again != 0 ] && [ "$rc" = 123 ]
			cond $? power.noreboot-123 "guest reboot under --no-reboot: exit status $rc ($why), guest asked: $([ $said = 0 ] && echo yes || echo no), init ran again: $([ $again = 0 ] && echo yes || echo no)"
		fi
		i=$((i + 1))
	done
	if [ "$n" -gt 1 ] && [ "$noreboot" != 1 ]; then
		miss=
		k=1
		while [ $k -le "$n" ]; do
			# a missing line is shown as the console file has it (a mangled one, or nothing)
			grep -q "lc-hvc $cfg pass $k\$" "$d/hvc.txt" ||
				miss="$miss hvc:$k ['$(grep -a -m1 "pass $k" "$d/hvc.txt" | cut -c1-80)']"
			grep -q "lc: pass $k begin" "$d/serial.log" || miss="$miss serial:$k"
			k=$((k + 1))
		done
		[ -z "$miss" ]
		cond $? power.output-kept "serial and console files hold every boot's lines ($([ -n "$miss" ] && echo "missing$miss" || echo "passes 1-$n"))"
	fi

	rm -f "$d/nc-tx.bin" "$d/nc-tx-bigmtu.bin" # hashed above; keeps the log archive small
	if [ "$vmm" = msivm ] && [ "$noreboot" != 1 ]; then
		# every reset msivm saw ("guest reset (CAUSE): reboot N" with -v) must be one the guest asked for
		want=$((n - 1))
		got=$(grep -c 'guest reset (' "$d/vmm.err")
		causes=$(sed -n 's/.*guest reset (\(.*\)): reboot \([0-9]*\).*/\2:\1/p' "$d/vmm.err" | tr '\n' ',')
		[ "$got" = "$want" ]
		cond $? vmm.resets "$got guest resets, $want asked for${causes:+ (${causes%,})}"
	fi
	np=$(grep -c '^PASS' "$d/results.txt")
	nf=$(grep -c '^FAIL' "$d/results.txt")
	stage "$cfg: $np PASS, $nf FAIL"
	if [ "$nf" != 0 ]; then
		grep '^FAIL' "$d/results.txt" | sed 's/^/  | /'
		echo "  | --- L2 serial (tail):"
		tr -d '\r' <"$d/serial.log" | tail -n 25 | sed 's/^/  | /'
		echo "  | --- $vmm stderr (tail):"
		tail -n 12 "$d/vmm.err" | sed 's/^/  | /'
	fi
	return 0
}

# bootloop N CONFIG...: the unexpected-reset experiment (docs/linux-guests.md). Boots the L2
# guest N times under each configuration, interleaved (A B A B ...), each boot only to its init,
# a short disk write and rng read, and poweroff (lc.only=boot; LC_BOOTWORK=1: the whole first
# pass of the checks, workloads included, then poweroff; a guest reset ends either VMM:
# --no-reboot, -no-reboot), with half the configuration timeout. One line per boot:
#   @@ bootloop I/N CONFIG: OUTCOME init=SECONDS wall=SECONDS rc=STATUS; DETAIL
# OUTCOME: ok (the guest powered off), reset (the VMM ended without the guest's poweroff line and
# without a panic: a triple fault or another reset nobody asked for), panic (a panic on the L2
# console), hang (timeout). Logs in $OUT/bootloop/CONFIG-I/, outcomes in $OUT/bootloop/tally.
bootloop() {
	bl_n=$1
	shift
	TMO=$((TMO / 2))
	mkdir -p "$OUT/bootloop"
	bl_i=1
	while [ $bl_i -le "$bl_n" ]; do
		for bl_c in "$@"; do
			config "$bl_c" || { echo "@@ unknown configuration $bl_c"; return 1; }
			cfg=$bl_c power=off noreboot=1
			[ "${LC_BOOTWORK:-0}" = 1 ] || extra="${extra:+$extra }lc.only=boot"
			d=$OUT/bootloop/$bl_c-$bl_i
			rm -rf "$d"
			mkdir -p "$d"
			echo "@@ bootloop $bl_i/$bl_n $bl_c: boot" # progress for the L1 watchdog
			prepare_host >/dev/null
			start_vmm >/dev/null
			wait_vmm >/dev/null || { echo "@@ bootloop $bl_i/$bl_n $bl_c: L1 fault: $vmm survived SIGKILL"; exit 99; }
			cleanup
			init=$([ -n "$t_boot1" ] && awk -v a="$t_boot1" -v b="$t_start" 'BEGIN { printf "%.1f", a - b }' || echo -)
			wall=$(awk -v a="$t_end" -v b="$t_start" 'BEGIN { printf "%.1f", a - b }')
			last=$(tr -d '\r' <"$d/serial.log" | grep -v '^ *$' | tail -n1 | cut -c1-90)
			if [ "$why" = timeout ]; then
				o=hang detail="L2 console ends: $last"
			elif tr -d '\r' <"$d/serial.log" | grep -q 'Kernel panic'; then
				o=panic detail=$(tr -d '\r' <"$d/serial.log" | grep -m1 'Kernel panic' | cut -c1-90)
			elif grep -q 'lc: power 1 poweroff' "$d/serial.log" && [ "$rc" = 0 ]; then
				o=ok detail=
			else
				o=reset
				detail="L2 console ends: $last"
				[ "$vmm" = msivm ] && detail="$detail; msivm: $(grep -m1 -E 'triple fault|guest reset|shut down|error' "$d/vmm.err" | cut -c1-110)"
			fi
			echo "@@ bootloop $bl_i/$bl_n $bl_c: $o init=$init wall=$wall rc=$rc${detail:+; $detail}"
			echo "$bl_c $o" >>"$OUT/bootloop/tally"
			# a clean boot keeps its console and msivm's errors (small), not the rest
			[ "$o" = ok ] && rm -f "$d/hvc.out" "$d/vmm.out" "$d"/nc-tx*.bin
		done
		bl_i=$((bl_i + 1))
	done
	for bl_c in "$@"; do
		echo "@@ bootloop tally $bl_c: $(awk -v c="$bl_c" '$1 == c { n[$2]++ } END { printf "ok=%d reset=%d panic=%d hang=%d", n["ok"], n["reset"], n["panic"], n["hang"] }' "$OUT/bootloop/tally")"
	done
}

if [ "${1:-}" = --bootloop ]; then
	shift
	n=$1
	shift
	bootloop "$n" "$@"
	exit 0
fi
[ $# -ge 1 ] || set -- msix msi intx nomsi vhost qemu
for c in "$@"; do
	case "$c" in
	distro | qdistro) sh "$(dirname "$0")/run-distro.sh" "$c" ;; # the Debian image: its own script
	kata) LC_MSIVM=$MSIVM LC_KERNEL=$KERNEL LC_INITRD=$INITRD LC_VSK=$VSK LC_IP=$IP LC_TAP=$TAP LC_TIMEOUT=$TMO \
		LC_OUT=$OUT LC_WORK=$WORK sh "$(dirname "$0")/run-kata.sh" ;; # Kata's Firecracker driver replayed
	*) run_config "$c" ;;
	esac
done
