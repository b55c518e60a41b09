#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes the discovery could not look at (root's, seen by uid 65534):
# shown with state uninspected in the table (STATE and ERROR join the
# default columns of a listing), in the JSON and counted in the messages;
# they make revoke and --list fail (exit 1) and change nothing, unless
# --best-effort (exit 0, the caller's own holder cut, the count still said).
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL/SKIP line per check.
. "$(dirname "$0")/cli-common.bash"
chmod 755 "$tmp" # uid 65534 looks files up in here
cli_runs uninspected
others_R || { fail "$(basename "$0" .sh | sed s/^cli-//).others" "cannot copy the command and its library for other users"; exit 0; }

if [ "$(id -u)" -ne 0 ]; then
	for c in list list-best-effort refused json best-effort; do
		skip "uninspected.$c" "needs root to drop to uid 65534 next to other users' processes"
	done
	exit 0
fi

own=$tmp/own
echo o >"$own"
chown 65534:65534 "$own"
setpriv --reuid 65534 --regid 65534 --clear-groups sleep 300 <"$own" &
po=$!
holders+=("$po")
if ! wait_holder "$po" 0 "$own"; then
	fail uninspected.setup "the holder process did not start"
	exit 0
fi

# Last, for an owner without the helper (the suite points the library at a
# socket nobody listens on).
hint="revoke: no helper answered: revoked(8) looks at other users' processes for a file's owner (systemctl enable --now revoked.socket)"

# uninspected_rows: the number of table lines (raw, no headings) in $out
# whose STATE column (field $1) says uninspected.
uninspected_rows() { awk -v f="$1" '$f == "uninspected"' <<<"$out" | wc -l; }

# --list: the caller's own holder, then one line per process it could not
# look at, with STATE and ERROR; exit 1; the message gives their number.
run nobody "$RN" --list "$own"
tab=$(squeeze <<<"$out")
n=$(grep -c ' uninspected cannot inspect its descriptors: not permitted$' <<<"$tab")
msg="revoke: $own: incomplete listing: $n processes could not be inspected and may hold it (see --best-effort)"$'\n'"$hint"
if [ "$rc" -ne 1 ]; then
	fail uninspected.list "exit $rc, expected 1; stdout: $out; stderr: $err"
elif [ "$(head -1 <<<"$tab")" != "PATH PID USER COMMAND TYPE FD FLAGS RANGE STATE ERROR" ]; then
	fail uninspected.list "header: $(head -1 <<<"$out")"
elif ! grep -qx "$own $po nobody sleep fd 0 r found" <<<"$tab"; then
	fail uninspected.list "no 'found' line for pid $po: $out"
elif [ "$n" -lt 1 ] || ! grep -Eq '^ ?1 root .* uninspected cannot inspect' <<<"$tab"; then
	fail uninspected.list "no 'uninspected' line for pid 1: $out"
elif [ "$err" != "$msg" ]; then
	fail uninspected.list "stderr: $err; expected: $msg"
else
	pass uninspected.list
fi

# --list --best-effort: the same listing, exit 0, the number still said.
run nobody "$RN" --list --best-effort -r -n -o PID,STATE "$own"
n=$(uninspected_rows 2)
if [ "$rc" -eq 0 ] && grep -qx "$po found" <<<"$out" && [ "$n" -ge 1 ] &&
	[ "$err" = "revoke: $own: $n processes could not be inspected and may hold it"$'\n'"$hint" ]; then
	pass uninspected.list-best-effort
else
	fail uninspected.list-best-effort "exit $rc; stdout: $out; stderr: $err"
fi

# revoke: refused, nothing changed; the caller's holder is skipped.
run nobody "$RN" -r -o PID,STATE,ERRNO "$own"
n=$(uninspected_rows 2)
if [ "$rc" -ne 1 ]; then
	fail uninspected.refused "exit $rc, expected 1; stdout: $out; stderr: $err"
elif ! points_at "$po" 0 "$own"; then
	fail uninspected.refused "pid $po lost its descriptor although the call was refused"
elif ! grep -Eqx "$po skipped ?" <<<"$out" || ! grep -qx "1 uninspected EACCES" <<<"$out"; then
	fail uninspected.refused "table: $out"
elif [ "$err" != "revoke: $own: not revoked: $n processes could not be inspected and may hold it (see --best-effort)"$'\n'"$hint" ]; then
	fail uninspected.refused "stderr: $err"
else
	pass uninspected.refused
fi

# The JSON: the count, and each such holder with its state, error and no
# references.
run nobody "$RN" --list --json "$own"
if [ "$rc" -ne 1 ]; then
	fail uninspected.json "exit $rc, expected 1; stderr: $err"
elif ! why=$(python3 - "$tmp/out" "$po" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
po = int(sys.argv[2])
un = [h for h in doc["holders"] if h["state"] == "uninspected"]
def need(cond, why):
    if not cond:
        print(why)
        sys.exit(1)
need(doc["errno"] == "EBUSY" and doc["error"], "error %r %r" % (doc["error"], doc["errno"]))
need(doc["nuninspected"] == len(un) >= 1, "nuninspected %r, %d holders say so" % (doc["nuninspected"], len(un)))
need(doc["nholders"] == len(doc["holders"]), "nholders %r" % doc["nholders"])
for h in un:
    need(h["error"] == "cannot inspect its descriptors: not permitted" and h["errno"] == "EACCES" and
         "children" not in h and isinstance(h["pid"], int) and h["uid"] != 65534, "holder %r" % h)
mine = [h for h in doc["holders"] if h["pid"] == po]
need(mine and mine[0]["state"] == "found" and [r["fd"] for r in mine[0]["children"]] == [0], "pid %d: %r" % (po, mine))
EOF
); then
	fail uninspected.json "$why"
else
	pass uninspected.json
fi

# --best-effort: its own holder is cut, exit 0, the number said.
run nobody "$RN" --best-effort -r -o PID,STATE "$own"
n=$(uninspected_rows 2)
if [ "$rc" -ne 0 ]; then
	fail uninspected.best-effort "exit $rc, expected 0; stdout: $out; stderr: $err"
elif points_at "$po" 0 "$own" || ! allocated "$po" 0 || ! alive "$po"; then
	fail uninspected.best-effort "pid $po still holds $own, or lost the fd number, or died"
elif ! grep -qx "$po cut" <<<"$out" || [ "$n" -lt 1 ]; then
	fail uninspected.best-effort "table: $out"
elif [ "$err" != "revoke: $own: $n processes could not be inspected and may hold it"$'\n'"$hint" ]; then
	fail uninspected.best-effort "stderr: $err"
else
	pass uninspected.best-effort
fi
# REVOKE_NO_HELPER=1 asked for no helper: the call says nothing of one.
run nobody env REVOKE_NO_HELPER=1 "$RN" "$own"
if [ "$rc" -ne 1 ] || grep -q "no helper answered" <<<"$err" ||
	! grep -q "could not be inspected" <<<"$err"; then
	fail uninspected.no-helper-asked "exit $rc; stderr: $err"
else
	pass uninspected.no-helper-asked
fi
exit 0
