/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: the forced unmount (issue 10), through the library
 * (REVOKE_MOUNT, REVOKE_UMOUNT) and under load through the command, on real
 * filesystems each case makes in its own mount namespace: an ext4 image
 * loop-mounted on /tmp/mnt, a tmpfs submount /tmp/mnt/sub, a bind mount of
 * /tmp/mnt/dir on /tmp/elsewhere. The holders are the case's own victims
 * (tests/victim.h): a reader, an appender whose every record is acknowledged,
 * a MAP_SHARED writer, a directory reader, a process whose cwd is inside, one
 * chrooted inside, a holder on the submount, one holding a file through the
 * bind mount elsewhere and one holding a file of the parent mount.
 *
 * After the unmount: both mounts are gone from /proc/self/mountinfo and their
 * loop device is released; the bind mount and its holder, and the parent's
 * holder, are untouched; every holder lives, with EBADF on its descriptors,
 * SIGBUS on its mapping, ENOENT for getcwd() and its lookups (the dead
 * directory); the image passes e2fsck -fn and, mounted read-only again, holds
 * every acknowledged record and mapped store, and nothing after the call.
 * Modeled on xfstests' "shutdown" group: data synced before survives a
 * remount, a mapping written after faults.
 *
 * Also: refusals that change nothing (a program running from the mount, a
 * loop device, a swap file, a copy of the mount in another namespace), best
 * effort (the rest cut, phase "unmounting"), the sync before the cut (a copy
 * of the image taken right after a refused unmount), the dry run, the listing,
 * REVOKE_NO_SUBMOUNTS, not a mount point, ten unmounts at once, and writers
 * with an fsx-like mapper under load (library and command). Each case runs
 * in its own mount and pid namespaces (um_isolate(), tests/umount.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "revoke.h"
#include "victim.h"
#include "umount.h"

#define MAP_LEN 8192

static struct stat stat_of(const char *path)
{
	struct stat st;

	CHECK(stat(path, &st) == 0, "stat %s: %m", path);
	return st;
}

/* ---- one victim operation, checked ---- */

static struct victim_res v_open(struct victim *v, const char *path, int flags)
{
	struct victim_req q = {.op = VOP_OPEN, .flags = flags};

	snprintf(q.path, sizeof(q.path), "%s", path);
	return victim_call(v, &q);
}

static struct victim_res v_path_op(struct victim *v, int op, const char *path)
{
	struct victim_req q = {.op = op};

	snprintf(q.path, sizeof(q.path), "%s", path);
	return victim_call(v, &q);
}

static void v_must(struct victim *v, int op, const char *path)
{
	struct victim_res r = v_path_op(v, op, path);

	CHECK(r.ret == 0, "victim %d: op %d on %s: %s", (int)v->pid, op, path, strerror(r.err));
}

static uint64_t v_map(struct victim *v, int fd)
{
	struct victim_res r =
	    victim_call(v, VICTIM_REQ(.op = VOP_MMAP, .fd = fd, .len = MAP_LEN,
				      .prot = PROT_READ | PROT_WRITE, .flags = MAP_SHARED));

	CHECK(r.ret != -1, "victim %d: mmap: %s", (int)v->pid, strerror(r.err));
	return (uint64_t)r.ret;
}

static struct victim_res v_store(struct victim *v, uint64_t addr, char c)
{
	struct victim_req q = {.op = VOP_STORE, .arg = (long)addr};

	q.data[0] = c;
	return victim_call(v, &q);
}

static struct victim_res v_load(struct victim *v, uint64_t addr)
{
	return victim_call(v, VICTIM_REQ(.op = VOP_LOAD, .arg = (long)addr));
}

static struct victim_res v_pread(struct victim *v, int fd, size_t len)
{
	return victim_call(v, VICTIM_REQ(.op = VOP_PREAD, .fd = fd, .len = len, .arg = 0));
}

/* FD of V still reads WANT at offset 0. */
static void check_reads(struct victim *v, int fd, const char *want, const char *who)
{
	struct victim_res r = v_pread(v, fd, strlen(want));

	CHECK(r.ret == (long)strlen(want) && memcmp(r.data, want, strlen(want)) == 0,
	      "%s (pid %d): fd %d read %ld (%s) '%.*s', expected '%s'", who, (int)v->pid, fd, r.ret,
	      strerror(r.err), (int)r.len, r.data, want);
}

/* FD of V is dead: read and fstat fail with EBADF, the number stays taken. */
static void check_dead_fd(struct victim *v, int fd, const char *who)
{
	struct victim_res r = v_pread(v, fd, 4);

	CHECK(r.ret == -1 && r.err == EBADF, "%s (pid %d): read of fd %d gave %ld (%s), not EBADF",
	      who, (int)v->pid, fd, r.ret, strerror(r.err));
	r = victim_call(v, VICTIM_REQ(.op = VOP_GETFD, .fd = fd));
	CHECK(r.ret >= 0, "%s (pid %d): fd %d is no longer allocated (F_GETFD: %s)", who,
	      (int)v->pid, fd, strerror(r.err));
}

/* The mapping at ADDR of V raises SIGBUS on a load and on a store. */
static void check_sigbus(struct victim *v, uint64_t addr, const char *who)
{
	struct victim_res r = v_load(v, addr);

	CHECK(r.sig == SIGBUS, "%s (pid %d): load from the mapping gave signal %d, value %ld", who,
	      (int)v->pid, r.sig, r.ret);
	r = v_store(v, addr + 1, 'x');
	CHECK(r.sig == SIGBUS, "%s (pid %d): store to the mapping gave signal %d", who, (int)v->pid,
	      r.sig);
}

/*
 * PATH, opened by V, is the dead directory: a directory that no longer exists
 * (st_nlink 0), neither the old mount's root nor the real root. Returns its
 * identity.
 */
static struct stat check_dead_dir(struct victim *v, const char *path, const char *who,
				  const struct stat *oldroot)
{
	struct victim_res r = v_open(v, path, O_RDONLY | O_DIRECTORY);
	struct stat st, realroot = stat_of("/");

	CHECK(r.ret >= 0, "%s (pid %d): open(\"%s\") gave %s, expected the dead directory", who,
	      (int)v->pid, path, strerror(r.err));
	r = victim_call(v, VICTIM_REQ(.op = VOP_FSTAT, .fd = (int)r.ret));
	CHECK(r.ret == 0, "%s: fstat of the dead directory: %s", who, strerror(r.err));
	memcpy(&st, r.data, sizeof(st));
	CHECK(S_ISDIR(st.st_mode), "%s: open(\"%s\") is not a directory (mode 0%o)", who, path,
	      st.st_mode);
	CHECK(!(st.st_dev == oldroot->st_dev && st.st_ino == oldroot->st_ino),
	      "%s: open(\"%s\") is still the root of the unmounted filesystem", who, path);
	CHECK(!(st.st_dev == realroot.st_dev && st.st_ino == realroot.st_ino),
	      "%s: open(\"%s\") is the real root directory: the holder got out", who, path);
	CHECK(st.st_nlink == 0,
	      "%s: open(\"%s\") is a directory with %lu links (dev %u:%u ino %lu), "
	      "not one that no longer exists",
	      who, path, (unsigned long)st.st_nlink, major(st.st_dev), minor(st.st_dev),
	      (unsigned long)st.st_ino);
	return st;
}

static void check_enoent(struct victim *v, int op, const char *path, const char *who)
{
	struct victim_res r = op == VOP_OPEN ? v_open(v, path, O_RDONLY) : v_path_op(v, op, path);

	CHECK(r.ret == -1 && r.err == ENOENT, "%s (pid %d): %s(\"%s\") gave %ld (%s), not ENOENT",
	      who, (int)v->pid, op == VOP_OPEN ? "open" : "stat", path, r.ret, strerror(r.err));
}

/* TracerPid of PID, or -1. */
static long proc_tracer(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	long t = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &t) == 1)
			break;
	fclose(f);
	return t;
}

static void check_alive(pid_t pid, const char *who)
{
	char st = victim_state(pid);

	CHECK(kill(pid, 0) == 0 && st != 'Z' && st != 0, "%s (pid %d) died (state %c)", who,
	      (int)pid, st ? st : '-');
}

/* ---- the scene: every kind of holder of the ext4 mount and its submount ---- */

struct scene {
	struct victim reader, appender, mapper, dir, cwd, root, sub, bind, parent;
	int rfd, afd, dfd, sfd, bfd, pfd;
	uint64_t map;
	unsigned int records; /* acknowledged records in /tmp/mnt/log */
	char loop[256];	      /* the loop device under /tmp/mnt */
	struct stat mntroot;
};

