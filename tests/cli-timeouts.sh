#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Timeouts name the phase, the process and the detail, with the bound given:
# "timed out after 1.0 s stopping pid N (state D)" for a holder in an
# uninterruptible wait (a vfork parent), "timed out waiting 0.2 s for another
# revoke by uid U (pid N)" for a held lock (the time it waited, whose), "... looking the paths up" for a hung
# FUSE server; the JSON has failed_phase, failed_pid, failed_detail and
# timeout_ns. Nothing is changed (or, with --best-effort, the rest is cut);
# no holder is left traced.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL/SKIP line per check.
. "$(dirname "$0")/cli-common.bash"
chmod 755 "$tmp" # uid 65534 looks files up in here
cli_runs timeouts
others_R || { fail "$(basename "$0" .sh | sed s/^cli-//).others" "cannot copy the command and its library for other users"; exit 0; }

# ---- stopping: a vfork parent (state D) next to a holder that can stop
f=$tmp/file
echo data >"$f"
start_vfork_holder "$f"
sleep 300 <"$f" &
ps=$!
holders+=("$ps")
if ! wait_vfork_holder || ! wait_holder "$ps" 0 "$f" || ! points_at "$vp" 5 "$f"; then
	fail timeouts.stop "the holder processes did not start"
else
	run "$R" -t 1 -o PID,STATE,ERROR,ERRNO "$f"
	tab=$(squeeze <<<"$out")
	msg1="revoke: $f: timed out after 1.0 s stopping pid $vp (state D)"
	msg2="revoke: $f: not revoked: 1 reference could not be cut (see --best-effort)"
	if [ "$rc" -ne 1 ]; then
		fail timeouts.stop "exit $rc, expected 1; stdout: $out; stderr: $err"
	elif [ "$err" != "$msg1"$'\n'"$msg2" ]; then
		fail timeouts.stop "stderr: $err; expected: $msg1 / $msg2"
	elif ! grep -qx " \?$vp failed thread $vp would not stop (state D) ETIMEDOUT" <<<"$tab" ||
		! grep -qx " \?$ps skipped" <<<"$tab"; then
		fail timeouts.stop "table: $out"
	elif ! points_at "$vp" 5 "$f" || ! points_at "$ps" 0 "$f"; then
		fail timeouts.stop "a holder lost its descriptor although nothing should change"
	elif ! status_field "$vp" TracerPid || [ "$field" != 0 ] ||
		! status_field "$ps" TracerPid || [ "$field" != 0 ]; then
		fail timeouts.stop "a holder is left traced"
	else
		pass timeouts.stop
	fi

	run "$R" -t 1 --json "$f"
	if [ "$rc" -ne 1 ] || [ "$err" != "$msg1"$'\n'"$msg2" ]; then
		fail timeouts.stop-json "exit $rc; stderr: $err"
	elif ! why=$(python3 - "$tmp/out" "$vp" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
vp = int(sys.argv[2])
want = {"errno": "EBUSY", "failed_phase": "stopping", "failed_pid": vp,
        "failed_detail": "state D", "timeout_ns": 1000000000}
got = {k: doc[k] for k in want}
if got != want:
    print("report %r, expected %r" % (got, want)); sys.exit(1)
h = [x for x in doc["holders"] if x["pid"] == vp]
if not h or h[0]["errno"] != "ETIMEDOUT" or h[0]["state"] != "failed" or \
   h[0]["error"] != "thread %d would not stop (state D)" % vp:
    print("holder %r" % h); sys.exit(1)
EOF
	); then
		fail timeouts.stop-json "$why"
	else
		pass timeouts.stop-json
	fi

	# --best-effort: the other holder is cut all the same.
	run "$R" -t 1 -b "$f"
	msg2="revoke: $f: partly revoked: 1 of 2 references could not be cut"
	if [ "$rc" -ne 1 ] || [ "$err" != "$msg1"$'\n'"$msg2" ]; then
		fail timeouts.stop-best-effort "exit $rc; stderr: $err"
	elif points_at "$ps" 0 "$f" || ! allocated "$ps" 0 || ! points_at "$vp" 5 "$f"; then
		fail timeouts.stop-best-effort "pid $ps not cut, or pid $vp cut"
	elif ! status_field "$ps" TracerPid || [ "$field" != 0 ] || ! status_field "$ps" State ||
		[ "${field:0:1}" != S ]; then
		fail timeouts.stop-best-effort "pid $ps left traced or stopped (State: $field)"
	else
		pass timeouts.stop-best-effort
	fi
fi

# ---- waiting for another revoke: uid 65534's lock (/run/user/65534), held
# by a process of that user, so that no other user's revoke waits for it.
if [ "$(id -u)" -ne 0 ]; then
	skip timeouts.lock "needs root to drop to uid 65534"
	skip timeouts.env "needs root to drop to uid 65534"
else
	own=$tmp/own
	echo o >"$own"
	chown 65534:65534 "$own"
	made_rundir=0
	if [ ! -d /run/user/65534 ]; then
		mkdir -p -m 700 /run/user/65534 && chown 65534:65534 /run/user/65534 && made_rundir=1
	fi
	lock=/run/user/65534/librevoke.lock
	# One process that takes the lock itself (flock(1) would leave it to a
	# child that outlives it): its pid is the owner the message names. Perl
	# (perl-base): any python3 on root's PATH may be out of uid 65534's reach.
	setpriv --reuid 65534 --regid 65534 --clear-groups perl -e '
