# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke-seat killed (SIGKILL) in the middle of a switch's revocation: the
# moment it traces one of alice's holders, a watcher kills it. systemd
# starts it again, and it finishes the revocation it found queued in its
# runtime directory: every holder alive, running (not stopped, not traced)
# and answering, with all of its sound and camera descriptors dead.
. "$SEAT_LIB"

if ! lib_selects; then
	skip killed "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
wait_for 60 user_active_on_vt alice 1 || fail killed.setup "alice is not active on tty1"

n=8
names=()
for i in $(seq $n); do
	hold "k$i" alice-tty1 /dev/snd/controlC0 /dev/video0 || fail killed.holders "holder $i did not answer"
	names+=("k$i")
done
pid1=$k1_pid
main=$(systemctl show -p MainPID --value revoke-seat.service)
restarts=$(systemctl show -p NRestarts --value revoke-seat.service)
cursor=$(journal_cursor)
killer=$(mktemp)
"$SEAT_AGENT" kill-when-traced "$pid1" "$main" 30 >"$killer" 2>&1 &
kpid=$!
# The watcher polls before the switch it waits for.
sleep 0.2
chvt 2
wait "$kpid"
krc=$?
if [ "$krc" = 0 ]; then
	pass "killed.kill ($(cat "$killer"))"
else
	fail killed.kill "the watcher: $(cat "$killer")"
fi

restarted() {
	local now
	now=$(systemctl show -p MainPID --value revoke-seat.service)
	[ "$now" != 0 ] && [ "$now" != "$main" ] && systemctl -q is-active revoke-seat.service
}
if wait_for 30 restarted; then
	pass "killed.restarted (systemd started revoke-seat again: pid $(systemctl show -p MainPID --value revoke-seat.service), restarts $restarts -> $(systemctl show -p NRestarts --value revoke-seat.service))"
else
	fail killed.restarted "revoke-seat is $(systemctl is-active revoke-seat.service), MainPID $(systemctl show -p MainPID --value revoke-seat.service) (was $main)"
fi

all_cut() {
	local h
	for h in "${names[@]}"; do holder_says "$h" "EBADF EBADF" || return 1; done
}
if wait_for 30 all_cut; then
	pass "killed.completed (all $n holders' control and camera descriptors dead after the restart)"
else
	bad=
	for h in "${names[@]}"; do bad="$bad $h: $(ask "$h" check);"; done
	fail killed.completed "30 s after the restart:$bad"
fi

# Not damaged: each holder runs (its state not T or t), nobody traces it,
# and it answered the checks above through its own socket.
bad=
for h in "${names[@]}"; do
	p=${h}_pid
	st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/${!p}/status" 2>/dev/null)
	tr=$(sed -n 's/^TracerPid:\t//p' "/proc/${!p}/status" 2>/dev/null)
	case $st in S | R) ;; *) bad="$bad pid ${!p} state '$st';" ;; esac
	[ "$tr" = 0 ] || bad="$bad pid ${!p} traced by '$tr';"
	[ "$(ask "$h" whoami | cut -d' ' -f1)" = 1000 ] || bad="$bad pid ${!p} does not answer;"
done
[ -z "$bad" ] && pass "killed.undamaged (every holder running, untraced, answering)" ||
	fail killed.undamaged "$bad"

log=$(seat_log_since "$cursor")
echo "$log" | sed 's/^/    revoke-seat: /'
if echo "$log" | grep -q "resuming the revocation from alice (uid 1000, switch)"; then
	pass "killed.resumed (the new revoke-seat resumed the queued revocation)"
else
	fail killed.resumed "no 'resuming the revocation from alice' in revoke-seat's log"
fi

chvt 1
wait_for 30 user_active_on_vt alice 1
for h in "${names[@]}"; do release "$h"; done
rm -f "$killer"
seat_exit
