#!/usr/bin/env bash
# End-to-end: --config FILE and --print-config (file = command line, round trip, no KVM needed), aliases, refusals.
set -u
here=$(dirname "$0")
. "$here/lib.sh"

truncate -s 1M "$TMP/disk.img"

# same NAME FILE_JSON ARGS...: the file and the command line print the same bytes, and the
# printed text read back as a file prints them again.
same() {
	local name=$1 json=$2; shift 2
	printf '%s\n' "$json" >"$TMP/vm.json"
	run run --config "$TMP/vm.json" --print-config
	local st1=$status; cp "$TMP/out" "$TMP/p-file.json"
	run run "$@" --print-config
	local st2=$status; cp "$TMP/out" "$TMP/p-cli.json"
	run run --config "$TMP/p-cli.json" --print-config
	if [ "$st1" = 0 ] && [ "$st2" = 0 ] && [ "$status" = 0 ] && [ -s "$TMP/p-cli.json" ] &&
		cmp -s "$TMP/p-file.json" "$TMP/p-cli.json" && cmp -s "$TMP/out" "$TMP/p-cli.json"; then
		pass "$name"
	else
		fail "$name (status $st1/$st2/$status)"
		diff "$TMP/p-file.json" "$TMP/p-cli.json" | head -20
	fi
}

# file_err NAME JSON REGEX: the file is refused with status 125 and a message matching REGEX.
file_err() {
	printf '%s' "$2" >"$TMP/bad.json"
	run run --config "$TMP/bad.json"
	expect "$1" 125 '' "$3"
}

run run --help
expect "--help names --config and --print-config" 0 'config FILE' ''
grep -q -- '--print-config' <<<"$out" && pass "--help names --print-config" || fail "--help lacks --print-config"

# --- --print-config builds nothing: a KVM device that does not exist is not opened
run run --kernel "$PROBE" --kvm-device /nonexistent/kvm --print-config
if [ "$status" = 0 ] && [ "$(jq -r '."kvm-device"' <<<"$out")" = /nonexistent/kvm ] &&
	[ "$(jq -r '.mem' <<<"$out")" = 256M ] && [ "$(jq -r '."shutdown-timeout"' <<<"$out")" = 10 ] &&
	[ "$(jq -r 'keys_unsorted[0]' <<<"$out")" = kernel ] && [ -z "$err" ]; then
	pass "--print-config: exit 0, every default, no VM (no KVM device opened)"
else
	fail "--print-config without a KVM device"
fi

same "a file and the command line print alike: plain settings" \
	"{\"kernel\": \"$PROBE\", \"mem\": \"1G\", \"cpus\": 2, \"cmdline\": \"rng=4\", \"pit\": true,
	  \"serial\": \"$TMP/ser\", \"no-reboot\": true, \"log-level\": \"info\", \"shutdown-timeout\": 0}" \
	--kernel "$PROBE" --mem 1024 --cpus 2 --cmdline rng=4 --pit --serial "file=$TMP/ser" --no-reboot -v \
	--shutdown-timeout 0
same "a file and the command line print alike: rng, disk, console and net mixed" \
	"{\"kernel\": \"$PROBE\", \"net\": [{\"backend\": \"peer\", \"peer\": \"sink\"}],
	  \"disk\": [{\"path\": \"$TMP/disk.img\", \"ro\": true, \"queues\": 2}, \"path=$TMP/disk.img,ro,irq=intx\"],
	  \"rng\": [{\"irq\": \"msi\"}, \"bps=1M\"], \"console\": [{\"out\": \"$TMP/con\", \"max\": \"1M\"}]}" \
	--kernel "$PROBE" --rng irq=msi --disk "path=$TMP/disk.img,ro,queues=2" --console "out=$TMP/con,max=1M" \
	--net backend=peer,peer=sink --rng bps=1M --disk "path=$TMP/disk.img,ro,irq=intx"
same "aliases: readonly=on, num_queues=N, tap=NAME, --memory size=SIZE" \
	"{\"kernel\": \"$PROBE\", \"mem\": 512, \"disk\": [{\"path\": \"$TMP/disk.img\", \"readonly\": true,
	  \"num_queues\": 4}], \"net\": [\"tap=msivmt9\"]}" \
	--kernel "$PROBE" --memory size=512M --disk "path=$TMP/disk.img,ro,queues=4" \
	--net backend=tap,ifname=msivmt9

