# SPDX-License-Identifier: LGPL-2.1-or-later
# A sound card plugged in while revoke-seat runs (snd-dummy: /dev/snd/*C1*),
# then logind restarted under it: revoke-seat follows both. alice holds the
# new card's playback device and the first card's control device; at the
# next switch both are cut, with revoke-seat the same process throughout.
. "$SEAT_LIB"

if ! lib_selects; then
	skip hotplug "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
wait_for 60 user_active_on_vt alice 1 || fail hotplug.setup "alice is not active on tty1"
main=$(systemctl show -p MainPID --value revoke-seat.service)
cursor=$(journal_cursor)

# Hotplug: a second card, tagged uaccess by udev, alice's by logind's ACL.
modprobe snd-dummy index=1 pcm_devs=1 pcm_substreams=1 2>/dev/null
card=/dev/snd/pcmC1D0p
acl_alice() { [ -c $card ] && getfacl -p $card 2>/dev/null | grep -q '^user:alice:rw'; }
seen() { seat_log_since "$cursor" | grep -q "added $card"; }
if wait_for 20 acl_alice && wait_for 10 seen; then
	pass "hotplug.added (snd-dummy's $card, alice's by logind's ACL; revoke-seat: $(seat_log_since "$cursor" | grep "added $card"))"
else
	fail hotplug.added "$card: $(ls -l $card 2>&1); ACL $(getfacl -cp $card 2>&1 | tr '\n' ' '); revoke-seat said: $(seat_log_since "$cursor" | tail -n 3 | tr '\n' ';')"
fi

# logind restarted: its sessions come back from /run/systemd, under a new
# owner of its bus name.
systemctl restart systemd-logind.service
if wait_for 30 user_active_on_vt alice 1 &&
	[ "$(systemctl show -p MainPID --value revoke-seat.service)" = "$main" ] &&
	systemctl -q is-active revoke-seat.service; then
	pass "hotplug.logind_restarted (logind pid $(systemctl show -p MainPID --value systemd-logind.service); revoke-seat still pid $main)"
else
	fail hotplug.logind_restarted "after restarting logind: revoke-seat $(systemctl is-active revoke-seat.service), pid $(systemctl show -p MainPID --value revoke-seat.service) (was $main); sessions: $(loginctl list-sessions --no-legend | tr '\n' ';')"
fi

hold h alice-tty1 $card /dev/snd/controlC0
if [ "$(ask h check)" = "ok ok" ]; then
	pass "hotplug.holder (pid $h_pid holds $card and /dev/snd/controlC0)"
else
	fail hotplug.holder "the holder says $(ask h check) ($h_fds)"
fi
cursor=$(journal_cursor)
chvt 2
if wait_for 10 holder_says h "EBADF EBADF"; then
	pass "hotplug.cut (the new card's and the first card's descriptors dead after the switch)"
else
	fail hotplug.cut "after chvt 2 the holder says $(ask h check); revoke-seat said: $(seat_log_since "$cursor" | tr '\n' ';')"
fi
seat_log_since "$cursor" | sed 's/^/    revoke-seat: /'
chvt 1
wait_for 30 user_active_on_vt alice 1
release h
# What the scenario plugged in goes again.
modprobe -r snd-dummy 2>/dev/null
wait_for 10 test ! -e $card || fail hotplug.cleanup "$card still there after modprobe -r snd-dummy"
seat_exit
