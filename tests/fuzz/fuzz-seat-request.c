/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cut_request_parse: what revoke-seat asks its cutter (any bytes). */
#include <errno.h>

#include "fuzz.h"
#include "seat.h"

FUZZ_TARGET(text, len)
{
	static struct cut_request q;
	static char again[CUT_MSG_MAX + 1];
	int r, n;

	memset(&q, FUZZ_CANARY, sizeof(q));
	r = cut_request_parse(text, len, &q);
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&q, sizeof(q)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(q.ndevs >= 1 && q.ndevs <= CUT_MAX_DEVS && (q.list || q.all || q.ndevs == 1),
		    "%zu devices", q.ndevs);
	for (size_t i = 0; i < q.ndevs; i++)
		FUZZ_ASSERT(cut_dev_valid(q.devs[i]), "device '%s' taken", q.devs[i]);
	/* Only one spelling is taken: the one revoke-seat writes. */
	n = cut_request_format(&q, again, sizeof(again));
	FUZZ_ASSERT(n >= 0 && (size_t)n == len && memcmp(again, text, len) == 0,
		    "accepted bytes that do not format back to themselves");
}
