#!/usr/bin/env bash
# scripts/busy-vms.sh, the load of docs/testing.md's "A host running other busy VMs": its VMs run
# rounds until stopped, a failed round is counted and makes the status 1, no VM outlives it, and
# bad arguments get 125. Short probe workloads instead of the real one; about 6 s.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
busy() { timeout "$E2E_TIMEOUT" "$top/scripts/busy-vms.sh" --msivm "$MSIVM" --probe "$PROBE" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err"); }

busy --vms 2 --for 3 --dir "$TMP/ok" --cmdline "rng=4 exit=0"
r1=$(wc -l <"$TMP/ok/vm1.rounds") r2=$(wc -l <"$TMP/ok/vm2.rounds")
if [ "$status" = 0 ] && [ "$r1" -ge 1 ] && [ "$r2" -ge 1 ] &&
	grep -q '^busy-vms: 2 busy VMs started' <<<"$out" &&
	grep -Eq "^busy-vms: vm2: $r2 rounds finished in [0-9]+ s, 0 failed" <<<"$out" &&
	! pgrep -f "$TMP/ok/vm" >/dev/null; then
	pass "two busy VMs for 3 s: $r1 and $r2 rounds, status 0, none left running"
else
	fail "two busy VMs for 3 s (rounds $r1, $r2)"
fi
busy --vms 1 --for 2 --dir "$TMP/bad" --cmdline "rng=4 exit=3"
expect "a round that fails is counted: status 1" 1 '^busy-vms: vm1: [1-9][0-9]* rounds finished in [0-9]+ s, [1-9][0-9]* failed'
busy --vms 0
expect "--vms 0 is refused (125)" 125 '' "busy-vms: --vms wants 1..99, not '0'"
busy --vms 1 --msivm /nonexistent/msivm
expect "a missing msivm is named (125)" 125 '' 'no msivm at /nonexistent/msivm'
finish
