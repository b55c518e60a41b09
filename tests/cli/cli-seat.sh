#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke-seat's command line, where it is built (libsystemd): --help and
# --version, usage errors (exit 2), its bash completion offering every option
# --help lists (but --cutter, which is for systemd), and an unreadable
# configuration warned about, not fatal, in --list. What it does on a seat
# runs in the systemd guest (tests/seat/, scripts/run-systemd-guest).
. "$(dirname "$0")/cli-common.bash"
S=$REVOKE_BUILDDIR/daemon/revoke-seat/revoke-seat
comp=$(dirname "$0")/../../daemon/revoke-seat/revoke-seat.bash
if [ ! -x "$S" ]; then
	skip seat "no $S: built only with libsystemd (-Dseat)"
	exit 0
fi

run "$S" --version
if [ "$rc" = 0 ] && [[ $out == "revoke-seat from librevoke "[0-9]* ]]; then
	pass "seat.version ($out)"
else
	fail seat.version "exit $rc: $out $err"
fi

run "$S" --help
help=$out
if [ "$rc" = 0 ] && grep -q -- '--dry-run' <<<"$help" && [ -z "$err" ]; then
	pass seat.help
else
	fail seat.help "exit $rc: $err"
fi

run "$S" --frobnicate
if [ "$rc" = 2 ] && grep -q "unrecognized option '--frobnicate'" <<<"$err" && [ -z "$out" ]; then
	pass seat.unknown-option
else
	fail seat.unknown-option "exit $rc, expected 2; stderr: $err"
fi
run "$S" extra
if [ "$rc" = 2 ] && grep -q "unexpected argument 'extra'" <<<"$err"; then
	pass seat.extra-argument
else
	fail seat.extra-argument "exit $rc, expected 2; stderr: $err"
fi

# The completion: every long option of --help but --cutter.
opts=$(grep -o -- '--[a-z-]*' <<<"$help" | grep -vx -- '--cutter' | sort -u)
got=$(bash -c '. "$1"; COMP_WORDS=(revoke-seat --); COMP_CWORD=1; _revoke_seat; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" | sort -u)
missing=$(comm -23 <(echo "$opts") <(echo "$got"))
if [ -n "$opts" ] && [ -z "$missing" ] && ! grep -qx -- '--cutter' <<<"$got"; then
	pass "seat.completion ($(echo $opts))"
else
	fail seat.completion "not offered: $(echo $missing); offered: $(echo $got)"
fi

# A configuration it cannot read is a warning, then the defaults: --list goes
# on to the bus (which a machine without systemd as PID 1 may not have).
run "$S" --config "$tmp/none.conf" --list
if grep -q "$tmp/none.conf: No such file or directory; using the defaults" <<<"$err"; then
	pass "seat.missing-config (warned, went on: exit $rc)"
else
	fail seat.missing-config "exit $rc; stderr: $err"
fi
