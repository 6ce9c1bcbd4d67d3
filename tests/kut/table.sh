#!/usr/bin/env bash
# The kut table: per unittests.cfg entry, QEMU's and msivm's verdicts (from run.sh's passes in
# DIR/qemu.results, DIR/msivm.results) and the first line where their logs differ (numbers,
# decimal or hex, masked); then `N passed, N failed` for msivm. Exit 1 if QEMU passes an entry that msivm ran and
# did not pass and KNOWN (lines "entry<TAB>reason") does not name it, or if msivm does not pass one of the
# REQUIRED entries (CI's: they must pass whatever QEMU did). With KUT_SUBFAIL=FILE (the nested
# rig's: tests/kut/nested-failures, lines "entry<TAB>sub-test<TAB>reason"), a REQUIRED entry that
# FAILs only in sub-tests FILE lists for it, and ran to its SUMMARY line, meets the requirement;
# the line printed for it names them.
#   tests/kut/table.sh DIR UNITTESTS_CFG KNOWN [REQUIRED...]
set -u
dir=$1 cfg=$2 known=$3
shift 3
required=("$@")
verdict() { # file entry -> PASS/FAIL/SKIP/- and its reason
	local l
	l=$(grep -E "^(PASS|FAIL|SKIP) $2( |$)" "$1" 2>/dev/null | head -n1)
	[ -n "$l" ] || { echo "-"; return; }
	echo "$l"
}
firstdiff() { # the first differing line of the two logs, past the command line
	local a=$dir/qemu/$1.log b=$dir/msivm/$1.log
	[ -f "$a" ] && [ -f "$b" ] || return
	# The guest's lines only: not the command line, nor the VMMs' own messages.
	local vmm='^(timeout |qemu-system-x86_64: |msivm: |$)'
	# Numbers, decimal or hex (addresses: "membar febff000"), are masked.
	local num='s/\b(0x)?[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b/#/g'
	diff <(grep -Ev "$vmm" "$a" | sed -E "$num") <(grep -Ev "$vmm" "$b" | sed -E "$num") |
		grep -m1 '^[<>]' | cut -c1-100
}
pass=0 fail=0 skip=0 bad=()
printf '%-28s %-6s %-6s %s\n' entry QEMU msivm "first differing line (< QEMU, > msivm) / reason"
for e in $(sed -n 's/^\[\(.*\)\]$/\1/p' "$cfg"); do
	q=$(verdict "$dir/qemu.results" "$e") m=$(verdict "$dir/msivm.results" "$e")
	[ "$q" = - ] && [ "$m" = - ] && continue
	qv=${q%% *} mv=${m%% *}
	case "$mv" in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; SKIP) skip=$((skip + 1)) ;; esac
	note=
	if [ "$qv" != "$mv" ] || [ "$qv" = FAIL ]; then
		note=$(firstdiff "$e")
		[ -n "$note" ] || note=${m#* $e }
	fi
	if [ "$qv" = PASS ] && [ "$mv" != PASS ] && [ "$mv" != - ]; then
		reason=$(awk -F'\t' -v e="$e" '$1 == e { print $2 }' "$known" 2>/dev/null)
		if [ -n "$reason" ]; then note="known: $reason"; else bad+=("$e"); fi
	fi
	printf '%-28s %-6s %-6s %s\n' "$e" "$qv" "$mv" "$note"
done
# Whether msivm's FAIL of entry $1 is only in sub-tests $KUT_SUBFAIL lists for it: prints the
# verdict line for it either way, status 0 if it is.
listed_only() {
	local e=$1 log=$dir/msivm/$1.log f unl=() lst=() npass
	[ -n "${KUT_SUBFAIL:-}" ] && [ -f "$log" ] || return 1
	tr -d '\r' <"$log" | grep -q '^SUMMARY: ' || { echo "required, not passed by msivm: $e (no SUMMARY line: it did not run to its end)"; return 1; }
	while IFS= read -r f; do
		if awk -F'\t' -v e="$e" -v f="$f" '$1 == e && $2 == f { ok = 1 } END { exit !ok }' "$KUT_SUBFAIL"; then
			lst+=("$f")
		else
			unl+=("$f")
		fi
	done < <(tr -d '\r' <"$log" | sed -n 's/^FAIL: //p')
	npass=$(tr -d '\r' <"$log" | grep -c '^PASS: ')
	if [ ${#unl[@]} -gt 0 ]; then
		echo "required, not passed by msivm: $e: sub-tests failed that $(basename "$KUT_SUBFAIL") does not list: $(printf '"%s" ' "${unl[@]}" | sed 's/ $//')"
		return 1
	fi
	[ ${#lst[@]} -gt 0 ] || { echo "required, not passed by msivm: $e (${m:-no result}; no FAIL: line)"; return 1; }
	echo "required, met in the nested rig: $e: $npass sub-tests PASS; FAIL only in the $(basename "$KUT_SUBFAIL") ones: $(printf '"%s" ' "${lst[@]}" | sed 's/ $//')"
}
for e in "${required[@]}"; do
	m=$(verdict "$dir/msivm.results" "$e")
	[ "${m%% *}" = PASS ] && continue
	if [ "${m%% *}" = FAIL ] && listed_only "$e"; then continue; fi
	[ -n "${KUT_SUBFAIL:-}" ] && [ -f "$dir/msivm/$e.log" ] || echo "required, not passed by msivm: $e (${m:-no result})"
	bad+=("$e")
done
echo "msivm: $skip skipped"
[ ${#bad[@]} -eq 0 ] || echo "QEMU passes, msivm does not, not in $(basename "$known"), or required: ${bad[*]}"
echo "$pass passed, $fail failed"
[ ${#bad[@]} -eq 0 ]
