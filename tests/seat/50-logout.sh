# SPDX-License-Identifier: LGPL-2.1-or-later
# alice logs out while a program she left running in the background records
# from the microphone. logind keeps her session, "closing", active on the
# seat with her ACL, and says nothing on the bus; revoke-seat sees the
# session close (/run/systemd/sessions) and cuts the recorder's descriptor.
# Then alice logs in again, as the next steps expect.
. "$SEAT_LIB"

if ! lib_selects; then
	skip logout "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
wait_for 60 user_active_on_vt alice 1 || fail logout.setup "alice is not active on tty1"
sid=$(session_on_vt alice 1)

hold rec alice-tty1 /dev/snd/pcmC0D0c
if [ "$(ask rec check)" = ok ]; then
	pass "logout.recorder (pid $rec_pid of alice's session $sid holds the microphone)"
else
	fail logout.recorder "the recorder says $(ask rec check) ($rec_fds)"
fi

# No autologin on tty1 once she is out.
touch /run/revoke-guest/no-autologin-tty1
cursor=$(journal_cursor)
hold shell alice-tty1 /dev/null
t0=$(date +%s%N)
ask shell logout >/dev/null
release shell
if wait_for 10 holder_says rec EBADF; then
	ms=$((($(date +%s%N) - t0) / 1000000))
	state=$(session_prop "$sid" State)
	pass "logout.cut (the recorder's descriptor dead $ms ms after the logout; session $sid is '$state')"
else
	fail logout.cut "10 s after the logout the recorder says $(ask rec check); session $sid: $(loginctl show-session "$sid" -p State -p Active | tr '\n' ' '); revoke-seat said: $(seat_log_since "$cursor" | tail -n 4 | tr '\n' ';')"
fi
if [ "$(fd_link rec 0)" = "/memfd:revoked (deleted)" ]; then
	pass "logout.dead (/proc/$rec_pid/fd/${rec_fds%% *} -> /memfd:revoked (deleted))"
else
	fail logout.dead "/proc/$rec_pid/fd/${rec_fds%% *} -> $(fd_link rec 0)"
fi
journaled() {
	entries=$(revocations_since "$cursor")
	echo "$entries" | grep -q "^alice /dev/snd/pcmC0D0c logout 1 "
}
if wait_for 10 journaled; then
	pass "logout.journal ($entries)"
else
	fail logout.journal "revoke-seat's entries: $(echo "$entries" | tr '\n' ';')"
fi
seat_log_since "$cursor" | sed 's/^/    revoke-seat: /'
# What logind does meanwhile, for the record (revoke-seat(8), NOTES).
acl=$(getfacl -cp /dev/snd/pcmC0D0c 2>/dev/null | grep '^user:' | tr '\n' ' ')
echo "    while session $sid is closing, logind's ACL of /dev/snd/pcmC0D0c: ${acl:-none}"

# The recorder ends; the session goes; alice logs in again.
release rec
rm -f /run/revoke-guest/no-autologin-tty1
systemctl restart getty@tty1.service
if wait_for 60 user_active_on_vt alice 1 && wait_for 30 agent_up alice-tty1; then
	pass "logout.login_again (alice at the seat again: session $(session_on_vt alice 1))"
else
	fail logout.login_again "alice did not log in again on tty1: $(loginctl list-sessions --no-legend | tr '\n' ';')"
fi
seat_exit
