# SPDX-License-Identifier: LGPL-2.1-or-later
# revoked(8) under the real PID 1, as the package installs it: revoked.socket
# enabled and listening, revoked.service started by the first request, and
# the sandboxed service cuts. alice owns a file that a process of bob's
# session, one of root's and one of her own hold; she runs `revoke FILE`
# with nothing pointing the library anywhere (the real
# /run/revoke/revoked.sock): exit 0, every holder's descriptor dead.
. "$SEAT_LIB"
unset REVOKE_HELPER_SOCKET REVOKE_HELPER REVOKE_NO_HELPER

if [ "$(systemctl is-enabled revoked.socket 2>&1)" = enabled ] &&
	[ "$(systemctl is-active revoked.socket 2>&1)" = active ] && [ -S /run/revoke/revoked.sock ]; then
	pass "revoked.socket (enabled by the package, listening on /run/revoke/revoked.sock)"
else
	fail revoked.socket "revoked.socket is $(systemctl is-enabled revoked.socket 2>&1)/$(systemctl is-active revoked.socket 2>&1): $(systemctl status revoked.socket 2>&1 | head -n 5 | tr '\n' ';')"
fi
state=$(systemctl is-active revoked.service 2>&1)
if [ "$state" = inactive ]; then
	pass "revoked.service.idle (not started before a request)"
else
	fail revoked.service.idle "revoked.service is '$state' before any request"
fi

dir=/srv/revoke-seat
mkdir -p "$dir"
file=$dir/alice-notes
echo "alice's notes" >"$file"
chown alice:alice "$file"
chmod 0644 "$file"
hold bobs bob-tty2 "$file" || fail revoked.holders "bob's holder did not answer"
hold roots root "$file" || fail revoked.holders "root's holder did not answer"
hold alices alice-tty1 "$file" || fail revoked.holders "alice's holder did not answer"
before="bob $(ask bobs check), root $(ask roots check), alice $(ask alices check)"
if [ "$before" = "bob ok, root ok, alice ok" ]; then
	pass "revoked.holders (pids $bobs_pid bob, $roots_pid root, $alices_pid alice hold $file)"
else
	fail revoked.holders "before the revoke: $before"
fi

t0=$(date +%s%N)
out=$(cd / && setpriv --reuid=alice --regid=alice --init-groups -- revoke --timeout 20 "$file" 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "$out" | sed 's/^/    alice$ revoke: /'
after="bob $(ask bobs check), root $(ask roots check), alice $(ask alices check)"
links="$(fd_link bobs 0) $(fd_link roots 0) $(fd_link alices 0)"
if [ "$rc" = 0 ] && [ "$after" = "bob EBADF, root EBADF, alice EBADF" ] &&
	[ "$links" = "/memfd:revoked (deleted) /memfd:revoked (deleted) /memfd:revoked (deleted)" ]; then
	pass "revoked.cut (alice's revoke exit 0 in $ms ms; every holder EBADF, /memfd:revoked)"
else
	fail revoked.cut "alice's revoke exit $rc; holders after it: $after; their fds lead to: $links"
fi

# The service did it: started by that request, and its log says so (by
# its syslog identifier: the worker that logs is gone before journald can
# read its cgroup, so the line may carry no unit).
state=$(systemctl is-active revoked.service 2>&1)
logged() {
	line=$(journalctl -q -o cat -t revoked --no-pager 2>/dev/null | grep -F "$file" | tail -n 1)
	[ -n "$line" ]
}
wait_for 10 logged
if [ "$state" = active ] && echo "$line" | grep -q 'ok: 3 references cut in 3 processes'; then
	pass "revoked.service.activated (revoked.service $state; log: $line)"
else
	fail revoked.service.activated "revoked.service is '$state'; its log: $(journalctl -q -o cat -t revoked --no-pager 2>&1 | tail -n 5 | tr '\n' ';')"
fi
# The sandbox as the running manager rates it (not --offline).
score=$(systemd-analyze security revoked.service --no-pager 2>&1 |
	sed -n 's/.*Overall exposure level for revoked.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && awk "BEGIN { exit !($score <= 3.0) }"; then
	pass "revoked.service.security (systemd-analyze security: $score)"
else
	fail revoked.service.security "systemd-analyze security revoked.service: '${score:-$(systemd-analyze security revoked.service --no-pager 2>&1 | tail -n 2)}', above 3.0"
fi
release bobs
release roots
release alices
rm -rf "$dir"
seat_exit
