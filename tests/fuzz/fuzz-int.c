/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rv_parse_int against a reference: decimal digits only, 0..INT32_MAX. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"

FUZZ_TARGET(text, len)
{
	uint64_t ref = 0;
	bool big = false;
	size_t n = 0;
	int v, r;

	(void)len;
	for (; text[n] >= '0' && text[n] <= '9'; n++) {
		ref = ref * 10 + (uint64_t)(text[n] - '0');
		if (ref > INT32_MAX) {
			big = true;
			ref = (uint64_t)INT32_MAX + 1; /* saturate */
		}
	}
	memset(&v, FUZZ_CANARY, sizeof(v));
	r = rv_parse_int(text, &v);
	if (n == 0 || (!big && text[n] != '\0')) {
		FUZZ_ASSERT(r == -EINVAL, "'%s': %d, expected -EINVAL", text, r);
	} else if (big) {
		/* An overflowing run followed by junk may say either. */
		FUZZ_ASSERT(r == -ERANGE || (text[n] != '\0' && r == -EINVAL),
			    "'%s': %d, expected -ERANGE", text, r);
	} else {
		FUZZ_ASSERT(r == 0 && (uint64_t)v == ref, "'%s': %d (%d), expected %llu", text, r,
			    v, (unsigned long long)ref);
		return;
	}
	FUZZ_ASSERT(fuzz_untouched(&v, sizeof(v)), "'%s': out-parameter changed on failure", text);
}