# --- a VM from a file; the command line overrides a setting and adds a device
printf '{"kernel": "%s", "cmdline": "rng=4", "mem": 64, "rng": [{"irq": "msix-shared"}]}\n' "$PROBE" \
	>"$TMP/boot.json"
run run --config "$TMP/boot.json" --cmdline "rng=8" --rng "irq=intx" --stats-json "$TMP/stats.json"
if [ "$status" = 0 ] && grep -q 'probe: rng read 8192 bytes' <<<"$out" &&
	[ "$(jq -r '[.devices[].mode] | join(",")' "$TMP/stats.json")" = msix-shared,intx ]; then
	pass "boot from --config: --cmdline replaces the file's, --rng adds a second device"
else
	fail "boot from --config with overrides"
fi
run run --kernel "$PROBE" --mem 64 --rng vectors=0
expect "--mem 64 is 64 MiB; vectors=0 alone is irq=intx" 0 'probe: irq mode=intx total='

# --- refusals: status 125, one line naming the problem (and the nearest name)
run run --kernel "$PROBE" --dsik "path=$TMP/disk.img"
expect "an unknown option names the nearest one" 125 '' '^msivm: unknown option --dsik; did you mean --disk\?$'
# An abbreviation of several options is ambiguous: named with them all (glibc's getopt took the
# first, --cpuid-hide, for --cpu 2); one that fits a single option still works.
for ab in cpu cp; do
	run run --kernel "$PROBE" "--$ab" 2
	expect "--$ab 2: ambiguous, its options listed" 125 '' \
		"^msivm: option --$ab is ambiguous: it could be --cpuid-hide, --cpus, --cpu-pin \(give the whole name\)\$"
done
run run --kernel "$PROBE" --cpus=2 --print-config
expect "an exact name is never ambiguous (--cpus=2 beside --cpu-pin)" 0 '"cpus": 2'
run run --kernel "$PROBE" --memroy 128M
expect "--memroy 128M: the nearest option named" 125 '' 'unknown option --memroy; did you mean --memory\?'
run run --kernel "$PROBE" --memory 128M --print-config
expect "... and --memory takes the bare size given with it (128M, as --mem)" 0 '"mem": "128M"'
same "a file's \"memory\" (--memory's spelling) is its \"mem\"" \
	"{\"kernel\": \"$PROBE\", \"memory\": \"size=256M\"}" --kernel "$PROBE" --mem 256M
run run --kernel "$PROBE" --disk "pth=$TMP/disk.img"
expect "an unknown device key names the nearest one" 125 '' "unknown device option 'pth=.*'.*did you mean path\?"
run run --kernel "$PROBE" --rng irq=msx
expect "a bad irq mode names the nearest one" 125 '' "bad irq mode 'msx'.*did you mean msix\?"
run run --kernel "$PROBE" --rng irq=msix,vectors=0
expect "irq=msix,vectors=0 is refused: vectors=0 means no MSI-X" 125 '' 'vectors=0 means no MSI-X'
run run --kernel "$PROBE" --mem 1
expect "--mem 1 (1 MiB) is out of range" 125 '' '--mem 1 is out of range'
run run --config "$TMP/missing.json"
expect "a missing config file is named" 125 '' "cannot open config file '.*missing.json'"
file_err "malformed JSON: line and column" $'{"kernel": "k",\n  "cpus": 2,\n}' 'bad.json:3:1: malformed JSON'
file_err "an unknown key names the nearest one" '{"kernel": "k", "dsik": []}' "unknown key 'dsik'; did you mean disk\?"
file_err "a device's unknown key names the nearest one" '{"kernel": "k", "disk": [{"pth": "x"}]}' \
	"disk\[0\]: unknown key 'pth'; did you mean path\?"
file_err "a string for a number is refused" '{"kernel": "k", "cpus": "2"}' 'cpus: expected an integer, got a string'
file_err "a number for a flag is refused" '{"kernel": "k", "pit": 1}' 'pit: expected true or false, got an integer'
file_err "a device object for a list is refused" '{"kernel": "k", "disk": {"path": "x"}}' \
	'disk: expected an array of objects or of option strings, got an object'
file_err "a file's value is checked as on the command line" '{"kernel": "k", "cpus": 0}' "bad --cpus '0'"
file_err "a file without kernel is refused" '{"cpus": 2}' 'kernel FILE is required'
finish
