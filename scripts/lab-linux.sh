#!/usr/bin/env bash
# lab-linux.sh: `msivm lab --guest linux` with one command: builds msivm and the Linux guest
# (tests/linux/build.sh), then runs the lab directly where /dev/kvm runs stock kernels (`msivm host`
# says hardware), or inside the nested rig (QEMU TCG L1 with kvm_amd, as `make check-linux`) on PVM
# hosts and hosts with no usable /dev/kvm, and leaves the
# report in DIR (report.txt, report.json, SVG charts).
#
#   scripts/lab-linux.sh [--out DIR] [LAB OPTIONS...]     (default DIR: lab-linux-out)
#
# LAB OPTIONS are msivm lab --guest linux's (--runs, --io-runs, --configs, --vs qemu, --fio-secs,
# --iperf-secs ...; see build/msivm lab --guest linux --help). Nested, each (run, configuration)
# gets its own short-lived L1 (both VMMs with --vs qemu), and the sessions are merged into one
# report (msivm lab --guest linux --merge): the nested host's own kernel dies or stops now and then
# (see docs/linux-guests.md), and such a cell is booted again, at most twice; a failure of msivm or
# of the guest is never retried, it is in the report. Figures are ~100x slower than hardware: compare
# ratios. Needs root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=lab-linux-out runs=3 io_runs=1 configs=msix,msix-shared,intx,nomsi
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift ;;
	--out=*) out=${1#*=} ;;
	--runs) runs=$2; shift ;;
	--runs=*) runs=${1#*=} ;;
	--io-runs) io_runs=$2; shift ;;
	--io-runs=*) io_runs=${1#*=} ;;
	--configs) configs=$2; shift ;;
	--configs=*) configs=${1#*=} ;;
	--force) ;; # the report directory is always replaced
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done
case "$runs$io_runs" in *[!0-9]* | "") echo "lab-linux: --runs and --io-runs take numbers" >&2; exit 125 ;; esac
[ "$(id -u)" = 0 ] || { echo "lab-linux: needs root (tap devices, /dev/kvm, apt-get)" >&2; exit 125; }
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
cd "$top"
make -s all
hostkvm=$(build/msivm host)
if [ "${hostkvm%%:*}" = hardware ]; then
	echo "lab-linux: $hostkvm: the lab runs on this host"
	[ -s build/linux/l2/initramfs.cpio.gz ] && [ build/linux/l2/initramfs.cpio.gz -nt guest/linux/lab-init ] ||
		OUT=build/linux tests/linux/build.sh l2
	exec build/msivm lab --guest linux --out "$out" --force --runs "$runs" --io-runs "$io_runs" \
		--configs "$configs" "${args[@]}"
fi

echo "lab-linux: this host's KVM is ${hostkvm%%:*} (${hostkvm#*: }): the lab runs inside a nested host (QEMU TCG, kvm_amd); figures are ~100x those of hardware, compare ratios only"
# Two L1 vCPUs for the lab (check-linux uses one): with one, L1 stopped in 3 of 5 boots of a
# lab session (2 L2 vCPUs on 1 L1 vCPU); with two it dies or resets an L2 now and then, which
# the lab reports as a failed run (docs/linux-guests.md).
export LINUX_CHECK_L1_SMP=${LINUX_CHECK_L1_SMP:-2}
# Nested: one short-lived L1 per (run, configuration), runs interleaved across configurations
# (the nested host's faults grow with its uptime); check-linux.sh builds L2 and L1 and runs the
# lab inside. An L1 that died or hung is booted again (at most twice) for the same cell.
parts=$out.parts
rm -rf "$parts" && mkdir -p "$parts"
files=() lost=()
for i in $(seq 1 "$runs"); do
	w=0
	[ "$i" -le "$io_runs" ] && w=1
	for c in $(echo "$configs" | tr ',' ' '); do
		for try in 1 2 3; do
			echo "lab-linux: run $i of $runs, $c$([ $w = 1 ] && echo ' (with the workloads)')$([ "$try" -gt 1 ] && echo ", L1 boot $try")"
			st=0
			tests/linux/check-linux.sh --lab "${args[*]} --configs $c --runs 1 --io-runs $w" \
				--lab-out "$parts/run$i-$c" || st=$?
			cp build/linux/logs/l1-1.log "$parts/run$i-$c-l1boot$try.log" 2>/dev/null || true
			[ "$st" = 3 ] || break # 3: L1 died before the lab's report; else the lab's verdict
			# A run that failed before L1 died is msivm's, QEMU's or the guest's failure: the
			# cell is not booted again (that would hide it), and the session fails.
			bad=$(sed -n 's/^\[ *[0-9.]*\] @@ lab: \(run [0-9]*\/[0-9]* [a-z]* .* failed: .*\)/\1/p' \
				"$parts/run$i-$c-l1boot$try.log" 2>/dev/null | head -n1)
			if [ -n "$bad" ]; then
				echo "lab-linux: NOT RETRIED: run $i, $c: a run failed before the nested host died ($bad); the cell has no report"
				lost+=("run $i, $c: $bad; then the nested host died (console: $parts/run$i-$c-l1boot$try.log)")
				break
			fi
			echo "lab-linux: RETRY: the nested host died or hung during run $i, $c (not msivm, not the guest)"
		done
		[ -s "$parts/run$i-$c/report.json" ] && files+=("$parts/run$i-$c/report.json")
	done
done
[ ${#files[@]} -gt 0 ] || { echo "lab-linux: no run produced a report (logs: build/linux/logs)" >&2; exit 1; }
st=0
build/msivm lab --guest linux --merge --force --out "$out" "${files[@]}" >/dev/null || st=$?
# gnuplot is not in L1: the charts are drawn here (the merge draws them when gnuplot is installed).
[ -s "$out/report.txt" ] && cat "$out/report.txt"
echo "lab-linux: report in $out (raw sessions in $parts)"
if [ ${#lost[@]} -gt 0 ]; then
	echo "lab-linux: ${#lost[@]} cell(s) had a failed run and no report (not in the figures above):"
	printf '  %s\n' "${lost[@]}"
	[ "$st" = 0 ] && st=1
fi
exit $st
