# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke-seat as the package installs it: its unit enabled and running
# (ready: it read logind), sandboxed within 3.0, and it sees the seat as
# logind and udev do: alice at seat0, the sound and video nodes revoked from
# who leaves, the render node kept (revoke-seat.conf's default classes).
# With a library older than 1.4 it revokes nothing.
. "$SEAT_LIB"

if [ "$(systemctl is-enabled revoke-seat.service 2>&1)" = enabled ] &&
	wait_for 30 systemctl -q is-active revoke-seat.service; then
	pass "daemon.unit (enabled by the package, running: $(systemctl show -p StatusText --value revoke-seat.service))"
else
	fail daemon.unit "revoke-seat.service is $(systemctl is-enabled revoke-seat.service 2>&1)/$(systemctl is-active revoke-seat.service 2>&1): $(journalctl -u revoke-seat -o cat --no-pager | tail -n 5 | tr '\n' ';')"
fi

if [ "$(systemctl is-enabled revoke-seat-cut.socket 2>&1)" = enabled ] &&
	systemctl -q is-active revoke-seat-cut.socket && [ -S /run/revoke/seat-cut.sock ] &&
	[ "$(stat -c '%a %U' /run/revoke/seat-cut.sock)" = "600 root" ]; then
	pass "daemon.cutter_socket (enabled, listening on /run/revoke/seat-cut.sock, root's alone)"
else
	fail daemon.cutter_socket "revoke-seat-cut.socket is $(systemctl is-enabled revoke-seat-cut.socket 2>&1)/$(systemctl is-active revoke-seat-cut.socket 2>&1); $(ls -l /run/revoke/seat-cut.sock 2>&1)"
fi

# The daemon, which reads the bus, udev and its configuration, has no
# capability and a system call filter; the cutter may have no filter (see
# revoke-seat-cut.service): its figure is said, not judged.
exposure() {
	systemd-analyze security "$1" --no-pager 2>&1 |
		sed -n "s/.*Overall exposure level for $1: \([0-9.]*\).*/\1/p"
}
score=$(exposure revoke-seat.service)
cutscore=$(exposure revoke-seat-cut.service)
caps=$(systemctl show -p CapabilityBoundingSet --value revoke-seat.service)
if [ -n "$score" ] && awk "BEGIN { exit !($score <= 3.0) }" && [ -z "$caps" ]; then
	pass "daemon.security (systemd-analyze security: revoke-seat.service $score, no capability; revoke-seat-cut.service $cutscore)"
else
	fail daemon.security "revoke-seat.service: exposure '${score:-?}' (at most 3.0), capabilities '$caps' (none)"
fi

list=$(revoke-seat --list 2>&1)
echo "$list" | sed 's/^/    # revoke-seat --list: /'
bad=
echo "$list" | grep -q "^seat0:.*alice(session [0-9]*, uid 1000, at the seat)" || bad="$bad alice not at seat0;"
for dev in /dev/snd/controlC0 /dev/snd/pcmC0D0p /dev/snd/pcmC0D0c /dev/video0; do
	echo "$list" | grep -qE "^  revoke [a-z0-9_]+ +$dev\$" || bad="$bad $dev not revoked;"
done
echo "$list" | grep -q "renderD128" && bad="$bad the render node would be revoked;"
[ -z "$bad" ] && pass "daemon.list (alice at seat0; sound and video revoked from who leaves, the render node kept)" ||
	fail daemon.list "$bad"

# With a library that cannot select one user's processes (before 1.4),
# revoke-seat must revoke nothing (the library would ignore the selection
# and cut everyone): a switch leaves alice's descriptors alone, and the
# journal says why.
if ! lib_selects; then
	hold a1 alice-tty1 /dev/snd/controlC0
	cursor=$(journal_cursor)
	chvt 2
	said() { seat_log_since "$cursor" | grep -q "cannot revoke from one user's processes"; }
	if wait_for 10 said && [ "$(ask a1 check)" = ok ]; then
		pass "daemon.old_library (librevoke $(revoke --version | sed 's/.* //'): a switch cut nothing; revoke-seat said: $(seat_log_since "$cursor" | grep "cannot revoke" | tail -n 1))"
	else
		fail daemon.old_library "after chvt 2 alice's holder says $(ask a1 check); revoke-seat said: $(seat_log_since "$cursor" | tr '\n' ';')"
	fi
	chvt 1
	wait_for 30 user_active_on_vt alice 1
	release a1
fi
seat_exit
