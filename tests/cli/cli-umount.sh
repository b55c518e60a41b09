#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# revoke --umount, --list --mount, --umount --dry-run (issue 10) on filesystems
# this script makes: an ext4 image loop-mounted on $tmp/mnt with a tmpfs
# submount $tmp/mnt/sub and a bind mount of $tmp/mnt/dir on $tmp/elsewhere.
# Holders (its own processes): a reader, an appender, a shared mapping, a cwd
# inside, a chroot inside, a reader on the submount, a reader through the bind
# mount elsewhere. After --umount: both mounts gone, the bind mount and its
# holder untouched, every holder alive with its descriptors dead and its cwd
# out of the mount, e2fsck -fn clean. Refusals: a program running from the
# mount, a loop device backed by a file on it, the filesystem mounted in
# another mount namespace (exit 1, nothing changed); not a mount point.
# Runs in a private mount namespace of its own (unshare), so that nothing it
# mounts propagates elsewhere and everything goes with it, even when killed;
# a cleanup unmounts in order and detaches the loop devices on any exit. And in
# a pid namespace with its own /proc: mounts are scanned through /proc, and a
# process that root may not inspect (this sandbox's pid 1) would make every
# call refuse (see test-revoke-umount.c, um_isolate()).
# Run by tests/run-tests with REVOKE_BUILDDIR set; one PASS/FAIL/SKIP line per check.
if [ -z "${REVOKE_CLI_UMOUNT_NS:-}" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP cli.umount: needs root (it mounts filesystems)"
		exit 0
	fi
	# --kill-child: when unshare is killed (tests/run-tests' timeout), so is
	# the script, pid 1 of the new namespace, which ignores what it has no
	# handler for: hence the TERM trap below.
	REVOKE_CLI_UMOUNT_NS=1 exec unshare -m -p -f --mount-proc --propagation private \
		--kill-child=SIGTERM bash "$0" "$@"
fi
. "$(dirname "$0")/cli-common.bash"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cli_runs umount

mnt=$tmp/mnt sub=$tmp/mnt/sub elsewhere=$tmp/elsewhere img=$tmp/img
loopfd=""

# Holders first (they keep the mounts), then the mounts, deepest first;
# then cli-common's cleanup removes $tmp.
um_cleanup() {
	local p m
	for p in "${holders[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "$loopfd" ] && exec {loopfd}<&-
	for m in "$tmp/ro" "$elsewhere" "$sub" "$mnt" "$tmp/t"; do
		while mountpoint -q "$m" 2>/dev/null; do umount "$m" || break; done
	done
	umount -l "$tmp/f" 2>/dev/null
	holders=()
	cleanup
}
trap um_cleanup EXIT
trap 'exit 143' TERM INT HUP

mounted() { grep -q " $1 " /proc/self/mountinfo; } # mountinfo field 5 (no spaces in our paths)

if [ ! -e /dev/loop-control ]; then
	skip umount.setup "no loop devices on this machine (/dev/loop-control is missing)"
	exit 0
fi
for p in mkfs.ext4 e2fsck losetup; do
	command -v $p >/dev/null || { skip umount.setup "$p is not installed"; exit 0; }
done

# make_fs: a fresh ext4 on $mnt with its files, the submount, and (with "bind")
# the bind mount elsewhere.
make_fs() {
	truncate -s 32M "$img" && mkfs.ext4 -q -F "$img" && mkdir -p "$mnt" &&
		mount -o loop "$img" "$mnt" || return 1
	mkdir "$mnt/dir" "$mnt/cwd" "$mnt/root" "$sub"
	echo readable >"$mnt/read"
	: >"$mnt/log"
	echo bound >"$mnt/dir/bound"
	head -c 8192 /dev/zero >"$mnt/map"
	mount -t tmpfs -o size=8m revoke-cli-sub "$sub" || return 1
	echo submount >"$sub/file"
	if [ "${1:-}" = bind ]; then
		mkdir -p "$elsewhere" && mount --bind "$mnt/dir" "$elsewhere" || return 1
	fi
	loopdev=$(findmnt -n -o SOURCE --mountpoint "$mnt")
}

# wait_cwd PID DIR: until PID's cwd is DIR and it no longer runs bash.
wait_cwd() {
	local i
	for i in $(seq 1 400); do
		if [ "$(readlink "/proc/$1/cwd" 2>/dev/null)" = "$2" ] &&
			[ "$(cat "/proc/$1/comm" 2>/dev/null)" != bash ]; then
			return 0
		fi
		sleep 0.025
	done
	return 1
}

# start_scene_holders: the holders of the scene; ok=0 if one did not start.
start_scene_holders() {
	ok=1
	sleep 120 <"$mnt/read" &
	pr=$!
	bash -c 'exec 5>>"$1"; echo record-0 >&5; exec sleep 120' _ "$mnt/log" &
	pa=$!
	holders+=("$pr" "$pa")
	rm -f "$tmp/mapped"
	start_map_holder "$mnt/map"
	(cd "$mnt/cwd" && exec sleep 120) &
	pc=$!
	holders+=("$pc")
	python3 -c '
import os, sys, time
os.chroot(sys.argv[1])
os.chdir("/")
time.sleep(120)' "$mnt/root" &
	pt=$!
	holders+=("$pt")
	sleep 120 <"$sub/file" &
	ps=$!
	holders+=("$ps")
	wait_holder "$pr" 0 "$mnt/read" || ok=0
	wait_holder "$pa" 5 "$mnt/log" || ok=0
	wait_map_holder || ok=0
	wait_cwd "$pc" "$mnt/cwd" || ok=0
	wait_cwd "$pt" "$mnt/root" || ok=0
	wait_holder "$ps" 0 "$sub/file" || ok=0
	if [ -d "$elsewhere/." ] && mounted "$elsewhere"; then
		sleep 120 <"$elsewhere/bound" &
		pb=$!
		holders+=("$pb")
		wait_holder "$pb" 0 "$elsewhere/bound" || ok=0
	fi
}

# stop_all: the holders go, the mounts are taken down (for the next scene).
stop_all() {
	local p m
	for p in "${holders[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	holders=()
	for m in "$elsewhere" "$sub" "$mnt"; do
		while mountpoint -q "$m" 2>/dev/null; do umount "$m" || break; done
	done
}

# untouched: the scene's holders still hold what they held.
untouched() {
	points_at "$pr" 0 "$mnt/read" && points_at "$pa" 5 "$mnt/log" &&
		grep -q " $mnt/map\$" "/proc/$pm/maps" &&
		[ "$(readlink "/proc/$pc/cwd")" = "$mnt/cwd" ] &&
		[ "$(readlink "/proc/$pt/root")" = "$mnt/root" ] &&
		points_at "$ps" 0 "$sub/file" && mounted "$mnt" && mounted "$sub"
}

# ---- the scene: --list --mount, --dry-run, then --umount --json
if ! make_fs bind; then
	fail umount.setup "could not make the filesystems"
	exit 0
fi
start_scene_holders
if [ "$ok" -ne 1 ]; then
	fail umount.setup "the holder processes did not start"
	exit 0
fi

run "$R" --list --mount -r -n -o PATH,PID,TYPE "$mnt"
if [ "$rc" -ne 0 ]; then
	fail umount.list-mount "exit $rc; stdout: $out; stderr: $err"
else
	missing=""
	for want in "$mnt $pr fd" "$mnt $pa fd" "$mnt $pm map" "$mnt $pc cwd" "$mnt $pt root" \
		"$mnt $pt cwd" "$sub $ps fd"; do
		grep -qx "$want" <<<"$out" || missing="$missing; '$want'"
	done
	if [ -n "$missing" ]; then
		fail umount.list-mount "missing rows$missing in: $out"
	elif grep -q " $pb " <<<"$out"; then
		fail umount.list-mount "lists the holder through the bind mount elsewhere (pid $pb): $out"
	elif ! untouched; then
		fail umount.list-mount "a holder lost its reference after --list --mount"
	else
		pass umount.list-mount
	fi
fi

# The short option, and a listing as the other tools would give (fuser -m knows the pids).
run "$R" -l -m -r -n -o PID "$mnt"
if [ "$rc" -eq 0 ] && [ "$(sort -un <<<"$out" | tr '\n' ' ')" = "$(printf '%s\n' "$pr" "$pa" "$pm" "$pc" "$pt" "$ps" | sort -un | tr '\n' ' ')" ]; then
	pass umount.list-mount-short
else
	fail umount.list-mount-short "exit $rc; pids: $(tr '\n' ' ' <<<"$out"), expected $pr $pa $pm $pc $pt $ps; stderr: $err"
fi

run "$R" --umount --dry-run "$mnt"
if [ "$rc" -ne 0 ]; then
	fail umount.dry-run-yes "exit $rc (expected 0: every holder can be cut); stderr: $err"
elif ! untouched; then
	fail umount.dry-run-yes "the dry run changed something"
else
	pass umount.dry-run-yes
fi

run "$R" --umount --json "$mnt"
if [ "$rc" -ne 0 ]; then
	fail umount.umount "exit $rc; stdout: $out; stderr: $err"
elif mounted "$mnt" || mounted "$sub"; then
	fail umount.umount "exit 0 but still mounted: $(grep " $mnt" /proc/self/mountinfo)"
elif ! mounted "$elsewhere" || ! points_at "$pb" 0 "$elsewhere/bound" || ! alive "$pb"; then
	fail umount.umount "the bind mount elsewhere or its holder was touched"
else
	bad=""
	for p in "$pr" "$pa" "$pm" "$pc" "$pt" "$ps"; do
		alive "$p" || bad="$bad pid $p died;"
	done
	points_at "$pr" 0 "$DEAD_LINK" || bad="$bad reader fd 0 is '$(readlink "/proc/$pr/fd/0")';"
	points_at "$pa" 5 "$DEAD_LINK" || bad="$bad appender fd 5 is '$(readlink "/proc/$pa/fd/5")';"
	points_at "$ps" 0 "$DEAD_LINK" || bad="$bad submount reader fd 0 is '$(readlink "/proc/$ps/fd/0")';"
	grep -q " $mnt/map\$" "/proc/$pm/maps" && bad="$bad the mapping is still there;"
	for p in "$pc" "$pt"; do
		c=$(readlink "/proc/$p/cwd")
		[[ $c == "$mnt"* ]] && bad="$bad pid $p cwd is still $c;"
	done
	[[ $(readlink "/proc/$pt/root") == "$mnt"* ]] && bad="$bad the chroot holder's root is still on the mount;"
	if [ -n "$bad" ]; then
		fail umount.umount "$bad"
	else
		pass umount.umount
	fi
fi
# The report: the two mounts as targets, every holder cut, the list of what was unmounted.
if [ "$rc" -eq 0 ]; then
	if ! why=$(python3 - "$tmp/out" "$mnt" "$sub" "$pr" "$pa" "$pm" "$pc" "$pt" "$ps" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
mnt, sub = sys.argv[2], sys.argv[3]
pids = [int(p) for p in sys.argv[4:]]
if doc["error"] is not None:
    print("error %r" % doc["error"]); sys.exit(1)
if [t["path"] for t in doc["targets"]] != [mnt, sub]:
    print("targets %r" % [t["path"] for t in doc["targets"]]); sys.exit(1)
h = {x["pid"]: x for x in doc["holders"]}
for p in pids:
    if p not in h or h[p]["state"] != "cut":
        print("pid %d: %r" % (p, h.get(p))); sys.exit(1)
# how many mounts went: the mount and its submount
if doc.get("unmounted") != 2:
    print("unmounted: %r, expected 2" % (doc.get("unmounted"),)); sys.exit(1)
EOF
	); then
		fail umount.json "$why"
	else
		pass umount.json
	fi
fi

# The image: clean once the bind mount (which keeps the filesystem) is gone too;
# the appender's record is there.
kill -KILL "$pb" 2>/dev/null
wait "$pb" 2>/dev/null
umount "$elsewhere"
gone=0
for i in $(seq 1 200); do
	[ "$(cat "/sys/block/${loopdev#/dev/}/loop/backing_file" 2>/dev/null)" != "$img" ] && { gone=1; break; }
	sleep 0.025
done
if [ "$gone" -ne 1 ]; then
	fail umount.fsck "$loopdev still has $img behind it after the last unmount"
elif ! e2fsck -fn "$img" >"$tmp/fsck" 2>&1; then
	fail umount.fsck "e2fsck -fn: $(tail -n 20 "$tmp/fsck")"
else
	mkdir -p "$tmp/ro"
	if ! mount -o loop,ro "$img" "$tmp/ro"; then
		fail umount.fsck "cannot mount the image read-only again"
	elif [ "$(cat "$tmp/ro/log")" != record-0 ]; then
		fail umount.fsck "the log holds '$(head -c 200 "$tmp/ro/log")', not the acknowledged record-0"
	else
		pass umount.fsck
	fi
	umount "$tmp/ro"
fi
stop_all

# ---- refused: a program running from the mount
if ! make_fs; then
	fail umount.setup-2 "could not make the filesystems"
	exit 0
fi
start_scene_holders
cp /bin/sleep "$mnt/sleep-copy"
"$mnt/sleep-copy" 120 &
px=$!
holders+=("$px")
for i in $(seq 1 400); do
	[ "$(readlink "/proc/$px/exe")" = "$mnt/sleep-copy" ] && break
	sleep 0.025
done
if [ "$ok" -ne 1 ] || [ "$(readlink "/proc/$px/exe")" != "$mnt/sleep-copy" ]; then
	fail umount.setup-2 "the holder processes did not start"
else
	run "$R" --list --mount -r -n -o PID,TYPE,STATE "$mnt"
	if grep -qx "$px exe" <<<"$(cut -d' ' -f1,2 <<<"$out")"; then
		pass umount.list-exe
	else
		fail umount.list-exe "no exe row for pid $px: $out"
	fi

	run "$R" --umount --dry-run "$mnt"
	if [ "$rc" -eq 1 ] && untouched && [ -n "$err" ]; then
		pass umount.dry-run-no
	else
		fail umount.dry-run-no "exit $rc (expected 1); stderr: $err"
	fi

	run "$R" --umount "$mnt"
	if [ "$rc" -ne 1 ]; then
		fail umount.exe-refused "exit $rc (expected 1); stderr: $err"
	elif ! untouched || ! alive "$px"; then
		fail umount.exe-refused "something changed: mounts $(grep -c " $mnt" /proc/self/mountinfo), holders $(untouched && echo untouched || echo touched)"
	elif [[ $err != *"$mnt"* ]]; then
		fail umount.exe-refused "the message does not name $mnt: $err"
	else
		pass umount.exe-refused
	fi
fi
kill -KILL "$px" 2>/dev/null
wait "$px" 2>/dev/null

# ---- refused: a loop device backed by a file on it
head -c 1048576 /dev/zero >"$mnt/backing"
if dev=$(losetup -f --show "$mnt/backing"); then
	# Our descriptor keeps it; detaching now makes it clear itself when we close
	# it or die (LO_FLAGS_AUTOCLEAR).
	exec {loopfd}<"$dev"
	losetup -d "$dev"
	name=${dev#/dev/}
	run "$R" --list --mount -r -n -o PID,COMMAND,TYPE "$mnt"
	if grep -qx "0 $name loop" <<<"$out"; then
		pass umount.list-loop
	else
		fail umount.list-loop "no row '0 $name loop': $out; stderr: $err"
	fi
	run "$R" --umount "$mnt"
	if [ "$rc" -eq 1 ] && mounted "$mnt" && points_at "$pr" 0 "$mnt/read"; then
		pass umount.loop-refused
	else
		fail umount.loop-refused "exit $rc (expected 1), mounted: $(mounted "$mnt" && echo yes || echo no); stderr: $err"
	fi
	exec {loopfd}<&-
	loopfd=""
else
	fail umount.loop-refused "losetup failed"
fi

# ---- refused: the filesystem mounted in another mount namespace too
unshare -m --propagation private sleep 120 &
pn=$!
holders+=("$pn")
for i in $(seq 1 400); do
	[ "$(cat "/proc/$pn/comm" 2>/dev/null)" = sleep ] && [ "$(readlink "/proc/$pn/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
	sleep 0.025
done
run "$R" --list --mount -r -n -o PID,TYPE "$mnt"
if grep -qx "$pn mount" <<<"$out"; then
	pass umount.list-other-namespace
else
	fail umount.list-other-namespace "no row '$pn mount': $out; stderr: $err"
fi
run "$R" --umount "$mnt"
if [ "$rc" -eq 1 ] && mounted "$mnt" && untouched; then
	pass umount.other-namespace-refused
else
	fail umount.other-namespace-refused "exit $rc (expected 1); stderr: $err"
fi
kill -KILL "$pn" 2>/dev/null
wait "$pn" 2>/dev/null

# ---- not a mount point; usage
run "$R" --umount "$mnt/dir"
if [ "$rc" -eq 1 ] && [[ $err == *"$mnt/dir"* ]] && mounted "$mnt" && untouched; then
	pass umount.not-a-mountpoint
else
	fail umount.not-a-mountpoint "exit $rc (expected 1 with a message naming $mnt/dir); stderr: $err"
fi
run "$R" --list --mount "$mnt/read"
if [ "$rc" -eq 1 ] && [[ $err == *"$mnt/read"* ]]; then
	pass umount.list-not-a-mountpoint
else
	fail umount.list-not-a-mountpoint "exit $rc (expected 1 naming $mnt/read); stderr: $err"
fi
# --best-effort with a program running from it: the rest is cut, the mount stays.
"$mnt/sleep-copy" 120 &
px=$!
holders+=("$px")
for i in $(seq 1 400); do
	[ "$(readlink "/proc/$px/exe")" = "$mnt/sleep-copy" ] && break
	sleep 0.025
done
run "$R" --umount -b "$mnt"
if [ "$rc" -ne 1 ]; then
	fail umount.best-effort "exit $rc (expected 1: not unmounted); stderr: $err"
elif ! mounted "$mnt" || ! alive "$px" || [ "$(readlink "/proc/$px/exe")" != "$mnt/sleep-copy" ]; then
	fail umount.best-effort "the mount or the program running from it was touched"
elif ! points_at "$pr" 0 "$DEAD_LINK" || [[ $(readlink "/proc/$pc/cwd") == "$mnt"* ]] || ! alive "$pr"; then
	fail umount.best-effort "the other holders were not cut: reader fd 0 '$(readlink "/proc/$pr/fd/0")', cwd holder in '$(readlink "/proc/$pc/cwd")'"
elif [[ $err != *"$mnt"* ]]; then
	fail umount.best-effort "the message does not name $mnt: $err"
else
	pass umount.best-effort
fi
kill -KILL "$px" 2>/dev/null
wait "$px" 2>/dev/null

run "$R" --umount
if ! "$R" --help 2>&1 | grep -q -- --umount; then
	fail umount.usage "revoke --help does not mention --umount"
elif [ "$rc" -eq 2 ]; then
	pass umount.usage
else
	fail umount.usage "revoke --umount without a mount point: exit $rc (expected 2); stderr: $err"
fi
stop_all

# ---- a tmpfs, the plain table, -q
mkdir -p "$tmp/t"
mount -t tmpfs -o size=8m revoke-cli-t "$tmp/t"
echo x >"$tmp/t/f"
sleep 120 <"$tmp/t/f" &
pq=$!
holders+=("$pq")
(cd "$tmp/t" && exec sleep 120) &
pw=$!
holders+=("$pw")
if wait_holder "$pq" 0 "$tmp/t/f" && wait_cwd "$pw" "$tmp/t"; then
	run "$R" --umount -q "$tmp/t"
	if [ "$rc" -eq 0 ] && [ -z "$out" ] && [ -z "$err" ] && ! mounted "$tmp/t" &&
		points_at "$pq" 0 "$DEAD_LINK" && alive "$pq" && alive "$pw" &&
		[[ $(readlink "/proc/$pw/cwd") != "$tmp/t"* ]]; then
		pass umount.tmpfs-quiet
	else
		fail umount.tmpfs-quiet "exit $rc; stdout: $out; stderr: $err; mounted: $(mounted "$tmp/t" && echo yes || echo no)"
	fi
else
	fail umount.tmpfs-quiet "the holders did not start"
fi
stop_all

# ---- --list --mount of a FUSE mount whose server stopped answering: bounded
# by --timeout (issue 10: lsof and fuser hang there). Either the listing
# (descriptors are looked at without asking the server) or a timeout.
helper=$REVOKE_BUILDDIR/tests/helper-fusehang
if [ ! -c /dev/fuse ] || [ ! -x "$helper" ]; then
	skip umount.list-fuse-hung "no /dev/fuse or no $helper (libfuse3)"
else
	mkdir -p "$tmp/f"
	"$helper" "$tmp/f" &
	hp=$!
	holders+=("$hp")
	for i in $(seq 1 400); do
		[ -e "$tmp/f/file" ] && break
		kill -0 "$hp" 2>/dev/null || break
		sleep 0.025
	done
	if [ ! -e "$tmp/f/file" ]; then
		skip umount.list-fuse-hung "$helper could not mount: FUSE mounts not permitted here"
	else
		sleep 120 <"$tmp/f/file" &
		pf=$!
		holders+=("$pf")
		wait_holder "$pf" 0 "$tmp/f/file"
		kill -USR1 "$hp" # from now on every request hangs
		"$R" --list --mount -t 1 -r -n -o PID,TYPE "$tmp/f" >"$tmp/fuse.out" 2>"$tmp/fuse.err" &
		rp=$!
		for i in $(seq 1 240); do # 6 s: the 1 s timeout and then some
			kill -0 "$rp" 2>/dev/null || break
			sleep 0.025
		done
		exited=1
		kill -0 "$rp" 2>/dev/null && exited=0
		kill -KILL "$hp"
		wait "$hp" 2>/dev/null
		wait "$rp"
		rc=$?
		if [ "$exited" -ne 1 ]; then
			fail umount.list-fuse-hung "revoke --list --mount -t 1 still ran 6 s later"
		elif [ "$rc" -eq 0 ] && grep -qx "$pf fd" "$tmp/fuse.out"; then
			pass umount.list-fuse-hung
		elif [ "$rc" -eq 1 ] && grep -q "timed out" "$tmp/fuse.err"; then
			pass umount.list-fuse-hung
		else
			fail umount.list-fuse-hung "exit $rc; stdout: $(cat "$tmp/fuse.out"); stderr: $(cat "$tmp/fuse.err")"
		fi
		echo "  (--list --mount of the hung FUSE mount: exit $rc, $(wc -l <"$tmp/fuse.out") rows, stderr: $(head -c 200 "$tmp/fuse.err"))"
	fi
	kill -KILL "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
	umount -l "$tmp/f" 2>/dev/null
fi
exit 0
