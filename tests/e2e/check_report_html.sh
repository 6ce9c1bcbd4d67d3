#!/usr/bin/env bash
# The lab's report.html in a real browser: each page given (the copies test_lab.sh keeps under
# build/lab-html/) is loaded by Debian's headless chromium, on this host even when the e2e suites
# ran nested; it must log no console message (an error, an uncaught exception) and every inline
# chart must have drawn (the page's own check: <body data-charts="N/N">, N its figure count).
#   tests/e2e/check_report_html.sh PAGE...   [--screenshot FILE: also a 1200x1500 screenshot of the first]
set -u
shot=
pages=()
while [ $# -gt 0 ]; do
	case $1 in
	--screenshot) shot=$2; shift 2 ;;
	*) pages+=("$1"); shift ;;
	esac
done
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "FAIL - report.html: no chromium (scripts/deps.sh installs it)"
	exit 1
fi
[ ${#pages[@]} -gt 0 ] || { echo "FAIL - report.html: no page to check (did test_lab.sh run?)"; exit 1; }
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile")
for page in "${pages[@]}"; do
	url="file://$(readlink -f "$page")"
	want=$(grep -o '<figure class="chart">' "$page" | wc -l)
	timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" \
		>"$tmp/dom" 2>"$tmp/err"
	st=$?
	got=$(grep -o 'data-charts="[0-9]*/[0-9]*"' "$tmp/dom" | head -1)
	console=$(grep -E ':CONSOLE[:(]' "$tmp/err" | head -3)
	if [ "$st" = 0 ] && [ "$want" -gt 0 ] && [ "$got" = "data-charts=\"$want/$want\"" ] && [ -z "$console" ]; then
		echo "ok   - $page: chromium drew all $want charts, no console message"
	else
		echo "FAIL - $page: chromium status $st, $got of $want charts, console: ${console:-none}"
		fails=$((fails + 1))
	fi
done
if [ -n "$shot" ]; then
	timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1200,1500 \
		--screenshot="$(readlink -f "$(dirname "$shot")")/$(basename "$shot")" \
		"file://$(readlink -f "${pages[0]}")" 2>/dev/null || fails=$((fails + 1))
fi
[ "$fails" = 0 ]
