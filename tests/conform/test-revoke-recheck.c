/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holders who may no longer hold the file (REVOKE_RECHECK, revoke --recheck;
 * issue 18, part 2): after a chmod, a chown or an ACL change, only the
 * holders whose credentials would no longer let them open the file in the
 * mode they hold it are cut; a reader still allowed to read keeps reading
 * (and is not in the report), root's holder (CAP_DAC_OVERRIDE) too. Holders
 * of several users and modes; the kernel's answer, so that groups, ACLs and
 * capabilities count.
 */
#include <grp.h>
#include <sys/xattr.h>

#include "conform.h"

#define NOBODY 65534

static int recheck(unsigned int flags, struct revoke_report **rep)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {.sz = sizeof(o), .flags = REVOKE_RECHECK | flags, .keep_fd = -1};

	return test_revoke_ex(paths, 1, &o, rep);
}

static void shared_file(mode_t mode)
{
	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(chmod(tdir, 0755) == 0 && chmod(tpath, mode) == 0, "chmod: %m");
}

/* FD of V: WANT 0, it still reads "hello" (or, write-only, writes one byte
 * at the end); WANT EBADF, it was cut. */
static void check_fd(struct victim *v, int fd, bool writer, int want)
{
	struct victim_res r;

	if (writer)
		r = victim_call(v, VICTIM_REQ(.op = VOP_WRITE, .fd = fd, .len = 0));
	else
		r = victim_call(v, VICTIM_REQ(.op = VOP_PREAD, .fd = fd, .len = 5, .arg = 0));
	if (want)
		CHECK(r.ret == -1 && r.err == want, "pid %d fd %d: %s gave %ld (%s), expected %s",
		      (int)v->pid, fd, writer ? "write" : "pread", r.ret, strerror(r.err),
		      strerror(want));
	else
		CHECK(r.ret >= 0 && (writer || memcmp(r.data, "hello", 5) == 0),
		      "pid %d fd %d: %s gave %ld (%s)", (int)v->pid, fd, writer ? "write" : "pread",
		      r.ret, strerror(r.err));
}

/*
 * 0666, then 0644: nobody's writer and 60002's read-write holder may no
 * longer write: cut; nobody's reader may still read, root may do anything:
 * untouched. Before the chmod a recheck cuts no one.
 */
static void t_chmod(void)
{
	struct revoke_report *rep = NULL;
	struct victim r, w, u, root;
	int rfd, wfd, ufd;

	shared_file(0666);
	victim_start_as(&r, NOBODY, NOBODY, NULL, 0);
	victim_start_as(&w, NOBODY, NOBODY, NULL, 0);
	victim_start_as(&u, 60002, 60002, NULL, 0);
	rfd = victim_open(&r, tpath, O_RDONLY);
	wfd = victim_open(&w, tpath, O_WRONLY | O_APPEND);
	ufd = victim_open(&u, tpath, O_RDWR);
	root = victim_run(holder_main);
	recv_msg(&root);

	CHECK(recheck(0, &rep) == 0, "recheck before the chmod: %m");
	CHECK(rep && rep->nholders == 0, "a recheck before the chmod found %zu holders",
	      rep ? rep->nholders : 0);
	revoke_report_free(rep);
	rep = NULL;
	check_fd(&w, wfd, true, 0);

	CHECK(chmod(tpath, 0644) == 0, "chmod: %m");
	CHECK(recheck(0, &rep) == 0, "recheck after chmod 0644: %m");
	check_fd(&w, wfd, true, EBADF);
	check_fd(&u, ufd, false, EBADF);
	check_fd(&r, rfd, false, 0);
	CHECK_READS(&root);
	CHECK(find_holder(rep, w.pid) && find_holder(rep, u.pid) && !find_holder(rep, r.pid) &&
		  !find_holder(rep, root.pid),
	      "the report is not the writers alone");
	revoke_report_free(rep);
}

/*
 * 0640, owner 60001, group 60010: 60001 holds it read-write, 60002 (60010
 * a supplementary group) and 60003 (60010 its primary group) read it.
 * Given to 60004: 60001 is neither owner nor in the group: cut; the group's
 * readers read on.
 */
