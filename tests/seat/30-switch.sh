# SPDX-License-Identifier: LGPL-2.1-or-later
# A switch of user, as a person makes it: alice's programs hold the sound
# card's control and PCM devices, the camera and the render node (one of them
# under a seccomp filter, as a sound server or a browser); bob's (he
# is in the audio and video groups) hold the control device and the camera.
# `chvt 2` makes bob's session active: alice's sound and video descriptors
# die (EBADF, /memfd:revoked), her render node's does not, bob's are
# untouched; the journal has one entry per device revoked. `chvt 1`: alice
# opens them all again (logind's ACL is hers again), and bob, who left,
# loses his.
. "$SEAT_LIB"

if ! lib_selects; then
	skip switch "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
wait_for 60 user_active_on_vt alice 1 || fail switch.setup "alice is not active on tty1"

hold a1 alice-tty1 /dev/snd/controlC0 /dev/snd/pcmC0D0p /dev/dri/renderD128
hold a2 alice-tty1 /dev/snd/pcmC0D0c /dev/video0 /dev/snd/controlC0
# Under a seccomp filter, as Debian 12's pipewire.service and browsers are.
sc=$(ask a2 seccomp)
hold b1 bob-tty2 /dev/snd/controlC0 /dev/video0
before="alice $(ask a1 check) / $(ask a2 check) ($sc), bob $(ask b1 check)"
if [ "$before" = "alice ok ok ok / ok ok ok (ok), bob ok ok" ]; then
	pass "switch.holders (alice: pid $a1_pid, pid $a2_pid under a seccomp filter; bob: pid $b1_pid)"
else
	fail switch.holders "before the switch: $before"
fi

cursor=$(journal_cursor)
t0=$(date +%s%N)
chvt 2
alice_cut() { holder_says a1 "EBADF EBADF ok" && holder_says a2 "EBADF EBADF EBADF"; }
if wait_for 10 alice_cut; then
	ms=$((($(date +%s%N) - t0) / 1000000))
	links="$(fd_link a1 0) $(fd_link a1 1) $(fd_link a2 0) $(fd_link a2 1) | $(fd_link a1 2)"
	if [ "$links" = "/memfd:revoked (deleted) /memfd:revoked (deleted) /memfd:revoked (deleted) /memfd:revoked (deleted) | /dev/dri/renderD128" ]; then
		pass "switch.cut (alice's sound and video descriptors dead $ms ms after chvt 2; her render node alive)"
	else
		fail switch.cut "alice's descriptors lead to: $links"
	fi
else
	fail switch.cut "10 s after chvt 2, alice's holders say: $(ask a1 check) / $(ask a2 check) (want EBADF EBADF ok / EBADF EBADF EBADF); revoke-seat said: $(seat_log_since "$cursor" | tail -n 5 | tr '\n' ';')"
fi
if user_active_on_vt bob 2 && [ "$(ask b1 check)" = "ok ok" ]; then
	pass "switch.bob_untouched (bob, now at the seat, still uses the control device and the camera)"
else
	fail switch.bob_untouched "bob active: $(user_active_on_vt bob 2 && echo yes || echo no); his holder says: $(ask b1 check)"
fi

# One entry per device revoked, each alice's; none for the render node or bob.
journaled() {
	entries=$(revocations_since "$cursor")
	for dev in /dev/snd/controlC0 /dev/snd/pcmC0D0p /dev/snd/pcmC0D0c /dev/video0; do
		echo "$entries" | grep -q "^alice $dev switch [0-9]" || return 1
	done
}
if wait_for 10 journaled && ! echo "$entries" | grep -qE "renderD128|^bob "; then
	echo "$entries" | sed 's/^/    journal: /'
	pass "switch.journal ($(echo "$entries" | wc -l) entries: alice's sound and video devices, reason switch)"
else
	fail switch.journal "revoke-seat's entries: $(echo "$entries" | tr '\n' ';')"
fi
seat_log_since "$cursor" | sed 's/^/    revoke-seat: /'

# Back to alice: logind gives her the ACL again, and the devices her dead
# descriptors held are free (a PCM opens once at a time).
cursor=$(journal_cursor)
chvt 1
acl_alice() { getfacl -p /dev/snd/pcmC0D0c 2>/dev/null | grep -q '^user:alice:rw'; }
if wait_for 10 user_active_on_vt alice 1 && wait_for 10 acl_alice; then
	again="$(ask a1 reopen) / $(ask a2 reopen)"
	if [ "$again" = "ok ok ok / ok ok ok" ]; then
		pass "switch.back (alice at the seat again opens all of them anew)"
	else
		fail switch.back "alice's opens after chvt 1: $again"
	fi
else
	fail switch.back "alice not back at the seat with the ACL: $(getfacl -cp /dev/snd/pcmC0D0c | tr '\n' ' ')"
fi
if wait_for 10 holder_says b1 "EBADF EBADF"; then
	pass "switch.bob_left (bob, who left the seat, lost his descriptors)"
else
	fail switch.bob_left "10 s after chvt 1, bob's holder says $(ask b1 check)"
fi
release a1
release a2
release b1
seat_exit
