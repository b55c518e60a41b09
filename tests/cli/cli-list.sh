#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke --list: the holders this script starts (a descriptor, a read-write
# descriptor, a shared mapping) appear with their pid, fd and flags, in the
# table, --raw, --noheadings, -o and --json outputs; nothing is changed.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs list

file=$tmp/file
other=$tmp/other
echo data >"$file"
echo data >"$other"
me=$(id -un)

sleep 60 <"$file" &
p1=$!
holders+=("$p1")
bash -c 'exec 5<>"$1" 6>>"$1"; exec sleep 60' _ "$file" &
p2=$!
holders+=("$p2")
sleep 60 <"$other" &
p3=$!
holders+=("$p3")
start_map_holder "$file"

ok=1
wait_holder "$p1" 0 "$file" || ok=0
wait_holder "$p2" 5 "$file" || ok=0
wait_holder "$p3" 0 "$other" || ok=0
wait_map_holder || ok=0
if [ "$ok" -ne 1 ]; then
	fail list.setup "the holder processes did not start"
	exit 0
fi

# The default table.
run "$R" --list "$file"
tab=$(squeeze <<<"$out")
if [ "$rc" -ne 0 ]; then
	fail list.table "exit $rc; stderr: $err"
elif [ "$(head -1 <<<"$tab")" != "PATH PID USER COMMAND TYPE FD FLAGS RANGE" ]; then
	fail list.table "header: $(head -1 <<<"$out")"
elif ! grep -qx "$file $p1 $me sleep fd 0 r" <<<"$tab"; then
	fail list.table "no line for pid $p1 fd 0: $out"
elif ! grep -qx "$file $p2 $me sleep fd 5 rw" <<<"$tab" || ! grep -qx "$file $p2 $me sleep fd 6 w,append" <<<"$tab"; then
	fail list.table "no lines for pid $p2 fds 5 and 6: $out"
elif grep -q "$other" <<<"$tab"; then
	fail list.table "lists a file it was not asked about: $out"
elif [ -n "$err" ]; then
	fail list.table "stderr: $err"
else
	pass list.table
fi

# The mapping: TYPE map, FLAGS rw-s, RANGE start-end in hex.
if grep -Eq "^$file $pm [^ ]+ [^ ]+ map rw-s [0-9a-f]+-[0-9a-f]+$" <<<"$tab"; then
	pass list.map
else
	fail list.map "no map line for pid $pm: $out"
fi

# Sorted by path, then pid.
run "$R" --list --raw --noheadings -o PATH,PID "$other" "$file"
sorted=$(sort -k1,1 -k2,2n -s <<<"$out")
if [ "$rc" -eq 0 ] && [ "$out" = "$sorted" ] && [ "$(head -1 <<<"$out" | cut -d' ' -f1)" = "$file" ] &&
	grep -qx "$other $p3" <<<"$out"; then
	pass list.sorted
else
	fail list.sorted "exit $rc; output: $out"
fi

# Nothing was changed.
if [ "$(readlink "/proc/$p1/fd/0")" = "$file" ] && [ "$(readlink "/proc/$p2/fd/5")" = "$file" ] &&
	grep -q " $file\$" "/proc/$pm/maps"; then
	pass list.changes-nothing
else
	fail list.changes-nothing "a holder lost its reference to $file after --list"
fi

# --raw and -o
run "$R" -l -r -o PID,FD,TYPE "$file"
if [ "$rc" -eq 0 ] && [ "$(head -1 <<<"$out")" = "PID FD TYPE" ] && grep -qx "$p1 0 fd" <<<"$out" &&
	grep -qx "$p2 5 fd" <<<"$out"; then
	pass list.raw-output
else
	fail list.raw-output "exit $rc; output: $out"
fi

# --noheadings, lower-case column names
run "$R" -l -n -o pid,fd "$file"
if [ "$rc" -eq 0 ] && ! grep -q PID <<<"$out" && grep -Eq "^ *$p1 +0$" <<<"$out"; then
	pass list.noheadings
else
	fail list.noheadings "exit $rc; output: $out"
fi

# -o +LIST appends to the defaults
dev=$(stat -c '%Hd:%Ld' "$file")
ino=$(stat -c '%i' "$file")
run "$R" -l -r -o +UID,DEV,INODE,OFFSET "$file"
if [ "$rc" -eq 0 ] && [ "$(head -1 <<<"$out")" = "PATH PID USER COMMAND TYPE FD FLAGS RANGE UID DEV INODE OFFSET" ] &&
	grep -q "^$file $p1 .* $(id -u) $dev $ino 0\$" <<<"$out"; then
	pass list.output-append
