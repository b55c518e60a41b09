/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device aliases (issue 14, part 2): a character or block device is the same
 * file whatever node opened it. A holder of another node of the device (a
 * container's mknod'ed /dev, a second devtmpfs) is reached by a revoke or a
 * listing of one node; a holder of another device is not.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "conform.h"

/* The device the cases use: /dev/fuse (10:229), which any root may open and
 * every process does not share. */
#define DEVICE "/dev/fuse"

static char alias[160];

/* Opens PATH (a device node) and waits: its descriptor is v[1]. */
static const char *g_open;

static void v_dev_holder(int sock)
{
	int fd = open(g_open, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	victim_recv(sock);
	_exit(0);
}

struct dev_holder {
	struct victim v;
	int fd;
};

static struct dev_holder dev_holder(const char *path)
{
	struct dev_holder h;

	g_open = path;
	h.v = spawn(v_dev_holder);
	h.fd = (int)recv_msg(&h.v).v[1];
	return h;
}

/* Whether H's descriptor is the dead one a revoke leaves (fstat works on
 * it too: an O_PATH descriptor of an empty memfd). */
static bool cut(const struct dev_holder *h)
{
	char link[64], buf[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)h->v.pid, h->fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = 0;
	return strcmp(buf, "/memfd:revoked (deleted)") == 0;
}

/* An alias of DEVICE in the scratch directory, or SKIP. */
static void make_alias(void)
{
	struct stat st;

	if (stat(DEVICE, &st) < 0 || !S_ISCHR(st.st_mode))
		SKIP("no %s here", DEVICE);
	make_scratch();
	snprintf(alias, sizeof(alias), "%s/alias", tdir);
	CHECK(mknod(alias, S_IFCHR | 0600, st.st_rdev) == 0, "mknod %s: %m", alias);
}

static int revoke_dev(const char *path, unsigned int flags, struct revoke_report **rep)
{
	struct revoke_opts o = {.sz = sizeof(o), .flags = flags, .keep_fd = -1};

	return revoke_ex(&path, 1, &o, rep);
}

/* A revoke of the device's own node cuts the holder of its alias too. */
static void t_alias_cut(void)
{
	struct dev_holder a, d;

	make_alias();
	a = dev_holder(alias);
	d = dev_holder(DEVICE);
	CHECK(revoke_dev(DEVICE, 0, NULL) == 0, "revoke %s: %m", DEVICE);
	CHECK(cut(&a), "the alias's holder still has it");
	CHECK(cut(&d), "the node's holder still has it");
}

/* And the other way round: revoking the alias reaches the device's node. */
static void t_alias_named(void)
{
	struct dev_holder d;

	make_alias();
	d = dev_holder(DEVICE);
	CHECK(revoke_dev(alias, 0, NULL) == 0, "revoke %s: %m", alias);
	CHECK(cut(&d), "revoking an alias left %s's holder", DEVICE);
}

/* A listing of one node shows the holders of its other nodes; another
 * device's holder is neither listed nor touched. */
static void t_alias_listed_other_untouched(void)
{
	struct revoke_report *rep = NULL;
	struct dev_holder a, other;

	make_alias();
	a = dev_holder(alias);
	other = dev_holder("/dev/net/tun");
	CHECK(revoke_dev(DEVICE, REVOKE_LIST_ONLY, &rep) == 0, "list %s: %m", DEVICE);
	CHECK(find_holder(rep, a.v.pid), "the listing of %s misses the holder of %s", DEVICE,
	      alias);
	CHECK(!find_holder(rep, other.v.pid), "the listing of %s shows /dev/net/tun's holder",
	      DEVICE);
	revoke_report_free(rep);
	CHECK(revoke_dev(DEVICE, 0, NULL) == 0, "revoke %s: %m", DEVICE);
	CHECK(!cut(&other), "another device's holder lost it");
	CHECK(cut(&a), "the alias's holder still has it");
}

TEST_MAIN("revoke-alias", {"alias_cut", t_alias_cut, 30}, {"alias_named", t_alias_named, 30},
	  {"alias_listed_other_untouched", t_alias_listed_other_untouched, 30}, )
