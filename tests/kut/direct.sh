#!/usr/bin/env bash
# kvm-unit-tests entries run straight in one VMM, without the suite's bash harness (docs/kut.md):
# the harness costs about a minute an entry under the nested rig's TCG, this a few seconds.
#
#   tests/kut/direct.sh --vmm msivm|qemu --out DIR [ENTRY...]    (run.sh --direct)
#
# Reads x86/unittests.cfg (in the current directory: the built suite) for each ENTRY: file, smp,
# extra_params/qemu_params, test_args, timeout, arch, accel, check (no ENTRY: every entry but the
# nodefault group's); runs the command line x86/run would write (QEMU's, or the same through
# tests/kut/qemu-msivm) under `timeout`, with an environment module as the harness gives (TARGET,
# the kernel version). Writes the harness's verdict lines to DIR.results (PASS: debug-exit
# status 1, the test's 0; SKIP: the test's 77, an arch/accel/check mismatch, or a VMM that
# refuses the command line (the harness's premature-failure probe: a kernel that does not exist
# must be the only complaint); FAIL otherwise, a timeout saying so), the output to DIR/ENTRY.log (first
# line: the command, as the harness's) and the same lines with the seconds since the VMM started
# to DIR/ENTRY.times.
# Not read: disabled_if (none in x86) and the harness's MAX_SMP; errata are not in the environment.
# Environment: KUT_TIMEOUT overrides every entry's timeout (s); MSIVM for the shim.
set -u
here=$(cd "$(dirname "$0")" && pwd)
vmm= out=
while [ $# -gt 0 ]; do
	case "$1" in
	--vmm) vmm=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-*) echo "direct.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
case "$vmm" in
msivm) vmmcmd=$here/qemu-msivm ;;
qemu) vmmcmd=qemu-system-x86_64 ;;
*) echo "direct.sh: --vmm msivm|qemu" >&2; exit 2 ;;
esac
[ -n "$out" ] && [ -f x86/unittests.cfg ] || { echo "direct.sh: --out DIR, run in the built suite" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out" && : >"$out.results" || exit 2

env_file=$(mktemp) || exit 2
trap 'rm -f "$env_file"' EXIT
kv=$(uname -r)
{ echo "TARGET=qemu"; echo "KERNEL_VERSION_STRING=$kv"; } >"$env_file"

field() { # entry key -> value (the first of its section)
	awk -v e="[$1]" -v k="$2" '
		$0 == e { in_e = 1; next }
		/^\[/ { in_e = 0 }
		in_e && $0 ~ "^" k "[ \t]*=" { sub("^[^=]*=[ \t]*", ""); print; exit }' x86/unittests.cfg
}
if [ $# -eq 0 ]; then
	for e in $(sed -n 's/^\[\(.*\)\]$/\1/p' x86/unittests.cfg); do
		case " $(field "$e" groups) " in *" nodefault "*) ;; *) set -- "$@" "$e" ;; esac
	done
fi
verdict() { # entry line
	echo "$1" >>"$out.results"
	echo "$1"
}

for e in "$@"; do
	grep -q "^\[$e\]\$" x86/unittests.cfg || { verdict "FAIL $e (no such entry)"; continue; }
	file=$(field "$e" file) smp=$(field "$e" smp) args=$(field "$e" test_args)
	params=$(field "$e" extra_params) arch=$(field "$e" arch) accel=$(field "$e" accel)
	[ -n "$params" ] || params=$(field "$e" qemu_params)
	tmo=${KUT_TIMEOUT:-$(field "$e" timeout)}
	tmo=${tmo:-90}
	tmo=${tmo%s}
	# test_args as the harness's eval gives them (quotes, kvmclock_test's `date +%s`).
	args=$(eval "printf '%s ' $args") params=${params//\'/}
	[ -z "$arch" ] || [ "$arch" = x86_64 ] || { verdict "SKIP $e ($arch only)"; continue; }
	[ -z "$accel" ] || [ "$accel" = kvm ] || { verdict "SKIP $e ($accel only)"; continue; }
	[ -f "x86/$file" ] || { verdict "SKIP $e (Test file 'x86/$file' not found)"; continue; }
	# check = PATH=VALUE...: as the harness, SKIP unless each file holds its value.
	skip=
	for c in $(field "$e" check); do
		[ "$(cat "${c%=*}" 2>/dev/null)" = "${c##*=}" ] || { skip="${c%=*} not equal to ${c##*=}"; break; }
	done
	[ -z "$skip" ] || { verdict "SKIP $e ($skip)"; continue; }
	# x86/run's command line (scripts/arch-run.bash), this entry's parameters after it.
	cmd=("$vmmcmd" --no-reboot -nodefaults -global kvm-pit.lost_tick_policy=discard -device pc-testdev
		-device isa-debug-exit,iobase=0xf4,iosize=0x4 -display none -serial stdio -device pci-testdev
		-machine accel=kvm -kernel "x86/$file" -smp "${smp:-1}")
	# shellcheck disable=SC2206 # the cfg's words, as the harness splits them
	cmd+=($params)
	args=${args% }
	[ -n "$args" ] && cmd+=(-append "$args")
	cmd+=(-initrd "$env_file")
	# The harness's premature-failure probe: the same command line with a kernel that does not
	# exist must fail on that kernel; anything else (an option the shim refuses, a CPU model
	# QEMU cannot set up) is a SKIP naming it.
	probe=("${cmd[@]}")
	for i in "${!probe[@]}"; do [ "${probe[$i]}" = "x86/$file" ] && probe[$i]=_NO_FILE_4Uhere_; done
	why=$(timeout 60 "${probe[@]}" 2>&1 </dev/null)
	if ! grep _NO_FILE_4Uhere_ <<<"$why" | grep -q -e "[Cc]ould not \(load\|open\) kernel" \
		-e "error loading" -e "failed to load"; then
		verdict "SKIP $e ($(tail -n 1 <<<"$why" | cut -c1-150))"
		continue
	fi
	log=$out/$e.log times=$out/$e.times
	echo "timeout -k 1s --foreground ${tmo}s ${cmd[*]}" >"$log"
	: >"$times"
	t0=$SECONDS
	{ timeout -k 1s --foreground "${tmo}s" "${cmd[@]}" 2>&1 </dev/null; echo "@@status $?"; } |
		while IFS= read -r l; do
			case "$l" in "@@status "*) echo "${l#@@status }" >"$out/$e.status"; continue ;; esac
			printf '%s\n' "$l" >>"$log"
			printf '%d %s\n' $((SECONDS - t0)) "$l" >>"$times"
		done
	st=$(cat "$out/$e.status" 2>/dev/null || echo 255)
	rm -f "$out/$e.status"
	sum=$(tr -d '\r' <"$log" | tail -n 5 | sed -n 's/^SUMMARY: \(.*\)/(\1)/p' | tail -n 1)
	case "$st" in
	1) verdict "PASS $e $sum" ;; # as the harness: vmexit and realmode print no SUMMARY
	155) verdict "SKIP $e ${sum:-(all skipped)}" ;;
	124) verdict "FAIL $e (timeout; duration=${tmo}s)" ;;
	*) verdict "FAIL $e ${sum:-(status $st)}" ;;
	esac
	echo "kut: $e under $vmm: $((SECONDS - t0)) s" >&2
done
exit 0
