#!/usr/bin/env bash
# lab-linux.sh: `msivm lab --guest linux` with one command: builds msivm and the Linux guest
# (tests/linux/build.sh), then runs the lab directly where /dev/kvm runs stock kernels, or inside
# the nested rig (QEMU TCG L1 with kvm_amd, as `make check-linux`) on PVM hosts, and leaves the
# report in DIR (report.txt, report.json, SVG charts).
#
#   scripts/lab-linux.sh [--out DIR] [LAB OPTIONS...]     (default DIR: lab-linux-out)
#
# LAB OPTIONS are msivm lab --guest linux's (--runs, --io-runs, --configs, --vs qemu, --fio-secs,
# --iperf-secs ...; see build/msivm lab --guest linux --help). Nested, figures are ~100x slower
# than hardware: compare ratios. Needs root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=lab-linux-out
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift ;;
	--out=*) out=${1#*=} ;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "lab-linux: needs root (tap devices, /dev/kvm, apt-get)" >&2; exit 125; }
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
cd "$top"
make -s all
direct=0
if [ -c /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; } && [ ! -d /sys/module/kvm_pvm ]; then
	direct=1
fi
if [ "$direct" = 1 ]; then
	[ -s build/linux/l2/initramfs.cpio.gz ] && [ build/linux/l2/initramfs.cpio.gz -nt guest/linux/lab-init ] ||
		OUT=build/linux tests/linux/build.sh l2
	exec build/msivm lab --guest linux --out "$out" --force "${args[@]}"
fi
# Nested: check-linux.sh builds L2 and L1 and runs the lab in L1 (gnuplot is not in there:
# the charts are drawn here from the script the lab leaves beside its report).
st=0
tests/linux/check-linux.sh --lab "${args[*]}" --lab-out "$out" || st=$?
if [ -s "$out/linux-charts.gp" ] && command -v gnuplot >/dev/null; then
	(cd "$out" && gnuplot linux-charts.gp) || echo "lab-linux: gnuplot failed on $out/linux-charts.gp" >&2
fi
[ -s "$out/report.txt" ] && cat "$out/report.txt"
exit $st
