#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke PATH: the holders this script starts lose their references (the fd
# number stays taken but no longer points at the file, the mapping is gone),
# keep running; a holder that cannot be stopped (already traced) makes the
# command change nothing, or cut the rest with --best-effort; an unprivileged
# caller gets EPERM on a root-owned file and succeeds on its own.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
chmod 755 "$tmp" # the unprivileged checks look files up in here
cli_runs revoke
others_R || { fail "$(basename "$0" .sh | sed s/^cli-//).others" "cannot copy the command and its library for other users"; exit 0; }

# ---- revoke a file held by two processes and mapped by a third
file=$tmp/file
echo data >"$file"
sleep 60 <"$file" &
p1=$!
holders+=("$p1")
bash -c 'exec 5<>"$1"; exec sleep 60' _ "$file" &
p2=$!
holders+=("$p2")
start_map_holder "$file"
ok=1
wait_holder "$p1" 0 "$file" || ok=0
wait_holder "$p2" 5 "$file" || ok=0
wait_map_holder || ok=0

if [ "$ok" -ne 1 ]; then
	fail revoke.setup "the holder processes did not start"
else
	run "$R" "$file"
	tab=$(squeeze <<<"$out")
	if [ "$rc" -ne 0 ]; then
		fail revoke.cut "exit $rc; stdout: $out; stderr: $err"
	elif [ "$(head -1 <<<"$tab")" != "PATH PID USER COMMAND TYPE FD FLAGS RANGE STATE ERROR" ]; then
		fail revoke.cut "header: $(head -1 <<<"$out")"
	elif ! grep -q "^$file $p1 .* fd 0 r cut\$" <<<"$tab" || ! grep -q "^$file $p2 .* fd 5 rw cut\$" <<<"$tab"; then
		fail revoke.cut "no 'cut' line for pid $p1 fd 0 or pid $p2 fd 5: $out"
	elif points_at "$p1" 0 "$file" || points_at "$p2" 5 "$file"; then
		fail revoke.cut "a holder's descriptor still points at $file"
	elif ! allocated "$p1" 0 || ! allocated "$p2" 5; then
		fail revoke.cut "the revoked descriptor numbers were freed"
	elif ! alive "$p1" || ! alive "$p2"; then
		fail revoke.cut "a holder died"
	elif [ -n "$err" ]; then
		fail revoke.cut "stderr: $err"
	else
		pass revoke.cut
	fi

	if grep -q " $file\$" "/proc/$pm/maps"; then
		fail revoke.map "pid $pm still maps $file"
	elif ! alive "$pm"; then
		fail revoke.map "the mapping holder died"
	elif ! grep -Eq "^$file $pm .* map rw-s [0-9a-f]+-[0-9a-f]+ cut\$" <<<"$tab"; then
		fail revoke.map "no 'cut' map line: $out"
	else
		pass revoke.map
	fi

	# Nothing left to list.
	run "$R" --list -n -o PID,FD "$file"
	[ "$rc" -eq 0 ] && [ -z "$out" ] && pass revoke.list-after || fail revoke.list-after "exit $rc; output: $out"

	# The descriptor left in its place reads as the dead memfd; revoking or
	# listing it is refused by name (EBADF from the library). Only run on
	# that link once it is known to be the dead descriptor.
	if ! points_at "$p1" 0 "$DEAD_LINK"; then
		fail revoke.dead-descriptor "pid $p1 fd 0 reads '$(readlink "/proc/$p1/fd/0")', not '$DEAD_LINK'"
	else
		run "$R" "/proc/$p1/fd/0"
		msg="revoke: /proc/$p1/fd/0: is a descriptor that an earlier revoke left"
		if [ "$rc" -ne 1 ] || [ "$err" != "$msg" ] || [ -n "$out" ]; then
			fail revoke.dead-descriptor "exit $rc; stdout: $out; stderr: $err"
		elif ! points_at "$p1" 0 "$DEAD_LINK"; then
			fail revoke.dead-descriptor "pid $p1 fd 0 changed"
		else
			run "$R" --list --json "/proc/$p1/fd/0"
			if [ "$rc" -eq 1 ] && [ "$err" = "$msg" ] && [ -z "$out" ]; then
				pass revoke.dead-descriptor
			else
				fail revoke.dead-descriptor "--list --json: exit $rc; stdout: $out; stderr: $err"
			fi
		fi
	fi
fi