static void scene_files(void)
{
	um_mkdir(UM_MNT "/dir");
	um_mkdir(UM_MNT "/cwd");
	um_mkdir(UM_MNT "/root");
	test_write_file(UM_MNT "/read", "readable");
	test_write_file(UM_MNT "/log", "");
	test_write_file(UM_MNT "/dir/bound", "bound file");
	test_write_file(UM_MNT "/cwd/here", "here");
	test_write_file(UM_MNT "/root/inside", "inside");
	um_make_file(UM_MNT "/map", MAP_LEN, 0644);
	um_mount_tmpfs(UM_SUB);
	test_write_file(UM_SUB "/file", "submount");
	test_write_file("/tmp/outside", "parent mount");
}

/* Append record SEQ through S's appender; it must be acknowledged. */
static void append_record(struct scene *s, unsigned int seq)
{
	char rec[UM_REC + 1];
	struct victim_res r;

	um_record(rec, 0, seq);
	r = victim_write(&s->appender, s->afd, rec);
	CHECK(r.ret == UM_REC, "appender: write of record %u gave %ld (%s)", seq, r.ret,
	      strerror(r.err));
}

static void scene_start(struct scene *s, bool with_bind)
{
	struct victim_res r;

	memset(s, 0, sizeof(*s));
	um_isolate();
	um_ext4(32);
	scene_files();
	if (with_bind)
		um_bind(UM_MNT "/dir", UM_ELSEWHERE);
	um_loop_of_mount(UM_MNT, s->loop, sizeof(s->loop));
	s->mntroot = stat_of(UM_MNT);

	victim_start(&s->reader);
	s->rfd = victim_open(&s->reader, UM_MNT "/read", O_RDONLY);
	check_reads(&s->reader, s->rfd, "readable", "reader");

	victim_start(&s->appender);
	s->afd = victim_open(&s->appender, UM_MNT "/log", O_WRONLY | O_APPEND);
	for (s->records = 0; s->records < 10; s->records++)
		append_record(s, s->records);

	/* The mapping is its only reference: the descriptor is closed. */
	victim_start(&s->mapper);
	{
		int fd = victim_open(&s->mapper, UM_MNT "/map", O_RDWR);

		s->map = v_map(&s->mapper, fd);
		r = victim_call(&s->mapper, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));
		CHECK(r.ret == 0, "mapper: close: %s", strerror(r.err));
	}
	CHECK(v_store(&s->mapper, s->map, 'Z').ret == 0, "mapper: store before the unmount");
	CHECK(v_store(&s->mapper, s->map + 4096, 'Y').ret == 0, "mapper: store before the unmount");

	victim_start(&s->dir);
	s->dfd = victim_open(&s->dir, UM_MNT "/dir", O_RDONLY | O_DIRECTORY);

	victim_start(&s->cwd);
	v_must(&s->cwd, VOP_CHDIR, UM_MNT "/cwd");
	r = v_open(&s->cwd, "here", O_RDONLY);
	CHECK(r.ret >= 0, "cwd holder: open(\"here\"): %s", strerror(r.err));
	victim_call(&s->cwd, VICTIM_REQ(.op = VOP_CLOSE, .fd = (int)r.ret));

	victim_start(&s->root);
	v_must(&s->root, VOP_CHROOT, UM_MNT "/root");
	r = v_open(&s->root, "/inside", O_RDONLY);
	CHECK(r.ret >= 0, "chroot holder: open(\"/inside\"): %s", strerror(r.err));
	victim_call(&s->root, VICTIM_REQ(.op = VOP_CLOSE, .fd = (int)r.ret));

	victim_start(&s->sub);
	s->sfd = victim_open(&s->sub, UM_SUB "/file", O_RDONLY);

	if (with_bind) {
		victim_start(&s->bind);
		s->bfd = victim_open(&s->bind, UM_ELSEWHERE "/bound", O_RDONLY);
	}
	victim_start(&s->parent);
	s->pfd = victim_open(&s->parent, "/tmp/outside", O_RDONLY);
}

/* Every holder of the scene as a forced unmount must leave it. */
static void scene_check_cut(struct scene *s)
{
	struct victim_res r;
	struct stat dead, dead2;

	check_dead_fd(&s->reader, s->rfd, "reader");

	{
		char rec[UM_REC + 1];

		um_record(rec, 0, s->records);
		r = victim_write(&s->appender, s->afd, rec);
		CHECK(r.ret == -1 && r.err == EBADF,
		      "appender: a write after the unmount gave %ld (%s), not EBADF", r.ret,
		      strerror(r.err));
		check_dead_fd(&s->appender, s->afd, "appender");
	}

	check_sigbus(&s->mapper, s->map, "mapper");
	check_sigbus(&s->mapper, s->map + 4096, "mapper");

	r = victim_call(&s->dir, VICTIM_REQ(.op = VOP_GETDENTS, .fd = s->dfd));
	CHECK(r.ret == -1 && r.err == EBADF, "directory reader: getdents gave %ld (%s), not EBADF",
	      r.ret, strerror(r.err));

	/* cwd: the dead directory; relative lookups fail, absolute ones are not its business */
	r = victim_call(&s->cwd, VICTIM_REQ(.op = VOP_GETCWD));
	CHECK(r.ret == -1 && r.err == ENOENT, "cwd holder: getcwd gave %ld (%s) '%.*s', not ENOENT",
	      r.ret, strerror(r.err), (int)r.len, r.data);
	check_enoent(&s->cwd, VOP_OPEN, "here", "cwd holder");
	check_enoent(&s->cwd, VOP_STAT, "../cwd/here", "cwd holder");
	r = v_open(&s->cwd, "new", O_WRONLY | O_CREAT);
	CHECK(r.ret == -1 && r.err == ENOENT,
	      "cwd holder: creating 'new' gave %ld (%s), not ENOENT", r.ret, strerror(r.err));
	dead = check_dead_dir(&s->cwd, ".", "cwd holder", &s->mntroot);
	/* "..": the directory the dead one was made in (a deleted directory's
	 * parent, as for any rmdir'ed cwd; its root is outside the mount, so
	 * absolute paths lead out anyway). What matters: not the unmounted
	 * filesystem, and not the dead directory's old place on it. */
	r = v_open(&s->cwd, "..", O_RDONLY | O_DIRECTORY);
	if (r.ret >= 0) {
		struct victim_res f =
		    victim_call(&s->cwd, VICTIM_REQ(.op = VOP_FSTAT, .fd = (int)r.ret));

		memcpy(&dead2, f.data, sizeof(dead2));
		CHECK(f.ret == 0 && dead2.st_dev != s->mntroot.st_dev,
		      "cwd holder: open(\"..\") from the dead directory is on the unmounted "
		      "filesystem (dev %u:%u ino %lu)",
		      major(dead2.st_dev), minor(dead2.st_dev), (unsigned long)dead2.st_ino);
	} else
		CHECK(r.err == ENOENT, "cwd holder: open(\"..\"): %s", strerror(r.err));
	r = v_open(&s->cwd, "/tmp/outside", O_RDONLY);
	CHECK(r.ret >= 0,
	      "cwd holder: absolute open(\"/tmp/outside\") failed: %s (its root was "
	      "not on the mount)",
	      strerror(r.err));

	/* chroot: every lookup, relative or absolute, fails; "/" is the dead directory */
	r = victim_call(&s->root, VICTIM_REQ(.op = VOP_GETCWD));
	CHECK(r.ret == -1 && r.err == ENOENT,
	      "chroot holder: getcwd gave %ld (%s) '%.*s', not ENOENT", r.ret, strerror(r.err),
	      (int)r.len, r.data);
	check_enoent(&s->root, VOP_OPEN, "/inside", "chroot holder");
	check_enoent(&s->root, VOP_OPEN, "inside", "chroot holder");
	check_enoent(&s->root, VOP_STAT, "/tmp", "chroot holder");
	check_enoent(&s->root, VOP_STAT, "/proc/self", "chroot holder");
	dead = check_dead_dir(&s->root, "/", "chroot holder", &s->mntroot);
	dead2 = check_dead_dir(&s->root, "..", "chroot holder", &s->mntroot);
	CHECK(dead.st_dev == dead2.st_dev && dead.st_ino == dead2.st_ino,
	      "chroot holder: \"..\" and \"/\" are different directories");
	dead2 = check_dead_dir(&s->root, "/../..", "chroot holder", &s->mntroot);
	CHECK(dead.st_dev == dead2.st_dev && dead.st_ino == dead2.st_ino,
	      "chroot holder: \"/../..\" escapes the dead directory");

	check_dead_fd(&s->sub, s->sfd, "submount holder");

	if (s->bind.pid) {
		check_reads(&s->bind, s->bfd, "bound file", "holder through the bind mount");
		check_alive(s->bind.pid, "holder through the bind mount");
	}
	check_reads(&s->parent, s->pfd, "parent mount", "holder on the parent mount");

	check_alive(s->reader.pid, "reader");
	check_alive(s->appender.pid, "appender");
	check_alive(s->mapper.pid, "mapper");
	check_alive(s->dir.pid, "directory reader");
	check_alive(s->cwd.pid, "cwd holder");
	check_alive(s->root.pid, "chroot holder");
	check_alive(s->sub.pid, "submount holder");
}

