#!/bin/sh
# run-kata.sh: the host side of check-linux's kata configuration (run by run-checks.sh kata, inside
# L1 or on a hardware host). It replays Kata Containers' Go driver (src/runtime/virtcontainers/
# fc.go, without its jailer) against msivm started as "firecracker": the directory layout
# <vm>/root/{run/firecracker.socket,vmlinux,rootfs,drive_0..drive_7,kata.hvsock,fcConfig.json},
# the logger and metrics FIFOs made with mode 0000 and read by us, fcConfig.json with a read-only
# rootfs drive, eight placeholder drives on empty files, a vsock and a tap, GET / polled every
# 10 ms until Running, the vsock socket chmod'ed, the agent reached through "CONNECT 1024", a
# container's ext4 disk bind-mounted over drive_0 and PATCH /drives/drive_0 with that unchanged
# path (the guest, tests/linux/kata-guest, sees vdb grow, mounts it, reads a file), the unmount
# and the same PATCH (vdb is 0 sectors again), then SIGTERM: msivm must be gone within 2 s and
# leave no socket. Results in LC_OUT/kata/results.txt as run-checks.sh writes them.
set -u
OUT=${LC_OUT:-/out}
WORK=${LC_WORK:-/work}
MSIVM=${LC_MSIVM:-/lc/msivm}
KERNEL=${LC_KERNEL:-/lc/l2-vmlinuz}
INITRD=${LC_INITRD:-/lc/l2-initramfs.cpio.gz}
CTR=${LC_KATA_CTR:-/lc/kata-ctr.ext4} # the container disk (tests/linux/build.sh l1)
VSK=${LC_VSK:-vsk}
IP=${LC_IP:-ip}
TAP=${LC_TAP:-lctap0}
TMO=${LC_TIMEOUT:-300}

up() { cut -d' ' -f1 /proc/uptime; }
T0=$(up)
el() { awk -v a="$(up)" -v b="$T0" 'BEGIN { printf "%.0f", a - b }'; }
stage() { echo "@@ [$(el)s] kata: $*"; }
d=$OUT/kata
rm -rf "$d"
mkdir -p "$d"
: >"$d/results.txt"
res() { # PASS|FAIL name detail
	if [ "$1" = PASS ]; then echo "PASS $2 $3" >>"$d/results.txt"; else echo "FAIL $2: $3" >>"$d/results.txt"; fi
	echo "  kata | $1 $2 $3"
}
cond() { if [ "$1" = 0 ]; then res PASS "$2" "$3"; else res FAIL "$2" "$3"; fi; }
# wait_serial REGEX SECONDS: until the guest's console (msivm's standard output) matches
wait_serial() {
	n=0
	while ! tr -d '\r' <"$d/serial.log" | grep -q -- "$1"; do
		[ $n -ge $(($2 * 5)) ] && return 1
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
		n=$((n + 1))
	done
}
api() { "$VSK" http "$sock" "$@" 2>>"$d/host.log"; } # METHOD URL [BODY]: "STATUS\nBODY"

# --- Kata's layout (fc.setPaths, fcInitConfiguration): <vm>/root, <vm>/root/run
vm=$WORK/kata/firecracker/kata-sandbox-0
root=$vm/root
sock=$root/run/firecracker.socket
hvsock=$root/kata.hvsock
for m in vmlinux rootfs logs.fifo metrics.fifo fcConfig.json drive_0; do umount -l "$root/$m" 2>/dev/null; done
rm -rf "$WORK/kata" "$WORK/kata-bin"
mkdir -p "$root/run"
mkdir -p "$WORK/kata-bin"
ln -sf "$MSIVM" "$WORK/kata-bin/firecracker" # Kata's path = ".../firecracker": msivm under that name
fc=$WORK/kata-bin/firecracker
# fcJailResource: each resource bind-mounted into root under its Kata name
touch "$root/vmlinux" "$root/rootfs"
dd if=/dev/urandom of="$WORK/kata-rootfs.img" bs=1M count=2 2>/dev/null # the guest boots its initrd
mount -o bind "$KERNEL" "$root/vmlinux"
mount -o bind "$WORK/kata-rootfs.img" "$root/rootfs"
for i in 0 1 2 3 4 5 6 7; do : >"$root/drive_$i"; done # createDiskPool: empty files
# fcListenToFifo: mode 0000 FIFOs, opened for reading before Firecracker starts
mkfifo -m 0000 "$vm/logs.fifo" "$vm/metrics.fifo"
touch "$root/logs.fifo" "$root/metrics.fifo"
mount -o bind "$vm/logs.fifo" "$root/logs.fifo"
mount -o bind "$vm/metrics.fifo" "$root/metrics.fifo"
cat "$vm/logs.fifo" >"$d/logs.txt" 2>/dev/null &
logcat=$!
cat "$vm/metrics.fifo" >"$d/metrics.txt" 2>/dev/null &
metcat=$!
# the tap Kata's network endpoint gives by name (single queue, vnet header)
$IP link del "$TAP" 2>/dev/null
{ $IP tuntap add dev "$TAP" mode tap && $IP addr add 10.0.2.2/24 dev "$TAP" && $IP link set "$TAP" up; } >>"$d/host.log" 2>&1
# Kata's boot_args: the root parameters, fcKernelParams, console=ttyS0 (debug); ours: lc.*
noxsave=
case ",${LC_HIDE:-}," in *,xsave,*) noxsave=" noxsave" ;; esac # nested: as msivm --cpuid-hide xsave
katatxt=kata-container-disk-ok # what the container disk's kata.txt holds (tests/linux/build.sh l1)
if [ ! -s "$CTR" ] && command -v mke2fs >/dev/null; then # direct mode: made here
	mkdir -p "$WORK/kata-ctr.d"
	echo "$katatxt" >"$WORK/kata-ctr.d/kata.txt"
	CTR=$WORK/kata-ctr.ext4
	mke2fs -q -F -t ext4 -d "$WORK/kata-ctr.d" "$CTR" 8M
