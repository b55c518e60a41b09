# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest is what the other scenarios take it for: systemd is PID 1, logind
# has alice active on tty1 and bob in the background on tty2 (both logged in
# by their gettys, their agents listening), and the seat's devices that udev
# tags "uaccess" are there, with logind's ACL for the active user only.
. "$SEAT_LIB"

exe=$(readlink /proc/1/exe)
case $exe in
*/systemd) pass "guest.pid1 ($exe)" ;;
*) fail guest.pid1 "PID 1 is $exe, not systemd" ;;
esac

# The logins happen while this runs: a bound, not a delay.
if wait_for 120 user_active_on_vt alice 1 && wait_for 60 agent_up alice-tty1; then
	pass "guest.alice (session $(session_on_vt alice 1) active on tty1)"
else
	fail guest.alice "alice is not active on tty1 (seat0 ActiveSession '$(active_session)'; $(loginctl list-sessions --no-legend | tr '\n' ';'))"
fi
if wait_for 60 session_on_vt bob 2 >/dev/null && wait_for 60 agent_up bob-tty2; then
	id=$(session_on_vt bob 2)
	if [ "$(session_prop "$id" Active)" = no ]; then
		pass "guest.bob (session $id on tty2, in the background)"
	else
		fail guest.bob "bob's session $id on tty2 is active: $(loginctl show-session "$id")"
	fi
else
	fail guest.bob "bob has no session on tty2 ($(loginctl list-sessions --no-legend | tr '\n' ';'))"
fi

# The devices of the seat's scenarios: tagged uaccess by udev, and alice's by
# logind's ACL (bob's not).
for dev in /dev/snd/controlC0 /dev/snd/pcmC0D0p /dev/snd/pcmC0D0c /dev/video0 /dev/dri/renderD128; do
	name=guest.device$(echo "$dev" | tr / .)
	if [ ! -c "$dev" ]; then
		fail "$name" "no $dev ($(ls /dev/snd /dev/dri /dev/video* 2>&1 | tr '\n' ' '))"
		continue
	fi
	tags=$(udevadm info --query=property --name="$dev" | sed -n 's/^CURRENT_TAGS=//p')
	case $tags in
	*:uaccess:*) ;;
	*)
		fail "$name" "udev did not tag $dev uaccess (CURRENT_TAGS=$tags)"
		continue
		;;
	esac
	acl() { getfacl -p "$dev" 2>/dev/null | grep -q "^user:$1:rw"; }
	if wait_for 30 acl alice && ! acl bob; then
		pass "$name (uaccess, ACL user:alice:rw)"
	else
		fail "$name" "ACL of $dev: $(getfacl -cp "$dev" 2>&1 | tr '\n' ' ')"
	fi
done
seat_exit
