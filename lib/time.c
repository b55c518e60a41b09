/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <time.h>

#include "internal.h"

uint64_t rv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
