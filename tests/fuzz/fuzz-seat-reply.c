/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cutter's answers as revoke-seat reads them (any bytes): a revocation's
 * result, the results of one for many devices, the held devices, an error. */
#include <errno.h>

#include "fuzz.h"
#include "seat.h"

FUZZ_TARGET(text, len)
{
	static struct cut_result one;
	static struct cut_all_result all;
	static char again[CUT_MSG_MAX + 1];
	bool held[4];
	int r, n, e;

	memset(&one, FUZZ_CANARY, sizeof(one));
	r = cut_reply_parse(text, len, &one);
	FUZZ_ASSERT(r == 0 || r == -EBADMSG, "cut_reply_parse: %d", r);
	if (r == 0) {
		n = cut_reply_format(&one, again, sizeof(again));
		FUZZ_ASSERT(n >= 0 && (size_t)n == len && memcmp(again, text, len) == 0,
			    "a result that does not format back to itself");
		FUZZ_ASSERT(one.error >= 0 && one.error <= 4095, "errno %d", one.error);
	} else {
		FUZZ_ASSERT(fuzz_untouched(&one, sizeof(one)), "result changed on failure");
	}
	for (size_t k = 0; k <= 3; k++) {
		memset(&all, FUZZ_CANARY, sizeof(all));
		r = cut_all_parse(text, len, k, &all);
		FUZZ_ASSERT(r == 0 || r == -EBADMSG, "cut_all_parse: %d", r);
		if (r < 0) {
			FUZZ_ASSERT(fuzz_untouched(&all, sizeof(all)),
				    "results changed on failure");
			continue;
		}
		FUZZ_ASSERT(all.n == k, "%zu devices for %zu", all.n, k);
		n = cut_all_format(&all, again, sizeof(again));
		FUZZ_ASSERT(n >= 0 && (size_t)n == len && memcmp(again, text, len) == 0,
			    "results that do not format back to themselves");
	}
	memset(held, FUZZ_CANARY, sizeof(held));
	r = cut_held_parse(text, len, 3, held);
	FUZZ_ASSERT(r == 0 || r == -EBADMSG, "cut_held_parse: %d", r);
	if (r == 0) {
		n = cut_held_format(held, 3, again, sizeof(again));
		FUZZ_ASSERT(n >= 0 && (size_t)n == len && memcmp(again, text, len) == 0,
			    "held devices that do not format back to themselves");
	}
	e = -1;
	r = cut_error_parse(text, len, &e);
	FUZZ_ASSERT(r == 0 ? e >= 1 && e <= 4095 : r == -EBADMSG && e == -1, "error %d, %d", r, e);
}