/* Nothing of the scene changed (a refusal, a dry run, a listing). */
static void scene_check_untouched(struct scene *s)
{
	struct victim_res r;

	CHECK(um_mount_id(UM_MNT) > 0, "%s is no longer mounted", UM_MNT);
	CHECK(um_mount_id(UM_SUB) > 0, "%s is no longer mounted", UM_SUB);
	check_reads(&s->reader, s->rfd, "readable", "reader");
	append_record(s, s->records++);
	r = v_load(&s->mapper, s->map);
	CHECK(r.sig == 0 && r.ret == 'Z', "mapper: load gave signal %d value %ld", r.sig, r.ret);
	r = victim_call(&s->dir, VICTIM_REQ(.op = VOP_FSTAT, .fd = s->dfd));
	CHECK(r.ret == 0, "directory reader: fstat gave %ld (%s)", r.ret, strerror(r.err));
	r = victim_call(&s->cwd, VICTIM_REQ(.op = VOP_GETCWD));
	CHECK(r.ret == 0 && strcmp(r.data, UM_MNT "/cwd") == 0, "cwd holder: getcwd '%s' (%s)",
	      r.data, strerror(r.err));
	r = v_open(&s->root, "/inside", O_RDONLY);
	CHECK(r.ret >= 0, "chroot holder: open(\"/inside\"): %s", strerror(r.err));
	check_reads(&s->sub, s->sfd, "submount", "submount holder");
}

/* The report of a forced unmount of the scene's mount. */
static void scene_check_report(struct scene *s, const struct revoke_report *rep, int want_state)
{
	struct {
		struct victim *v;
		const char *who;
		int ref;
		unsigned int target;
	} hs[] = {
	    {&s->reader, "reader", REVOKE_REF_FD, 0},
	    {&s->appender, "appender", REVOKE_REF_FD, 0},
	    {&s->mapper, "mapper", REVOKE_REF_MAP, 0},
	    {&s->dir, "directory reader", REVOKE_REF_FD, 0},
	    {&s->cwd, "cwd holder", REVOKE_REF_CWD, 0},
	    {&s->root, "chroot holder", REVOKE_REF_ROOT, 0},
	    {&s->sub, "submount holder", REVOKE_REF_FD, 1},
	};

	CHECK(rep, "no report");
	CHECK(rep->ntargets == 2, "%zu targets in the report, expected 2 (the mount, the submount)",
	      rep->ntargets);
	CHECK(strcmp(rep->targets[0].path, UM_MNT) == 0 &&
		  strcmp(rep->targets[1].path, UM_SUB) == 0,
	      "targets '%s', '%s', expected '%s', '%s'", rep->targets[0].path, rep->targets[1].path,
	      UM_MNT, UM_SUB);
	for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
		const struct revoke_holder *h = um_holder(rep, hs[i].v->pid);
		const struct revoke_ref *ref = um_ref(rep, h, hs[i].ref);

		CHECK(h, "%s (pid %d) is not in the report", hs[i].who, (int)hs[i].v->pid);
		CHECK(ref, "%s (pid %d) has no %s reference in the report", hs[i].who,
		      (int)hs[i].v->pid, revoke_ref_type_name(hs[i].ref));
		CHECK(ref->state == want_state, "%s: %s reference %s, expected %s", hs[i].who,
		      revoke_ref_type_name(hs[i].ref), revoke_state_name(ref->state),
		      revoke_state_name(want_state));
		CHECK(ref->target == hs[i].target, "%s: %s reference on target %u, expected %u",
		      hs[i].who, revoke_ref_type_name(hs[i].ref), ref->target, hs[i].target);
	}
	CHECK(um_ref(rep, um_holder(rep, s->root.pid), REVOKE_REF_CWD),
	      "the chroot holder's cwd (inside its root) is not in the report");
	if (s->bind.pid)
		CHECK(!um_holder(rep, s->bind.pid),
		      "the holder through the bind mount elsewhere (pid %d) is in the report",
		      (int)s->bind.pid);
	CHECK(!um_holder(rep, s->parent.pid), "the holder on the parent mount is in the report");
	CHECK(!um_holder(rep, getpid()), "the caller is in the report");
}

static unsigned long nunmounted(const struct revoke_report *rep)
{
	CHECK(rep->sz >= offsetof(struct revoke_report, nunmounted) + sizeof(rep->nunmounted),
	      "the report (sz %zu) has no nunmounted", rep->sz);
	return rep->nunmounted;
}

/* ---- the cases ---- */

/*
 * The whole scene, REVOKE_UMOUNT: every holder cut, both mounts unmounted,
 * the bind mount elsewhere and the parent untouched; then the image is checked.
 */
static void t_umount_ext4(void)
{
	struct revoke_report *rep;
	struct scene s;
	char log[4096];
	size_t n;
	int r;

	scene_start(&s, true);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	CHECK(r == 0, "revoke_ex(REVOKE_UMOUNT) failed: %m");
	scene_check_report(&s, rep, REVOKE_STATE_CUT);
	CHECK(nunmounted(rep) == 2, "nunmounted %lu, expected 2", nunmounted(rep));
	revoke_report_free(rep);

	CHECK(um_mount_id(UM_SUB) < 0, "the submount %s is still mounted", UM_SUB);
	CHECK(um_mount_id(UM_MNT) < 0, "%s is still mounted", UM_MNT);
	CHECK(um_mount_id(UM_ELSEWHERE) > 0, "the bind mount elsewhere %s was unmounted",
	      UM_ELSEWHERE);
	CHECK(um_mount_id("/tmp") > 0, "the parent mount /tmp was unmounted");
	scene_check_cut(&s);

	/* The bind mount keeps the filesystem: let it go, then look at the image. */
	CHECK(victim_call(&s.bind, VICTIM_REQ(.op = VOP_CLOSE, .fd = s.bfd)).ret == 0, "close");
	um_umount(UM_ELSEWHERE);
	CHECK(um_wait_loop_gone(s.loop), "%s still has %s behind it 5 s after the last unmount",
	      s.loop, UM_IMG);
	um_fsck(UM_IMG);
	um_mount_ro();
	n = um_slurp(UM_RO "/log", log, sizeof(log));
	{
		const char *why = um_check_records(log, n, 0, s.records);

		CHECK(!why, "the log after the unmount: %s", why);
	}
	n = um_slurp(UM_RO "/map", log, sizeof(log));
	CHECK(n == sizeof(log) && log[0] == 'Z',
	      "the mapped file starts with 0x%02x, not the 'Z' "
	      "stored through the mapping before the unmount",
	      (unsigned char)log[0]);
	{
		char page2[8];
		int fd = open(UM_RO "/map", O_RDONLY | O_CLOEXEC);

		CHECK(fd >= 0 && pread(fd, page2, 2, 4096) == 2, "read " UM_RO "/map: %m");
		close(fd);
		CHECK(page2[0] == 'Y' && page2[1] == 0,
		      "the mapped file's second page starts 0x%02x 0x%02x, expected 'Y' then 0 "
		      "(the store after the unmount must not land)",
		      (unsigned char)page2[0], (unsigned char)page2[1]);
	}
	um_umount(UM_RO);
}

/*
 * A tmpfs as the mount: forced unmount without a block device; a holder
 * through a bind mount of the same tmpfs is left alone, even on the same file.
 */
