# SPDX-License-Identifier: LGPL-2.1-or-later
# A switch while a revocation runs waits for it, never races it: alice
# leaves (chvt 2) and, the moment the cutter traces her holder, switches back
# (chvt 1), so bob, who was at the seat for that moment, leaves too. alice's
# revocation, decided at her departure, completes; then bob's runs: his
# descriptors (he is in the audio group) die after hers, and the journal has
# all of alice's entries before any of bob's.
. "$SEAT_LIB"

if ! lib_selects; then
	skip queued "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
wait_for 60 user_active_on_vt alice 1 || fail queued.setup "alice is not active on tty1"
hold a alice-tty1 /dev/snd/controlC0 /dev/video0
hold b bob-tty2 /dev/snd/controlC0
systemctl start revoke-seat-cut.service
cut=$(systemctl show -p MainPID --value revoke-seat-cut.service)
cursor=$(journal_cursor)
out=$(mktemp)
"$SEAT_AGENT" run-when-traced "$a_pid" "$cut" 30 chvt 1 >"$out" 2>&1 &
wpid=$!
sleep 0.2 # the watcher polls before the switch it waits for
chvt 2
if wait "$wpid"; then
	pass "queued.switch_back ($(cat "$out"))"
else
	fail queued.switch_back "the watcher: $(cat "$out")"
fi
rm -f "$out"
both() { holder_says a "EBADF EBADF" && holder_says b EBADF; }
if wait_for 20 both && wait_for 10 user_active_on_vt alice 1; then
	pass "queued.both (alice's revocation completed, then bob's ran: both holders cut; alice at the seat)"
else
	fail queued.both "alice's holder says $(ask a check), bob's $(ask b check); alice active: $(user_active_on_vt alice 1 && echo yes || echo no)"
fi
order=$(revocations_since "$cursor" | awk '{print $1}' | uniq | tr '\n' ' ')
if [ "$order" = "alice bob " ]; then
	pass "queued.order (the journal: alice's devices, then bob's)"
else
	fail queued.order "the journal's users in order: '$order'"
fi
seat_log_since "$cursor" | sed 's/^/    revoke-seat: /'
release a
release b
seat_exit
