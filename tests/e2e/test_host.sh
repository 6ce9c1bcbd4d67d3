#!/usr/bin/env bash
# End-to-end: hosts that lack something. The lab: no gnuplot (or one that dies at once) costs the
# charts only, never the exit status or the report's last lines; a host that refuses SCHED_FIFO
# gets its real-time experiments reported as not possible, not as failed runs. The mode: `msivm
# host` names this host's KVM, and the lab's report, tests/e2e/run.sh and check-linux name the
# mode that follows from it.
# e2e: needs 2 CPUs (the -rt and -ded experiments need two; with one they are skipped for that)
set -u
here=$(dirname "$0")
. "$here/lib.sh"

# lab OUT [PATH]: a short lab run (rng over MSI-X and INTx) with PATH as given.
lab() {
	local dir=$1 path=${2:-$PATH}
	timeout 300 env PATH="$path" "$MSIVM" lab --runs 1 --experiments rng --modes msix,intx --probe "$PROBE" \
		--out "$dir" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# --- no gnuplot on PATH: a directory holding only what the lab runs besides (nothing of gnuplot)
mkdir -p "$TMP/bin"
for p in sh bash; do ln -s "$(command -v $p)" "$TMP/bin/$p"; done
lab "$TMP/nognuplot" "$TMP/bin"
expect "without gnuplot the lab exits 0 and says the charts were not drawn, as its last line" 0 \
	'not drawn: gnuplot is not installed'
last=$(tail -n 1 <<<"$out")
[[ "$last" == report:*"gnuplot is not installed"* ]] && [ -s "$TMP/nognuplot/report.txt" ] &&
	! ls "$TMP/nognuplot"/*.svg >/dev/null 2>&1 &&
	pass "the report is written, no chart, and the 'report:' line is the last one" ||
	fail "no-gnuplot report (last line: '$last')"

# --- a gnuplot that exits at once without reading: writing to it raised SIGPIPE and killed the
# lab (status 141) before its last lines.
printf '#!/bin/sh\nexit 3\n' >"$TMP/bin/gnuplot"
chmod +x "$TMP/bin/gnuplot"
lab "$TMP/deadgnuplot" "$TMP/bin"
expect "a gnuplot that dies at once costs the charts only: exit 0, 'gnuplot failed'" 0 'not drawn: gnuplot failed'

# --- no real-time budget: without CAP_SYS_NICE and with RLIMIT_RTPRIO 0 even root may not use
# SCHED_FIFO (as in a container that grants none).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
	timeout 300 prlimit --rtprio=0 setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice \
		"$MSIVM" lab --runs 1 --experiments lat-irqfd,lat-irqfd-rt,lat-irqfd-ded --probe "$PROBE" \
		--out "$TMP/nort" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	expect "no SCHED_FIFO: the lab says so once at the start and exits 0" 0 \
		'^msivm lab: the real-time experiments \(-rt, -ded\) are not possible here: SCHED_FIFO refused'
	skipped=$(jq '[.experiments[] | select(.name == "lat-irqfd-rt" or .name == "lat-irqfd-ded") | .configs[] |
		select(.vmm == "msivm") | select((.skipped // "") | test("SCHED_FIFO refused"))] | length' \
		"$TMP/nort/report.json" 2>/dev/null)
	ran=$(jq '[.experiments[] | select(.name == "lat-irqfd") | .configs[] | select(.vmm == "msivm") |
		.runs | length] | add' "$TMP/nort/report.json" 2>/dev/null)
	failed=$(jq '.runs_failed' "$TMP/nort/report.json" 2>/dev/null)
	if [ "$skipped" = 2 ] && [ "$ran" = 1 ] && [ "$failed" = 0 ]; then
		pass "the -rt and -ded configurations are skipped with the reason, lat-irqfd ran, no run failed"
	else
		fail "no-RT report: skipped=$skipped (want 2), lat-irqfd runs=$ran (want 1), runs_failed=$failed (want 0)"
	fi
else
	echo "skip - the no-real-time case needs root, setpriv and prlimit"
fi

# --- the KVM mode: msivm host names it, the lab's report carries it
run host
case "$out" in
hardware:* | pvm:*) expect "msivm host names this host's KVM (hardware or pvm) and exits 0" 0 '^(hardware|pvm): /dev/kvm is' ;;
*) expect "msivm host names this host's KVM" 0 '^(hardware|pvm|none): ' ;;
esac
kind=${out%%:*} want=${out%%:*}
[ -n "${MSIVM_NESTED:-}" ] && want=nested # inside scripts/nested/run.sh
mode=$(jq -r '.host.kvm.mode' "$TMP/nognuplot/report.json" 2>/dev/null)
line=$(grep -m1 '^KVM mode: ' "$TMP/nognuplot/report.txt")
[ "$mode" = "$want" ] && [ -n "$line" ] &&
	pass "the lab report's KVM mode is the host's ($mode): '$line'" ||
	fail "report KVM mode '$mode', host '$want', line '$line'"
run host --kvm-device "$TMP/no-such-kvm"
expect "a missing device is 'none' with its name" 0 "^none: no $TMP/no-such-kvm\$"
run host --kvm-device /dev/null
expect "a device that is no KVM is 'none', saying so" 0 '^none: /dev/null answers KVM API -1'
# A user who may not open /dev/kvm: msivm host says what the device is and that this user cannot
# open it (not 'none', status 1).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -c /dev/kvm ] &&
	[ "$(stat -c %a /dev/kvm)" = 600 ] && [ "$kind" != none ]; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$MSIVM" "$@" >"$TMP/out" 2>"$TMP/err"; }
	nobody host
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	expect "msivm host, /dev/kvm not openable: 'denied', what it is, who may open it, status 1" 1 \
		'^denied: /dev/kvm is (PVM \(kvm_pvm\)|hardware KVM by kvm_(intel|amd)), but this user cannot open it \(owner root, group root, mode 0600'
	# (the lab stopping before its first run: test_lab_honest.sh)
else
	echo "skip - no permission on /dev/kvm (needs root, setpriv and a 0600 KVM device)"
fi
run host --bogus
expect "msivm host refuses an unknown argument" 125 '' "unknown argument '--bogus'"
MSIVM_KVM_HOST=none "$MSIVM" host >"$TMP/out" 2>&1
status=$? out=$(cat "$TMP/out")
expect "MSIVM_KVM_HOST=none makes any host 'none' (to try the nested paths)" 0 '^none: taken as none \(MSIVM_KVM_HOST=none'

# The harnesses' first lines follow msivm host: e2e runs direct with a usable KVM, nested without;
# check-linux runs direct only on hardware KVM.
top=$(cd "$here/../.." && pwd)
for force in "" none; do
	want_e2e=direct want_cl=nested
	[ -n "$force" ] && want_e2e=nested
	[ -z "$force" ] && [ "$kind" = hardware ] && want_cl=direct
	line=$(env -u E2E_MODE -u E2E_RESULTS -u E2E_GROUPS MSIVM_KVM_HOST=$force E2E_ONLY=none-such \
		"$here/run.sh" 2>&1 | head -n 1) # (the variables this suite's own runner set: not for this one)
	[[ "$line" == "e2e: mode $want_e2e: ${force:-$kind}: "* ]] &&
		pass "tests/e2e/run.sh names its mode (${force:-this host}): '$line'" ||
		fail "tests/e2e/run.sh's first line with MSIVM_KVM_HOST='$force': '$line' (want mode $want_e2e)"
	if [ "$(id -u)" = 0 ]; then
		line=$(cd "$top" && MSIVM_KVM_HOST=$force tests/linux/check-linux.sh --report 2>&1 | grep -m1 ' mode ')
		[[ "$line" == *"mode $want_cl: "*"${force:-$kind}"* ]] &&
			pass "check-linux names its mode (${force:-this host}): '${line#*] }'" ||
			fail "check-linux's mode line with MSIVM_KVM_HOST='$force': '$line' (want mode $want_cl)"
	fi
done

finish
