#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The exit status, the --json report and what the holders really have
# (/proc/PID/fd) agree in every outcome: success, refusal, a timeout under
# load, and a partial cut with --best-effort. Without --best-effort the set is
# cut whole or not at all, whatever the timeout: 150 holders, busy loops on
# every core, tight timeouts (issue 13, item 1: the caller used to give up at
# the timeout while the worker was mid-cut, and the command's exit then ended
# it between two holders, with a report saying nothing was done).
# Run by tests/run-tests with REVOKE_BUILDDIR set; one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs consistency

NHOLDERS=150

# start_set NAME: a file $tmp/NAME and NHOLDERS sleepers reading it (pids in set)
start_set() {
	local i p
	f=$tmp/$1
	echo data >"$f"
	set=()
	for i in $(seq 1 $NHOLDERS); do
		sleep 300 <"$f" &
		p=$!
		set+=("$p")
		holders+=("$p")
	done
	for p in "${set[@]}"; do
		wait_holder "$p" 0 "$f" || return 1
	done
}

# check NAME MODE: compares $rc, $tmp/out (the JSON) and /proc for the pids in
# set (plus $vp when set). MODE: all (every holder cut, exit 0), none (nothing
# cut, exit 1), whole (either), partial (--best-effort: every holder but $vp).
check() {
	local name=$1 mode=$2 p link states=()
	for p in "${set[@]}" ${vp:+"$vp"}; do
		link=$(readlink "/proc/$p/fd/0" 2>/dev/null)
		[ "$p" = "${vp:-}" ] && link=$(readlink "/proc/$p/fd/5" 2>/dev/null)
		if [ "$link" = "$DEAD_LINK" ]; then
			states+=("$p:cut")
		elif [ "$link" = "$f" ]; then
			states+=("$p:intact")
		else
			states+=("$p:other($link)")
		fi
	done
	if ! why=$(python3 - "$tmp/out" "$rc" "$mode" "${states[@]}" <<'EOF'
import json, sys
path, rc, mode, states = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
try:
    doc = json.load(open(path))
except Exception as e:
    print("no JSON report (%s)" % e); sys.exit(1)
real = dict((int(s.split(":")[0]), s.split(":", 1)[1]) for s in states)
bad = [p for p, s in real.items() if s not in ("cut", "intact")]
if bad:
    print("holders neither cut nor intact: %s" % [(p, real[p]) for p in bad]); sys.exit(1)
said = {h["pid"]: h["state"] for h in doc.get("holders") or []}
ncut = sum(1 for s in real.values() if s == "cut")
wrong = [(p, real[p], said.get(p)) for p in real if (real[p] == "cut") != (said.get(p) == "cut")]
if wrong:
    print("the report disagrees with /proc for %d holders, e.g. %s (rc %d, %d cut, errno %s)"
          % (len(wrong), wrong[:3], rc, ncut, doc.get("errno"))); sys.exit(1)
if (rc == 0) != (ncut == len(real)):
    print("exit %d with %d of %d holders cut" % (rc, ncut, len(real))); sys.exit(1)
if rc == 0 and doc.get("errno"):
    print("exit 0 with errno %s in the report" % doc.get("errno")); sys.exit(1)
if rc != 0 and not doc.get("errno"):
    print("exit %d with no errno in the report" % rc); sys.exit(1)
if mode in ("whole", "none") and ncut not in (0, len(real)):
    print("all or nothing broken: %d of %d cut (rc %d, errno %s, phase %s)"
          % (ncut, len(real), rc, doc.get("errno"), doc.get("failed_phase"))); sys.exit(1)
if mode == "all" and ncut != len(real):
    print("%d of %d cut, expected all (rc %d, errno %s)" % (ncut, len(real), rc, doc.get("errno"))); sys.exit(1)
if mode == "none" and ncut:
    print("%d cut, expected none" % ncut); sys.exit(1)
if mode == "partial" and ncut != len(real) - 1:
    print("%d of %d cut, expected all but the vfork parent" % (ncut, len(real))); sys.exit(1)
print("%d of %d cut, exit %d, errno %s" % (ncut, len(real), rc, doc.get("errno")))
EOF
	); then
		fail "consistency.$name" "$why; stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
	pass "consistency.$name"
	echo "    $name: $why"
}

# ---- success: a generous bound, every holder cut
vp=
if ! start_set ok; then
	fail consistency.success "the holders did not start"
else
	run "$R" -t 60 --json "$f"
	check success all
fi

# ---- refusal: a vfork parent (state D) cannot be stopped: nothing is cut
if ! start_set refused; then
	fail consistency.refusal "the holders did not start"
else
	start_vfork_holder "$f"
	if ! wait_vfork_holder; then
		fail consistency.refusal "the vfork holder did not start"
	else
		run "$R" -t 1 --json "$f"
		check refusal none
		# ---- partial: the same with --best-effort, every other holder cut
		run "$R" -t 1 -b --json "$f"
		check best-effort partial
	fi
	vp=
fi

# ---- timeouts under load: busy loops on every core (4 per core), tight bounds
busy=()
for i in $(seq 1 $((4 * $(nproc)))); do
	sh -c 'while :; do :; done' &
	busy+=("$!")
	holders+=("$!")
done
for t in 0.2 0.35 0.5 0.8; do
	if ! start_set "load-$t"; then
		fail "consistency.load-$t" "the holders did not start"
		continue
	fi
	run "$R" -t "$t" --json "$f"
	check "load-$t" whole
	for p in "${set[@]}"; do
		kill "$p" 2>/dev/null
	done
done
kill "${busy[@]}" 2>/dev/null
