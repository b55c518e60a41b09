/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* revoke-seat's configuration parser (daemon/revoke-seat/conf.c), on text. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "seat.h"

struct warnings {
	unsigned int n;
	unsigned int lines[16];
	char last[256];
};

static void collect(unsigned int line, const char *what, void *userdata)
{
	struct warnings *w = userdata;

	if (w->n < 16)
		w->lines[w->n] = line;
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", what);
}

static unsigned int parse(const char *text, struct seat_conf *c, struct warnings *w)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	unsigned int n;

	CHECK(f, "fmemopen");
	memset(w, 0, sizeof(*w));
	seat_conf_defaults(c);
	n = seat_conf_parse(f, c, collect, w);
	fclose(f);
	CHECK(n == w->n, "%u warnings returned, %u reported", n, w->n);
	return n;
}

static void test_defaults(void)
{
	struct seat_conf c;
	struct warnings w;

	CHECK(parse("", &c, &w) == 0, "an empty file warned");
	CHECK(c.timeout_ms == 5000, "timeout %u", c.timeout_ms);
	for (const char *const *s = (const char *const[]){"sound", "video4linux", "media", "dvb",
							  "usb", "block", NULL};
	     *s; s++)
		CHECK(seat_conf_revokes(&c, *s), "%s not revoked by default", *s);
	for (const char *const *s = (const char *const[]){"drm", "input", "hidraw", "misc", NULL};
	     *s; s++)
		CHECK(!seat_conf_revokes(&c, *s), "%s revoked by default", *s);
	CHECK(seat_conf_ignores(&c, 0), "root not ignored");
	CHECK(!seat_conf_ignores(&c, 1000), "uid 1000 ignored");
}

static void test_keys(void)
{
	struct seat_conf c;
	struct warnings w;

	CHECK(parse("# comment\n; another\n\n[Seat]\n  Classes = sound  hidraw \nTimeoutSec=0.25\n"
		    "IgnoreUsers=root 1234\n",
		    &c, &w) == 0,
	      "warned: %s", w.last);
	CHECK(c.nclasses == 2 && seat_conf_revokes(&c, "sound") &&
		  seat_conf_revokes(&c, "hidraw") && !seat_conf_revokes(&c, "video4linux"),
	      "Classes= not replaced (%zu)", c.nclasses);
	CHECK(c.timeout_ms == 250, "TimeoutSec=0.25 gave %u ms", c.timeout_ms);
	CHECK(seat_conf_ignores(&c, 1234) && !seat_conf_ignores(&c, 1000), "IgnoreUsers=");
	CHECK(parse("[Seat]\nClasses=\n", &c, &w) == 0 && c.nclasses == 0, "Classes= not emptied");
}

/* Each problem is one warning with its line; the rest still counts. */
static void test_problems(void)
{
	static const unsigned int want[] = {1, 3, 4, 5, 6, 7, 8, 9, 10, 12};
	struct seat_conf c;
	struct warnings w;

	CHECK(parse("Classes=sound\n[Seat]\nTimeoutSec=never\nTimeoutSec=0\nTimeoutSec=601\n"
		    "Bogus=1\nno equals sign\n[Other]\nClasses=drm\n[Seat\n[Seat]\n"
		    "IgnoreUsers=no-such-user-here 77\nClasses=usb\n",
		    &c, &w) == 10,
	      "%u warnings (last: %s)", w.n, w.last);
	for (size_t i = 0; i < 10; i++)
		CHECK(w.lines[i] == want[i], "warning %zu on line %u, not %u", i, w.lines[i],
		      want[i]);
	CHECK(c.timeout_ms == 5000, "a bad TimeoutSec= changed it to %u", c.timeout_ms);
	CHECK(c.nclasses == 1 && seat_conf_revokes(&c, "usb") && !seat_conf_revokes(&c, "drm"),
	      "Classes= outside [Seat] or in [Other] counted");
	CHECK(seat_conf_ignores(&c, 77), "the known user after an unknown one was dropped");
}

static void test_long_line(void)
{
	static char text[4096];
	struct seat_conf c;
	struct warnings w;

	memset(text, 'x', sizeof(text));
	memcpy(text, "[Seat]\nClasses=", 15);
	snprintf(text + 3000, sizeof(text) - 3000, "\nTimeoutSec=2\n");
	CHECK(parse(text, &c, &w) == 1 && w.lines[0] == 2, "a 3000-byte line: %u warnings", w.n);
	CHECK(c.timeout_ms == 2000 && c.nclasses > 0, "the line after a long one was lost");
}

TEST_MAIN("unit-seat-conf", {"defaults", test_defaults, 10}, {"keys", test_keys, 10},
	  {"problems", test_problems, 10}, {"long_line", test_long_line, 10})
