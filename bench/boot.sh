#!/usr/bin/env bash
# Benchmark (not a test): wall time and peak RSS from process start to guest exit,
# msivm vs QEMU microvm on the same probe ELF, plus a bare KVM floor; median of N runs.
#   bench/boot.sh [RUNS]        (default 10; needs scripts/deps.sh for QEMU)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10}
PROBE=build/guest/probe.elf
make -s build/msivm "$PROBE"
mkdir -p build/bench
cc -O2 -o build/bench/bare_kvm bench/bare_kvm.c

# measure NAME EXPECTED_STATUS CMD...: prints "NAME median_ms min_ms max_ms median_rss_kib"
measure() {
	local name=$1 want=$2; shift 2
	local times=() rss=() i t0 t1 st
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		st=0
		/usr/bin/time -f %M -o build/bench/rss "$@" >/dev/null 2>build/bench/err || st=$?
		t1=$(date +%s%N)
		if [ "$st" != "$want" ]; then
			echo "bench: $name exited $st, expected $want:" >&2
			cat build/bench/err >&2
			return 1
		fi
		times+=($(((t1 - t0) / 1000)))
		rss+=($(tail -1 build/bench/rss))
		printf '\r  %-12s run %d/%d' "$name" $((i + 1)) "$RUNS" >&2
	done
	printf '\r' >&2
	local med min max mrss
	med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
	min=$(printf '%s\n' "${times[@]}" | sort -n | head -1)
	max=$(printf '%s\n' "${times[@]}" | sort -n | tail -1)
	mrss=$(printf '%s\n' "${rss[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	echo "$name $med $min $max $mrss"
}

results=()
results+=("$(measure bare-kvm 0 build/bench/bare_kvm)")
results+=("$(measure msivm 0 build/msivm run --kernel "$PROBE")")
if command -v qemu-system-x86_64 >/dev/null; then
	results+=("$(measure qemu-microvm 1 qemu-system-x86_64 -M microvm -enable-kvm \
		-cpu host,-arch-capabilities -m 256M -nodefaults -no-user-config -nographic \
		-serial stdio -no-reboot -kernel "$PROBE" -device isa-debug-exit,iobase=0xf4,iosize=4)")
else
	echo "bench: qemu-system-x86_64 not installed (scripts/deps.sh); QEMU skipped" >&2
fi

echo "boot to exit, $RUNS runs each (wall time from process start to exit; peak RSS)"
printf '%-14s %10s %10s %10s %12s\n' vmm "median ms" "min ms" "max ms" "RSS MiB"
for r in "${results[@]}"; do
	read -r n med min max kib <<<"$r"
	awk -v n="$n" -v med="$med" -v min="$min" -v max="$max" -v kib="$kib" \
		'BEGIN { printf "%-14s %10.2f %10.2f %10.2f %12.2f\n", n, med/1000, min/1000, max/1000, kib/1024 }'
done
bare=$(printf '%s\n' "${results[@]}" | awk '$1=="bare-kvm" {print $2, $5}')
msivm=$(printf '%s\n' "${results[@]}" | awk '$1=="msivm" {print $2, $5}')
qemu=$(printf '%s\n' "${results[@]}" | awk '$1=="qemu-microvm" {print $2, $5}')
awk -v b="$bare" -v m="$msivm" -v q="$qemu" 'BEGIN {
	split(b, B, " "); split(m, M, " "); split(q, Q, " ")
	printf "msivm / bare KVM:     time %.2fx  RSS %.2fx\n", M[1]/B[1], M[2]/B[2]
	if (q != "") printf "QEMU microvm / msivm: time %.2fx  RSS %.2fx\n", Q[1]/M[1], Q[2]/M[2]
}'
