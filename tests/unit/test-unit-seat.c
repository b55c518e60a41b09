/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* revoke-seat's parsers, on text: its configuration (daemon/revoke-seat/conf.c)
 * and what it and its cutter say to each other (cutproto.c). */
#include <errno.h>
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

static void test_request(void)
{
	static struct cut_request q, back;
	char buf[CUT_MSG_MAX];
	int n;

	q = (struct cut_request){.list = true, .uid = 1000, .timeout_ms = 5000, .ndevs = 2};
	snprintf(q.devs[0], CUT_DEV_MAX, "/dev/snd/pcmC0D0c");
	snprintf(q.devs[1], CUT_DEV_MAX, "/dev/video0");
	n = cut_request_format(&q, buf, sizeof(buf));
	CHECK(n > 0 && strcmp(buf, "list 1000 5000 /dev/snd/pcmC0D0c /dev/video0") == 0, "'%s'",
	      buf);
	CHECK(cut_request_parse(buf, (size_t)n, &back) == 0 && back.list && back.uid == 1000 &&
		  back.timeout_ms == 5000 && back.ndevs == 2 &&
		  strcmp(back.devs[1], "/dev/video0") == 0,
	      "list did not parse back");
	q = (struct cut_request){.uid = 1001, .timeout_ms = 250, .dry_run = true, .ndevs = 1};
	snprintf(q.devs[0], CUT_DEV_MAX, "/dev/video0");
	n = cut_request_format(&q, buf, sizeof(buf));
	CHECK(n > 0 && strcmp(buf, "cut 1001 250 1 /dev/video0") == 0, "'%s'", buf);
	CHECK(cut_request_parse(buf, (size_t)n, &back) == 0 && !back.list && back.dry_run &&
		  back.uid == 1001,
	      "cut did not parse back");
	q.ndevs = 2;
	CHECK(cut_request_format(&q, buf, sizeof(buf)) == -EINVAL, "a cut of two devices");
	snprintf(q.devs[0], CUT_DEV_MAX, "/etc/shadow");
	q.ndevs = 1;
	CHECK(cut_request_format(&q, buf, sizeof(buf)) == -EINVAL, "a path outside /dev");
}

/* Anything but what the format writes is refused, and the output untouched. */
static void test_request_bad(void)
{
	static const char *const bad[] = {
	    "",
	    "cut",
	    "cut 1000 5000 0",
	    "cut 1000 5000 0 /dev/a /dev/b",
	    "cut 1000 5000 2 /dev/a",
	    "cut -1 5000 0 /dev/a",
	    "cut 1000 0 0 /dev/a",
	    "cut 1000 600001 0 /dev/a",
	    "cut 4294967295 5000 0 /dev/a",
	    "cut 1000 5000 0 /etc/passwd",
	    "cut 1000 5000 0 /dev/../etc/passwd",
	    "cut 1000 5000 0 /dev/snd/..",
	    "cut 10x0 5000 0 /dev/a",
	    "list 1000 5000",
	    "lisT 1000 5000 /dev/a",
	    "revoke 1000 5000 /dev/a",
	    "cut  1000 5000 0 /dev/a",
	    "cut 01000 5000 0 /dev/a",
	    "cut 1000 5000 0 /dev/a ",
	    " list 1000 5000 /dev/a",
	};
	static struct cut_request q;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&q, 0x5a, sizeof(q));
		CHECK(cut_request_parse(bad[i], strlen(bad[i]), &q) == -EBADMSG, "accepted '%s'",
		      bad[i]);
		CHECK(((unsigned char *)&q)[0] == 0x5a, "'%s' changed the request", bad[i]);
	}
	CHECK(cut_request_parse("cut 1000 5000 0 /dev/a\0", 23, &q) == -EBADMSG, "a NUL inside");
}