static void t_umount_tmpfs_bind_same_file(void)
{
	struct revoke_report *rep;
	struct victim a, b, c;
	int afd, bfd, r;

	um_isolate();
	um_mount_tmpfs("/tmp/t");
	um_mkdir("/tmp/t/d");
	test_write_file("/tmp/t/d/f", "same file");
	um_bind("/tmp/t/d", UM_ELSEWHERE);
	/* A and B hold the same inode, through the mount and through the bind. */
	victim_start(&a);
	afd = victim_open(&a, "/tmp/t/d/f", O_RDONLY);
	victim_start(&b);
	bfd = victim_open(&b, UM_ELSEWHERE "/f", O_RDONLY);
	victim_start(&c);
	v_must(&c, VOP_CHDIR, UM_ELSEWHERE);

	/* The bind mount is the target this time: only what goes through it. */
	r = um_call(UM_ELSEWHERE, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	CHECK(r == 0, "revoke_ex(REVOKE_UMOUNT) of the bind mount: %m");
	CHECK(rep->ntargets == 1 && strcmp(rep->targets[0].path, UM_ELSEWHERE) == 0,
	      "targets: %zu, first '%s'", rep->ntargets, rep->ntargets ? rep->targets[0].path : "");
	CHECK(um_holder(rep, b.pid) && um_holder(rep, c.pid),
	      "the bind's holders are not reported");
	CHECK(!um_holder(rep, a.pid),
	      "the holder of the same file through /tmp/t is in the report");
	CHECK(nunmounted(rep) == 1, "nunmounted %lu, expected 1", nunmounted(rep));
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_ELSEWHERE) < 0, "%s is still mounted", UM_ELSEWHERE);
	CHECK(um_mount_id("/tmp/t") > 0, "/tmp/t was unmounted");
	check_dead_fd(&b, bfd, "holder through the bind mount");
	r = victim_call(&c, VICTIM_REQ(.op = VOP_GETCWD)).err;
	CHECK(r == ENOENT, "cwd holder: getcwd: %s, not ENOENT", strerror(r));
	check_reads(&a, afd, "same file", "holder through the mount itself");
	CHECK(victim_call(&a, VICTIM_REQ(.op = VOP_CLOSE, .fd = afd)).ret == 0, "close");
	um_umount("/tmp/t");
}

/* REVOKE_MOUNT alone: everything cut, nothing unmounted; a plain umount then succeeds. */
static void t_mount_cut_only(void)
{
	struct revoke_report *rep;
	struct scene s;
	int r;

	scene_start(&s, false);
	r = um_call(UM_MNT, REVOKE_MOUNT, &rep);
	CHECK(r == 0, "revoke_ex(REVOKE_MOUNT): %m");
	scene_check_report(&s, rep, REVOKE_STATE_CUT);
	CHECK(nunmounted(rep) == 0, "nunmounted %lu without REVOKE_UMOUNT", nunmounted(rep));
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_MNT) > 0 && um_mount_id(UM_SUB) > 0,
	      "REVOKE_MOUNT without REVOKE_UMOUNT unmounted something");
	scene_check_cut(&s);
	/* Nobody holds them any more: umount(2) without MNT_DETACH works. */
	um_umount(UM_SUB);
	um_umount(UM_MNT);
	CHECK(um_wait_loop_gone(s.loop), "%s still has %s behind it", s.loop, UM_IMG);
	um_fsck(UM_IMG);
}

/* REVOKE_MOUNT | REVOKE_LIST_ONLY lists every holder per mount and changes nothing. */
static void t_mount_list(void)
{
	struct revoke_report *rep;
	struct scene s;
	int r;

	scene_start(&s, true);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_LIST_ONLY, &rep);
	CHECK(r == 0, "revoke_ex(REVOKE_MOUNT | REVOKE_LIST_ONLY): %m");
	scene_check_report(&s, rep, REVOKE_STATE_FOUND);
	revoke_report_free(rep);
	scene_check_untouched(&s);
	check_reads(&s.bind, s.bfd, "bound file", "holder through the bind mount");
}

/* REVOKE_NO_SUBMOUNTS: the mount alone; the submount's holder is not a target. */
static void t_mount_no_submounts(void)
{
	struct revoke_report *rep;
	struct scene s;
	int r;

	scene_start(&s, false);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_NO_SUBMOUNTS, &rep);
	CHECK(r == 0, "revoke_ex(REVOKE_MOUNT | REVOKE_NO_SUBMOUNTS): %m");
	CHECK(rep->ntargets == 1 && strcmp(rep->targets[0].path, UM_MNT) == 0,
	      "%zu targets, the first '%s': expected %s alone", rep->ntargets,
	      rep->ntargets ? rep->targets[0].path : "", UM_MNT);
	CHECK(um_holder(rep, s.reader.pid) && !um_holder(rep, s.sub.pid),
	      "the reader is %sin the report, the submount's holder %sin it",
	      um_holder(rep, s.reader.pid) ? "" : "not ", um_holder(rep, s.sub.pid) ? "" : "not ");
	revoke_report_free(rep);
	check_dead_fd(&s.reader, s.rfd, "reader");
	check_reads(&s.sub, s.sfd, "submount", "submount holder");
	CHECK(um_mount_id(UM_MNT) > 0 && um_mount_id(UM_SUB) > 0, "something was unmounted");
}

/* A program running from the mount: refused, nothing changed; its listing says why. */
static pid_t start_exe_holder(void)
{
	char exe[PATH_MAX], buf[PATH_MAX];
	const char *dst = UM_MNT "/sleep-copy";
	pid_t pid;

	um_copy(access("/bin/sleep", X_OK) == 0 ? "/bin/sleep" : "/usr/bin/sleep", dst, 0755);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(dst, "sleep-copy", "120", (char *)NULL);
		_exit(127);
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 1000; i++) { /* 10 s */
		ssize_t n = readlink(exe, buf, sizeof(buf) - 1);

		if (n > 0 && (buf[n] = 0, strcmp(buf, dst) == 0))
			return pid;
		usleep(10000);
	}
	test_fail("the program copied onto the mount did not start (exe '%s')", buf);
}

static void t_umount_exe_refused(void)
{
	struct revoke_report *rep;
	const struct revoke_holder *h;
	const struct revoke_ref *ref;
	struct scene s;
	pid_t exe;
	int r, e;

	scene_start(&s, false);
	exe = start_exe_holder();
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "revoke_ex(REVOKE_UMOUNT) with a program running from the "
	      "mount returned %d (%s), expected EBUSY",
	      r, strerror(e));
	CHECK(rep, "no report with the refusal");
	h = um_holder(rep, exe);
	CHECK(h, "the program running from the mount (pid %d) is not in the report", (int)exe);
	ref = um_ref(rep, h, REVOKE_REF_EXE);
	CHECK(ref && ref->state == REVOKE_STATE_UNREACHABLE && ref->error, "its exe reference: %s",
	      ref ? revoke_state_name(ref->state) : "missing");
	for (size_t j = 0; (ref = revoke_report_ref(rep, h, j)); j++)
		if (ref->type == REVOKE_REF_MAP && (ref->prot & PROT_EXEC))
			CHECK(ref->state == REVOKE_STATE_UNREACHABLE,
			      "its executable mapping is %s, not unreachable",
			      revoke_state_name(ref->state));
	CHECK(nunmounted(rep) == 0, "nunmounted %lu after a refusal", nunmounted(rep));
	revoke_report_free(rep);
	check_alive(exe, "the program running from the mount");
	CHECK(proc_tracer(exe) == 0, "the program was left traced");
	scene_check_untouched(&s);
}

/* With REVOKE_BEST_EFFORT the rest is cut, but the mount stays: not unmounted. */
static void t_umount_exe_best_effort(void)
{
	struct revoke_report *rep;
	struct scene s;
	pid_t exe;
	int r, e;

	scene_start(&s, false);
	exe = start_exe_holder();
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_BEST_EFFORT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "best effort with a program running from the mount returned "
	      "%d (%s), expected EBUSY",
	      r, strerror(e));
	CHECK(rep && rep->error == EBUSY, "report error %d", rep ? rep->error : -1);
	/* The cut went ahead, the unmount of the mount itself failed: phase
	 * "unmounting", and what still holds it. The submount (nobody's
	 * program runs from it) may have gone: the count says. */
	CHECK(rep->failed_phase == REVOKE_PHASE_UMOUNT,
	      "failed_phase %d (%s), expected REVOKE_PHASE_UMOUNT", rep->failed_phase,
	      revoke_phase_name(rep->failed_phase));
	CHECK(strstr(rep->failed_detail, UM_MNT),
	      "failed_detail '%s' does not say which mount is still held", rep->failed_detail);
	CHECK(nunmounted(rep) <= 1, "nunmounted %lu while a program runs from the mount",
	      nunmounted(rep));
	CHECK((nunmounted(rep) == 1) == (um_mount_id(UM_SUB) < 0),
	      "nunmounted %lu, but the submount is %s", nunmounted(rep),
	      um_mount_id(UM_SUB) < 0 ? "gone" : "still mounted");
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_MNT) > 0, "%s was unmounted under a running program", UM_MNT);
	check_alive(exe, "the program running from the mount");
	check_dead_fd(&s.reader, s.rfd, "reader");
	check_sigbus(&s.mapper, s.map, "mapper");
	CHECK(victim_call(&s.cwd, VICTIM_REQ(.op = VOP_GETCWD)).err == ENOENT,
	      "cwd holder: getcwd works after a best-effort cut");
}

/*
 * The sync comes first: with a program running from the mount, a best-effort
 * forced unmount cuts the rest and leaves the mount; the image as it is then
 * on the loop device (a copy, mounted: its journal replayed) already
 * holds every acknowledged record and the stores made through the mapping.
 * Without the syncfs they would sit in the page cache for up to 30 s.
 */
