/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_helper_parse_request: the datagram a client of revoked(8) sends (any bytes). */
#include <errno.h>

#include "fuzz.h"
#include "helper/proto.h"

FUZZ_TARGET(text, len)
{
	struct rv_helper_req req;
	uint8_t again[RV_HELPER_REQ_MAX];
	size_t n;
	int r;

	memset(&req, FUZZ_CANARY, sizeof(req));
	r = rv_helper_parse_request(text, len, &req);
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG || r == -EPROTONOSUPPORT, "unexpected error %d", r);
		FUZZ_ASSERT(fuzz_untouched(&req, sizeof(req)), "out-parameter changed on failure");
		return;
	}
	FUZZ_ASSERT(r == 0, "returned %d", r);
	FUZZ_ASSERT(req.nfds >= 1 && req.nfds <= RV_HELPER_MAX_FDS, "nfds %u", req.nfds);
	FUZZ_ASSERT(req.keep == RV_HELPER_KEEP_NONE || req.keep < req.nfds, "keep %u of %u",
		    req.keep, req.nfds);
	/* Only one spelling of a request is taken: the one the client writes. */
	FUZZ_ASSERT(req.npids <= RV_SELECT_MAX && req.nuids <= RV_SELECT_MAX &&
			strlen(req.cgroup) <= RV_HELPER_MAX_CGROUP,
		    "selection of %u pids, %u uids, %zu bytes", req.npids, req.nuids,
		    strlen(req.cgroup));
	n = rv_helper_encode_request(&req, again);
	FUZZ_ASSERT(len == n && memcmp(again, text, len) == 0,
		    "accepted bytes that do not encode back to themselves");
}
