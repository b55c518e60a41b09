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
	local i comm
	for i in $(seq 1 400); do
		comm=
		read -r comm <"/proc/$1/comm" 2>/dev/null
		if [ "$comm" != bash ] && [ "$(readlink "/proc/$1/fd/$2" 2>/dev/null)" = "$3" ]; then
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

# The descriptor FD of PID points at PATH; is still allocated (a revoked fd
# stays until closed); PID lives.
points_at() { [ "$(readlink "/proc/$1/fd/$2" 2>/dev/null)" = "$3" ]; }
allocated() { [ -L "/proc/$1/fd/$2" ]; }
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# What the link of a descriptor an earlier (userspace) revoke left says.
DEAD_LINK="/memfd:revoked (deleted)"

# status_field PID KEY: sets $field to KEY's value in /proc/PID/status ("" if
# none), with builtins only: fast enough to poll while a revoke runs.
status_field() {
	local k v
	field=
	while read -r k v; do
		if [ "$k" = "$2:" ]; then
			field=$v
			return 0
		fi
	done <"/proc/$1/status" 2>/dev/null
	return 1
}

# Run as uid/gid 65534 (needs root). Not for a background holder: $! would be
# a subshell's pid; run setpriv itself there.
nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }

# $RN: the command where any user can run it, for `nobody "$RN"`. The build
# may sit in a clone under a mode-700 directory (root's home): a copy of the
# command and of its library (found through its $ORIGIN/../lib runpath) in
# the scratch directory, which the scripts that use it make searchable.
others_R() {
	local d=$tmp/others
	if [ ! -x "$d/tools/revoke" ]; then
		mkdir -p "$d/tools" "$d/lib" && cp "$R" "$d/tools/" &&
			cp -L "${R%/tools/revoke}/lib/librevoke.so.1" "$d/lib/" || return 1
		chmod 755 "$tmp" "$d" "$d/tools" "$d/lib"
	fi
	RN=$d/tools/revoke
}

# start_vfork_holder FILE: a holder (pid in $vp) of FILE (fd 5) in the
# uninterruptible wait of a vfork parent (state D) until its child exits in
# 300 s (or with it): no ptrace stop reaches it. clone(CLONE_VFORK) without
# CLONE_VM gives the child its own memory, so the child may run Python; it
# closes its copy of the descriptor and dies with its parent.
start_vfork_holder() {
	python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY)
os.dup2(fd, 5)
os.close(fd)
pid = libc.syscall(56, 0x4000 | 17, 0, 0, 0, 0)  # clone(CLONE_VFORK | SIGCHLD)
if pid == 0:
    libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    os.close(5)
    with open(sys.argv[2], "w") as f:
        f.write("%d\n" % os.getpid())
    time.sleep(300)
    os._exit(0)
time.sleep(300)' "$1" "$tmp/vchild" &
	vp=$!
	holders+=("$vp")
}

# wait_vfork_holder: until that holder is in its vfork wait (its child's pid
# joins the holders).
wait_vfork_holder() {
	local i
	for i in $(seq 1 400); do
		if [ -s "$tmp/vchild" ] && status_field "$vp" State && [ "${field:0:1}" = D ]; then
			holders+=("$(cat "$tmp/vchild")")
			return 0
		fi
		sleep 0.025
	done
	return 1
}
