# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by tests/cli-*.sh (run by tests/run-tests with REVOKE_BUILDDIR set):
# the command under test ($R), a scratch directory ($tmp) removed on exit with
# every holder process the script started (pids in the holders array), one
# PASS/FAIL/SKIP line per check, and `run` which sets rc, out and err.
# cli_runs SUITE prints one failure (not one per check) and exits when the
# command cannot run at all.
set -u
export LC_ALL=C
R=${REVOKE_BUILDDIR:?REVOKE_BUILDDIR is not set}/tools/revoke
tmp=$(mktemp -d) || exit 1
tmp=$(realpath "$tmp")
holders=()
cleanup() {
	local p
	for p in "${holders[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS cli.$1"; }
fail() { echo "FAIL cli.$1: $2"; }
skip() { echo "SKIP cli.$1: $2"; }
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

cli_runs() {
	if ! "$R" --version >/dev/null 2>"$tmp/err"; then
		fail "$1.runs" "cannot run $R: $(head -c 300 "$tmp/err")"
		exit 0
	fi
}

# wait_holder PID FD PATH: until PID has FD open on PATH and no longer runs bash
wait_holder() {
	local i
	for i in $(seq 1 400); do
		if [ "$(readlink "/proc/$1/fd/$2" 2>/dev/null)" = "$3" ] &&
			[ "$(cat "/proc/$1/comm" 2>/dev/null)" != bash ]; then
			return 0
		fi
		sleep 0.025
	done
	return 1
}

# Table rows with single spaces, for exact matching.
squeeze() { sed -e 's/[[:space:]]\+/ /g' -e 's/ $//'; }

# start_map_holder FILE: a holder (pid in $pm) that maps FILE shared and
# read-write, then closes its descriptor: it holds FILE through the mapping only.
start_map_holder() {
	python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)
with open(sys.argv[2], "w") as f:
    f.write(m[:4].decode())
time.sleep(60)' "$1" "$tmp/mapped" &
	pm=$!
	holders+=("$pm")
}

# wait_map_holder: until that holder has mapped its file.
wait_map_holder() {
	local i
	for i in $(seq 1 400); do
		[ -s "$tmp/mapped" ] && return 0
		sleep 0.025
	done
	return 1
}
