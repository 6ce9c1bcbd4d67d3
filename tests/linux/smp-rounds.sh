#!/usr/bin/env bash
# The races' tally (issue 29): make check-linux N times in a two-vCPU nested host, each round's logs kept, then per VMM and configuration the L2 boots, resets nobody asked for, stalls, timeouts, panics and lost console inputs.
#
# usage: tests/linux/smp-rounds.sh N [OUTDIR] [-- check-linux options]
#   default options: --configs msix,msi,intx,nomsi,qemu,qnomsi (qnomsi: QEMU booted pci=nomsi, nomsi's reference); OUTDIR default build/linux/rounds.
#   Env as check-linux.sh's (LC_LOOPDISK, LC_DUMPALL=1 keeps every crash dump's JSON and messages).
#   tests/linux/smp-rounds.sh --tally OUTDIR: only the tally of rounds already run.
# A round whose L1 itself died is retried by check-linux (it says so); the tally counts L2 events
# only, from each configuration's last L1 boot (results/CFG).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

rounds_done() { # OUTDIR: the numbers of the rounds whose logs are kept (round-N/, not round-N.log), in order
	ls -d "$1"/round-*/ 2>/dev/null | sed 's#.*/round-##; s#/$##' | grep -E '^[0-9]+$' | sort -n
}

tally() { # OUTDIR
	local out=$1 r c f res inits asked unasked
	declare -A boots resets stalls tmos panics lost badruns pairbad rb
	local pairs=0
	printf '%-6s' round
	for c in msix msi intx nomsi vhost qemu qnomsi; do printf ' %-14s' "$c"; done
	echo
	for r in $(rounds_done "$out"); do
		printf '%-6s' "$r"
		rb=()
		for c in msix msi intx nomsi vhost qemu qnomsi; do
			f=$out/round-$r/results/$c/serial.log
			res=$out/round-$r/results/$c/results.txt
			if [ ! -f "$f" ]; then printf ' %-14s' -; continue; fi
			inits=$(grep -a -c 'lc: init uptime' "$f")
			asked=$(grep -a -c 'lc: power [0-9]* reboot' "$f")
			unasked=$((inits - 1 - asked))
			[ "$unasked" -lt 0 ] && unasked=0
			local s= st tm pa lo
			st=$(grep -a -c -E 'soft lockup|rcu_(preempt|sched) detected stalls' "$f")
			tm=$(grep -c '^FAIL vmm.timeout' "$res" 2>/dev/null)
			pa=$(grep -a -c -E 'Kernel panic|BUG: unable|general protection fault|double fault|Oops:' "$f")
			lo=$(grep -c '^FAIL console.input' "$res" 2>/dev/null)
			[ "$unasked" -gt 0 ] && s="${s}R$unasked"
			[ "$st" -gt 0 ] && s="${s}S"
			[ "${tm:-0}" -gt 0 ] && s="${s}T"
			[ "$pa" -gt 0 ] && s="${s}P"
			[ "${lo:-0}" -gt 0 ] && s="${s}L"
			printf ' %-14s' "${s:-ok}"
			boots[$c]=$((${boots[$c]:-0} + 1))
			resets[$c]=$((${resets[$c]:-0} + unasked))
			stalls[$c]=$((${stalls[$c]:-0} + (st > 0)))
			tmos[$c]=$((${tmos[$c]:-0} + (${tm:-0} > 0)))
			panics[$c]=$((${panics[$c]:-0} + (pa > 0)))
			lost[$c]=$((${lost[$c]:-0} + (${lo:-0} > 0)))
			rb[$c]=$((unasked > 0 || st > 0 || ${tm:-0} > 0 || pa > 0))
			badruns[$c]=$((${badruns[$c]:-0} + rb[$c]))
		done
		echo
		if [ -n "${rb[nomsi]:-}" ] && [ -n "${rb[qnomsi]:-}" ]; then
			pairs=$((pairs + 1))
			pairbad[nomsi]=$((${pairbad[nomsi]:-0} + rb[nomsi]))
			pairbad[qnomsi]=$((${pairbad[qnomsi]:-0} + rb[qnomsi]))
		fi
	done
	echo "(R: guest resets nobody asked for, S: soft lockup or RCU stall, T: timeout, P: panic, L: lost console input)"
	local m_runs=0 m_bad=0 q_runs=0 q_bad=0
	for c in msix msi intx nomsi vhost qemu qnomsi; do
		[ -n "${boots[$c]:-}" ] || continue
		local bad=${badruns[$c]}
		echo "$c: ${boots[$c]} runs, $bad with a guest reset, stall, timeout or panic (resets ${resets[$c]}, stalls ${stalls[$c]}, timeouts ${tmos[$c]}, panics ${panics[$c]}); lost console input ${lost[$c]}"
		if [ "$c" = qemu ] || [ "$c" = qnomsi ]; then q_runs=$((q_runs + boots[$c])) q_bad=$((q_bad + bad)); else m_runs=$((m_runs + boots[$c])) m_bad=$((m_bad + bad)); fi
	done
	echo "msivm: $m_bad of $m_runs runs failed that way; QEMU: $q_bad of $q_runs"
	# the same interrupt mode under both VMMs, in the rounds that ran both
	if [ -n "${boots[nomsi]:-}" ] && [ -n "${boots[qnomsi]:-}" ]; then
		echo "INTx by pci=nomsi, the same rounds: msivm (nomsi) ${pairbad[nomsi]:-0} of ${pairs:-0}, QEMU (qnomsi) ${pairbad[qnomsi]:-0} of ${pairs:-0}"
	fi
}

if [ "${1:-}" = --tally ]; then
	tally "${2:?--tally OUTDIR}"
	exit 0
fi
n=${1:?usage: $0 N [OUTDIR] [-- check-linux options]}
shift
out=$top/build/linux/rounds
if [ $# -gt 0 ] && [ "$1" != -- ]; then out=$1; shift; fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- --configs msix,msi,intx,nomsi,qemu,qnomsi
mkdir -p "$out"
first=$(($(rounds_done "$out" | tail -n1) + 1))
for r in $(seq "$first" $((first + n - 1))); do
	echo "smp-rounds: round $r of $((first + n - 1)) ($(date +%H:%M:%S))"
	LINUX_CHECK_L1_SMP=2 "$here/check-linux.sh" "$@" >"$out/round-$r.log" 2>&1
	echo "smp-rounds: round $r: check-linux status $? ($(grep -o 'done: .*' "$out/round-$r.log" | tail -n1))"
	rm -rf "$out/round-$r" && cp -r "$top/build/linux/logs" "$out/round-$r"
done
tally "$out"