# ---- several paths in one call, JSON report, --quiet
a=$tmp/a
b=$tmp/b
echo a >"$a"
echo b >"$b"
sleep 60 <"$a" &
pa=$!
holders+=("$pa")
sleep 60 <"$b" &
pb=$!
holders+=("$pb")
if wait_holder "$pa" 0 "$a" && wait_holder "$pb" 0 "$b"; then
	run "$R" --json "$a" "$b"
	if [ "$rc" -ne 0 ]; then
		fail revoke.json "exit $rc; stderr: $err"
	elif ! python3 -m json.tool "$tmp/out" >/dev/null 2>"$tmp/jerr"; then
		fail revoke.json "invalid JSON: $(cat "$tmp/jerr")"
	elif ! why=$(python3 - "$tmp/out" "$pa" "$pb" "$a" "$b" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
pa, pb = int(sys.argv[2]), int(sys.argv[3])
h = {x["pid"]: x for x in doc["holders"]}
if doc["error"] is not None or doc["errno"] is not None or doc["engine"] not in ("ptrace", "syscall"):
    print("error %r engine %r" % (doc["error"], doc["engine"])); sys.exit(1)
if [t["path"] for t in doc["targets"]] != sys.argv[4:6]:
    print("targets %r" % doc["targets"]); sys.exit(1)
for p in (pa, pb):
    r = [x for x in h.get(p, {}).get("children", []) if x["type"] == "fd" and x["fd"] == 0]
    if not r or r[0]["state"] != "cut" or r[0]["error"] is not None or h[p]["state"] != "cut":
        print("pid %d: %r" % (p, h.get(p))); sys.exit(1)
    # The ptrace engine stops each holder; the longest stop is the report's.
    if doc["engine"] == "ptrace" and not 0 < h[p]["stopped_ns"] <= doc["max_stopped_ns"] <= doc["elapsed_ns"]:
        print("stopped_ns %r, max_stopped_ns %r, elapsed_ns %r" % (h[p]["stopped_ns"], doc["max_stopped_ns"], doc["elapsed_ns"])); sys.exit(1)
# Where the time went: every step named, the steps tiling the call.
steps = doc.get("steps_ns") or {}
names = ["start", "resolve", "lock", "scan", "stop", "rescan", "place", "cut", "release", "sync", "umount", "report"]
if sorted(steps) != sorted(names) or sum(steps.values()) != doc["elapsed_ns"] or steps["cut"] <= 0:
    print("steps_ns %r, elapsed_ns %r" % (steps, doc["elapsed_ns"])); sys.exit(1)
EOF
	); then
		fail revoke.json "$why"
	elif points_at "$pa" 0 "$a" || points_at "$pb" 0 "$b"; then
		fail revoke.json "a descriptor still points at its file"
	else
		pass revoke.json
	fi
else
	fail revoke.json "the holder processes did not start"
fi

c=$tmp/c
echo c >"$c"
sleep 60 <"$c" &
pc=$!
holders+=("$pc")
if wait_holder "$pc" 0 "$c"; then
	run "$R" -q "$c"
	if [ "$rc" -eq 0 ] && [ -z "$out" ] && [ -z "$err" ] && ! points_at "$pc" 0 "$c"; then
		pass revoke.quiet
	else
		fail revoke.quiet "exit $rc; stdout: $out; stderr: $err"
	fi
else
	fail revoke.quiet "the holder process did not start"
fi

# ---- a holder that cannot be stopped: already traced (PTRACE_TRACEME, then
# stopped at its exec), next to one that can.
t=$tmp/traced
echo t >"$t"
python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1], os.O_RDONLY)
pid = os.fork()
if pid == 0:
    os.dup2(fd, 5)
    if libc.ptrace(0, 0, None, None) != 0:  # PTRACE_TRACEME
        os._exit(1)
    os.execvp("sleep", ["sleep", "60"])
os.close(fd)
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % pid)
os.waitpid(pid, 0)  # its exec stop; it stays traced, by us
time.sleep(60)' "$t" "$tmp/tracee" &
tracer=$!
holders+=("$tracer")
sleep 60 <"$t" &
pu=$!
holders+=("$pu")
for i in $(seq 1 400); do
	[ -s "$tmp/tracee" ] && break
	sleep 0.025
done
tracee=$(cat "$tmp/tracee" 2>/dev/null)
if [ -n "$tracee" ]; then
	holders+=("$tracee")
fi
if [ -n "$tracee" ] && wait_holder "$tracee" 5 "$t" && wait_holder "$pu" 0 "$t"; then
	run "$R" "$t"
	if [ "$rc" -ne 1 ]; then
		fail revoke.untraceable "exit $rc, expected 1; stdout: $out; stderr: $err"
	elif ! grep -q "^revoke: $t: pid $tracee (sleep): not stopped: " <<<"$err"; then
		fail revoke.untraceable "no message naming pid $tracee: $err"
	elif ! grep -q "^revoke: $t: not revoked: .*could not be cut (see --best-effort)" <<<"$err"; then
		fail revoke.untraceable "no 'not revoked' message: $err"
	elif ! points_at "$pu" 0 "$t" || ! points_at "$tracee" 5 "$t"; then
		fail revoke.untraceable "something was changed although the revoke failed"
	elif ! grep -Eq "^$t $tracee .* (skipped|failed) .+" <<<"$(squeeze <<<"$out")"; then
		fail revoke.untraceable "the table has no line with an error for pid $tracee: $out"
	elif ! grep -Eq "^$t $pu .* skipped( .*)?$" <<<"$(squeeze <<<"$out")"; then
		fail revoke.untraceable "the table has no 'skipped' line for pid $pu: $out"
	else
		pass revoke.untraceable
	fi

	run "$R" --best-effort "$t"
	if [ "$rc" -ne 1 ]; then
		fail revoke.best-effort "exit $rc, expected 1; stdout: $out; stderr: $err"
	elif points_at "$pu" 0 "$t"; then
		fail revoke.best-effort "pid $pu still holds $t"
	elif ! points_at "$tracee" 5 "$t"; then
		fail revoke.best-effort "the traced pid $tracee lost its fd although it could not be stopped"
	elif ! grep -q "^revoke: $t: pid $tracee (sleep): not stopped: " <<<"$err" ||
		! grep -q "^revoke: $t: partly revoked: 1 of 2 references could not be cut" <<<"$err"; then
		fail revoke.best-effort "messages: $err"
	elif ! grep -q "^$t $pu .* cut\$" <<<"$(squeeze <<<"$out")"; then
		fail revoke.best-effort "no 'cut' line for pid $pu: $out"
	else
		pass revoke.best-effort
	fi
