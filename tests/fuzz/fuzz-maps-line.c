/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_maps_line on every line of the input (as lib/discover/proc_one.c splits
 * /proc/PID/maps), then on the whole input as one string. */
#include <errno.h>
#include <sys/mman.h>

#include "fuzz.h"

static void one(const char *line)
{
	struct rv_maps_entry e;
	int r;

	memset(&e, FUZZ_CANARY, sizeof(e));
	r = rv_parse_maps_line(line, &e);
	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&e, sizeof(e)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(e.end >= e.start, "range %llx-%llx", (unsigned long long)e.start,
		    (unsigned long long)e.end);
	FUZZ_ASSERT((e.prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) == 0, "prot %x", e.prot);
	FUZZ_ASSERT(e.map_flags == MAP_SHARED || e.map_flags == MAP_PRIVATE, "flags %x",
		    e.map_flags);
	FUZZ_ASSERT(!e.path || (e.path > line && e.path < line + strlen(line)),
		    "path outside the line");
}

FUZZ_TARGET(text, len)
{
	char *copy = malloc(len + 1);
	char *line, *next;

	if (!copy)
		return;
	memcpy(copy, text, len + 1);
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		one(line);
	}
	free(copy);
	one(text);
}
