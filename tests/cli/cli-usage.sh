#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The revoke command: usage errors (exit 2), --help/--version, lookup errors
# and write errors (exit 1). Needs no holder process.
# Run by tests/run-tests with REVOKE_BUILDDIR set; prints one PASS/FAIL line per check.
. "$(dirname "$0")/cli-common.bash"
cli_runs usage

file=$tmp/file
echo data >"$file"

# name, regex the message must match, arguments...
usage_case() {
	local name=$1 re=$2
	shift 2
	run "$R" "$@"
	if [ "$rc" -ne 2 ]; then
		fail "usage.$name" "exit $rc, expected 2 (revoke $*; stderr: $err)"
	elif ! grep -Eq -- "$re" <<<"$err"; then
		fail "usage.$name" "stderr does not match /$re/: $err"
	elif [ -n "$out" ]; then
		fail "usage.$name" "printed on stdout: $out"
	else
		pass "usage.$name"
	fi
}

usage_case no-path 'no PATH'
usage_case no-path-list 'no PATH' --list
usage_case unknown-option "unrecognized option '--frobnicate'" --frobnicate "$file"
usage_case unknown-short "invalid option -- 'Z'" -Z "$file"
usage_case timeout-missing "requires an argument -- 't'" "$file" -t
usage_case timeout-word "invalid timeout 'abc'" -t abc "$file"
usage_case timeout-zero "invalid timeout '0'" -t 0 "$file"
usage_case timeout-negative "invalid timeout '-1'" -t -1 "$file"
usage_case timeout-exponent "invalid timeout '1e3'" --timeout 1e3 "$file"
usage_case timeout-inf "invalid timeout 'inf'" --timeout=inf "$file"
usage_case timeout-huge "invalid timeout '99999999'" -t 99999999 "$file"
usage_case timeout-trailing "invalid timeout '5s'" -t 5s "$file"
usage_case column-unknown 'unknown column: BOGUS' -o PID,BOGUS "$file"
usage_case column-unknown-plus 'unknown column: nope' -o +nope "$file"
usage_case column-empty 'empty column name' -o PID,,FD "$file"
usage_case engine-unknown "unknown engine 'magic'" --engine magic "$file"
usage_case discovery-unknown "unknown discovery 'x'" --discovery x "$file"
usage_case json-raw '--json cannot be combined with --raw' --json --raw "$file"
usage_case json-output '--json cannot be combined with --output' -J -o PID "$file"
usage_case json-quiet '--json cannot be combined with --quiet' -J -q "$file"
usage_case pid-word "invalid pid in 'abc' for --pid" --pid abc "$file"
usage_case pid-zero "invalid pid in '1,0' for --pid" --pid 1,0 "$file"
usage_case uid-unknown "no such user 'no-such-user-here' for --uid" --uid no-such-user-here "$file"
usage_case uid-empty "invalid user in '1,' for --uid" --uid 1, "$file"
usage_case select-umount '--cgroup cannot be combined with --umount' --cgroup / --umount "$file"
usage_case description-path "--description wants /proc/PID/fd/N, not '$file'" --description "$file"
usage_case description-self "--description wants /proc/PID/fd/N, not '/proc/self/fd/0'" --description /proc/self/fd/0
usage_case description-leading-zero "--description wants /proc/PID/fd/N, not '/proc/01/fd/0'" --description /proc/01/fd/0
usage_case description-trailing "--description wants /proc/PID/fd/N, not '/proc/1/fd/0x'" --description /proc/1/fd/0x
usage_case description-with-path 'no PATH goes with it' --description /proc/1/fd/0 "$file"
usage_case description-recheck '--description cannot be combined with --recheck' --description /proc/1/fd/0 --recheck
usage_case description-mount '--description cannot be combined with --mount' --description /proc/1/fd/0 --mount
usage_case recheck-umount '--recheck cannot be combined with --umount' --recheck --umount "$file"

# A cgroup that is not one: an error naming it, exit 1, nothing done.
run "$R" --cgroup "$tmp" "$file"
if [ "$rc" -eq 1 ] && [ "$err" = "revoke: --cgroup $tmp: not a directory of a cgroup2 file system" ]; then
	pass usage.cgroup-not-cgroup2
else
	fail usage.cgroup-not-cgroup2 "exit $rc; stderr: $err"
fi

# --help and --version
run "$R" --help
if [ "$rc" -eq 0 ] && grep -q '^ revoke \[options\] <path>' <<<"$out" && grep -q -- '--best-effort' <<<"$out" &&
	grep -q 'Available output columns' <<<"$out" && [ -z "$err" ]; then
	pass help
else
	fail help "exit $rc; stdout: $(head -3 <<<"$out"); stderr: $err"