else
	fail list.output-append "exit $rc; expected dev $dev ino $ino; output: $out"
fi

# --quiet prints no table.
run "$R" -l -q "$file"
[ "$rc" -eq 0 ] && [ -z "$out" ] && [ -z "$err" ] && pass list.quiet || fail list.quiet "exit $rc; output: $out"

# A symbolic link is followed; PATH shows the path as given.
ln -s file "$tmp/link"
run "$R" -l -r -n -o PATH,PID,FD "$tmp/link"
if [ "$rc" -eq 0 ] && grep -qx "$tmp/link $p1 0" <<<"$out"; then
	pass list.symlink
else
	fail list.symlink "exit $rc; output: $out; stderr: $err"
fi

# --json: valid, complete, with the pid and fd.
run "$R" --list --json "$file" "$other"
if [ "$rc" -ne 0 ]; then
	fail list.json "exit $rc; stderr: $err"
elif ! python3 -m json.tool "$tmp/out" >/dev/null 2>"$tmp/jerr"; then
	fail list.json "invalid JSON: $(cat "$tmp/jerr")"
elif ! why=$(python3 - "$tmp/out" "$file" "$other" "$p1" "$p2" "$pm" "$ino" <<'EOF'
import json, os, pwd, sys
doc = json.load(open(sys.argv[1]))
file, other = sys.argv[2], sys.argv[3]
p1, p2, pm, ino = (int(x) for x in sys.argv[4:8])
def need(cond, why):
    if not cond:
        print(why)
        sys.exit(1)
need(list(doc) == ["engine", "discovery", "error", "errno", "elapsed_ns", "max_stopped_ns",
                   "timeout_ns", "failed_phase", "failed_pid", "failed_detail", "nholders",
                   "nuninspected", "unmounted", "helper_pid", "steps_ns", "targets", "holders"], "keys: %r" % list(doc))
need(doc["helper_pid"] is None, "helper_pid: %r (the command made the call itself)" % doc["helper_pid"])
need(doc["engine"] == "none" and doc["discovery"] in ("proc", "bpf"), "engine, discovery: %r" % doc)
need(doc["error"] is None and doc["errno"] is None and doc["failed_phase"] is None, "error: %r" % doc)
# No --timeout: REVOKE_TIMEOUT (tests/run-tests sets it), else 5 s.
want = int(os.environ.get("REVOKE_TIMEOUT") or 5) * 1000000000
need(doc["timeout_ns"] == want and doc["nuninspected"] == 0 and doc["unmounted"] == 0, "timeout_ns (want %d), nuninspected: %r" % (want, doc))
need(doc["nholders"] == len(doc["holders"]), "nholders %r" % doc["nholders"])
need(isinstance(doc["elapsed_ns"], int) and doc["elapsed_ns"] > 0, "elapsed_ns %r" % doc["elapsed_ns"])
need([t["path"] for t in doc["targets"]] == [file, other], "targets: %r" % doc["targets"])
need(doc["targets"][0]["inode"] == ino and isinstance(doc["targets"][0]["mode"], int), "target 0: %r" % doc["targets"][0])
h = {x["pid"]: x for x in doc["holders"]}
need(p1 in h and p2 in h and pm in h, "holders: %r" % sorted(h))
need([x["pid"] for x in doc["holders"]] == sorted(h), "holders not sorted by pid")
# A holder's line has the process, its children the references; the keys
# of the other kind are null.
need(h[p1]["command"] == "sleep" and h[p1]["uid"] == os.getuid() and
     h[p1]["user"] == pwd.getpwuid(os.getuid()).pw_name and
     h[p1]["state"] == "found" and h[p1]["stopped_ns"] == 0, "holder fields: %r" % h[p1])
need(h[p1]["type"] is None and h[p1]["fd"] is None and h[p1]["path"] is None, "holder line has ref fields: %r" % h[p1])
r = [x for x in h[p1]["children"] if x["type"] == "fd" and x["fd"] == 0]
need(r and r[0]["path"] == file and r[0]["state"] == "found" and r[0]["open_flags"] == "r" and
     r[0]["offset"] == 0 and r[0]["error"] is None, "pid %d fd 0: %r" % (p1, h[p1]["children"]))
need(r[0]["pid"] is None and r[0]["command"] is None and r[0]["stopped_ns"] is None, "ref line has holder fields: %r" % r[0])
r = [x for x in h[p2]["children"] if x["type"] == "fd" and x["fd"] == 6]
need(r and r[0]["open_flags"] == "w,append" and r[0]["cloexec"] is False and r[0]["start"] is None and
     r[0]["shared"] is None, "pid %d fd 6: %r" % (p2, h[p2]["children"]))
m = [x for x in h[pm]["children"] if x["type"] == "map"]
need(m and m[0]["shared"] is True and m[0]["prot"] == "rw-" and m[0]["end"] > m[0]["start"] and
     m[0]["fd"] is None and m[0]["cloexec"] is None and m[0]["open_flags"] is None, "map: %r" % h[pm]["children"])
EOF
); then
	fail list.json "$why"