else
	fail revoke.untraceable "the traced holder did not start"
fi

# ---- a current directory is cut: the holder moves to the dead directory
dir=$tmp/dir
mkdir "$dir" "$dir/sub"
(cd "$dir" && exec sleep 60) &
pd=$!
holders+=("$pd")
(cd "$dir/sub" && exec sleep 60) &
psub=$!
holders+=("$psub")
sleep 60 <"$dir" &
pf=$!
holders+=("$pf")
if wait_holder "$pf" 0 "$dir" && [ "$(readlink "/proc/$pd/cwd")" = "$dir" ] &&
	[ "$(readlink "/proc/$psub/cwd")" = "$dir/sub" ]; then
	# The native revoke(2) moves no current directory: the userspace engine's.
	run "$R" --engine ptrace -o PID,TYPE,FD,STATE "$dir"
	tab=$(squeeze <<<"$out")
	cwd=$(readlink "/proc/$pd/cwd")
	if [ "$rc" -ne 0 ]; then
		fail revoke.cwd "exit $rc, expected 0; stdout: $out; stderr: $err"
	elif ! grep -Eq "^ ?$pd cwd cut$" <<<"$tab"; then
		fail revoke.cwd "no 'cwd cut' line for pid $pd: $out"
	elif points_at "$pf" 0 "$dir"; then
		fail revoke.cwd "pid $pf still holds $dir"
	elif [[ "$cwd" != *"/.revoke-dead."*" (deleted)" ]]; then
		fail revoke.cwd "the cwd of pid $pd is $cwd, not the deleted dead directory"
	elif [ "$(readlink "/proc/$psub/cwd")" != "$dir/sub" ] || grep -q "^ *$psub " <<<"$tab"; then
		fail revoke.cwd "pid $psub (cwd in a subdirectory) was touched or listed: $out"
	else
		pass revoke.cwd
	fi
else
	fail revoke.cwd "the holder processes did not start"
fi

# ---- unprivileged callers
if [ "$(id -u)" -ne 0 ]; then
	skip revoke.eperm "needs root to create a file of another owner and to drop to uid 65534"
	skip revoke.eacces "needs root to drop to uid 65534"
	exit 0
fi

rootfile=$tmp/rootfile
echo r >"$rootfile"
chmod 644 "$rootfile"
run nobody "$RN" "$rootfile"
if [ "$rc" -eq 1 ] && grep -qx "revoke: $rootfile: Operation not permitted" <<<"$err"; then
	pass revoke.eperm
else
	fail revoke.eperm "exit $rc; stderr: $err"
fi

# Lookup errors come first: a file in a directory uid 65534 cannot search.
mkdir -m 700 "$tmp/private"
echo p >"$tmp/private/f"
run nobody "$RN" "$tmp/private/f"
if [ "$rc" -eq 1 ] && grep -qx "revoke: $tmp/private/f: Permission denied" <<<"$err"; then
	pass revoke.eacces
else
	fail revoke.eacces "exit $rc; stderr: $err"
fi

# ---- a device every process shares is refused, by device number: a node of
# our own for /dev/null (c 1 3) held by our own process; were it not refused,
# only that node's holders would be cut, which the check below sees.
if mknod "$tmp/null" c 1 3; then
	sleep 60 <"$tmp/null" &
	pn=$!
	holders+=("$pn")
	if wait_holder "$pn" 0 "$tmp/null"; then
		run "$R" "$tmp/null"
		if [ "$rc" -eq 1 ] && [ -z "$out" ] &&
			grep -qx "revoke: $tmp/null: refused: a device every process shares (1:3)" <<<"$err" &&
			points_at "$pn" 0 "$tmp/null"; then
			pass revoke.shared-device
		else
			fail revoke.shared-device "exit $rc; stdout: $out; stderr: $err"
		fi
	else
		fail revoke.shared-device "the holder of $tmp/null did not start (a nodev mount?)"
	fi
else
	fail revoke.shared-device "mknod $tmp/null failed"
fi

# Its own file among processes it cannot look at: tests/cli/cli-uninspected.sh.
exit 0
