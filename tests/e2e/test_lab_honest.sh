#!/usr/bin/env bash
# End-to-end: `msivm lab` does not hide failures. A VMM that cannot start is shown (first error
# line on the terminal, whole stderr in report.json, exit 1); SIGINT/SIGTERM stop the running VMM,
# leave a partial report and no scratch file; no VMM outlives a killed lab; an --out holding an
# earlier report is refused unless --force, which removes only the report's files.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

chmod 755 "$TMP"
MSIVM_ABS=$(readlink -f "$MSIVM")
PROBE_ABS=$(readlink -f "$PROBE")

# lab DIR ARGS...: runs the lab with TMPDIR=DIR/tmp; sets $status, $out, $err.
lab() {
	local d=$1
	shift
	mkdir -p "$d/tmp"
	TMPDIR="$d/tmp" timeout 60 "$MSIVM_ABS" lab --probe "$PROBE_ABS" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# no_scratch NAME DIR: nothing left in DIR/tmp, and only report files in DIR/out.
no_scratch() {
	local left others
	left=$(ls -A "$2/tmp")
	others=$(ls -A "$2/out" | grep -Ev '^(report\.txt|report\.json|report\.html|.*\.svg)$')
	if [ -z "$left" ] && [ -z "$others" ]; then
		pass "$1: no scratch file left in \$TMPDIR or --out"
	else
		fail "$1: left behind: tmp='$left' out='$others'"
	fi
}

# --- 1. a VMM that cannot start: --kvm-device names a node that is no KVM device
d="$TMP/nokvm"
lab "$d" --runs 1 --experiments boot --modes msix,intx --kvm-device /dev/null --out "$d/out"
expect "lab: failed runs give status 1 and a closing line" 1 '' '2 of 2 runs failed'
expect "lab: each failed run shows its first error line as it happens" 1 '' \
	'^run 1/2 msivm boot msix failed \(status 125\): msivm: /dev/null is not a KVM device$'
R="$d/out/report.json"
if [ "$(jq -r '.experiments[0].configs[0].runs[0].stderr' "$R")" = "msivm: /dev/null is not a KVM device" ] &&
	[ "$(jq -r '[.runs_failed, .runs_done, .runs_planned, .partial] | @tsv' "$R")" = "$(printf '2\t2\t2\tfalse')" ]; then
	pass "report.json keeps each run's stderr and the failure counts"
else
	fail "report.json: $(jq -c '.experiments[0].configs[0].runs[0] | {status, error, stderr}' "$R")"
fi
grep -q '^boot msivm intx run 1 (status 125): msivm: /dev/null is not a KVM device' <(sed 's/^  //' "$d/out/report.txt") &&
	grep -q '^2 of 2 runs failed' "$d/out/report.txt" &&
	pass "report.txt lists the failed runs" || fail "report.txt has no failure list"
no_scratch "failed runs" "$d"

# --- 2. the report says what ran where
v=$("$MSIVM" --version | awk '{print $2}')
meta=$(jq -r '[.version, .date, .host.kernel, (.host.cpus|tostring), .host.cpu, .host.kvm.description,
	(.argv | index("--kvm-device") | tostring)] | @tsv' "$R")
IFS=$'\t' read -r jv jdate jkernel jcpus jcpu jkvm jargv <<<"$meta"
if [ "$jv" = "$v" ] && [[ "$jdate" =~ ^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z$ ]] &&
	[ "$jkernel" = "$(uname -r)" ] && [ "$jcpus" = "$(nproc)" ] && [ -n "$jcpu" ] &&
	[[ "$jkvm" == *"/dev/null is not a KVM device"* ]] && [ "$jargv" -gt 0 ]; then
	pass "report.json: version, date, argv and host (kernel, cpu, cpus, kvm: $jkvm)"
else
	fail "report.json metadata: $meta"
fi
grep -q "^msivm lab $v, .*--kvm-device /dev/null" "$d/out/report.txt" && grep -q "^host: Linux $(uname -r)" "$d/out/report.txt" &&
	pass "report.txt starts with the version, command line and host" || fail "report.txt header: $(head -3 "$d/out/report.txt")"

# --- 3. a user without access to /dev/kvm (as root: run the lab as nobody)
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -r /dev/kvm -a -w /dev/kvm; then
	d="$TMP/nobody"
	mkdir -p "$d/tmp" && chmod 777 "$d" "$d/tmp"
	status=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups env TMPDIR="$d/tmp" timeout 60 \
		"$MSIVM_ABS" lab --probe "$PROBE_ABS" --runs 1 --experiments boot --modes msix --out "$d/out" \
		>"$TMP/out" 2>"$TMP/err" || status=$?
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	expect "lab as a user without /dev/kvm: stops before its first run (125), naming owner, group and mode" 125 \
		'' '^msivm lab: no permission to open /dev/kvm \(owner root, group root, mode 0600.*no run can start; stopping$'
	[ ! -e "$d/out" ] && [ "$(wc -l <<<"$err")" = 1 ] && pass "... one line, no run, no report" ||
		fail "lab as nobody: a report or more than one line"
	no_scratch "lab as nobody" "$d"
else
	echo "skip - lab as a user without /dev/kvm (not root, or nobody may open /dev/kvm)"
fi

# --- 4. a good run: ratios for counts, the baseline named, units on every chart's y-axis
d="$TMP/good"
lab "$d" --runs 1 --experiments rng --modes msix,intx --out "$d/out"
expect "a good lab run exits 0" 0 'interrupts per request +msivm +msix .* x[0-9]+\.[0-9]{2}$' ''
if grep -Eq 'interrupts per request +msivm +intx .* baseline$' <<<"$out" && grep -q '^vs intx: ' <<<"$out" &&
	! grep -Eq 'x1\.00$|\+0\.0%$' <<<"$(grep ' intx ' <<<"$out")"; then
	pass "the intx rows are the baseline, and the header says what 'vs intx' means"
else
	fail "baseline rows"
fi
noylabel=0
for svg in "$d"/out/*.svg; do
	grep -A1 'rotate(270)' "$svg" | grep -q '\[[^]]*\]</tspan>' || noylabel=$((noylabel + 1))
done
[ "$noylabel" = 0 ] && pass "every chart names its unit on the y-axis" || fail "$noylabel charts without a [unit] label"
no_scratch "good run" "$d"

# --- 5. progress: one plain line per run with elapsed time and ETA when stderr is no terminal
if [ "$(grep -c '^\[  [12]/  2\] rng msivm .* elapsed, ETA .*)$' <<<"$err")" = 2 ] && ! grep -q $'\r' "$TMP/err"; then
	pass "progress without a terminal: a line per run with elapsed time and ETA, no carriage returns"
else
	fail "progress lines"
fi
if command -v script >/dev/null; then
	script -qec "TMPDIR=$d/tmp $MSIVM_ABS lab --probe $PROBE_ABS --runs 1 --experiments boot --modes msix --out $d/tty" \
		/dev/null >"$TMP/tty" 2>&1 </dev/null
	grep -q $'\r\033\\[K\\[  1/  1\\] boot msivm msix run 1/1  0:00 elapsed, ETA --:--' "$TMP/tty" &&
		pass "progress on a terminal is redrawn in place" || fail "tty progress: $(od -c "$TMP/tty" | head -5)"
fi

# --- 6. an --out holding a report is refused; --force removes only the report's files
echo keep >"$d/out/notes.txt"
lab "$d" --runs 1 --experiments boot --modes msix --out "$d/out"
expect "an --out holding an earlier report is refused" 125 '' "holds an earlier report .*--force"
[ -e "$d/out/rng-mib_s.svg" ] && pass "the refused run changed nothing" || fail "the earlier report was touched"
lab "$d" --runs 1 --experiments boot --modes msix --force --out "$d/out"
expect "--force replaces the earlier report" 0 '' 'removed [0-9]+ files of an earlier report'
if ! ls "$d"/out/rng-*.svg >/dev/null 2>&1 && [ -s "$d/out/boot-ready_ms.svg" ] && [ "$(cat "$d/out/notes.txt")" = keep ] &&
	jq -e '.experiments | length == 1' "$d/out/report.json" >/dev/null; then
	pass "--force: no stale chart of the earlier run beside the new report; other files kept"
else
	fail "--force left: $(ls "$d/out")"
fi

# --- 7. SIGINT and SIGTERM mid-run: forwarded, partial report, no VMM and no scratch file left
# wait_child LABPID: prints the pid of the lab's VMM child once the second run has started.
wait_child() {
	local i c
	for i in $(seq 200); do
		c=$(pgrep -P "$1" | head -1)
		if [ -n "$c" ] && grep -q '^\[  2/' "$TMP/err" 2>/dev/null; then
			echo "$c"
			return
		fi
		sleep 0.05
	done
}
# SIGINT goes to the lab's process group, as Ctrl-C on a terminal does (the VMM gets it too);
# SIGTERM to the lab alone, which must pass it on.
for sig in INT TERM; do
	d="$TMP/sig$sig"
	mkdir -p "$d/tmp"
	set -m # a job of its own: a background job of a script would ignore SIGINT
	TMPDIR="$d/tmp" "$MSIVM_ABS" lab --probe "$PROBE_ABS" --runs 2 --experiments net-rx,blk-seqwrite \
		--modes msix --out "$d/out" >"$TMP/out" 2>"$TMP/err" &
	labpid=$!
	set +m
	( sleep 60; kill -KILL "$labpid" ) >/dev/null 2>&1 &
	watchdog=$!
	child=$(wait_child "$labpid")
	if [ "$sig" = INT ]; then kill -INT -- -"$labpid"; else kill -TERM "$labpid"; fi
	wait "$labpid"
	status=$?
	pkill -P "$watchdog" sleep
	kill "$watchdog" 2>/dev/null
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	want=$((128 + $(kill -l "$sig")))
	expect "SIG$sig mid-run: status $want, 'interrupted after 1/4 runs'" "$want" 'PARTIAL REPORT' 'interrupted after 1/4 runs'
	if [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null && [ -z "$(pgrep -f "$d/tmp")" ]; then
		pass "SIG$sig: the running VMM ($child) was stopped with the lab"
	else
		fail "SIG$sig: VMM child '$child' still running: $(pgrep -af "$d/tmp")"
	fi
	if [ "$(jq -r '[.partial, .interrupted_by, .runs_done] | @tsv' "$d/out/report.json")" = "$(printf 'true\tSIG%s\t1' "$sig")" ] &&
		grep -q '^PARTIAL REPORT: interrupted by SIG' "$d/out/report.txt"; then
		pass "SIG$sig: the partial report is marked partial (text and JSON)"
	else
		fail "SIG$sig: report: $(jq -c '{partial, interrupted_by, runs_done}' "$d/out/report.json")"
	fi
	no_scratch "SIG$sig" "$d"
done

# --- 8. a lab killed outright takes its VMM with it (PR_SET_PDEATHSIG)
d="$TMP/kill"
mkdir -p "$d/tmp"
TMPDIR="$d/tmp" "$MSIVM_ABS" lab --probe "$PROBE_ABS" --runs 2 --experiments net-rx,blk-seqwrite --modes msix \
	--out "$d/out" >/dev/null 2>"$TMP/err" &
labpid=$!
disown "$labpid" # no "Killed" notice from the shell
child=$(wait_child "$labpid")
kill -KILL "$labpid"
for i in $(seq 40); do [ -n "$child" ] && kill -0 "$child" 2>/dev/null || break; sleep 0.05; done
status=0
if [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null; then
	pass "SIGKILL to the lab: its VMM ($child) dies with it"
else
	fail "SIGKILL to the lab: VMM '$child' outlived it"
	[ -n "$child" ] && kill -KILL "$child"
fi

# --- 9. the installed layout (make install): msivm-lab beside msivm, the probe at ../lib/msivm/probe.elf
d="$TMP/inst"
mkdir -p "$d/bin" "$d/lib/msivm" "$d/tmp"
cp "$MSIVM_ABS" "$d/bin/msivm" && cp "$PROBE_ABS" "$d/lib/msivm/probe.elf"
# without msivm-lab beside it, `msivm lab` says what is missing and how to get it
TMPDIR="$d/tmp" "$d/bin/msivm" lab --runs 1 >"$TMP/out" 2>"$TMP/err"
status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect "msivm lab without msivm-lab beside it: one message naming it" 125 "" "cannot run the lab program '$d/bin/msivm-lab'.*make install installs both"
cp "$(dirname "$MSIVM_ABS")/msivm-lab" "$d/bin/msivm-lab"
TMPDIR="$d/tmp" timeout 60 "$d/bin/msivm" lab --runs 1 --experiments boot --modes msix --out "$d/out" >"$TMP/out" 2>"$TMP/err"
status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect "an installed msivm finds its probe at PREFIX/lib/msivm/probe.elf" 0 'boot to ready \(ms\) +msivm +msix +[0-9]'

# --- 11. a run counts only when the guest did its work: a QEMU that never started (its startup
# error's status is the probe's success status, 1) and a guest that exits 0 before its work fail
mkdir -p "$TMP/fakebin"
printf '#!/bin/sh\necho "qemu: could not load PC BIOS '"'"'bios-256k.bin'"'"'" >&2\nexit 1\n' \
	>"$TMP/fakebin/qemu-system-x86_64"
chmod 755 "$TMP/fakebin/qemu-system-x86_64"
d="$TMP/noqemu"
PATH="$TMP/fakebin:$PATH" lab "$d" --runs 1 --experiments boot,rng --modes msix,intx --vs qemu --out "$d/out"
R="$d/out/report.json"
qfail=$(grep -c "^run [0-9]/8 qemu [a-z]* [a-z]* failed (status 1): qemu: could not load PC BIOS 'bios-256k.bin'$" <<<"$err")
qerr=$(jq -r '[.experiments[].configs[] | select(.vmm == "qemu") | .runs[] | .error] | unique | join("|")' "$R" 2>/dev/null)
if [ "$status" = 1 ] && [ "$qfail" = 4 ] && grep -q '^msivm lab: 4 of 8 runs failed' <<<"$err" &&
	[ "$qerr" = "qemu: could not load PC BIOS 'bios-256k.bin'" ]; then
	pass "a QEMU that exits 1 at startup fails each of its runs with its error line (exit 1, 4 of 8 failed)"
else
	fail "QEMU startup failure counted as success: status $status, $qfail failed qemu lines, report errors '$qerr'"
fi
d="$TMP/early"
lab "$d" --runs 1 --experiments boot --modes msix --probe-args stopearly --out "$d/out"
expect "a guest that exits 0 before its work fails the run, saying where it stopped" 1 '' \
	"^run 1/1 msivm boot msix failed \(status 0\): the guest never got ready \(no 'probe: ready' line, exit status 0\); its console ends: probe: stopearly: exiting before any device work$"
[ "$(jq -r '.experiments[0].configs[0].runs[0].error' "$d/out/report.json")" = \
	"the guest never got ready (no 'probe: ready' line, exit status 0); its console ends: probe: stopearly: exiting before any device work" ] &&
	pass "report.json names why the early exit failed" || fail "report.json: $(jq -c '.experiments[0].configs[0].runs[0] | {status, error}' "$d/out/report.json")"
run lab --probe-args "$(head -c 201 /dev/zero | tr '\0' x)"
expect "lab: --probe-args longer than 200 characters is refused" 125 '' "--probe-args is too long"

# --- 10. usage errors
run lab --force --runs 0
expect "lab: --runs 0 is still refused" 125 '' "bad --runs"
finish
