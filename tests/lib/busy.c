/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The register workload and the SIGBUS probe: see busy.h. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "busy.h"

static const char *const busy_gpr_names[14] = {"rax", "rbx", "rdx", "rsi", "rdi", "rbp", "r8",
					       "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

#define BUSY_ASM_PROLOGUE                                                                          \
	"pushq %rbx\n pushq %rbp\n pushq %r12\n pushq %r13\n pushq %r14\n pushq %r15\n"            \
	"subq $16, %rsp\n stmxcsr 0(%rsp)\n fnstcw 4(%rsp)\n"                                      \
	"pushq %rsi\n movq %rdx, %rcx\n"                                                           \
	"fninit\n fldcw 708(%rdi)\n"                                                               \
	"fldl 696(%rdi)\n fldl 688(%rdi)\n fldl 680(%rdi)\n fldl 672(%rdi)\n"                      \
	"fldl 664(%rdi)\n fldl 656(%rdi)\n fldl 648(%rdi)\n fldl 640(%rdi)\n"                      \
	"ldmxcsr 704(%rdi)\n"
#define BUSY_ASM_LOAD_GPR                                                                          \
	"movq 8(%rdi), %rbx\n movq 16(%rdi), %rdx\n movq 24(%rdi), %rsi\n movq 40(%rdi), %rbp\n"   \
	"movq 48(%rdi), %r8\n movq 56(%rdi), %r9\n movq 64(%rdi), %r10\n movq 72(%rdi), %r11\n"    \
	"movq 80(%rdi), %r12\n movq 88(%rdi), %r13\n movq 96(%rdi), %r14\n movq 104(%rdi), %r15\n" \
	"movq 0(%rdi), %rax\n movq 32(%rdi), %rdi\n"
/* Spin: rcx counts down. Or make the system call in rax (rcx, r11 clobbered). */
#define BUSY_ASM_SPIN	 "1: decq %rcx\n jnz 1b\n"
#define BUSY_ASM_SYSCALL "syscall\n"
#define BUSY_ASM_STORE_GPR                                                                         \
	"xchgq %rax, 0(%rsp)\n"                                                                    \
	"movq %rbx, 8(%rax)\n movq %rdx, 16(%rax)\n movq %rsi, 24(%rax)\n movq %rdi, 32(%rax)\n"   \
	"movq %rbp, 40(%rax)\n movq %r8, 48(%rax)\n movq %r9, 56(%rax)\n movq %r10, 64(%rax)\n"    \
	"movq %r11, 72(%rax)\n movq %r12, 80(%rax)\n movq %r13, 88(%rax)\n movq %r14, 96(%rax)\n"  \
	"movq %r15, 104(%rax)\n popq %rcx\n movq %rcx, 0(%rax)\n"
#define BUSY_ASM_EPILOGUE                                                                          \
	"fstpl 640(%rax)\n fstpl 648(%rax)\n fstpl 656(%rax)\n fstpl 664(%rax)\n"                  \
	"fstpl 672(%rax)\n fstpl 680(%rax)\n fstpl 688(%rax)\n fstpl 696(%rax)\n"                  \
	"stmxcsr 704(%rax)\n fnstcw 708(%rax)\n"                                                   \
	"ldmxcsr 0(%rsp)\n fldcw 4(%rsp)\n addq $16, %rsp\n"                                       \
	"popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbp\n popq %rbx\n ret\n"

#define BUSY_ASM_LOAD_SSE                                                                          \
	"movdqu 128(%rdi), %xmm0\n movdqu 160(%rdi), %xmm1\n movdqu 192(%rdi), %xmm2\n"            \
	"movdqu 224(%rdi), %xmm3\n movdqu 256(%rdi), %xmm4\n movdqu 288(%rdi), %xmm5\n"            \
	"movdqu 320(%rdi), %xmm6\n movdqu 352(%rdi), %xmm7\n movdqu 384(%rdi), %xmm8\n"            \
	"movdqu 416(%rdi), %xmm9\n movdqu 448(%rdi), %xmm10\n movdqu 480(%rdi), %xmm11\n"          \
	"movdqu 512(%rdi), %xmm12\n movdqu 544(%rdi), %xmm13\n movdqu 576(%rdi), %xmm14\n"         \
	"movdqu 608(%rdi), %xmm15\n"
#define BUSY_ASM_STORE_SSE                                                                         \
	"movdqu %xmm0, 128(%rax)\n movdqu %xmm1, 160(%rax)\n movdqu %xmm2, 192(%rax)\n"            \
	"movdqu %xmm3, 224(%rax)\n movdqu %xmm4, 256(%rax)\n movdqu %xmm5, 288(%rax)\n"            \
	"movdqu %xmm6, 320(%rax)\n movdqu %xmm7, 352(%rax)\n movdqu %xmm8, 384(%rax)\n"            \
	"movdqu %xmm9, 416(%rax)\n movdqu %xmm10, 448(%rax)\n movdqu %xmm11, 480(%rax)\n"          \
	"movdqu %xmm12, 512(%rax)\n movdqu %xmm13, 544(%rax)\n movdqu %xmm14, 576(%rax)\n"         \
	"movdqu %xmm15, 608(%rax)\n"
#define BUSY_ASM_LOAD_AVX                                                                          \
	"vmovdqu 128(%rdi), %ymm0\n vmovdqu 160(%rdi), %ymm1\n vmovdqu 192(%rdi), %ymm2\n"         \
	"vmovdqu 224(%rdi), %ymm3\n vmovdqu 256(%rdi), %ymm4\n vmovdqu 288(%rdi), %ymm5\n"         \
	"vmovdqu 320(%rdi), %ymm6\n vmovdqu 352(%rdi), %ymm7\n vmovdqu 384(%rdi), %ymm8\n"         \
	"vmovdqu 416(%rdi), %ymm9\n vmovdqu 448(%rdi), %ymm10\n vmovdqu 480(%rdi), %ymm11\n"       \
	"vmovdqu 512(%rdi), %ymm12\n vmovdqu 544(%rdi), %ymm13\n vmovdqu 576(%rdi), %ymm14\n"      \
	"vmovdqu 608(%rdi), %ymm15\n"
#define BUSY_ASM_STORE_AVX                                                                         \
	"vmovdqu %ymm0, 128(%rax)\n vmovdqu %ymm1, 160(%rax)\n vmovdqu %ymm2, 192(%rax)\n"         \
	"vmovdqu %ymm3, 224(%rax)\n vmovdqu %ymm4, 256(%rax)\n vmovdqu %ymm5, 288(%rax)\n"         \
	"vmovdqu %ymm6, 320(%rax)\n vmovdqu %ymm7, 352(%rax)\n vmovdqu %ymm8, 384(%rax)\n"         \
	"vmovdqu %ymm9, 416(%rax)\n vmovdqu %ymm10, 448(%rax)\n vmovdqu %ymm11, 480(%rax)\n"       \
	"vmovdqu %ymm12, 512(%rax)\n vmovdqu %ymm13, 544(%rax)\n vmovdqu %ymm14, 576(%rax)\n"      \
	"vmovdqu %ymm15, 608(%rax)\n vzeroupper\n"
#define BUSY_ASM_FUNCTION(name, load, middle, store)                                               \
	".globl " name "\n .type " name ",@function\n" name ":\n" BUSY_ASM_PROLOGUE load           \
	    BUSY_ASM_LOAD_GPR middle BUSY_ASM_STORE_GPR store BUSY_ASM_EPILOGUE ".size " name      \
	", .-" name "\n"

__asm__(".text\n" BUSY_ASM_FUNCTION("busy_regs_spin_sse", BUSY_ASM_LOAD_SSE, BUSY_ASM_SPIN,
				    BUSY_ASM_STORE_SSE)
	    BUSY_ASM_FUNCTION("busy_regs_spin_avx", BUSY_ASM_LOAD_AVX, BUSY_ASM_SPIN,
			      BUSY_ASM_STORE_AVX)
		BUSY_ASM_FUNCTION("busy_regs_syscall_sse", BUSY_ASM_LOAD_SSE, BUSY_ASM_SYSCALL,
				  BUSY_ASM_STORE_SSE)
		    BUSY_ASM_FUNCTION("busy_regs_syscall_avx", BUSY_ASM_LOAD_AVX, BUSY_ASM_SYSCALL,
				      BUSY_ASM_STORE_AVX));

uint64_t busy_mix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

bool busy_have_avx(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx");
}

void busy_regs_fill(struct busy_regs *r, uint64_t *state)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 14; i++)
		r->gpr[i] = busy_mix(state);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j += 8) {
			uint64_t v = busy_mix(state);
			memcpy(&r->vec[i][j], &v, 8);
		}
	for (int i = 0; i < 8; i++) {
		double d = (double)(int32_t)busy_mix(state); /* exact in a double */
		memcpy(&r->x87[i], &d, 8);
	}
	r->mxcsr = 0x1f80 | 0x6000 | 0x8000 | 0x0040;
	r->fcw = 0x0f7f;
}

