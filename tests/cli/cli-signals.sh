#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Signals: SIGTERM, SIGINT or SIGHUP sent while revoke has the 50 holders of
# a file traced (seen in their TracerPid) does not cut the call short: the
# holders end all cut (or all untouched), none left stopped or traced, and
# then the command dies by that signal (128+N for the shell). A closed pipe
# on standard output ends it by SIGPIPE (exit 1 when SIGPIPE is ignored),
# with no "write error" message; its other messages still come out.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL/SKIP line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs signals

nholders=50

# start_holders FILE: $nholders holders of FILE (fd 0), pids in $hs.
start_holders() {
	local i p
	hs=()
	for i in $(seq 1 "$nholders"); do
		sleep 300 <"$1" &
		p=$!
		hs+=("$p")
		holders+=("$p")
	done
	for p in "${hs[@]}"; do
		wait_holder "$p" 0 "$1" || return 1
	done
}

stop_holders() {
	local p
	for p in "${hs[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

# check_holders FILE: all cut or all untouched, none traced or stopped, all
# alive. Sets $why otherwise, $outcome to "cut" or "untouched".
check_holders() {
	local p cut=0 kept=0
	why=
	for p in "${hs[@]}"; do
		if ! alive "$p"; then
			why="holder $p died"
			return 1
		fi
		status_field "$p" TracerPid
		if [ "$field" != 0 ]; then
			why="holder $p left traced by $field"
			return 1
		fi
		status_field "$p" State
		case $field in
		[tT]*)
			why="holder $p left stopped (State: $field)"
			return 1
			;;
		esac
		if points_at "$p" 0 "$1"; then
			kept=$((kept + 1))
		elif points_at "$p" 0 "$DEAD_LINK"; then
			cut=$((cut + 1))
		else
			why="holder $p fd 0 is $(readlink "/proc/$p/fd/0")"
			return 1
		fi
	done
	if [ "$cut" -eq "$nholders" ]; then
		outcome=cut
	elif [ "$kept" -eq "$nholders" ]; then
		outcome=untouched
	else
		why="$cut holders cut, $kept untouched"
		return 1
	fi
}

# signal_case SIG NUMBER: the signal lands while the holders are traced
# (they still are right after it was sent), so during the call: the call
# goes on to the end, every holder is cut, the whole table is printed, and
# then the command dies by the signal.
signal_case() {
	local sig=$1 num=$2 try rp during last f
	for try in 1 2 3 4 5; do
		f=$tmp/file-$sig-$try
		echo data >"$f"
		if ! start_holders "$f"; then
			fail "signals.$sig" "the holder processes did not start"
			stop_holders
			return
		fi
		last=${hs[$((nholders - 1))]}
		# As from a terminal: a background job of a script has SIGINT ignored.
		env --default-signal="$sig" "$R" --engine ptrace -t 30 -r -n -o PID,STATE "$f" \
			>"$tmp/out" 2>"$tmp/err" &
		rp=$!
		during=0
		while kill -0 "$rp" 2>/dev/null; do
			status_field "$last" TracerPid
			if [ -n "$field" ] && [ "$field" != 0 ] && [ -d "/proc/$rp/task/$field" ]; then
				kill -"$sig" "$rp" 2>/dev/null &&
					status_field "$last" TracerPid && [ "$field" != 0 ] && during=1
				break
			fi
		done
		wait "$rp"
		rc=$?
		if [ "$during" = 1 ]; then
			if [ "$rc" -ne $((128 + num)) ]; then
				fail "signals.$sig" "exit $rc, expected $((128 + num)); stderr: $(cat "$tmp/err")"
			elif ! check_holders "$f"; then
				fail "signals.$sig" "$why"
			elif [ "$outcome" != cut ]; then
				fail "signals.$sig" "the call was cut short: holders $outcome"
			elif [ "$(grep -c ' cut$' "$tmp/out")" -ne "$nholders" ] || [ -s "$tmp/err" ]; then
				fail "signals.$sig" "report: $(grep -c ' cut$' "$tmp/out") 'cut' lines; stderr: $(cat "$tmp/err")"
			else
				pass "signals.$sig"
			fi
			stop_holders
			return
		fi
		# The call was over before the signal: nothing proven, again.
		stop_holders
	done
	fail "signals.$sig" "$try tries, the signal never landed while the holders were traced"
}

if [ -e /sys/kernel/revoke/syscalls ]; then
	for s in TERM INT HUP; do
		skip "signals.$s" "the native syscalls stop nobody: no holder to see traced"
	done
else
	signal_case TERM 15
	signal_case INT 2
	signal_case HUP 1
fi

# ---- SIGPIPE: standard output is a pipe whose reader has gone.
file=$tmp/pipe
echo data >"$file"
sleep 300 <"$file" &
p1=$!
holders+=("$p1")
exe=$tmp/sleep-copy
cp /bin/sleep "$exe"
"$exe" 300 &
pd=$!
holders+=("$pd")

# closed_pipe IGNORE ARGS...: runs the command with its stdout a pipe that
# has no reader, SIGPIPE default (IGNORE=0) or ignored (1); sets $rc (the
# shell's way: 128+N for a signal) and $err.
closed_pipe() {
	local ign=$1
	shift
	python3 - "$ign" "$@" >"$tmp/rc" 2>"$tmp/err" <<'EOF'
import os, signal, subprocess, sys
r, w = os.pipe()
os.close(r)
ign = sys.argv[1] == "1"
p = subprocess.run(sys.argv[2:], stdout=w, restore_signals=not ign,
                   preexec_fn=(lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)) if ign else None)
print(128 - p.returncode if p.returncode < 0 else p.returncode)
EOF
	rc=$(cat "$tmp/rc")
	err=$(cat "$tmp/err")
}

for _ in $(seq 1 400); do
	[ "$(readlink "/proc/$pd/exe")" = "$exe" ] && break
	sleep 0.025
done
if ! wait_holder "$p1" 0 "$file" || [ "$(readlink "/proc/$pd/exe")" != "$exe" ]; then
	fail signals.sigpipe "the holder processes did not start"
else
	closed_pipe 0 "$R" --list "$file"
	[ "$rc" -eq 141 ] && [ -z "$err" ] && pass signals.sigpipe-list ||
		fail signals.sigpipe-list "exit $rc, expected 141 (SIGPIPE); stderr: $err"

	closed_pipe 0 "$R" --list --json "$file"
	[ "$rc" -eq 141 ] && [ -z "$err" ] && pass signals.sigpipe-json ||
		fail signals.sigpipe-json "exit $rc, expected 141 (SIGPIPE); stderr: $err"

	# A revoke that fails (a running executable cannot be cut): its messages
	# still come out.
	closed_pipe 0 "$R" --engine ptrace "$exe"
	if [ "$rc" -eq 141 ] && grep -q "^revoke: $exe: not revoked: 1 reference could not be cut" <<<"$err" &&
		! grep -q "write error" <<<"$err"; then
		pass signals.sigpipe-messages
	else
		fail signals.sigpipe-messages "exit $rc, expected 141 (SIGPIPE); stderr: $err"
	fi

	closed_pipe 1 "$R" --list "$file"
	[ "$rc" -eq 1 ] && [ -z "$err" ] && pass signals.sigpipe-ignored ||
		fail signals.sigpipe-ignored "exit $rc, expected 1; stderr: $err"
fi
exit 0
