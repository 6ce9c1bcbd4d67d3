#!/usr/bin/env bash
# End-to-end: a short `msivm lab` run; the figures must agree with the interrupt mechanics.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

lab="$TMP/lab"
timeout 300 "$MSIVM" lab --runs 1 --experiments boot,rng,floor,lat-irqfd --modes msix,msix-shared,msi,intx \
	--probe "$PROBE" --out "$lab" >"$TMP/out" 2>"$TMP/err"
status=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect "msivm lab finishes and prints the table for all four modes" 0 'throughput \(MiB/s\) +msivm +intx'

# The headline comes first: after the header (version, host, run count), the VMM's own threads'
# CPU per request for each experiment with a work window and mode, msivm beside QEMU.
first=$(grep -m1 -n -E '^[A-Za-z]' <<<"$(sed '1,/^runs: /d' <<<"$out")" | cut -d: -f2-)
if [ "$first" = "VMM CPU µs per request, msivm/QEMU" ] &&
	grep -Eq '^  rng +msix +[0-9.]+ \[[0-9.]+-[0-9.]+\] +- +-$' <<<"$out" &&
	grep -Eq '^  rng +intx +[0-9.]+ \[' <<<"$out" && ! grep -Eq '^  (boot|floor|lat-irqfd) ' <<<"$(sed -n '/^VMM CPU/,/^median/p' <<<"$out")"; then
	pass "the report's first table is the headline: VMM CPU µs per request, a row per experiment and mode"
else
	fail "headline: first='$first'"
fi
grep -q '^vCPU threads.* CPU µs per request' <<<"$out" && grep -q 'guest (field 43)' <<<"$out" &&
	pass "the vCPU threads' CPU is reported apart, with what /proc said about guest time" ||
	fail "no vCPU table"
if ! grep -Eq 'whole run|KVM exits' <<<"$(sed -n '/^virtio-rng/,$p' <<<"$out")"; then
	pass "whole-run CPU and KVM's exit count are out of the tables"
else
	fail "whole-run CPU or KVM exits still in the tables"
fi

R="$lab/report.json"
# fig EXP MODE KEY: the mean of a figure for msivm.
fig() {
	jq -r --arg e "$1" --arg m "$2" --arg k "$3" \
		'.experiments[] | select(.name==$e) | .configs[] | select(.vmm=="msivm" and .mode==$m) | .summary[$k].mean // "none"' "$R"
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "none" && a + 0 >= b + 0) }'; }
eq0() { [ "$1" != none ] && awk -v a="$1" 'BEGIN { exit !(a + 0 == 0) }'; }

# Under INTx every interrupt costs an ISR read (an exit); under load several
# completions can share one interrupt, so the check is "> 0", not "= 1".
if ge "$(fig rng intx isr_reads_per_req)" 0.01; then
	pass "intx: the exits include ISR reads: $(fig rng intx isr_reads_per_req) per request"
else
	fail "intx: ISR reads per request = $(fig rng intx isr_reads_per_req)"
fi
# Under plain MSI the probe enables one message for config and queues and
# reads ISR to tell them apart, so only the MSI-X modes are ISR-free.
for m in msix msix-shared msi; do
	if [ "$m" != msi ]; then
		if eq0 "$(fig rng $m isr_reads_per_req)"; then
			pass "$m: no ISR read in the workload"
		else
			fail "$m: ISR reads per request = $(fig rng $m isr_reads_per_req)"
		fi
	fi
	if eq0 "$(fig rng $m level_irqs)"; then
		pass "$m: no level-triggered interrupt"
	else
		fail "$m: level-triggered interrupts = $(fig rng $m level_irqs)"
	fi
done
if ge "$(fig rng intx level_irqs)" 1; then
	pass "intx: the interrupts are level-triggered ($(fig rng intx level_irqs))"
else
	fail "intx: level-triggered interrupts = $(fig rng intx level_irqs)"
fi
if ge "$(fig boot msix ready_ms)" 0.001; then
	pass "boot to ready is measured ($(fig boot msix ready_ms) ms in msix mode)"
else
	fail "boot to ready missing"
