#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke --description /proc/PID/fd/N: every copy of that open file
# description (a holder's and its child's, inherited by fork) is cut, another
# open of the file read on; revoke --recheck: after a chmod only the holder
# that may no longer write is cut, the reader (another user's) reads on.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
chmod 755 "$tmp"
cli_runs description

# ---- one description: a holder with fd 5 and its child (same description),
# and another open (fd 6) in the same processes
file=$tmp/file
echo data >"$file"
bash -c 'exec 5<"$1" 6<"$1"; sleep 60 & echo $! >"$2"; exec sleep 60' _ "$file" "$tmp/child" &
p=$!
holders+=("$p")
ok=1
wait_holder "$p" 5 "$file" || ok=0
c=$(cat "$tmp/child" 2>/dev/null)
[ -n "$c" ] && holders+=("$c") && wait_holder "$c" 5 "$file" || ok=0
if [ "$ok" -ne 1 ]; then
	fail description.setup "the holder processes did not start"
else
	run "$R" --description "/proc/$p/fd/5"
	tab=$(squeeze <<<"$out")
	if [ "$rc" -ne 0 ]; then
		fail description.cut "exit $rc; stdout: $out; stderr: $err"
	elif ! grep -q "^$file $p .* fd 5 r cut\$" <<<"$tab" || ! grep -q "^$file $c .* fd 5 r cut\$" <<<"$tab"; then
		fail description.cut "no 'cut' line for pid $p or $c fd 5: $out"
	elif grep -q " fd 6 " <<<"$tab"; then
		fail description.cut "another open (fd 6) is in the report: $out"
	elif points_at "$p" 5 "$file" || points_at "$c" 5 "$file"; then
		fail description.cut "fd 5 still points at $file"
	elif ! points_at "$p" 6 "$file" || ! points_at "$c" 6 "$file"; then
		fail description.cut "another open (fd 6) was touched"
	else
		pass description.cut
	fi
fi

# ---- bad input: exit 1, naming it, nothing changed
run "$R" --description "/proc/$p/fd/987"
if [ "$rc" -eq 1 ] && [ "$err" = "revoke: --description /proc/$p/fd/987: no such open descriptor" ] &&
	points_at "$p" 6 "$file"; then
	pass description.not-open
else
	fail description.not-open "exit $rc; stderr: $err"
fi
run "$R" --description /proc/2147483647/fd/0
if [ "$rc" -eq 1 ] && [ "$err" = "revoke: --description /proc/2147483647/fd/0: no such process" ]; then
	pass description.dead-pid
else
	fail description.dead-pid "exit $rc; stderr: $err"
fi

# ---- --recheck: nobody's reader and writer of a 0666 file, then 0644
if ! command -v setpriv >/dev/null; then
	skip recheck.chmod "no setpriv (util-linux) to start another user's holders"
	exit 0
fi
rfile=$tmp/rfile
echo data >"$rfile"
chmod 666 "$rfile"
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c 'exec 5<"$1"; exec sleep 60' _ "$rfile" &
pr=$!
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c 'exec 5>>"$1"; exec sleep 60' _ "$rfile" &
pw=$!
holders+=("$pr" "$pw")
if ! wait_holder "$pr" 5 "$rfile" || ! wait_holder "$pw" 5 "$rfile"; then
	fail recheck.setup "the holder processes did not start"
	exit 0
fi
chmod 644 "$rfile"
run "$R" --recheck "$rfile"
tab=$(squeeze <<<"$out")
if [ "$rc" -ne 0 ]; then
	fail recheck.chmod "exit $rc; stdout: $out; stderr: $err"
elif ! grep -q "^$rfile $pw .* fd 5 w,append cut\$" <<<"$tab" || grep -q " $pr " <<<"$tab"; then
	fail recheck.chmod "not the writer alone: $out"
elif points_at "$pw" 5 "$rfile" || ! points_at "$pr" 5 "$rfile"; then
	fail recheck.chmod "the writer still holds it, or the reader lost it"
else
	pass recheck.chmod
fi