static void t_umount_synced_first(void)
{
	struct revoke_report *rep;
	struct scene s;
	char log[4096], *why;
	size_t n;
	int r;

	scene_start(&s, false);
	start_exe_holder();
	for (; s.records < 40; s.records++)
		append_record(&s, s.records);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_BEST_EFFORT, &rep);
	CHECK(r == -1 && errno == EBUSY,
	      "best effort with a program running from the mount: %d (%m)", r);
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_MNT) > 0, "%s was unmounted under a running program", UM_MNT);
	check_dead_fd(&s.appender, s.afd, "appender");

	um_copy(UM_IMG, "/tmp/img-copy", 0600);
	CHECK(mkdir(UM_RO, 0755) == 0, "mkdir: %m");
	/* Read-write: a read-only loop device could not replay the journal. */
	r = um_run("mount", "-o", "loop", "/tmp/img-copy", UM_RO);
	CHECK(r == 0, "mount -o loop the copy of the image: exit %d: %s", r, um_out);
	n = um_slurp(UM_RO "/log", log, sizeof(log));
	why = (char *)um_check_records(log, n, 0, s.records);
	CHECK(!why, "the log on the device right after the call: %s (was it synced first?)", why);
	n = um_slurp(UM_RO "/map", log, sizeof(log));
	CHECK(n == sizeof(log) && log[0] == 'Z',
	      "the mapped file on the device starts with 0x%02x, "
	      "not the 'Z' stored through the mapping before the call",
	      (unsigned char)log[0]);
	um_umount(UM_RO);
}

/* A loop device whose backing file is on the mount: refused, listed as "loop". */
static void t_umount_loop_refused(void)
{
	struct revoke_report *rep;
	const struct revoke_holder *h;
	const struct revoke_ref *ref;
	struct scene s;
	char loop[256];
	int r, e;

	scene_start(&s, false);
	um_make_file(UM_MNT "/backing", 1 << 20, 0600);
	um_loop_holder(UM_MNT "/backing", loop, sizeof(loop));
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "revoke_ex(REVOKE_UMOUNT) with %s backed by a file on the mount "
	      "returned %d (%s), expected EBUSY",
	      loop, r, strerror(e));
	h = um_kernel_holder(rep, loop);
	CHECK(h, "no holder with pid 0 and comm '%s' in the report", loop);
	ref = um_ref(rep, h, REVOKE_REF_LOOP);
	CHECK(ref && ref->state == REVOKE_STATE_UNREACHABLE, "its loop reference: %s",
	      ref ? revoke_state_name(ref->state) : "missing");
	revoke_report_free(rep);
	scene_check_untouched(&s);

	/* The dry run says no; the listing shows it too. */
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_LIST_ONLY, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "the dry run with %s returned %d (%s), expected EBUSY", loop,
	      r, strerror(e));
	revoke_report_free(rep);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_LIST_ONLY, &rep);
	CHECK(um_ref(rep, um_kernel_holder(rep, loop), REVOKE_REF_LOOP), "REVOKE_LIST_ONLY: no %s",
	      loop);
	revoke_report_free(rep);
}

/* An active swap file on the mount: refused, listed as "swap". */
static void t_umount_swap_refused(void)
{
	const char *swapfile = UM_MNT "/swapfile";
	struct revoke_report *rep;
	const struct revoke_holder *h;
	struct scene s;
	int r, e;

	scene_start(&s, false);
	um_make_file(swapfile, 4 << 20, 0600);
	r = um_run("mkswap", swapfile);
	if (r == 127)
		SKIP("mkswap is not installed");
	CHECK(r == 0, "mkswap: %s", um_out);
	if (swapon(swapfile, 0) < 0) {
		if (errno == ENOSYS)
			SKIP("this kernel has no swap (CONFIG_SWAP=n)");
		test_fail("swapon %s: %m", swapfile);
	}
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "revoke_ex(REVOKE_UMOUNT) with an active swap file returned "
	      "%d (%s), expected EBUSY",
	      r, strerror(e));
	h = um_kernel_holder(rep, "swap");
	CHECK(h && um_ref(rep, h, REVOKE_REF_SWAP) &&
		  um_ref(rep, h, REVOKE_REF_SWAP)->state == REVOKE_STATE_UNREACHABLE,
	      "no unreachable swap reference of a holder pid 0 'swap' in the report");
	revoke_report_free(rep);
	scene_check_untouched(&s);
	CHECK(swapoff(swapfile) == 0, "swapoff %s: %m", swapfile);
}

/* The filesystem mounted in another mount namespace: refused, listed as "mount". */
static void t_umount_other_namespace(void)
{
	struct revoke_report *rep;
	const struct revoke_holder *h;
	struct scene s;
	struct victim o;
	int sp[2], r, e;

	scene_start(&s, false);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	fflush(NULL);
	o.pid = fork();
	CHECK(o.pid >= 0, "fork: %m");
	if (o.pid == 0) {
		close(sp[0]);
		if (unshare(CLONE_NEWNS) < 0)
			_exit(1);
		victim_become(sp[1]);
	}
	close(sp[1]);
	o.sock = sp[0];
	CHECK(victim_call(&o, VICTIM_REQ(.op = VOP_PING)).ret > 0, "the other namespace's victim");
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "revoke_ex(REVOKE_UMOUNT) with the filesystem mounted in "
	      "another namespace returned %d (%s), expected EBUSY",
	      r, strerror(e));
	h = um_holder(rep, o.pid);
	CHECK(h && um_ref(rep, h, REVOKE_REF_MOUNT) &&
		  um_ref(rep, h, REVOKE_REF_MOUNT)->state == REVOKE_STATE_UNREACHABLE,
	      "the process of the other namespace (pid %d) has no unreachable 'mount' reference",
	      (int)o.pid);
	revoke_report_free(rep);
	scene_check_untouched(&s);
}

/* The same, for a filesystem without a device (tmpfs): its st_dev is an
 * anonymous number (major 0), one per super block, as good a key as a disk's. */
static void t_umount_other_namespace_tmpfs(void)
{
	struct revoke_report *rep;
	const struct revoke_holder *h;
	struct victim o;
	int sp[2], r, e;

	um_isolate();
	um_mount_tmpfs(UM_MNT);
	um_make_file(UM_MNT "/f", 4096, 0644);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0, "socketpair: %m");
	fflush(NULL);
	o.pid = fork();
	CHECK(o.pid >= 0, "fork: %m");
	if (o.pid == 0) {
		close(sp[0]);
		if (unshare(CLONE_NEWNS) < 0)
			_exit(1);
		victim_become(sp[1]);
	}
	close(sp[1]);
	o.sock = sp[0];
	CHECK(victim_call(&o, VICTIM_REQ(.op = VOP_PING)).ret > 0, "the other namespace's victim");
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "revoke_ex(REVOKE_UMOUNT) of a tmpfs also mounted in another namespace returned "
	      "%d (%s), expected EBUSY",
	      r, strerror(e));
	h = um_holder(rep, o.pid);
	CHECK(h && um_ref(rep, h, REVOKE_REF_MOUNT) &&
		  um_ref(rep, h, REVOKE_REF_MOUNT)->state == REVOKE_STATE_UNREACHABLE,
	      "the process of the other namespace (pid %d) has no unreachable 'mount' reference",
	      (int)o.pid);
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_MNT) >= 0, "the tmpfs was unmounted although refused");
}

/* REVOKE_UMOUNT | REVOKE_LIST_ONLY: 0 when it would go ahead, EBUSY when not; never a change. */
static void t_umount_dry_run(void)
{
	struct revoke_report *rep;
	struct scene s;
	int r, e;

	scene_start(&s, false);
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_LIST_ONLY, &rep);
	CHECK(r == 0, "the dry run of a mount whose every holder can be cut: %m");
	scene_check_report(&s, rep, REVOKE_STATE_FOUND);
	CHECK(nunmounted(rep) == 0, "nunmounted %lu in a dry run", nunmounted(rep));
	revoke_report_free(rep);
	scene_check_untouched(&s);

	start_exe_holder();
	r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_LIST_ONLY, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY,
	      "the dry run with a program running from the mount returned "
	      "%d (%s), expected EBUSY",
	      r, strerror(e));
	revoke_report_free(rep);
	scene_check_untouched(&s);
}

