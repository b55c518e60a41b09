/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-list: revoke_ex(REVOKE_LIST_ONLY) of one file through the library,
 * printing the holder pids, one per line. The benchmark times the real
 * command (revoke --list); this one isolates the library.
 *   bench-list proc|bpf FILE
 */
#include <revoke.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct revoke_opts o = {.sz = sizeof(o), .flags = REVOKE_LIST_ONLY, .keep_fd = -1};
	struct revoke_report *rep = NULL;
	const char *path;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-list proc|bpf FILE\n");
		return 2;
	}
	o.flags |= strcmp(argv[1], "bpf") == 0 ? REVOKE_DISCOVERY_BPF : REVOKE_DISCOVERY_PROC;
	path = argv[2];
	if (revoke_ex(&path, 1, &o, &rep) < 0) {
		perror("bench-list: revoke_ex");
		revoke_report_free(rep);
		return 1;
	}
	for (size_t i = 0; i < rep->nholders; i++)
		printf("%d\n", rep->holders[i].pid);
	revoke_report_free(rep);
	return 0;
}
