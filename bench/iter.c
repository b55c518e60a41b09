/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-iter: the BPF iterators' own time, the reference a BPF listing is
 * measured against. Loads the library's programs through its own loader
 * (lib/discover/bpf/load.c, the same skeleton and the same target map as
 * `revoke --list`), reads every pass to its end as the library does, and
 * drops the records: no holder list, no /proc, no output.
 *   bench-iter [--mount] [--load-only] PATH
 * --mount: the mount PATH is on, by its id (as `revoke --list --mount`).
 * --load-only: load and attach, read nothing (what keeping the programs
 * loaded between calls would save).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "discover/bpf/load.h"

int main(int argc, char **argv)
{
	struct rv_target t = {.path_fd = -1};
	bool mount = false, load_only = false;
	struct rv_bpf *b = NULL;
	struct statx stx;
	int r;

	for (; argc > 2; argc--, argv++) {
		if (strcmp(argv[1], "--mount") == 0)
			mount = true;
		else if (strcmp(argv[1], "--load-only") == 0)
			load_only = true;
		else
			break;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: bench-iter [--mount] [--load-only] PATH\n");
		return 2;
	}
	if (statx(AT_FDCWD, argv[argc - 1], 0, STATX_BASIC_STATS | STATX_MNT_ID, &stx) < 0) {
		fprintf(stderr, "bench-iter: %s: %s\n", argv[argc - 1], strerror(errno));
		return 1;
	}
	t.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	t.ino = stx.stx_ino;
	t.mode = stx.stx_mode;
	t.rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	t.mount = mount;
	t.mnt_id = stx.stx_mnt_id;
	r = rv_bpf_load(&t, 1, &b);
	if (r >= 0 && !load_only)
		r = rv_bpf_read(b, 0, NULL, NULL);
	rv_bpf_free(b);
	if (r < 0) {
		fprintf(stderr, "bench-iter: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
