/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-cpuid: what one CPUID leaf 0xd costs here, the leaf the engine reads
 * to size the XSAVE image of a holder's frame (lib/arch/x86_64.c). In a VM
 * each CPUID exits to the hypervisor. Prints
 *   <ns per CPUID> <leaves per holder with this CPU's XCR0 features>
 * x86_64 only.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	enum { N = 20000 };
	unsigned int eax, ebx, ecx, edx, lo, hi, leaves = 0;
	uint64_t xcr0, t0, t1;

	/* XGETBV(0): the features the kernel enabled, as the engine sees them
	 * in the XSAVE image it reads (AMX left out, as the engine does). */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xcr0 = ((uint64_t)hi << 32 | lo) & ~(1ull << 17 | 1ull << 18);
	for (unsigned int i = 2; i < 63; i++)
		leaves += !!(xcr0 & (1ull << i));
	t0 = now_ns();
	for (unsigned int k = 0; k < N; k++)
		__cpuid_count(0xd, 2 + k % 8, eax, ebx, ecx, edx);
	t1 = now_ns();
	(void)eax, (void)ebx, (void)ecx, (void)edx;
	printf("%llu %u\n", (unsigned long long)((t1 - t0) / N), leaves);
	return 0;
}