static void test_reply(void)
{
	struct cut_result r = {.error = 16, .holders = 2, .refs = 3, .elapsed_us = 12345};
	struct cut_result back;
	bool held[3] = {true, false, true}, got[3];
	char buf[CUT_MSG_MAX];
	int n, e;

	snprintf(r.pids, sizeof(r.pids), "pid 5 (a b), pid 6 (c)");
	snprintf(r.why, sizeof(r.why), "pid 5 (a b): already traced\nby pid 4");
	n = cut_reply_format(&r, buf, sizeof(buf));
	CHECK(n > 0 && cut_reply_parse(buf, (size_t)n, &back) == 0, "'%s' did not parse", buf);
	CHECK(back.error == 16 && back.holders == 2 && back.refs == 3 && back.elapsed_us == 12345 &&
		  strcmp(back.pids, r.pids) == 0 &&
		  strcmp(back.why, "pid 5 (a b): already traced by pid 4") == 0,
	      "the reply came back as %d %u %u '%s' '%s'", back.error, back.holders, back.refs,
	      back.pids, back.why);
	CHECK(cut_reply_parse("result 0 1 1 5\npids", 20, &back) == -EBADMSG, "two lines");
	CHECK(cut_reply_parse("result 0 1 1 5 6\n\n", 18, &back) == -EBADMSG, "six words");
	CHECK(cut_reply_parse("result 4096 0 0 0\n\n", 19, &back) == -EBADMSG, "errno 4096");
	n = cut_held_format(held, 3, buf, sizeof(buf));
	CHECK(n == 10 && memcmp(buf, "held 1 0 1", 10) == 0, "'%s'", buf);
	CHECK(cut_held_parse(buf, (size_t)n, 3, got) == 0 && got[0] && !got[1] && got[2], "held");
	CHECK(cut_held_parse(buf, (size_t)n, 2, got) == -EBADMSG, "held for another count");
	CHECK(cut_held_parse("held 1 2 0", 10, 3, got) == -EBADMSG, "held 2");
	CHECK(cut_error_parse("error 95", 8, &e) == 0 && e == 95, "error 95");
	CHECK(cut_error_parse("error 0", 7, &e) == -EBADMSG, "error 0");
	CHECK(cut_error_parse("error 095", 9, &e) == -EBADMSG, "error 095");
	CHECK(cut_reply_parse("result 0 01 1 5\n\n", 18, &back) == -EBADMSG, "a leading zero");
	CHECK(cut_error_parse("held 1 0", 8, &e) == -EBADMSG, "held as error");
}

static void test_all(void)
{
	static struct cut_all_result r, back;
	static struct cut_request q, qb;
	static char buf[CUT_MSG_MAX];
	int n;

	q = (struct cut_request){.all = true, .uid = 1000, .timeout_ms = 5000, .ndevs = 2};
	snprintf(q.devs[0], CUT_DEV_MAX, "/dev/snd/controlC0");
	snprintf(q.devs[1], CUT_DEV_MAX, "/dev/video0");
	n = cut_request_format(&q, buf, sizeof(buf));
	CHECK(n > 0 && strcmp(buf, "cutall 1000 5000 0 /dev/snd/controlC0 /dev/video0") == 0,
	      "'%s'", buf);
	CHECK(cut_request_parse(buf, (size_t)n, &qb) == 0 && qb.all && !qb.list && qb.ndevs == 2,
	      "cutall did not parse back");
	CHECK(cut_request_parse("cutall 1000 5000 0", 18, &qb) == -EBADMSG, "cutall of nothing");

	r = (struct cut_all_result){.error = 0, .elapsed_us = 777, .n = 3};
	r.dev[0] = (struct cut_dev_result){.holders = 2, .refs = 3};
	snprintf(r.dev[0].pids, sizeof(r.dev[0].pids), "pid 1 (a), pid 2 (b c)");
	r.dev[2] = (struct cut_dev_result){.holders = 1, .refs = 1};
	snprintf(r.dev[2].pids, sizeof(r.dev[2].pids), "pid 3 (x\ny)");
	n = cut_all_format(&r, buf, sizeof(buf));
	CHECK(n > 0 && cut_all_parse(buf, (size_t)n, 3, &back) == 0, "'%s' did not parse", buf);
	CHECK(back.n == 3 && back.elapsed_us == 777 && back.dev[0].holders == 2 &&
		  back.dev[0].refs == 3 &&
		  strcmp(back.dev[0].pids, "pid 1 (a), pid 2 (b c)") == 0 &&
		  back.dev[1].holders == 0 && back.dev[1].pids[0] == 0 &&
		  back.dev[2].holders == 1 && strcmp(back.dev[2].pids, "pid 3 (x y)") == 0,
	      "came back as %zu devices: %u '%s' / %u / %u '%s'", back.n, back.dev[0].holders,
	      back.dev[0].pids, back.dev[1].holders, back.dev[2].holders, back.dev[2].pids);
	CHECK(cut_all_parse(buf, (size_t)n, 2, &back) == -EBADMSG, "parsed for 2 devices of 3");
	CHECK(cut_all_parse("results 0 5 1\n1 1\n", 18, 1, &back) == -EBADMSG,
	      "a device line without its pids");
	CHECK(cut_all_parse("results 16 5 0\nbusy", 19, 0, &back) == 0 && back.error == 16 &&
		  strcmp(back.why, "busy") == 0,
	      "a failure with no device lines");
}

TEST_MAIN("unit-seat", {"defaults", test_defaults, 10}, {"keys", test_keys, 10},
	  {"problems", test_problems, 10}, {"long_line", test_long_line, 10},
	  {"request", test_request, 10}, {"request_bad", test_request_bad, 10},
	  {"reply", test_reply, 10}, {"all", test_all, 10})
