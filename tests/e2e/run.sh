#!/usr/bin/env bash
# End-to-end test runner: every tests/e2e/test_*.sh (but those in E2E_SKIP), one verdict line per
# suite, exit 1 if any suite failed or did not report.
#
# Where it runs: `$MSIVM host` decides once. With a usable /dev/kvm (hardware or PVM) the suites
# run on this host ("direct"). With none they run inside a nested host (scripts/nested/run.sh:
# QEMU TCG whose Linux loads kvm_amd, this host's files over virtiofs), with the same binaries; a
# suite whose header says "# e2e: needs 2 CPUs" gets a two-vCPU nested host, the others a
# one-vCPU one (docs/testing.md has the measurements behind that split). When the nested host
# itself dies (its kernel panics or hangs: the rig's fault, not msivm's or the guest's) the suites
# it did not finish run again in a fresh one, at most E2E_L1_BOOTS boots per group (default 3),
# each retry printed as "RETRY:"; a suite that failed is never run again.
# Environment: MSIVM, PROBE (the binaries), E2E_SKIP, E2E_MODE=auto|direct|nested (default auto),
# (the suites of a nested run see E2E_NESTED=1, for their few wall-clock deadlines)
# E2E_NAME (names the nested run's directory under build/nested/, default e2e), E2E_GROUPS (nested:
# "1", "2" or "1 2", the one- and two-vCPU groups to run; tests/e2e/passes.sh runs the two passes'
# one-vCPU groups side by side, then each two-vCPU group alone).
# Inside the nested host it runs direct with E2E_RESULTS set: each suite appends its verdict there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${MSIVM:?MSIVM must name the msivm binary}"
mode=${E2E_MODE:-auto}
start=$SECONDS

suites=()
for t in "$here"/test_*.sh; do
	n=$(basename "$t")
	case " ${E2E_SKIP:-} " in *" $n "*) echo "== $n: skipped (E2E_SKIP)"; continue ;; esac
	[ -n "${E2E_ONLY:-}" ] && case " $E2E_ONLY " in *" $n "*) ;; *) continue ;; esac
	suites+=("$n")
done

# verdict SUITE STATUS SECS LOG: one line per suite from its output: checks passed, failed, skipped.
verdict() {
	local ok fl sk v=PASS
	ok=$(grep -c '^ok ' "$4")
	fl=$(grep -c '^FAIL' "$4")
	sk=$(grep -c -E '^(# )?skip' "$4")
	[ "$2" = 0 ] || v=FAIL
	echo "$1 $v $3 $ok $fl $sk"
}
show() { # SUITE VERDICT SECS OK FAILED SKIPPED
	echo "== $1: $2 ($4 passed, $5 failed, $6 skipped) in $3 s"
}

if [ "$mode" = auto ]; then
	kind=$("$MSIVM" host 2>&1)
	case "$kind" in
	hardware:* | pvm:*) mode=direct ;;
	none:*) mode=nested ;;
	*) echo "e2e: cannot tell this host's KVM ('$MSIVM host' printed: $kind)" >&2; exit 1 ;;
	esac
	echo "e2e: mode $mode: $kind"
fi
# (after the mode line: tests/e2e/test_host.sh reads it with E2E_ONLY=none-such)
if [ ${#suites[@]} = 0 ]; then
	echo "e2e: no suite to run (E2E_ONLY='${E2E_ONLY:-}' names none of tests/e2e/test_*.sh)" >&2
	exit 1
fi

results=$(mktemp)
trap 'rm -f "$results"' EXIT
if [ "$mode" = direct ]; then
	for n in "${suites[@]}"; do
		echo "== $n"
		t0=$SECONDS
		log=$(mktemp)
		bash "$here/$n" 2>&1 | tee "$log"
		st=${PIPESTATUS[0]}
		v=$(verdict "$n" "$st" $((SECONDS - t0)) "$log")
		rm -f "$log"
		show $v
		echo "$v" >>"$results"
		[ -n "${E2E_RESULTS:-}" ] && echo "$v" >>"$E2E_RESULTS"
	done
elif [ "$mode" = nested ]; then
	# Group the suites by the nested host's vCPUs; E2E_GROUPS (default "1 2") picks the groups.
	one=() two=() picked=()
	groups=" ${E2E_GROUPS:-1 2} "
	for n in "${suites[@]}"; do
		if head -n 12 "$here/$n" | grep -q '^# e2e: needs 2 CPUs'; then
			[[ "$groups" == *" 2 "* ]] && two+=("$n") && picked+=("$n")
		else
			[[ "$groups" == *" 1 "* ]] && one+=("$n") && picked+=("$n")
		fi
	done
	suites=("${picked[@]}")
	name=${E2E_NAME:-e2e}
	shared=$top/build/nested/$name-results
	mkdir -p "$top/build/nested"
	group() { # SMP SUITES...
		local smp=$1 boot=1 todo st n left
		shift
		todo="$*"
		[ -n "$todo" ] || return 0
		while :; do
			: >"$shared"
			echo "e2e: nested host $boot ($smp vCPU$([ "$smp" -gt 1 ] && echo s)) for: $todo"
			E2E_NESTED=1 E2E_MODE=direct E2E_RESULTS=$shared E2E_ONLY="$todo" "$top/scripts/nested/run.sh" \
				--smp "$smp" --name "$name-smp$smp" -- bash "$here/run.sh"
			st=$?
			cat "$shared" >>"$results"
			left=
			for n in $todo; do grep -q "^$n " "$shared" || left="$left $n"; done
			[ -n "$left" ] || return 0
			if [ "$st" != 75 ]; then
				echo "e2e: the nested host ended (status $st) without a verdict for:$left"
				return 0
			fi
			if [ "$boot" -ge "${E2E_L1_BOOTS:-3}" ]; then
				echo "e2e: the nested host died $boot times; no verdict for:$left"
				return 0
			fi
			boot=$((boot + 1))
			echo "e2e: RETRY: the nested host died ($(cat "$top/build/nested/$name-smp$smp/l1-died" 2>/dev/null)); not msivm, not a guest: the suites it did not finish run in a fresh one:$left"
			todo=${left# }
		done
	}
	group 1 "${one[@]}"
	group 2 "${two[@]}"
else
	echo "e2e: unknown E2E_MODE '$mode' (auto, direct or nested)" >&2
	exit 1
fi

[ -n "${E2E_RESULTS:-}" ] && exit 0 # inside the nested host: the outer run.sh sums up
failed=() missing=()
for n in "${suites[@]}"; do
	v=$(grep "^$n " "$results" | tail -n 1)
	if [ -z "$v" ]; then missing+=("$n"); elif [ "$(echo "$v" | cut -d' ' -f2)" != PASS ]; then failed+=("$n"); fi
done
read -r checks fails skips < <(awk '{ c += $4; f += $5; s += $6 } END { print c + 0, f + 0, s + 0 }' "$results")
echo "e2e ($mode): ${#suites[@]} suites, $((${#suites[@]} - ${#failed[@]} - ${#missing[@]})) passed, ${#failed[@]} failed, ${#missing[@]} did not report; $checks checks passed, $fails failed, $skips skipped; $((SECONDS - start)) s in all"
[ ${#failed[@]} -gt 0 ] && echo "e2e: failed: ${failed[*]}"
[ ${#missing[@]} -gt 0 ] && echo "e2e: no verdict (never ran to its end): ${missing[*]}"
[ ${#failed[@]} -eq 0 ] && [ ${#missing[@]} -eq 0 ] || exit 1
echo "e2e: all suites passed"