enum {
	BUSY_RAX = 0,
	BUSY_RDX = 2,
	BUSY_RSI = 3,
	BUSY_RDI = 4,
	BUSY_R8 = 6,
	BUSY_R9 = 7,
	BUSY_R10 = 8,
	BUSY_R11 = 9
};

int busy_regs_compare(const struct busy_regs *in, const struct busy_regs *out, bool avx,
		      bool syscall, char *what, size_t size)
{
	int vlen = avx ? 32 : 16;

	for (int i = 0; i < 14; i++)
		if (out->gpr[i] != in->gpr[i] && !(syscall && (i == BUSY_RAX || i == BUSY_R11))) {
			snprintf(what, size, "register %s = %#" PRIx64 ", expected %#" PRIx64,
				 busy_gpr_names[i], out->gpr[i], in->gpr[i]);
			return -1;
		}
	for (int i = 0; i < 16; i++)
		if (memcmp(out->vec[i], in->vec[i], (size_t)vlen) != 0) {
			uint64_t got[4], want[4];

			memcpy(got, out->vec[i], 32);
			memcpy(want, in->vec[i], 32);
			snprintf(what, size,
				 "register %smm%d = %016" PRIx64 "%016" PRIx64
				 "%s, expected %016" PRIx64 "%016" PRIx64 "%s",
				 avx ? "y" : "x", i, got[1], got[0], avx ? " (+high half)" : "",
				 want[1], want[0], avx ? " (+high half)" : "");
			return -1;
		}
	for (int i = 0; i < 8; i++)
		if (out->x87[i] != in->x87[i]) {
			snprintf(what, size, "register st%d = %#" PRIx64 ", expected %#" PRIx64, i,
				 out->x87[i], in->x87[i]);
			return -1;
		}
	/* The low six bits are sticky exception flags, not state we set. */
	if ((out->mxcsr & ~0x3fu) != (in->mxcsr & ~0x3fu)) {
		snprintf(what, size, "mxcsr = %#x, expected %#x", out->mxcsr, in->mxcsr);
		return -1;
	}
	if (out->fcw != in->fcw) {
		snprintf(what, size, "x87 control word = %#x, expected %#x", out->fcw, in->fcw);
		return -1;
	}
	return 0;
}

