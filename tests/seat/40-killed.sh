# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke-seat killed (SIGKILL) in the middle of a switch's revocation, twice:
# once its cutter (the process that traces the holders), once revoke-seat
# itself while its cutter traces them; a watcher kills the moment the
# cutter traces one of alice's holders. systemd starts what was killed
# again (the cutter through its socket), and the revocation is completed:
# every holder alive, running (not stopped, not traced) and answering, with
# all of its sound and camera descriptors dead.
. "$SEAT_LIB"

if ! lib_selects; then
	skip killed "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi

n=6
round() { # NAME WHICH: WHICH is "cutter" or "daemon", the one killed
	local name=$1 which=$2 h i names=() main cut victim restarts cursor killer kpid bad st tr p
	wait_for 60 user_active_on_vt alice 1 || fail "$name.setup" "alice is not active on tty1"
	for i in $(seq $n); do
		hold "k$i" alice-tty1 /dev/snd/controlC0 /dev/video0 ||
			fail "$name.holders" "holder $i did not answer"
		names+=("k$i")
	done
	# The cutter is started by revoke-seat's first request on its socket.
	systemctl start revoke-seat-cut.service
	main=$(systemctl show -p MainPID --value revoke-seat.service)
	cut=$(systemctl show -p MainPID --value revoke-seat-cut.service)
	victim=$main unit=revoke-seat.service
	[ "$which" = cutter ] && victim=$cut unit=revoke-seat-cut.service
	restarts=$(systemctl show -p NRestarts --value revoke-seat.service)
	cursor=$(journal_cursor)
	killer=$(mktemp)
	"$SEAT_AGENT" kill-when-traced "$k1_pid" "$cut" "$victim" 30 >"$killer" 2>&1 &
	kpid=$!
	sleep 0.2 # the watcher polls before the switch it waits for
	chvt 2
	if wait "$kpid"; then
		pass "$name.kill ($which: $(cat "$killer"))"
	else
		fail "$name.kill" "the watcher: $(cat "$killer")"
	fi
	restarted() {
		local now
		now=$(systemctl show -p MainPID --value "$unit")
		[ "$now" != 0 ] && [ "$now" != "$victim" ] && systemctl -q is-active "$unit"
	}
	all_cut() {
		for h in "${names[@]}"; do holder_says "$h" "EBADF EBADF" || return 1; done
	}
	if wait_for 30 all_cut; then
		pass "$name.completed (all $n holders' control and camera descriptors dead)"
	else
		bad=
		for h in "${names[@]}"; do bad="$bad $h: $(ask "$h" check);"; done
		fail "$name.completed" "30 s after the kill:$bad"
	fi
	# The daemon is started again by systemd (Restart=always); the cutter
	# by the daemon's next request on its socket.
	if [ "$which" = cutter ] || wait_for 30 restarted; then
		pass "$name.restarted ($unit: pid $(systemctl show -p MainPID --value "$unit") after $victim; revoke-seat restarts $restarts -> $(systemctl show -p NRestarts --value revoke-seat.service))"
	else
		fail "$name.restarted" "$unit is $(systemctl is-active "$unit"), MainPID $(systemctl show -p MainPID --value "$unit") (was $victim)"
	fi
	# Not damaged: each holder runs (its state not T or t), nobody traces
	# it, and it answered the checks above through its own socket.
	bad=
	for h in "${names[@]}"; do
		p=${h}_pid
		st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/${!p}/status" 2>/dev/null)
		tr=$(sed -n 's/^TracerPid:\t//p' "/proc/${!p}/status" 2>/dev/null)
		case $st in S | R) ;; *) bad="$bad pid ${!p} state '$st';" ;; esac
		[ "$tr" = 0 ] || bad="$bad pid ${!p} traced by '$tr';"
		[ "$(ask "$h" whoami | cut -d' ' -f1)" = 1000 ] || bad="$bad pid ${!p} does not answer;"
	done
	[ -z "$bad" ] && pass "$name.undamaged (every holder running, untraced, answering)" ||
		fail "$name.undamaged" "$bad"
	seat_log_since "$cursor" | sed 's/^/    revoke-seat: /'
	chvt 1
	wait_for 30 user_active_on_vt alice 1
	for h in "${names[@]}"; do release "$h"; done
	rm -f "$killer"
}

round killed.cutter cutter
round killed.daemon daemon
# The daemon, started again, found the revocation queued and finished it.
if journalctl -q -o cat -u revoke-seat.service --no-pager | grep -q "resuming the revocation from alice"; then
	pass "killed.resumed (the new revoke-seat resumed the queued revocation)"
else
	fail killed.resumed "no 'resuming the revocation from alice' in revoke-seat's log"
fi
seat_exit