fi

run "$R" -h
[ "$rc" -eq 0 ] && grep -q -- '--list' <<<"$out" && pass help-short || fail help-short "exit $rc"

# --help names every option, every column, the exit status, uninspected
# processes, timeouts, the dead descriptor and the signals.
run "$R" --help
missing=
for w in --list --best-effort --timeout --no-follow --no-hangup --engine --discovery --json --raw \
	--noheadings --output --quiet --help --version 'Exit status:' ' 0 ' ' 1 ' ' 2 ' uninspected \
	'timed out after' '/memfd:revoked (deleted)' 'earlier revoke left' SIGINT SIGTERM SIGHUP SIGPIPE \
	PATH PID USER UID COMMAND TYPE FD FLAGS RANGE OFFSET STATE ERROR ERRNO DEV INODE OPEN_FLAGS \
	CLOEXEC START END PROT SHARED STOPPED_NS; do
	grep -qF -- "$w" <<<"$out" || missing="$missing '$w'"
done
[ "$rc" -eq 0 ] && [ -z "$missing" ] && pass help-complete || fail help-complete "exit $rc; missing:$missing"

run "$R" --version
if [ "$rc" -eq 0 ] && grep -Eq '^revoke from librevoke [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out"; then
	pass version
else
	fail version "exit $rc; stdout: $out; stderr: $err"
fi

# Lookup errors: exit 1, the message names the path and the reason.
run "$R" "$tmp/missing"
if [ "$rc" -eq 1 ] && grep -qx "revoke: $tmp/missing: No such file or directory" <<<"$err"; then
	pass enoent
else
	fail enoent "exit $rc; stderr: $err"
fi

run "$R" --list "$tmp/missing"
[ "$rc" -eq 1 ] && grep -q "$tmp/missing: No such file or directory" <<<"$err" && pass enoent-list ||
	fail enoent-list "exit $rc; stderr: $err"

# Several paths, one missing: the culprit is named, the others are not.
run "$R" "$file" "$tmp/missing" "$file"
if [ "$rc" -eq 1 ] && grep -qx "revoke: $tmp/missing: No such file or directory" <<<"$err" &&
	! grep -q "$file:" <<<"$err"; then
	pass enoent-among-several
else
	fail enoent-among-several "exit $rc; stderr: $err"
fi

run "$R" "$file/sub"
[ "$rc" -eq 1 ] && grep -q "$file/sub: Not a directory" <<<"$err" && pass enotdir ||
	fail enotdir "exit $rc; stderr: $err"

ln -s loop1 "$tmp/loop2"
ln -s loop2 "$tmp/loop1"
run "$R" "$tmp/loop1"
[ "$rc" -eq 1 ] && grep -q "$tmp/loop1: Too many levels of symbolic links" <<<"$err" && pass eloop ||
	fail eloop "exit $rc; stderr: $err"

long=$tmp/$(printf 'x%.0s' $(seq 1 300))
run "$R" "$long"
[ "$rc" -eq 1 ] && grep -q "File name too long" <<<"$err" && pass enametoolong ||
	fail enametoolong "exit $rc; stderr: $err"

# A file nobody holds: revoking it succeeds and changes nothing.
run "$R" "$file"
[ "$rc" -eq 0 ] && [ -z "$err" ] && pass no-holders || fail no-holders "exit $rc; stderr: $err"

run "$R" -l -t 0.5 "$file"
[ "$rc" -eq 0 ] && [ -z "$err" ] && pass timeout-decimal || fail timeout-decimal "exit $rc; stderr: $err"

# Write errors are errors.
# With no holder the table is empty; --json always writes the report.
"$R" --list --json "$file" >/dev/full 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "write error: No space left on device" "$tmp/err"; then
	pass write-error-json
else
	fail write-error-json "exit $rc; stderr: $(cat "$tmp/err")"
fi

"$R" --help >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "write error" "$tmp/err" && pass write-error-help ||
	fail write-error-help "exit $rc; stderr: $(cat "$tmp/err")"

"$R" --version >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "write error" "$tmp/err" && pass write-error-version ||
	fail write-error-version "exit $rc; stderr: $(cat "$tmp/err")"

# A path of 70,000 bytes is named by its beginning and end, not echoed whole.
long=/$(printf 'a/%.0s' $(seq 1 35000))x
run "$R" "$long"
if [ "$rc" -eq 1 ] && [ "${#err}" -lt 300 ] && grep -q '^revoke: /a/a/.*\.\.\..*/a/x: File name too long$' <<<"$err"; then
	pass long-path-shortened
else
	fail long-path-shortened "exit $rc; ${#err} bytes on stderr: ${err:0:400}"
fi
exit 0