/* Not a mount point: EINVAL, nothing touched. */
static void t_not_mountpoint(void)
{
	static const char *const paths[] = {UM_MNT "/dir", UM_MNT "/read", UM_MNT "/cwd/"};
	struct revoke_report *rep;
	struct scene s;

	scene_start(&s, false);
	/* The control: the mount point itself is accepted. */
	CHECK(um_call(UM_MNT, REVOKE_MOUNT | REVOKE_LIST_ONLY, &rep) == 0,
	      "REVOKE_MOUNT | REVOKE_LIST_ONLY of the mount point %s: %m", UM_MNT);
	revoke_report_free(rep);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (unsigned int k = 0; k < 2; k++) {
			unsigned int f = k ? REVOKE_MOUNT | REVOKE_UMOUNT : REVOKE_MOUNT;
			int r = um_call(paths[i], f, &rep), e = errno;

			CHECK(r == -1 && e == EINVAL, "%s of %s returned %d (%s), expected EINVAL",
			      k ? "REVOKE_MOUNT | REVOKE_UMOUNT" : "REVOKE_MOUNT", paths[i], r,
			      strerror(e));
			revoke_report_free(rep);
		}
	scene_check_untouched(&s);
}

/*
 * Ten forced unmounts of one mount at once: one unmounts it, the others find
 * no mount point there any more (EINVAL); every holder cut once, none left
 * stopped or traced.
 */