static void t_chown(void)
{
	static const gid_t grp[] = {60010};
	struct victim a, b, c;
	int afd, bfd, cfd;

	shared_file(0640);
	CHECK(chown(tpath, 60001, 60010) == 0, "chown: %m");
	victim_start_as(&a, 60001, 60001, NULL, 0);
	victim_start_as(&b, 60002, 60002, grp, 1);
	victim_start_as(&c, 60003, 60010, NULL, 0);
	afd = victim_open(&a, tpath, O_RDWR);
	bfd = victim_open(&b, tpath, O_RDONLY);
	cfd = victim_open(&c, tpath, O_RDONLY);

	CHECK(chown(tpath, 60004, -1) == 0, "chown: %m");
	CHECK(recheck(0, NULL) == 0, "recheck after the chown: %m");
	check_fd(&a, afd, false, EBADF);
	check_fd(&b, bfd, false, 0);
	check_fd(&c, cfd, false, 0);
}

/* POSIX ACL xattr (the kernel's format, <linux/posix_acl_xattr.h>). */
struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

/* tpath's ACL: owner rw, user NOBODY PERM, group and other nothing, mask rw. */
static int set_acl(unsigned int perm)
{
	struct {
		uint32_t version;
		struct acl_entry e[5];
	} acl = {2,
		 {{0x01, 6, UINT32_MAX},
		  {0x02, (uint16_t)perm, NOBODY},
		  {0x04, 0, UINT32_MAX},
		  {0x10, 6, UINT32_MAX},
		  {0x20, 0, UINT32_MAX}}};

	return setxattr(tpath, "system.posix_acl_access", &acl, sizeof(acl), 0);
}

/*
 * 0600 and an ACL entry giving nobody read-write; nobody holds it
 * read-write and read-only. The entry becomes read-only: the read-write
 * holder is cut, the reader reads on (the mode bits never changed).
 */
static void t_acl(void)
{
	struct victim rw, ro;
	int rwfd, rofd;

	shared_file(0600);
	if (set_acl(6) < 0) {
		CHECK(errno == EOPNOTSUPP, "setxattr(system.posix_acl_access): %m");
		SKIP("the scratch file system has no POSIX ACLs (%s)", tdir);
	}
	victim_start_as(&rw, NOBODY, NOBODY, NULL, 0);
	victim_start_as(&ro, NOBODY, NOBODY, NULL, 0);
	rwfd = victim_open(&rw, tpath, O_RDWR);
	rofd = victim_open(&ro, tpath, O_RDONLY);

	CHECK(set_acl(4) == 0, "setxattr: %m");
	CHECK(recheck(0, NULL) == 0, "recheck after the ACL change: %m");
	check_fd(&rw, rwfd, false, EBADF);
	check_fd(&ro, rofd, false, 0);
}

/* --list: only the holders that would be cut; nothing changed. */
static void t_list(void)
{
	struct revoke_report *rep = NULL;
	struct victim r, w;
	int rfd, wfd;

	shared_file(0666);
	victim_start_as(&r, NOBODY, NOBODY, NULL, 0);
	victim_start_as(&w, NOBODY, NOBODY, NULL, 0);
	rfd = victim_open(&r, tpath, O_RDONLY);
	wfd = victim_open(&w, tpath, O_WRONLY);
	CHECK(chmod(tpath, 0444) == 0, "chmod: %m");
	CHECK(recheck(REVOKE_LIST_ONLY, &rep) == 0, "recheck --list: %m");
	CHECK(find_holder(rep, w.pid) && !find_holder(rep, r.pid),
	      "the listing is not the writer alone");
	check_fd(&w, wfd, true, 0);
	check_fd(&r, rfd, false, 0);
	revoke_report_free(rep);
}

TEST_MAIN("revoke-recheck", {"chmod", t_chmod, 30}, {"chown", t_chown, 30}, {"acl", t_acl, 30},
	  {"list", t_list, 30}, )