use Fcntl qw(:flock);
open(my $f, ">>", $ARGV[0]) or die "$ARGV[0]: $!";
flock($f, LOCK_EX) or die "flock: $!";
sleep 300;' "$lock" &
	pl=$!
	holders+=("$pl")
	setpriv --reuid 65534 --regid 65534 --clear-groups sleep 300 <"$own" &
	po=$!
	holders+=("$po")
	for i in $(seq 1 400); do
		! nobody flock -n "$lock" true 2>/dev/null && break
		sleep 0.025
	done
	if ! wait_holder "$po" 0 "$own" || nobody flock -n "$lock" true 2>/dev/null; then
		fail timeouts.lock "the lock holder or the file's holder did not start"
	else
		run nobody "$RN" --json -t 0.4 "$own"
		# How long it waited, which is the lock's share of the bound (half
		# of it: 0.2 s), and whose revoke held it.
		msg="^revoke: $own: not revoked: timed out waiting 0\.[2-3] s for another revoke by uid 65534 \(pid $pl\)\$"
		if [ "$rc" -ne 1 ] || ! [[ $err =~ $msg ]]; then
			fail timeouts.lock "exit $rc; stderr: $err; expected: $msg"
		elif ! points_at "$po" 0 "$own"; then
			fail timeouts.lock "pid $po lost its descriptor"
		elif ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if (d["errno"], d["failed_phase"], d["failed_pid"], d["timeout_ns"]) ==
         ("ETIMEDOUT", "waiting", int(sys.argv[2]), 400000000) else 1)' "$tmp/out" "$pl"; then
			fail timeouts.lock "report: $(head -c 600 "$tmp/out")"
		else
			pass timeouts.lock
		fi
		# No --timeout: REVOKE_TIMEOUT bounds the command as it does the
		# library (the command's own default was a fixed 5 s).
		run nobody env REVOKE_TIMEOUT=1 "$RN" "$own"
		msg="^revoke: $own: not revoked: timed out waiting 0\.[5-6] s for another revoke by uid 65534 \(pid $pl\)\$"
		if [ "$rc" -ne 1 ] || ! [[ $err =~ $msg ]]; then
			fail timeouts.env "exit $rc; stderr: $err; expected: $msg"
		elif ! points_at "$po" 0 "$own"; then
			fail timeouts.env "pid $po lost its descriptor"
		else
			pass timeouts.env
		fi
	fi
	kill "$pl" 2>/dev/null
	wait "$pl" 2>/dev/null
	if [ "$made_rundir" = 1 ]; then
		rm -f "$lock"
		rmdir /run/user/65534
	fi
fi

# ---- looking the path up on a FUSE server that stopped answering
helper=$REVOKE_BUILDDIR/tests/helper-fusehang
if [ ! -c /dev/fuse ] || [ ! -x "$helper" ]; then
	skip timeouts.resolve "no /dev/fuse or no $helper (libfuse3)"
else
	mnt=$tmp/mnt
	mkdir "$mnt"
	"$helper" "$mnt" &
	hp=$!
	holders+=("$hp")
	for i in $(seq 1 400); do
		[ -e "$mnt/file" ] && break
		kill -0 "$hp" 2>/dev/null || break
		sleep 0.025
	done
	if [ ! -e "$mnt/file" ]; then
		skip timeouts.resolve "$helper could not mount: FUSE mounts not permitted here"
	else
		kill -USR1 "$hp" # from now on every request hangs
		# The lookup the call leaves in the kernel ends only when the server
		# answers or dies; it runs in a process of its own, so the command
		# gives up on it and exits while the server still hangs.
		"$R" --json -t 0.5 "$mnt/file" >"$tmp/resolve.out" 2>"$tmp/resolve.err" &
		rp=$!
		for i in $(seq 1 200); do
			kill -0 "$rp" 2>/dev/null || break
			sleep 0.025
		done
		exited=1
		kill -0 "$rp" 2>/dev/null && exited=0
		kill -KILL "$hp"
		wait "$hp" 2>/dev/null
		wait "$rp"
		rc=$?
		err=$(cat "$tmp/resolve.err")
		msg="revoke: $mnt/file: not revoked: timed out after 0.5 s looking the paths up"
		if [ "$exited" -ne 1 ]; then
			fail timeouts.resolve "the command was still running 5 s after its 0.5 s timeout"
		elif [ "$rc" -ne 1 ] || [ "$err" != "$msg" ]; then
			fail timeouts.resolve "exit $rc; stderr: $err; expected: $msg"
		elif ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = [{"path": sys.argv[2], "dev": None, "inode": None, "mode": None, "uid": None}]
sys.exit(0 if (d["errno"], d["failed_phase"], d["targets"], d["holders"]) ==
         ("ETIMEDOUT", "resolving", t, []) else 1)' "$tmp/resolve.out" "$mnt/file"; then
			fail timeouts.resolve "report: $(head -c 600 "$tmp/resolve.out")"
		else
			pass timeouts.resolve
		fi
	fi
	kill -KILL "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
	umount -l "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" 2>/dev/null
fi
exit 0