#define RACERS 10
static void t_umount_concurrent(void)
{
	struct scene s;
	int go[2], res[2], ok = 0, einval = 0;
	char others[256] = "";

	scene_start(&s, false);
	CHECK(pipe2(go, O_CLOEXEC) == 0 && pipe2(res, O_CLOEXEC) == 0, "pipe2: %m");
	for (int i = 0; i < RACERS; i++) {
		pid_t pid;

		fflush(NULL);
		pid = fork();
		CHECK(pid >= 0, "fork: %m");
		if (pid == 0) {
			const char *paths[] = {UM_MNT};
			struct revoke_opts o = {.sz = sizeof(o),
						.flags = REVOKE_MOUNT | REVOKE_UMOUNT,
						.timeout_ms = 60000,
						.keep_fd = -1};
			int out[2];
			char c;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			if (read(go[0], &c, 1) < 0) /* until the test closes its end */
				_exit(1);
			out[0] = revoke_ex(paths, 1, &o, NULL);
			out[1] = out[0] < 0 ? errno : 0;
			_exit(write(res[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
		}
	}
	close(go[0]);
	close(res[1]);
	close(go[1]); /* all go */
	for (int i = 0; i < RACERS; i++) {
		int out[2];

		CHECK(read(res[0], out, sizeof(out)) == sizeof(out), "racer %d did not answer", i);
		if (out[0] == 0)
			ok++;
		else if (out[1] == EINVAL)
			einval++;
		else
			snprintf(others + strlen(others), sizeof(others) - strlen(others), " %s",
				 strerror(out[1]));
	}
	CHECK(ok == 1 && einval == RACERS - 1,
	      "%d of %d concurrent forced unmounts succeeded, %d found no mount point, the others "
	      "failed with:%s",
	      ok, RACERS, einval, others[0] ? others : " -");
	CHECK(um_mount_id(UM_MNT) < 0 && um_mount_id(UM_SUB) < 0, "still mounted");
	check_dead_fd(&s.reader, s.rfd, "reader");
	check_sigbus(&s.mapper, s.map, "mapper");
	CHECK(victim_call(&s.cwd, VICTIM_REQ(.op = VOP_GETCWD)).err == ENOENT, "cwd holder");
	for (pid_t p = 2; p < 64; p++) /* our pid namespace: our own processes */
		CHECK(proc_tracer(p) <= 0 && victim_state(p) != 't' && victim_state(p) != 'T',
		      "pid %d left traced (%ld) or stopped (%c)", (int)p, proc_tracer(p),
		      victim_state(p));
}

/* ---- holders that fork into the mount, and holders that exit ---------------- */

static void kill_namespace_but_us(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	CHECK(d, "opendir /proc: %m");
	while ((de = readdir(d))) {
		pid_t p = (pid_t)atoi(de->d_name);

		if (p > 1 && p != getpid())
			kill(p, SIGKILL);
	}
	closedir(d);
	while (waitpid(-1, NULL, WNOHANG) > 0 || errno == EINTR)
		;
}

/*
 * A process whose cwd is in the mount and that forks, every MS milliseconds
 * (at most 4000 times), a child that enters the mount by its path, opens a
 * file there and, with LINGER, keeps it (else exits within 16 ms): the set of
 * holders grows and shrinks while the unmount looks at it.
 */
static pid_t spawn_forker(int ms, bool linger)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (chdir(UM_MNT) < 0)
		_exit(2);
	for (int i = 0; i < 4000; i++) {
		pid_t c = fork();

		if (c == 0) {
			int fd;

			if (chdir(UM_MNT) < 0)
				_exit(0); /* unmounted: nothing to hold */
			fd = open(UM_MNT "/f", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				_exit(0);
			if (!linger) /* gone within 1-16 ms: mid-call */
				usleep(1000 + (useconds_t)(i * 7919 % 15000));
			else
				pause();
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep((useconds_t)ms * 1000);
	}
	pause();
	_exit(0);
}

/*
 * The unmount either goes (every holder cut, the mount gone) or is refused
 * with nothing cut; it never cuts everyone and then fails to unmount
 * because of a process forked meanwhile (issue 13, item 4), nor refuses
 * because a holder exited during the call (item 5).
 */
static void umount_trials(bool linger)
{
	um_isolate();
	for (int trial = 0; trial < 10; trial++) {
		struct revoke_report *rep = NULL;
		pid_t forker;
		size_t cut = 0;
		int r, e;

		CHECK(mkdir(UM_MNT, 0755) == 0 || errno == EEXIST, "mkdir: %m");
		CHECK(mount("none", UM_MNT, "tmpfs", 0, NULL) == 0, "mount tmpfs: %m");
		um_make_file(UM_MNT "/f", 4096, 0644);
		forker = spawn_forker(linger ? 3 : 1, linger);
		usleep(150000);
		r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
		e = errno;
		for (size_t i = 0; rep && i < rep->nholders; i++)
			for (size_t j = 0; j < rep->holders[i].nrefs; j++)
				cut += rep->holders[i].refs[j].state == REVOKE_STATE_CUT;
		if (!linger)
			CHECK(r == 0, "trial %d: a holder that exits made the unmount fail: %s",
			      trial, strerror(e));
		CHECK(r == 0 || (cut == 0 && rep && rep->failed_phase != REVOKE_PHASE_UMOUNT &&
				 um_mount_id(UM_MNT) > 0),
		      "trial %d: revoke_ex: %s after cutting %zu references (failed phase %d), the "
		      "mount %s",
		      trial, strerror(e), cut, rep ? rep->failed_phase : -1,
		      um_mount_id(UM_MNT) > 0 ? "still there" : "gone");
		CHECK(r != 0 || um_mount_id(UM_MNT) < 0, "trial %d: success, but still mounted",
		      trial);
		revoke_report_free(rep);
		kill(forker, SIGKILL);
		waitpid(forker, NULL, 0);
		/* The forker's children: every other process of our pid
		 * namespace (we are its pid 1). */
		kill_namespace_but_us();
		umount2(UM_MNT, MNT_DETACH);
	}
}

static void t_umount_fork_loop(void)
{
	umount_trials(true);
}

static void t_umount_holders_exit(void)
{
	umount_trials(false);
}

/* The names of what issue 10 added to the report. */
static void t_names(void)
{
	static const struct {
		int v;
		const char *name;
	} refs[] = {
	    {REVOKE_REF_SWAP, "swap"}, {REVOKE_REF_LOOP, "loop"}, {REVOKE_REF_MOUNT, "mount"}};
	const char *n;

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		n = revoke_ref_type_name(refs[i].v);
		CHECK(n && strcmp(n, refs[i].name) == 0,
		      "revoke_ref_type_name(%d) is '%s', not '%s'", refs[i].v, n ? n : "(NULL)",
		      refs[i].name);
	}
	n = revoke_phase_name(REVOKE_PHASE_UMOUNT);
	CHECK(n && strcmp(n, "unmounting") == 0,
	      "revoke_phase_name(REVOKE_PHASE_UMOUNT) is '%s', not 'unmounting'", n ? n : "(NULL)");
}

/* REVOKE_UMOUNT alone is the whole forced unmount: it implies REVOKE_MOUNT. */
static void t_umount_implies_mount(void)
{
	struct revoke_report *rep;
	struct scene s;
	int r, e;

	scene_start(&s, false);
	r = um_call(UM_MNT, REVOKE_UMOUNT, &rep);
	e = errno;
	CHECK(r == 0, "revoke_ex(REVOKE_UMOUNT) without REVOKE_MOUNT: %s", strerror(e));
	CHECK(rep && rep->ntargets == 2,
	      "%zu targets, expected the mount and its submount: REVOKE_UMOUNT did not take the "
	      "path as a mount point (afterwards %s is %s, the reader's fd %s)",
	      rep ? rep->ntargets : 0, UM_MNT, um_mount_id(UM_MNT) > 0 ? "still mounted" : "gone",
	      v_pread(&s.reader, s.rfd, 1).ret == 1 ? "still reads" : "is cut");
	CHECK(nunmounted(rep) == 2, "nunmounted %lu, expected 2", nunmounted(rep));
	revoke_report_free(rep);
	CHECK(um_mount_id(UM_MNT) < 0 && um_mount_id(UM_SUB) < 0, "still mounted");
	check_dead_fd(&s.reader, s.rfd, "reader");
}

/* ---- under load: writers and an fsx-like mapper while the unmount happens ---- */

#define LOAD_WRITERS 3
#define FSX_SIZE     (256 * 1024)
#define FSX_WHO	     LOAD_WRITERS

struct ack {
	uint32_t who, seq;
	int32_t status; /* 0: done; else how it ended: errno, or -SIGBUS */
	int32_t status2;
	uint64_t addr; /* the fsx mapper's mapping, for the diagnostics */
};

static int ack_pipe[2];

static uint64_t fsx_addr;

static void send_ack(uint32_t who, uint32_t seq, int32_t st, int32_t st2)
{
	struct ack a = {who, seq, st, st2, fsx_addr};

	while (write(ack_pipe[1], &a, sizeof(a)) < 0 && errno == EINTR)
		;
}

static void __attribute__((noreturn)) idle_forever(void)
{
	for (int i = 0; i < 600; i++)
		sleep(1);
	_exit(0);
}

static void __attribute__((noreturn)) writer_main(unsigned int w)
{
	char path[64], rec[UM_REC + 1];
	time_t end = time(NULL) + 30;
	int fd;

	snprintf(path, sizeof(path), UM_MNT "/log%u", w);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		send_ack(w, 0, errno, 0), _exit(1);
	for (uint32_t seq = 0;; seq++) {
		um_record(rec, w, seq);
		if (write(fd, rec, UM_REC) != UM_REC) {
			send_ack(w, seq, errno ? errno : EIO, 0);
			idle_forever();
		}
		send_ack(w, seq, 0, 0);
		if (time(NULL) > end) { /* bounded: nobody cut us */
			send_ack(w, seq + 1, ETIMEDOUT, 0);
			idle_forever();
		}
	}
}

/* A tiny deterministic generator: op SEQ of the fsx mapper. */
struct fsx_op {
	int kind; /* 0 pwrite, 1 store through the mapping, 2 check through read, 3 through the map
		   */
	size_t off, len;
	uint8_t seed;
};

static struct fsx_op fsx_op(uint32_t seq)
{
	uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull;
	struct fsx_op o;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	o.kind = (int)(x & 3);
	o.len = 1 + (size_t)((x >> 8) % 8192);
	o.off = (size_t)((x >> 24) % (FSX_SIZE - o.len));
	o.seed = (uint8_t)(x >> 56);
	return o;
}

static uint8_t fsx_byte(const struct fsx_op *o, size_t i)
{
	return (uint8_t)(o->seed + i * 7 + (i >> 8));
}

static void fsx_apply(uint8_t *shadow, const struct fsx_op *o)
{
	if (o->kind < 2)
		for (size_t i = 0; i < o->len; i++)
			shadow[o->off + i] = fsx_byte(o, i);
}

static sigjmp_buf fsx_jmp;
static void fsx_sigbus(int sig)
{
	siglongjmp(fsx_jmp, sig);
}

/* The descriptor failed with E at op SEQ: the mapping must fault at once too
 * (the cut is one step for the holder). Reports both and goes idle. */
static void __attribute__((noreturn)) fsx_fd_failed(uint32_t seq, int e, uint8_t *map)
{
	volatile int st2 = 0;

	if (sigsetjmp(fsx_jmp, 1) == 0)
		(void)*(volatile uint8_t *)map;
	else
		st2 = -SIGBUS;
	send_ack(FSX_WHO, seq, e ? e : EIO, st2);
	idle_forever();
}

static void __attribute__((noreturn)) fsx_main(void)
{
	static uint8_t shadow[FSX_SIZE], buf[8192];
	struct sigaction sa = {.sa_handler = fsx_sigbus};
	time_t end = time(NULL) + 30;
	volatile uint32_t seq = 0;
	uint8_t *volatile map;
	int fd = open(UM_MNT "/fsx", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		send_ack(FSX_WHO, 0, errno, 0), _exit(1);
	map = mmap(NULL, FSX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		send_ack(FSX_WHO, 0, errno, 0), _exit(1);
	fsx_addr = (uint64_t)(uintptr_t)map;
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(fsx_jmp, 1)) {
		/* The mapping faulted: the descriptor must be dead too. */
		int st2 = pwrite(fd, buf, 1, 0) < 0 ? errno : 0;

		send_ack(FSX_WHO, seq, -SIGBUS, st2);
		idle_forever();
	}
	for (;; seq++) {
		struct fsx_op o = fsx_op(seq);
		int bad = 0;

		switch (o.kind) {
		case 0:
			for (size_t i = 0; i < o.len; i++)
				buf[i] = fsx_byte(&o, i);
			if (pwrite(fd, buf, o.len, (off_t)o.off) != (ssize_t)o.len)
				fsx_fd_failed(seq, errno, map);
			break;
		case 1:
			for (size_t i = 0; i < o.len; i++)
				map[o.off + i] = fsx_byte(&o, i);
			break;
		case 2:
			if (pread(fd, buf, o.len, (off_t)o.off) != (ssize_t)o.len)
				fsx_fd_failed(seq, errno, map);
			bad = memcmp(buf, shadow + o.off, o.len) != 0;
			break;
		default:
			bad = memcmp((const void *)(map + o.off), shadow + o.off, o.len) != 0;
		}
		if (bad) { /* the page cache disagrees with what we wrote: a real bug */
			send_ack(FSX_WHO, seq, -1000, 0);
			idle_forever();
		}
		fsx_apply(shadow, &o);
		send_ack(FSX_WHO, seq, 0, 0);
		if (time(NULL) > end) {
			send_ack(FSX_WHO, seq + 1, ETIMEDOUT, 0);
			idle_forever();
		}
	}
}

struct load {
	pid_t pid[LOAD_WRITERS + 1];
	uint32_t acked[LOAD_WRITERS + 1]; /* acknowledged ops */
	bool ended[LOAD_WRITERS + 1];
	int32_t status[LOAD_WRITERS + 1], status2[LOAD_WRITERS + 1];
	uint64_t fsx_addr;
	uint32_t end_seq[LOAD_WRITERS + 1]; /* the op that failed */
	pthread_mutex_t lock;
	volatile bool stop;
};

static void *drain_acks(void *p)
{
	static struct ack buf[256];
	struct load *l = p;
	size_t have = 0; /* bytes in buf */

	while (!l->stop) {
		struct pollfd pfd = {.fd = ack_pipe[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = read(ack_pipe[0], (char *)buf + have, sizeof(buf) - have);
		if (n <= 0)
			continue;
		have += (size_t)n;
		pthread_mutex_lock(&l->lock);
		for (size_t i = 0; i < have / sizeof(struct ack); i++) {
			const struct ack *a = &buf[i];

			if (a->who > LOAD_WRITERS || l->ended[a->who])
				continue;
			if (a->status == 0 && a->seq != l->acked[a->who]) {
				l->ended[a->who] = true; /* out of order: an ack was lost */
				l->status[a->who] = -2000;
				l->end_seq[a->who] = a->seq;
			} else if (a->status == 0) {
				l->acked[a->who] = a->seq + 1;
			} else {
				l->ended[a->who] = true;
				l->status[a->who] = a->status;
				l->status2[a->who] = a->status2;
				l->end_seq[a->who] = a->seq;
				if (a->who == FSX_WHO)
					l->fsx_addr = a->addr;
			}
		}
		pthread_mutex_unlock(&l->lock);
		memmove(buf, (char *)buf + have / sizeof(struct ack) * sizeof(struct ack),
			have % sizeof(struct ack));
		have %= sizeof(struct ack);
	}
	return NULL;
}

static uint32_t load_acked(struct load *l, unsigned int who)
{
	uint32_t n;

	pthread_mutex_lock(&l->lock);
	n = l->acked[who];
	pthread_mutex_unlock(&l->lock);
	return n;
}

static bool load_ended(struct load *l, unsigned int who)
{
	bool e;

	pthread_mutex_lock(&l->lock);
	e = l->ended[who];
	pthread_mutex_unlock(&l->lock);
	return e;
}

/* PID's mapping at ADDR: its line of /proc/PID/smaps (with Rss) and the size
 * of the file behind it, for a failure's message. */
static void print_maps_at(pid_t pid, uint64_t addr)
{
	char path[128], line[512];
	int show = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	fprintf(stderr, "  pid %d mapped its file at %#" PRIx64 "; that mapping now:\n", (int)pid,
		addr);
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &a, &b) == 2) {
			show = a <= addr && addr < b;
			if (show) {
				struct stat st;

				snprintf(path, sizeof(path),
					 "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, a, b);
				if (stat(path, &st) == 0)
					fprintf(stderr, "    (its file: %lld bytes, %lu links)\n",
						(long long)st.st_size, (unsigned long)st.st_nlink);
			}
		}
		if (show && (strchr(line, '/') || strncmp(line, "Rss", 3) == 0 ||
			     strncmp(line, "Size", 4) == 0 || strncmp(line, "VmFlags", 7) == 0))
			fprintf(stderr, "    %s", line);
	}
	fclose(f);
}

static void load_case(bool command)
{
	static uint8_t expect[FSX_SIZE], got[FSX_SIZE];
	static char log[16 << 20];
	struct load l = {.lock = PTHREAD_MUTEX_INITIALIZER};
	char loop[256];
	pthread_t drainer;
	int r;

	um_isolate();
	um_ext4(64);
	um_make_file(UM_MNT "/fsx", FSX_SIZE, 0644);
	um_mount_tmpfs(UM_SUB);
	um_loop_of_mount(UM_MNT, loop, sizeof(loop));
	CHECK(pipe2(ack_pipe, O_CLOEXEC) == 0, "pipe2: %m");
	CHECK(pthread_create(&drainer, NULL, drain_acks, &l) == 0, "pthread_create");
	for (unsigned int w = 0; w <= LOAD_WRITERS; w++) {
		fflush(NULL);
		l.pid[w] = fork();
		CHECK(l.pid[w] >= 0, "fork: %m");
		if (l.pid[w] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(ack_pipe[0]);
			if (w == FSX_WHO)
				fsx_main();
			writer_main(w);
		}
	}
	/* Until every one of them is well under way (bounded). */
	for (int i = 0; i < 1000; i++) {
		bool all = true;

		for (unsigned int w = 0; w <= LOAD_WRITERS; w++) {
			CHECK(!load_ended(&l, w), "loader %u ended before the unmount: status %d",
			      w, l.status[w]);
			all &= load_acked(&l, w) >= 200;
		}
		if (all)
			break;
		usleep(10000);
	}
	usleep(200000);

	if (command) {
		r = um_run(REVOKE_BUILDDIR "/tools/revoke", "--umount", "--timeout", "60", UM_MNT);
		CHECK(r == 0, "revoke --umount %s under load: exit %d:\n%s", UM_MNT, r, um_out);
	} else {
		struct revoke_report *rep;

		r = um_call(UM_MNT, REVOKE_MOUNT | REVOKE_UMOUNT, &rep);
		CHECK(r == 0, "revoke_ex(REVOKE_UMOUNT) under load: %m");
		CHECK(nunmounted(rep) == 2, "nunmounted %lu, expected 2", nunmounted(rep));
		for (unsigned int w = 0; w <= LOAD_WRITERS; w++)
			CHECK(um_holder(rep, l.pid[w]), "loader %u (pid %d) is not in the report",
			      w, (int)l.pid[w]);
		revoke_report_free(rep);
	}
	CHECK(um_mount_id(UM_MNT) < 0 && um_mount_id(UM_SUB) < 0, "still mounted after the call");

	/* Every loader must notice within 5 s: nobody writes on after the call. */
	for (int i = 0; i < 500; i++) {
		bool all = true;

		for (unsigned int w = 0; w <= LOAD_WRITERS; w++)
			all &= load_ended(&l, w);
		if (all)
			break;
		usleep(10000);
	}
	l.stop = true;
	pthread_join(drainer, NULL);
	for (unsigned int w = 0; w < LOAD_WRITERS; w++) {
		CHECK(l.ended[w], "writer %u still writes after the unmount (%u records acked)", w,
		      l.acked[w]);
		CHECK(l.status[w] == EBADF, "writer %u: record %u failed with %s, expected EBADF",
		      w, l.end_seq[w], l.status[w] > 0 ? strerror(l.status[w]) : "(ack lost)");
		check_alive(l.pid[w], "writer");
	}
	CHECK(l.ended[FSX_WHO], "the mapper still runs after the unmount (%u ops acked)",
	      l.acked[FSX_WHO]);
	CHECK(l.status[FSX_WHO] != -1000, "the mapper saw other bytes than it wrote, at op %u",
	      l.end_seq[FSX_WHO]);
	if (!((l.status[FSX_WHO] == -SIGBUS && l.status2[FSX_WHO] == EBADF) ||
	      (l.status[FSX_WHO] == EBADF && l.status2[FSX_WHO] == -SIGBUS)))
		print_maps_at(l.pid[FSX_WHO], l.fsx_addr);
	CHECK((l.status[FSX_WHO] == -SIGBUS && l.status2[FSX_WHO] == EBADF) ||
		  (l.status[FSX_WHO] == EBADF && l.status2[FSX_WHO] == -SIGBUS),
	      "the mapper's op %u ended with %d then %d; expected SIGBUS on the mapping and EBADF "
	      "on the descriptor",
	      l.end_seq[FSX_WHO], l.status[FSX_WHO], l.status2[FSX_WHO]);
	check_alive(l.pid[FSX_WHO], "the fsx mapper");

	CHECK(um_wait_loop_gone(loop), "%s still has %s behind it 5 s after the unmount", loop,
	      UM_IMG);
	um_fsck(UM_IMG);
	um_mount_ro();
	for (unsigned int w = 0; w < LOAD_WRITERS; w++) {
		char path[64];
		size_t n;
		const char *why;

		snprintf(path, sizeof(path), UM_RO "/log%u", w);
		n = um_slurp(path, log, sizeof(log));
		CHECK(n < sizeof(log), "log%u is larger than %zu bytes", w, sizeof(log));
		why = um_check_records(log, n, w, l.acked[w]);
		CHECK(!why, "log%u: %s (every acknowledged record, nothing after the call)", w,
		      why);
	}
	/* The mapper's file: every acknowledged op; the one it was in may have landed in part. */
	memset(expect, 0, sizeof(expect));
	for (uint32_t k = 0; k < l.acked[FSX_WHO]; k++) {
		struct fsx_op o = fsx_op(k);

		fsx_apply(expect, &o);
	}
	CHECK(um_slurp(UM_RO "/fsx", (char *)got, sizeof(got)) == FSX_SIZE, "fsx file size");
	{
		struct fsx_op o = fsx_op(l.acked[FSX_WHO]);

		for (size_t i = 0; i < FSX_SIZE; i++) {
			bool inflight = o.kind < 2 && i >= o.off && i < o.off + o.len &&
					got[i] == fsx_byte(&o, i - o.off);

			CHECK(got[i] == expect[i] || inflight,
			      "fsx file byte %zu is 0x%02x, expected 0x%02x after %u acknowledged "
			      "ops (op %u in flight: kind %d at %zu+%zu)",
			      i, got[i], expect[i], l.acked[FSX_WHO], l.acked[FSX_WHO], o.kind,
			      o.off, o.len);
		}
	}
	um_umount(UM_RO);
}

static void t_umount_load(void)
{
	load_case(false);
}

static void t_umount_load_command(void)
{
	load_case(true);
}

TEST_MAIN("revoke-umount", {"umount_ext4", t_umount_ext4, 120},
	  {"umount_fork_loop", t_umount_fork_loop, 120},
	  {"umount_holders_exit", t_umount_holders_exit, 120},
	  {"umount_tmpfs_bind_same_file", t_umount_tmpfs_bind_same_file, 60},
	  {"mount_cut_only", t_mount_cut_only, 120},
	  {"mount_no_submounts", t_mount_no_submounts, 120}, {"mount_list", t_mount_list, 120},
	  {"umount_exe_refused", t_umount_exe_refused, 120},
	  {"umount_exe_best_effort", t_umount_exe_best_effort, 120},
	  {"umount_synced_first", t_umount_synced_first, 120},
	  {"umount_loop_refused", t_umount_loop_refused, 120},
	  {"umount_swap_refused", t_umount_swap_refused, 120},
	  {"umount_other_namespace", t_umount_other_namespace, 120},
	  {"umount_other_namespace_tmpfs", t_umount_other_namespace_tmpfs, 60},
	  {"umount_dry_run", t_umount_dry_run, 120},
	  {"umount_implies_mount", t_umount_implies_mount, 120},
	  {"umount_concurrent", t_umount_concurrent, 180}, {"names", t_names, 10},
	  {"not_mountpoint", t_not_mountpoint, 120}, {"umount_load", t_umount_load, 180},
	  {"umount_load_command", t_umount_load_command, 180}, )