else
	pass list.json
fi

# Command names with quotes, backslashes, control characters and invalid
# UTF-8 still give valid JSON. The holder is a shell that renames itself and
# waits in a builtin (no child that would hold the file too).
mkfifo "$tmp/fifo"
bash -c 'exec 7<"$1"; printf "q\"b\\\\c\001\377z" >/proc/$$/comm; read -r x <"$2"' _ "$file" "$tmp/fifo" &
pw=$!
holders+=("$pw")
for i in $(seq 1 400); do
	[ "$(readlink "/proc/$pw/fd/7" 2>/dev/null)" = "$file" ] && grep -q 'z' "/proc/$pw/comm" 2>/dev/null && break
	sleep 0.025
done
run "$R" --list --json "$file"
if [ "$rc" -ne 0 ]; then
	fail list.json-escaping "exit $rc; stderr: $err"
elif ! python3 -m json.tool "$tmp/out" >/dev/null 2>"$tmp/jerr"; then
	fail list.json-escaping "invalid JSON: $(cat "$tmp/jerr")"
elif ! why=$(python3 - "$tmp/out" "$pw" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
c = [h["command"] for h in doc["holders"] if h["pid"] == int(sys.argv[2])]
if not c or not c[0].startswith("q\"b\\c\x01\ufffdz"):
    print("command of pid %s decoded as %r" % (sys.argv[2], c))
    sys.exit(1)
EOF
); then
	fail list.json-escaping "$why"
else
	pass list.json-escaping
fi
# The table shows the name with the bytes escaped, in one line.
run "$R" --list -r -n -o PID,COMMAND "$file"
if [ "$rc" -eq 0 ] && [ "$(grep -c "^$pw " <<<"$out")" -eq 1 ]; then
	pass list.command-escaping
else
	fail list.command-escaping "exit $rc; output: $out"
fi

# A path with quotes, a backslash, a newline, a tab, a control character,
# a byte that is no UTF-8 and a valid non-ASCII letter: valid JSON, the
# invalid byte as U+FFFD, every other byte as it is; one line in the table.
weird=$tmp/$'we"ird\\ \n\t\001\377\303\251'
echo w >"$weird"
sleep 60 <"$weird" &
pq=$!
holders+=("$pq")
if ! wait_holder "$pq" 0 "$weird"; then
	fail list.json-path-escaping "the holder process did not start"
else
	run "$R" --list --json "$weird"
	if [ "$rc" -ne 0 ]; then
		fail list.json-path-escaping "exit $rc; stderr: $err"
	elif ! why=$(python3 - "$tmp/out" "$weird" "$pq" <<'EOF'
import json, os, sys
doc = json.load(open(sys.argv[1]))
want = os.fsencode(sys.argv[2]).decode("utf-8", "replace")
if "\ufffd" not in want or "\u00e9" not in want or "\n" not in want:
    print("the test's expectation is wrong: %r" % want); sys.exit(1)
if [t["path"] for t in doc["targets"]] != [want]:
    print("targets: %r, expected %r" % ([t["path"] for t in doc["targets"]], want)); sys.exit(1)
refs = [r for h in doc["holders"] if h["pid"] == int(sys.argv[3]) for r in h.get("children", [])]
if [r["path"] for r in refs] != [want]:
    print("refs of pid %s: %r" % (sys.argv[3], refs)); sys.exit(1)
EOF
	); then
		fail list.json-path-escaping "$why"
	else
		pass list.json-path-escaping
	fi
	run "$R" --list -r -n -o PATH,PID "$weird"
	if [ "$rc" -eq 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q " $pq\$" <<<"$out"; then
		pass list.path-escaping
	else
		fail list.path-escaping "exit $rc; output: $out"
	fi
fi

# A write error is an error.
"$R" --list "$file" >/dev/full 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "write error: No space left on device" "$tmp/err"; then
	pass list.write-error
else
	fail list.write-error "exit $rc; stderr: $(cat "$tmp/err")"
fi
exit 0
