#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke --ns PID PATH: a file only a container sees (its own mount namespace,
# a tmpfs on /mnt, pid 1 of its own pid namespace holding it) is listed and
# cut as the container sees it; each holder shows with both pids (PID, NSPID,
# in the table and the JSON); the host's own lookup of the path fails; a pid
# with no process, a path the container lacks and an unprivileged caller are
# refused with a message that says which.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs ns
others_R || { fail "$(basename "$0" .sh | sed s/^cli-//).others" "cannot copy the command and its library for other users"; exit 0; }

if [ "$(id -u)" -ne 0 ]; then
	skip ns.setup "needs root to make mount and pid namespaces"
	exit 0
fi
secret=/mnt/revoke-ns-cli
unshare --mount --pid --fork --kill-child --propagation private \
	sh -c 'mount -t tmpfs revoke-ns /mnt && echo secret >'"$secret"' && exec sleep 60 <'"$secret" \
	2>"$tmp/unshare.err" &
u=$!
holders+=("$u")
p=
for _ in $(seq 1 400); do
	p=$(cat "/proc/$u/task/$u/children" 2>/dev/null)
	p=${p%% *}
	[ -n "$p" ] && [ "$(readlink "/proc/$p/fd/0" 2>/dev/null)" = "$secret" ] && break
	p=
	sleep 0.025
done
if [ -z "$p" ]; then
	fail ns.setup "the container's holder did not start: $(cat "$tmp/unshare.err")"
	exit 0
fi

run "$R" --list "$secret"
[ "$rc" -eq 1 ] && grep -q "^revoke: $secret: No such file or directory" <<<"$err" &&
	pass ns.host-enoent || fail ns.host-enoent "exit $rc; stdout: $out; stderr: $err"

run "$R" --list --ns "$p" "$secret"
tab=$(squeeze <<<"$out")
if [ "$rc" -eq 0 ] && grep -q "^PATH PID NSPID USER COMMAND TYPE FD" <<<"$tab" &&
	grep -q "^$secret $p 1 root sleep fd 0 r" <<<"$tab"; then
	pass ns.list
else
	fail ns.list "exit $rc; stdout: $out; stderr: $err"
fi

run "$R" --list --json --ns "$p" "$secret"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.loads(sys.argv[1])
h = [x for x in d["holders"] if x["pid"] == int(sys.argv[2])]
assert h and h[0]["nspid"] == 1, h
' "$out" "$p" 2>"$tmp/py"; then
	pass ns.json
else
	fail ns.json "exit $rc; $(cat "$tmp/py"); stdout: $out"
fi

run "$R" --ns "$p" /mnt/not-there
[ "$rc" -eq 1 ] &&
	grep -q "^revoke: /mnt/not-there (as pid $p sees it): No such file or directory" <<<"$err" &&
	pass ns.enoent || fail ns.enoent "exit $rc; stderr: $err"

gone=$(sh -c 'echo $$')
run "$R" --ns "$gone" "$secret"
[ "$rc" -eq 1 ] && grep -q "^revoke: --ns $gone: no such process" <<<"$err" &&
	pass ns.esrch || fail ns.esrch "exit $rc; stderr: $err"

run setpriv --reuid 65534 --regid 65534 --clear-groups "$RN" --ns "$p" "$secret"
if [ "$rc" -eq 1 ] && grep -q "^revoke: --ns $p: Operation not permitted" <<<"$err" &&
	points_at "$p" 0 "$secret"; then
	pass ns.eperm
else
	fail ns.eperm "exit $rc; stderr: $err"
fi

run "$R" --ns "$p" --mount /mnt
[ "$rc" -eq 2 ] && pass ns.usage || fail ns.usage "exit $rc; stderr: $err"

run "$R" --ns "$p" "$secret"
tab=$(squeeze <<<"$out")
if [ "$rc" -eq 0 ] && grep -q "^$secret $p 1 root sleep fd 0 r cut" <<<"$tab" &&
	points_at "$p" 0 "$DEAD_LINK"; then
	pass ns.cut
else
	fail ns.cut "exit $rc; stdout: $out; stderr: $err; fd 0: $(readlink "/proc/$p/fd/0")"
fi
# The init of a pid namespace takes from outside only the signals it
# handles, and SIGKILL (pid_namespaces(7)): the cleanup's SIGTERM would not
# end it, and unshare waits for it.
kill -KILL "$p"

# Ten at once against one container with three holders: they take turns
# (one lock per user); each cuts what is left, the others' lookups included
# (their O_PATH descriptors of the file are holders too), and says so; all
# exit 0, and every holder in the container is cut.
secret2=/mnt/revoke-ns-cli-ten
unshare --mount --pid --fork --kill-child --propagation private \
	sh -c 'mount -t tmpfs revoke-ns /mnt && echo secret >'"$secret2"' &&
		(sleep 60 <'"$secret2"' &) && (sleep 60 <'"$secret2"' &) &&
		exec sleep 60 <'"$secret2" \
	2>"$tmp/unshare2.err" &
u2=$!
holders+=("$u2")
p2=
for _ in $(seq 1 400); do
	p2=$(cat "/proc/$u2/task/$u2/children" 2>/dev/null)
	p2=${p2%% *}
	[ -n "$p2" ] && [ "$(readlink "/proc/$p2/fd/0" 2>/dev/null)" = "$secret2" ] &&
		[ "$(wc -w <"/proc/$p2/task/$p2/children")" -ge 2 ] && break
	p2=
	sleep 0.025
done
if [ -z "$p2" ]; then
	fail ns.ten-at-once "the container's holders did not start: $(cat "$tmp/unshare2.err")"
	exit 0
fi
kids=$(cat "/proc/$p2/task/$p2/children")
pids=()
for i in $(seq 1 10); do
	"$R" --ns "$p2" "$secret2" >"$tmp/ten$i.out" 2>"$tmp/ten$i.err" &
	pids+=($!)
done
bad=
for i in $(seq 1 10); do
	wait "${pids[$((i - 1))]}"
	rc=$?
	[ "$rc" -eq 0 ] && [ ! -s "$tmp/ten$i.err" ] || bad+=" #$i: exit $rc, $(cat "$tmp/ten$i.err");"
done
for h in $p2 $kids; do
	points_at "$h" 0 "$DEAD_LINK" || bad+=" pid $h fd 0: $(readlink "/proc/$h/fd/0");"
done
cuts=$(cat "$tmp"/ten*.out | grep -c "^$secret2 .* cut *$")
[ -z "$bad" ] && [ "$cuts" -ge 3 ] && pass ns.ten-at-once ||
	fail ns.ten-at-once "${bad:-$cuts lines say cut}"
kill -KILL "$p2"
exit 0
