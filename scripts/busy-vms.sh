#!/usr/bin/env bash
# Load a host as "a host running other busy VMs": N probe VMs, each in a loop until stopped.
#
# Usage: scripts/busy-vms.sh [--vms N] [--for SECS] [--msivm PATH] [--probe PATH] [--dir DIR]
#                            [--cmdline PROBE_ARGS]
#   --vms N      busy VMs (default 2)
#   --for SECS   stop after SECS seconds (default: run until SIGTERM or SIGINT)
#   --msivm, --probe  the binaries (default: build/msivm, build/guest/probe.elf of this tree)
#   --dir DIR    where the VMs' disk images and logs go (default: a fresh directory under /tmp)
#   --cmdline A  the probe's workload instead of the one below (tests/e2e/test_busy_vms.sh)
# Each VM runs `msivm run` with the probe guest, an MSI-X virtio-rng and a 64 MiB virtio-blk disk:
# 4 MiB of entropy, then 4096 random and 4096 sequential writes and reads of 4 KiB at queue depth
# 8 over 16 MiB, then exit; and again. That keeps a host CPU busy per VM (its vCPU's exits and the
# I/O thread: about 17400 requests and 3000 interrupts per round, 17 s per round on an idle
# 2-CPU PVM host, nearly all of it system time). A round that fails (exit status other than 0) is logged and
# counted; the loop goes on.
# Output: a start line, one line per round ("busy-vms: vm1 round 3: 17.2 s, status 0"), and at the
# stop a summary per VM. Exit status: 0 if every finished round ended with status 0, else 1;
# 125 on bad arguments.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cmdline="rng=4096 blk=randwrite,randread,seqwrite,seqread blkkb=16384 blkops=4096 qd=8 exit=0"
vms=2 secs= msivm=$top/build/msivm probe=$top/build/guest/probe.elf dir=
usage() { echo "busy-vms: $1 (usage: scripts/busy-vms.sh [--vms N] [--for SECS] [--msivm PATH] [--probe PATH] [--dir DIR] [--cmdline PROBE_ARGS]; --help says more)" >&2; exit 125; }
while [ $# -gt 0 ]; do
	case "$1" in
	--vms) [ $# -ge 2 ] || usage "--vms needs a number"; vms=$2; shift 2 ;;
	--for) [ $# -ge 2 ] || usage "--for needs seconds"; secs=$2; shift 2 ;;
	--msivm) [ $# -ge 2 ] || usage "--msivm needs a path"; msivm=$2; shift 2 ;;
	--probe) [ $# -ge 2 ] || usage "--probe needs a path"; probe=$2; shift 2 ;;
	--dir) [ $# -ge 2 ] || usage "--dir needs a path"; dir=$2; shift 2 ;;
	--cmdline) [ $# -ge 2 ] || usage "--cmdline needs the probe's arguments"; cmdline=$2; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) usage "unknown argument '$1'" ;;
	esac
done
[[ "$vms" =~ ^[1-9][0-9]?$ ]] || usage "--vms wants 1..99, not '$vms'"
[ -z "$secs" ] || [[ "$secs" =~ ^[1-9][0-9]*$ ]] || usage "--for wants whole seconds > 0, not '$secs'"
[ -x "$msivm" ] || usage "no msivm at $msivm (build it: make, or give --msivm)"
[ -r "$probe" ] || usage "no probe guest at $probe (build it: make, or give --probe)"
if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/busy-vms.XXXXXX); else mkdir -p "$dir" || usage "cannot create --dir $dir"; fi

# vm I: the loop of one busy VM; each round appends "ROUND SECS STATUS" to $dir/vmI.rounds.
vm() {
	local i=$1 r=0 t0 st
	truncate -s 64M "$dir/vm$i.img"
	trap 'kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null; exit 0' TERM
	while :; do
		r=$((r + 1))
		t0=$(date +%s%N)
		"$msivm" run --kernel "$probe" --rng irq=msix --disk path="$dir/vm$i.img" \
			--cmdline "$cmdline" >"$dir/vm$i.log" 2>&1 &
		child=$!
		wait "$child"
		st=$?
		printf '%d %d.%d %d\n' "$r" $(( ($(date +%s%N) - t0) / 1000000000 )) \
			$(( ($(date +%s%N) - t0) / 100000000 % 10 )) "$st" | tee -a "$dir/vm$i.rounds" |
			{ read -r a b c; echo "busy-vms: vm$i round $a: $b s, status $c"; }
		[ "$st" = 0 ] || cp "$dir/vm$i.log" "$dir/vm$i.round$r.failed.log"
	done
}

pids=()
for i in $(seq 1 "$vms"); do
	: >"$dir/vm$i.rounds"
	vm "$i" &
	pids+=($!)
done
start=$SECONDS
echo "busy-vms: $vms busy VMs started (pids ${pids[*]}; logs in $dir)"
stop() {
	local i n bad=0 st
	kill -TERM "${pids[@]}" $sleeper 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	for i in $(seq 1 "$vms"); do
		n=$(wc -l <"$dir/vm$i.rounds")
		st=$(awk '$3 != 0' "$dir/vm$i.rounds" | wc -l)
		[ "$st" = 0 ] || bad=1
		echo "busy-vms: vm$i: $n rounds finished in $((SECONDS - start)) s, $st failed$(awk '{ s += $2 } END { if (NR) printf ", %.1f s per round", s / NR }' "$dir/vm$i.rounds")"
	done
	exit $bad
}
sleeper=
trap stop TERM INT
if [ -n "$secs" ]; then
	sleep "$secs" &
	sleeper=$!
	wait $sleeper
	stop
fi
while :; do
	sleep 3600 &
	sleeper=$!
	wait $sleeper
done
