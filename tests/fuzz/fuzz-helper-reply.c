/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_helper_parse_reply: revoked(8)'s answer and report, as a client reads it (any bytes). */
#include <errno.h>

#include "fuzz.h"
#include "helper/proto.h"

FUZZ_TARGET(text, len)
{
	struct revoke_report *rep, *canary_rep;
	uint8_t *again = NULL;
	size_t again_len = 0, body;
	int result, r;

	memset(&result, FUZZ_CANARY, sizeof(result));
	memset(&rep, FUZZ_CANARY, sizeof(rep));
	canary_rep = rep;
	r = rv_helper_parse_reply(text, len, &result, &rep);
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG || r == -EPROTONOSUPPORT, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&result, sizeof(result)) && rep == canary_rep,
			    "out-parameters changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(result >= 0 && result < 4096, "result %d", result);
	FUZZ_ASSERT(rv_helper_parse_reply_header(text, len, &body) == 0 &&
			body + RV_HELPER_HEADER_SIZE == len,
		    "the header does not announce the length taken");
	for (size_t i = 0; rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = &rep->holders[i];

		FUZZ_ASSERT(memchr(h->comm, 0, sizeof(h->comm)) &&
				memchr(h->reason, 0, sizeof(h->reason)),
			    "holder %zu: a string without its NUL", i);
		for (size_t j = 0; j < h->nrefs; j++)
			FUZZ_ASSERT(h->refs[j].target < rep->ntargets,
				    "ref %zu of holder %zu names target %u of %zu", j, i,
				    h->refs[j].target, rep->ntargets);
	}
	/* What was taken is what the helper would have written. */
	FUZZ_ASSERT(rv_helper_encode_reply(result, rep, &again, &again_len) == 0, "encode failed");
	FUZZ_ASSERT(again_len == len && memcmp(again, text, len) == 0,
		    "accepted bytes that do not encode back to themselves");
	free(again);
	rv_report_destroy(rep);
}