int busy_regs_check(const struct busy_regs *in, uint64_t iterations, bool avx, char *what,
		    size_t size)
{
	struct busy_regs out;

	memset(&out, 0, sizeof(out));
	if (avx)
		busy_regs_spin_avx(in, &out, iterations);
	else
		busy_regs_spin_sse(in, &out, iterations);
	return busy_regs_compare(in, &out, avx, false, what, size);
}

int busy_regs_nanosleep(struct busy_regs *in, uint64_t ns, bool avx, char *what, size_t size)
{
	struct timespec req = {.tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL)};
	struct busy_regs out;
	struct timespec t0, t1;
	uint64_t dt;

	in->gpr[BUSY_RAX] = SYS_nanosleep;
	in->gpr[BUSY_RDI] = (uint64_t)(uintptr_t)&req;
	in->gpr[BUSY_RSI] = 0;
	memset(&out, 0, sizeof(out));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (avx)
		busy_regs_syscall_avx(in, &out, 0);
	else
		busy_regs_syscall_sse(in, &out, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL + (uint64_t)t1.tv_nsec -
	     (uint64_t)t0.tv_nsec;
	if (out.gpr[BUSY_RAX] != 0) {
		snprintf(what, size, "nanosleep (in the register workload) returned %" PRId64,
			 (int64_t)out.gpr[BUSY_RAX]);
		return -1;
	}
	if (dt < ns) {
		snprintf(what, size,
			 "nanosleep(%" PRIu64
			 " us) (in the register workload) returned after %" PRIu64 " us",
			 ns / 1000, dt / 1000);
		return -1;
	}
	return busy_regs_compare(in, &out, avx, true, what, size);
}

/* ---- SIGBUS probe --------------------------------------------------------- */

static __thread sigjmp_buf busy_bus_env;
static __thread volatile sig_atomic_t busy_in_probe;
volatile sig_atomic_t busy_stray_sigbus;

static void busy_sigbus_handler(int sig)
{
	(void)sig;
	if (busy_in_probe) {
		busy_in_probe = 0;
		siglongjmp(busy_bus_env, 1);
	}
	busy_stray_sigbus++;
}

int busy_sigbus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = busy_sigbus_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, NULL);
}

int busy_probe(const volatile uint8_t *p, uint8_t *ret)
{
	if (sigsetjmp(busy_bus_env, 1) != 0)
		return 1;
	busy_in_probe = 1;
	*ret = *p;
	busy_in_probe = 0;
	return 0;
}