fi
args="console=ttyS0 root=/dev/vda1 rootflags=data=ordered,errors=remount-ro ro rootfstype=ext4 pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on acpi=off loglevel=5$noxsave lc.cfg=kata lc.kata=1 lc.katatxt=$katatxt"
drives=
for i in 0 1 2 3 4 5 6 7; do
	drives="$drives,
		{\"drive_id\": \"drive_$i\", \"is_read_only\": false, \"is_root_device\": false, \"path_on_host\": \"$root/drive_$i\"}"
done
cat >"$vm/fcConfig.json" <<EOF
{
	"boot-source": {"kernel_image_path": "$root/vmlinux", "boot_args": "$args", "initrd_path": "$INITRD"},
	"drives": [
		{"drive_id": "rootfs", "is_read_only": true, "is_root_device": false, "path_on_host": "$root/rootfs"}$drives
	],
	"logger": {"level": "Debug", "log_path": "$root/logs.fifo"},
	"machine-config": {"mem_size_mib": 1024, "smt": false, "vcpu_count": 1},
	"metrics": {"metrics_path": "$root/metrics.fifo"},
	"network-interfaces": [
		{"guest_mac": "aa:fc:00:00:00:01", "host_dev_name": "$TAP", "iface_id": "eth0", "rx_rate_limiter": {}, "tx_rate_limiter": {}}
	],
	"vsock": {"guest_cid": 3, "uds_path": "$hvsock", "vsock_id": "root"}
}
EOF
touch "$root/fcConfig.json"
mount -o bind "$vm/fcConfig.json" "$root/fcConfig.json"

# --- --version as fc.getVersionNumber/checkVersion read it
v=$("$fc" --version | head -n1 | cut -d' ' -f2)
v=${v#v}
maj=${v%%.*} rest=${v#*.} min=${rest%%.*}
[ -n "$maj" ] && [ "$maj" -gt 0 ] 2>/dev/null || { [ "$maj" = 0 ] && [ "$min" -ge 22 ] 2>/dev/null; }
cond $? kata.version "firecracker --version's first line, second word without its v: '$v' (Kata wants a semver >= 0.21.1)"

# --- fcInit: firecracker --api-sock <root>/run/firecracker.socket --config-file <root>/fcConfig.json
stage "start (timeout ${TMO}s)"
printf '%s\n' "$fc --api-sock $sock --config-file $root/fcConfig.json" >"$d/vmm.cmd"
: >"$d/serial.log"
"$fc" --api-sock "$sock" --config-file "$root/fcConfig.json" </dev/null \
	>"$d/serial.log" 2>"$d/vmm.err" &
pid=$!
t=$(up)
# waitVMMRunning: GET / every 10 ms for up to 10 s until state is Running
n=0 state=
while [ $n -lt 1000 ]; do
	state=$(api GET / | sed -n 's/.*"state":"\([^"]*\)".*/\1/p')
	[ "$state" = Running ] && break
	sleep 0.01
	n=$((n + 1))
done
ms=$(awk -v a="$(up)" -v b="$t" 'BEGIN { printf "%.0f", (a - b) * 1000 }')
[ "$state" = Running ] && [ -S "$hvsock" ]
cond $? kata.running "GET / polled every 10 ms: state '$state' after $ms ms; the vsock's uds_path $([ -S "$hvsock" ] && echo exists || echo 'is missing')"
chmod 0640 "$hvsock" 2>/dev/null # StartVM: "make sure 'others' don't have access to this socket"
threads=$(cat /proc/$pid/task/*/comm 2>/dev/null | grep -c '^fc_vcpu [0-9]*$')
[ "$threads" = 1 ]
cond $? kata.vcpu-threads "$threads thread(s) named 'fc_vcpu N' (machine-config: 1 vCPU)"

# --- the agent: Kata dials its vsock port 1024 through the hybrid socket until it answers
stage "dial the agent (CONNECT 1024)"
n=0 echoed=
while [ $n -lt "$TMO" ] && kill -0 "$pid" 2>/dev/null; do
	echoed=$(echo "kata-agent-ping" | timeout 5 "$VSK" unix-ask "$hvsock" 1024 2>>"$d/host.log")
	[ "$echoed" = kata-agent-ping ] && break
	sleep 1
	n=$((n + 1))
done
[ "$echoed" = kata-agent-ping ]
cond $? kata.agent "CONNECT 1024 on kata.hvsock reached the guest's agent stand-in (an echo on vsock port 1024) after $n redial(s): '$echoed'"

# --- a container disk: bind-mounted over drive_0, PATCH /drives/drive_0 with the same path
wait_serial 'lc: kata agent listening' 60
cp "$CTR" "$WORK/kata-ctr.img"
mount -o bind "$WORK/kata-ctr.img" "$root/drive_0"
r=$(api PATCH /drives/drive_0 "{\"drive_id\":\"drive_0\",\"path_on_host\":\"$root/drive_0\"}" | tr '\n' ' ')
[ "${r%% *}" = 204 ]
cond $? kata.patch-attach "PATCH /drives/drive_0 (path unchanged, an ext4 image bind-mounted over it): '$r'"
stage "wait for the guest to read the container disk"
wait_serial 'lc: kata read done' "$TMO" || stage "the guest did not report reading the disk"
umount -l "$root/drive_0" # Kata's umountResource: MNT_DETACH (msivm still has the image open)
r=$(api PATCH /drives/drive_0 "{\"drive_id\":\"drive_0\",\"path_on_host\":\"$root/drive_0\"}" | tr '\n' ' ')
[ "${r%% *}" = 204 ]
cond $? kata.patch-detach "the unmount and the same PATCH again: '$r'"
wait_serial 'lc: kata waiting for SIGTERM' 90 || stage "the guest did not report the detach"

# --- fcEnd: SIGTERM, SIGKILL after 15 s; msivm must be gone within 2 s
stage "SIGTERM"
t=$(up)
kill -TERM "$pid"
n=0
while kill -0 "$pid" 2>/dev/null && [ $n -lt 750 ]; do sleep 0.02; n=$((n + 1)); done
kill -KILL "$pid" 2>/dev/null
wait "$pid"
rc=$?
ms=$(awk -v a="$(up)" -v b="$t" 'BEGIN { printf "%.0f", (a - b) * 1000 }')
echo "exit $rc after SIGTERM ($ms ms)" >"$d/vmm.status"
[ "$rc" = 143 ] && [ "$ms" -lt 2000 ]
cond $? kata.sigterm "exit status $rc (want 143: the signal) $ms ms after SIGTERM (want < 2000; Kata kills after 15 s)"
[ ! -e "$sock" ] && [ ! -e "$hvsock" ] && ! kill -0 "$pid" 2>/dev/null
cond $? kata.cleanup "no process, no API socket ($([ -e "$sock" ] && echo left || echo gone)), no vsock socket ($([ -e "$hvsock" ] && echo left || echo gone))"
sleep 0.2
kill "$logcat" "$metcat" 2>/dev/null
grep -q 'API: PATCH /drives/drive_0 -> 204' "$d/logs.txt"
cond $? kata.logger-fifo "the logger FIFO (mode 0000, read by us) got $(wc -l <"$d/logs.txt") lines, the PATCHes among them"
head -n1 "$d/metrics.txt" | grep -q '^{"utc_timestamp_ms":[0-9]*,.*"block_rootfs":{'
cond $? kata.metrics-fifo "the metrics FIFO got $(wc -l <"$d/metrics.txt") JSON line(s): $(head -c 100 "$d/metrics.txt")"
# the guest's verdicts
tr -d '\r' <"$d/serial.log" | sed -n 's/.*lc: CHECK \(kata\.[^ ]*\) \(PASS\|FAIL\) \(.*\)/\2 \1 \3/p' | while read -r v n rest; do
	res "$v" "$n" "$rest"
done
if tr -d '\r' <"$d/serial.log" | grep -q -E 'Kernel panic|Oops|BUG:'; then
	res FAIL kata.no-panic "$(tr -d '\r' <"$d/serial.log" | grep -m1 -E 'Kernel panic|Oops|BUG:' | cut -c1-100)"
else
	res PASS kata.no-panic "no panic, oops or BUG on the L2 console"
fi
for m in vmlinux rootfs logs.fifo metrics.fifo fcConfig.json drive_0; do umount -l "$root/$m" 2>/dev/null; done
$IP link del "$TAP" 2>/dev/null
stage "done: $(grep -c '^PASS' "$d/results.txt") PASS, $(grep -c '^FAIL' "$d/results.txt") FAIL"
