# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the systemd guest's scenarios (tests/seat/[0-9]*.sh), which run
# as root in the guest (scripts/run-systemd-guest): PASS/FAIL/SKIP lines,
# bounded waits, holders in the users' sessions (through their seat agents,
# tests/seat/seat-agent.c) or of the scenario itself, logind's view.

SEAT_AGENT=${SEAT_AGENT:-/usr/local/lib/revoke-guest/seat-agent}
AGENTS=/run/revoke-guest/agents
seat_failed=0

pass() { echo "PASS seat.$1"; }
fail() {
	echo "FAIL seat.$1: $2"
	seat_failed=1
}
skip() { echo "SKIP seat.$1: $2"; }
# The scenario's exit status: 1 when a case failed.
seat_exit() { exit "$seat_failed"; }

# wait_for SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds;
# 1 when it never did within SECONDS.
wait_for() {
	local end=$(($(date +%s%N) + $1 * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# logind's view, through loginctl.
active_session() { loginctl show-seat seat0 -p ActiveSession --value 2>/dev/null; }
session_prop() { loginctl show-session "$1" -p "$2" --value 2>/dev/null; }
# The session of USER on VT N (its id), or nothing.
session_on_vt() {
	local id
	for id in $(loginctl list-sessions --no-legend 2>/dev/null | awk '{print $1}'); do
		if [ "$(session_prop "$id" Name)" = "$1" ] && [ "$(session_prop "$id" VTNr)" = "$2" ] &&
			[ "$(session_prop "$id" State)" != closing ]; then
			echo "$id"
			return 0
		fi
	done
	return 1
}
user_active_on_vt() { # USER N
	local id
	id=$(session_on_vt "$1" "$2") && [ "$(active_session)" = "$id" ]
}
agent_up() { [ -S "$AGENTS/$1.sock" ]; } # USER-TTY

# hold NAME WHO PATH...: a holder of each PATH. WHO is USER-TTY (a process of
# that user's session, served by its agent) or "root" (a child of the
# scenario). Sets NAME_pid, NAME_fds (the descriptors, "-ERRNO" where the
# open failed) and the channel ask() uses; 1 when the holder did not answer.
hold() {
	local name=$1 who=$2 dir line w r bg
	shift 2
	dir=$(mktemp -d)
	mkfifo "$dir/in" "$dir/out"
	if [ "$who" = root ]; then
		"$SEAT_AGENT" hold "$@" <"$dir/in" >"$dir/out" &
	else
		"$SEAT_AGENT" client "$AGENTS/$who.sock" <"$dir/in" >"$dir/out" &
	fi
	bg=$!
	exec {w}>"$dir/in" {r}<"$dir/out"
	rm -rf "$dir"
	[ "$who" = root ] || echo "hold $*" >&"$w"
	line=
	read -r -t 10 line <&"$r"
	declare -g "${name}_w=$w" "${name}_r=$r" "${name}_bg=$bg"
	set -- $line
	[ "${1:-}" = held ] || return 1
	declare -g "${name}_pid=$2"
	shift 2
	declare -g "${name}_fds=$*"
}

# ask NAME COMMAND: the holder's answer to COMMAND (check, reopen, whoami),
# without its first word; nothing (and 1) if it gave none within 10 s.
ask() {
	local w r line
	w=${1}_w r=${1}_r
	echo "$2" >&"${!w}" || return 1
	read -r -t 10 line <&"${!r}" || return 1
	echo "${line#* }"
}

# release NAME: the holder exits; its channel is closed and reaped.
release() {
	local wn=${1}_w rn=${1}_r bn=${1}_bg w r bg
	w=${!wn:-} r=${!rn:-} bg=${!bn:-}
	[ -n "$w" ] || return 0
	echo exit >&"$w" 2>/dev/null
	exec {w}>&- {r}<&-
	wait "$bg" 2>/dev/null
	declare -g "${1}_w="
}

# fd_link NAME I: where the holder's I-th descriptor (from 0) leads now.
fd_link() {
	local pn=${1}_pid fn=${1}_fds i=$2
	set -- ${!fn}
	shift "$i"
	readlink "/proc/${!pn}/fd/$1" 2>&1
}

# revoke-seat needs librevoke's selection of one user's processes (1.4).
lib_selects() {
	local v
	v=$(revoke --version 2>/dev/null | sed -n 's/^revoke from librevoke \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $v
	[ -n "${1:-}" ] && { [ "$1" -gt 1 ] || { [ "$1" = 1 ] && [ "$2" -ge 4 ]; }; }
}

# The journal's position now, for revocations_since.
journal_cursor() { journalctl -q -n 0 --show-cursor --no-pager 2>/dev/null | sed -n 's/^-- cursor: //p'; }

# revocations_since CURSOR: revoke-seat's entries for devices since CURSOR,
# one line each: "USER DEVICE REASON HOLDERS PRIORITY SINCE_LEFT_USEC".
revocations_since() {
	local line f out
	# No match on the command line: with one, --after-cursor skips the
	# first matching entry when the cursor's own entry does not match.
	journalctl -q --no-pager -o json --after-cursor "$1" 2>/dev/null |
		grep -F '"MESSAGE_ID":"0e59f55eb8864b86bf9218f23a7a36c9"' | while read -r line; do
		out=
		for f in REVOKE_USER REVOKE_DEVICE REVOKE_REASON REVOKE_HOLDERS PRIORITY \
			REVOKE_SINCE_LEFT_USEC; do
			out="$out $(echo "$line" | grep -o "\"$f\":\"[^\"]*\"" | cut -d'"' -f4)"
		done
		echo "${out# }"
	done
}

# The messages of revoke-seat since CURSOR.
seat_log_since() {
	journalctl -q --no-pager -o json --after-cursor "$1" 2>/dev/null |
		grep -F '"_SYSTEMD_UNIT":"revoke-seat.service"' | grep -o '"MESSAGE":"[^"]*"' | cut -d'"' -f4
}

# holder_says NAME WANT: the holder's check answer is WANT.
holder_says() { [ "$(ask "$1" check)" = "$2" ]; }
