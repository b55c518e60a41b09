# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke-seat.conf decides the classes: with Classes=sound (read again on
# `systemctl reload`), a switch cuts alice's sound card and leaves her camera;
# a line it does not know is warned about and skipped. Then revoke-seat by
# hand, as an admin would try it: --dry-run, with no cutter (in its own
# process), logs what it would revoke and cuts nothing.
. "$SEAT_LIB"

if ! lib_selects; then
	skip config "$(revoke --version 2>&1) cannot revoke from one user's processes (librevoke 1.4 can), so revoke-seat revokes nothing"
	exit 77
fi
conf=/etc/revoke/seat.conf
cp "$conf" "$conf.orig"
restore() {
	mv "$conf.orig" "$conf"
	systemctl reload revoke-seat.service
}
wait_for 60 user_active_on_vt alice 1 || fail config.setup "alice is not active on tty1"

cursor=$(journal_cursor)
printf '[Seat]\nClasses=sound\nNoSuchKey=1\n' >"$conf"
systemctl reload revoke-seat.service
reread() { seat_log_since "$cursor" | grep -q "seat.conf read again"; }
warned() { journalctl -q -o cat -u revoke-seat --no-pager | grep -q "seat.conf:3: unknown key NoSuchKey=, ignored"; }
# The warning comes from the start's reading; the reload reads silently.
systemctl restart revoke-seat.service
if wait_for 10 warned && wait_for 10 systemctl -q is-active revoke-seat.service; then
	pass "config.warning (seat.conf:3: unknown key NoSuchKey=, ignored; revoke-seat running)"
else
	fail config.warning "no warning for NoSuchKey= in revoke-seat's log, or it is not running ($(systemctl is-active revoke-seat.service))"
fi
wait_for 10 reread || true

hold h alice-tty1 /dev/snd/controlC0 /dev/video0
cursor=$(journal_cursor)
chvt 2
if wait_for 10 holder_says h "EBADF ok"; then
	pass "config.classes (Classes=sound: the sound card's descriptor dead, the camera's alive)"
else
	fail config.classes "after chvt 2 with Classes=sound, the holder says $(ask h check) (want EBADF ok)"
fi
chvt 1
wait_for 30 user_active_on_vt alice 1
release h
restore

# By hand: the service stopped, revoke-seat --dry-run in the foreground,
# revoking in its own process (no cutter).
systemctl stop revoke-seat.service
hold h alice-tty1 /dev/snd/controlC0 /dev/video0
log=$(mktemp)
REVOKE_SEAT_CUTTER=- revoke-seat --dry-run 2>"$log" &
dpid=$!
said() { grep -q "would revoke from alice" "$log" && grep -q "no cutter at -" "$log"; }
started() { grep -q "following logind's seats (dry run" "$log"; }
wait_for 10 started
chvt 2
if wait_for 10 said && [ "$(ask h check)" = "ok ok" ]; then
	pass "config.dry_run (revoke-seat --dry-run by hand: $(grep -m1 "would revoke from alice" "$log" | sed 's/^revoke-seat: //'); alice's descriptors alive)"
else
	fail config.dry_run "the holder says $(ask h check); revoke-seat --dry-run said: $(tr '\n' ';' <"$log")"
fi
kill "$dpid"
wait "$dpid"
rm -f "$log"
chvt 1
wait_for 30 user_active_on_vt alice 1
release h
systemctl start revoke-seat.service
wait_for 10 systemctl -q is-active revoke-seat.service || fail config.restart "revoke-seat did not start again"
seat_exit
