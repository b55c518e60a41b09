/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a cut did, as /proc shows it: a reference of a holder whose program
 * outlived its wait (each kind's shows_cut, which cut.c's rv_cut_verify()
 * asks through the table), and the caller's own descriptors (a dead one left
 * by an earlier revoke).
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

static const char dead[] = "/memfd:" RV_DEAD_NAME " (deleted)";

/* Whether /proc shows REF of PID cut now: a descriptor of the dead file. */
bool rv_fd_shows_cut(pid_t pid, const struct revoke_ref *ref)
{
	char buf[sizeof(dead) + 1];
	ssize_t n;

	n = rv_proc_readlink(pid, 0, buf, sizeof(buf), "fd/%d", ref->fd);
	return n == (ssize_t)sizeof(dead) - 1 && memcmp(buf, dead, (size_t)n) == 0;
}

/* A mapping of the dead file where REF was. */
bool rv_map_shows_cut(pid_t pid, const struct revoke_ref *ref)
{
	char line[512];
	bool cut = false;
	FILE *f;

	f = rv_proc_fopen(pid, 0, "maps");
	if (!f)
		return false;
	while (!cut && fgets(line, sizeof(line), f)) {
		struct rv_maps_entry e;

		line[strcspn(line, "\n")] = 0;
		cut = rv_parse_maps_line(line, &e) == 0 && e.start == ref->start && e.path &&
		      strcmp(e.path, dead) == 0;
	}
	fclose(f);
	return cut;
}

bool rv_is_dead_fd(int fd)
{
	static const char want[] = "/memfd:" RV_DEAD_NAME " (deleted)";
	char buf[sizeof(want) + 1];
	struct statx stx;
	ssize_t n;

	/* DONT_SYNC: FD may be a file of a FUSE server that does not answer. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_NLINK | STATX_SIZE,
		  &stx) < 0 ||
	    !S_ISREG(stx.stx_mode) || stx.stx_nlink != 0 || stx.stx_size != 0)
		return false;
	n = rv_proc_readlink(RV_PROC_SELF, 0, buf, sizeof(buf), "fd/%d", fd);
	return n == (ssize_t)sizeof(want) - 1 && memcmp(buf, want, (size_t)n) == 0;
}
