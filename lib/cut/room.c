/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Room in a holder's descriptor table for its program's own descriptors,
 * found before any program runs (cut.h).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/io_uring.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cut/cut.h"

static int rv_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The descriptor numbers of H's table, sorted; their count, or -errno. */
static int list_fds(const struct rv_holder *h, int **ret)
{
	_cleanup_free_ int *v = NULL;
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;

	/* The injecting thread's view: the leader may be a zombie. */
	if (h->self)
		d = rv_proc_opendir(RV_PROC_SELF, 0, "fd");
	else
		d = rv_proc_opendir(h->pub.pid, rv_tracee_tid(h->tracee), "fd");
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		int fd;

		if (rv_parse_int(de->d_name, &fd) < 0)
			continue;
		if (n == cap) {
			int *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = fd;
	}
	closedir(d);
	/* v is NULL when there are none: qsort must not see it. */
	if (n > 1)
		qsort(v, n, sizeof(*v), rv_cmp_int);
	*ret = TAKE_PTR(v);
	return (int)n;
}

/*
 * Room in H's table for its program's own descriptors, decided before any
 * program runs: the soft RLIMIT_NOFILE is raised inside the holder by what
 * the slots take (ROOM->raise_op), and where the hard limit leaves too little
 * it is raised from outside now (CAP_SYS_RESOURCE) and put back by the
 * program itself at its end (lowering one's own limit needs no privilege),
 * or the holder is refused with nothing changed: -EMFILE, WHY says why.
 */
int rv_cut_make_room(struct rv_holder *h, struct rv_prog *p, struct rv_room *room, char *why,
		     size_t size)
{
	pid_t pid = h->self ? 0 : h->pub.pid;
	_cleanup_free_ int *fds = NULL;
	struct rlimit lim, raised;
	rlim_t limit, free_slots = 0;
	int n, k = 0;

	if (room->raise_op < 0 || room->nfds == 0)
		return 0;
	/* Not allowed to read it (another user's process, without
	 * CAP_SYS_RESOURCE): the program's own raise does what it can. */
	if (prlimit(pid, RLIMIT_NOFILE, NULL, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
		return 0;
	n = list_fds(h, &fds);
	if (n < 0)
		return 0;
	/* The first limit under which the table has nfds free slots. */
	for (limit = 0; free_slots < room->nfds; limit++) {
		while (k < n && (rlim_t)fds[k] < limit)
			k++;
		if (k < n && (rlim_t)fds[k] == limit)
			continue;
		free_slots++;
	}
	if (limit <= lim.rlim_cur)
		return 0;
	p->ops[room->raise_op].args[0] = (int64_t)(limit - lim.rlim_cur);
	if (lim.rlim_max != RLIM_INFINITY && limit > lim.rlim_max) {
		uint64_t orig[2] = {lim.rlim_cur, lim.rlim_max};

		raised = (struct rlimit){lim.rlim_cur, limit};
		if (prlimit(pid, RLIMIT_NOFILE, &raised, NULL) < 0) {
			snprintf(
			    why, size,
			    "descriptor table full up to its hard RLIMIT_NOFILE (%llu): raising "
			    "it needs CAP_SYS_RESOURCE",
			    (unsigned long long)lim.rlim_max);
			return -EMFILE;
		}
		room->raised = true;
		room->orig = lim;
		memcpy(p->data + room->orig_off, orig, sizeof(orig));
		p->ops[room->restore_op].args[1] = room->orig_off;
	}
	return 0;
}

/* Puts back a hard limit rv_cut_make_room() raised, unless the program did. */
void rv_cut_unmake_room(const struct rv_holder *h, struct rv_room *room)
{
	pid_t pid = h->self ? 0 : h->pub.pid;
	struct rlimit now;

	if (!room->raised)
		return;
	if (prlimit(pid, RLIMIT_NOFILE, NULL, &now) == 0 && now.rlim_max != room->orig.rlim_max)
		(void)prlimit(pid, RLIMIT_NOFILE, &room->orig, NULL);
	room->raised = false;
}
