#!/usr/bin/env bash
# Regenerates the checked-in seed corpora (tests/fuzz/corpus/<target>/) with tests/fuzz/make_seeds.c.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=gnu11 -O1 -Wall -Wextra -Werror -o "$out/make_seeds" tests/fuzz/make_seeds.c
rm -rf tests/fuzz/corpus
"$out/make_seeds" tests/fuzz/corpus
du -sh tests/fuzz/corpus