fi
# The work window: the msivm process's threads between the probe's lines; the guest's counts.
win=$(jq -r '.experiments[] | select(.name=="rng") | .configs[] | select(.mode=="msix") | .runs[0] |
	[.work_cpu.vmm_ns > 0, .work_cpu.vcpu_ns > .work_cpu.vmm_ns, (.work_cpu.threads | has("msivm-io")),
	 .work_cpu.threads["msivm-vcpu0"].kind, .figures.kicks_per_req, (.figures.cpu_us_per_req != null)] | @tsv' "$R")
if [ "$win" = "$(printf 'true\ttrue\ttrue\tvcpu\t1\ttrue')" ]; then
	pass "report.json: the work window's CPU per thread (msivm-io, msivm-vcpu0), one notify per rng request, whole-run CPU kept"
else
	fail "work window: $win"
fi
runs=$(jq '[.experiments[].configs[].runs | length] | add' "$R")
cons=$(jq '[.experiments[].configs[].runs[] | select(.console | test("probe: result"))] | length' "$R")
if [ "$runs" = 10 ] && [ "$cons" = 10 ]; then
	pass "report.json holds every raw run with its console and figures ($runs runs)"
else
	fail "report.json runs=$runs with results=$cons"
fi
if command -v rsvg-convert >/dev/null; then
	ok=1
	for svg in "$lab"/rng-*.svg "$lab"/boot-*.svg; do
		rsvg-convert "$svg" -o "$TMP/chart.png" 2>/dev/null && [ -s "$TMP/chart.png" ] || ok=0
	done
	n=$(ls "$lab"/*.svg | wc -l)
	[ "$ok" = 1 ] && [ "$n" -ge 9 ] && pass "$n SVG charts render" || fail "SVG charts ($n) do not all render"
fi

row=$(grep -E '^  lat-irqfd +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' <<<"$out")
floor=$(grep -E '^  floor +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' <<<"$out")
if [ -n "$row" ] && [ -n "$floor" ] && [ -s "$lab/latency.svg" ]; then
	pass "interrupt latency summary (min/mean/p99/max) with the platform floor beside it, and its chart"
else
	fail "latency summary: row='$row' floor='$floor'"
fi

# The snapshot experiment: a cold boot, a snapshot, a restore in a new process and 4 clones.
timeout 300 "$MSIVM" lab --runs 1 --experiments snapshot --modes msix --probe "$PROBE" \
	--out "$TMP/snaplab" >"$TMP/out" 2>"$TMP/err"
status=$?
R="$TMP/snaplab/report.json"
sf() { jq -r --arg k "$1" '.experiments[0].configs[0].runs[0].figures[$k] // "none"' "$R" 2>/dev/null; }
if [ "$status" = 0 ] && ge "$(sf restore_entry_ms)" 0.01 && ge "$(sf restore_ms)" "$(sf restore_entry_ms)" &&
	ge "$(sf cold_ms)" "$(sf cold_entry_ms)" && ge "$(sf save_ms)" 0.01 && ge "$(sf state_kib)" 1 &&
	ge 1024 "$(sf state_kib)" && ge "$(sf cold_pss_kib)" "$(sf clone_pss_kib)" && ge "$(sf clone_pss_kib)" 1; then
	pass "lab snapshot: restore to the first instruction $(sf restore_entry_ms) ms (answer $(sf restore_ms)), cold $(sf cold_entry_ms)/$(sf cold_ms) ms, state $(sf state_kib) KiB, a clone's PSS $(sf clone_pss_kib) < a cold VM's $(sf cold_pss_kib) KiB"
else
	out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	fail "lab snapshot: status $status, figures $(jq -c '.experiments[0].configs[0].runs[0] | [.figures, .error]' "$R" 2>&1)"
fi

run lab --runs 0
expect "lab: --runs 0 is refused" 125 '' "bad --runs"
run lab --experiments nosuch
expect "lab: an unknown experiment is refused" 125 '' "unknown experiment"
run lab --vs vmware
expect "lab: --vs takes only qemu" 125 '' "--vs takes 'qemu'"
# The Linux lab's refusals (its runs need a /dev/kvm that boots stock kernels: make lab-linux).
run lab --guest linux --kernel /nonexistent/vmlinuz --out "$TMP/ll"
expect "lab --guest linux: a missing kernel is named" 125 '' "cannot read the guest kernel '/nonexistent/vmlinuz'"
run lab --guest linux --configs msix,bogus
expect "lab --guest linux: an unknown configuration is refused" 125 '' "bad configuration list"
kind=$("$MSIVM" host)
if [ "${kind%%:*}" != hardware ]; then
	# No hardware KVM: the Linux lab runs in the nested rig, which boots its own guest.
	touch "$TMP/k" "$TMP/i"
	run lab --guest linux --kernel "$TMP/k" --initrd "$TMP/i" --out "$TMP/ll"
	expect "lab --guest linux: without hardware KVM, --kernel is refused (the nested rig boots its own guest)" \
		125 '' "run without --kernel and --initrd"
	[ ! -e "$TMP/ll" ] && pass "lab --guest linux: nothing left in --out after a refusal" ||
		fail "lab --guest linux left $TMP/ll behind"
	MSIVM_NESTED="test" timeout 60 "$MSIVM" lab --guest linux --out "$TMP/ll" >"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	expect "lab --guest linux: without hardware KVM it would nest, and inside a nested host it refuses to nest again" \
		125 '' "no usable KVM inside the nested host either"
fi

# The lab is its own program (msivm-lab beside msivm): the VMM binary carries none of its code,
# only the lab-marker device the probe reports through.
if command -v nm >/dev/null; then
	labsyms=$(nm "$MSIVM" | awk '{print $NF}' | grep -E '^(lab|ll)_' | grep -v '^lab_marker' | head -5)
	if [ -z "$labsyms" ] && nm "$MSIVM" | grep -q ' lab_marker_ops$' &&
		nm "$(dirname "$MSIVM")/msivm-lab" | grep -q ' T lab_main$'; then
		pass "msivm has no lab symbol (but lab_marker_ops); msivm-lab has lab_main"
	else
		fail "lab code in $MSIVM: ${labsyms:-no lab_marker_ops, or msivm-lab without lab_main}"
	fi
fi
finish
