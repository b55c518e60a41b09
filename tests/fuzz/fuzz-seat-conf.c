/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* seat_conf_parse: /etc/revoke/seat.conf (any bytes): every problem warned
 * about with a line that exists, the result within its bounds. */
#include "fuzz.h"
#include "seat.h"

struct lines {
	unsigned int max, n;
};

static void warned(unsigned int line, const char *what, void *userdata)
{
	struct lines *l = userdata;

	FUZZ_ASSERT(line >= 1 && line <= l->max, "a warning on line %u of %u", line, l->max);
	FUZZ_ASSERT(what && *what, "an empty warning");
	l->n++;
}

FUZZ_TARGET(text, len)
{
	struct lines l = {.max = 1};
	struct seat_conf c;
	unsigned int n;
	FILE *f;

	for (size_t i = 0; i < len; i++)
		l.max += text[i] == '\n';
	f = fmemopen((void *)text, len ? len : 1, "r");
	FUZZ_ASSERT(f, "fmemopen");
	seat_conf_defaults(&c);
	n = seat_conf_parse(f, &c, warned, &l);
	fclose(f);
	FUZZ_ASSERT(n == l.n, "%u warnings returned, %u made", n, l.n);
	FUZZ_ASSERT(c.nclasses <= MAX_CLASSES && c.nignored <= MAX_IGNORED,
		    "%zu classes, %zu users", c.nclasses, c.nignored);
	FUZZ_ASSERT(c.timeout_ms >= 1 && c.timeout_ms <= 600000, "timeout %u ms", c.timeout_ms);
	for (size_t i = 0; i < c.nclasses; i++)
		FUZZ_ASSERT(memchr(c.classes[i], 0, CLASS_MAX) && c.classes[i][0], "class %zu", i);
}
