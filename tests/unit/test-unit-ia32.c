/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the 32-bit (ia32) side of lib/arch (x86_64 only): the compat
 * syscall numbers, the register conventions and the ia32 signal frame that
 * the compat rt_sigreturn reads, checked field by field at the offsets of
 * the kernel's own layouts (rt_sigframe_ia32, ucontext_ia32, sigcontext_32,
 * _fpstate_32), independently of the structs lib/arch/x86_64-ia32.c
 * declares. They need no 32-bit process, so they run where none can
 * (tests/test-revoke-ia32.c runs real ones).
 */
#include "harness.h"

#if defined(__x86_64__) && defined(RV_ARCH_COMPAT)
#include <asm/unistd_32.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "arch/arch.h"

/* The native numbers, written here as the x86_64 table has them (this file
 * includes the ia32 table; <sys/syscall.h> would clash with it). */
enum {
	X64_read = 0,
	X64_mmap = 9,
	X64_fcntl = 72,
	X64_futex = 202,
	X64_epoll_wait = 232,
	X64_openat = 257,
	X64_dup3 = 292,
	X64_pidfd_getfd = 438,
	X64_nanosleep = 35,
};

#define ERESTARTSYS 512

static struct user_regs_struct *U(struct rv_regs *r)
{
	return (struct user_regs_struct *)r->raw;
}

static void compat_regs(struct rv_regs *r)
{
	struct user_regs_struct *u = U(r);

	memset(r, 0, sizeof(*r));
	u->cs = 0x23;
	u->ss = u->ds = u->es = 0x2b;
	u->gs = 0x63;
	u->fs = 0;
	u->rip = 0xf7f1c579;
	u->rsp = 0xffd01230;
	u->rax = (unsigned long long)-ERESTARTSYS;
	u->orig_rax = __NR_read;
	u->rbx = 3;
	u->rcx = 0xffd01300;
	u->rdx = 1;
	u->rsi = 0x55555555;
	u->rdi = 0x66666666;
	u->rbp = 0xffd01278;
	u->eflags = 0x246;
	/* what a 64-bit view shows above the low halves must not leak */
	u->r8 = 0x0808080808080808ull;
}

static void test_numbers(void)
{
	CHECK(rv_arch_compat_nr(X64_openat) == __NR_openat, "openat -> %ld",
	      rv_arch_compat_nr(X64_openat));
	CHECK(rv_arch_compat_nr(X64_dup3) == __NR_dup3, "dup3");
	CHECK(rv_arch_compat_nr(X64_pidfd_getfd) == __NR_pidfd_getfd, "pidfd_getfd");
	/* the 64-bit timespec of the native futex: futex_time64 */
	CHECK(rv_arch_compat_nr(X64_futex) == __NR_futex_time64, "futex -> %ld",
	      rv_arch_compat_nr(X64_futex));
	CHECK(rv_arch_compat_nr(X64_fcntl) == __NR_fcntl64, "fcntl -> %ld",
	      rv_arch_compat_nr(X64_fcntl));
	/* other arguments (old_mmap's block, a 32-bit timespec): refused */
	CHECK(rv_arch_compat_nr(X64_mmap) == -ENOSYS, "mmap -> %ld", rv_arch_compat_nr(X64_mmap));
	CHECK(rv_arch_compat_nr(X64_nanosleep) == -ENOSYS, "nanosleep");
	CHECK(rv_arch_compat_nr(100000) == -ENOSYS, "unknown");
}

static void test_registers(void)
{
	struct rv_regs r;
	struct user_regs_struct *u = U(&r);
	const long args[6] = {7, -100, 0x1000, 4, 5, 6};

	compat_regs(&r);
	CHECK(rv_arch_is_compat(&r) && !rv_arch_is_native(&r), "cs 0x23 is compat");
	/* a compat thread's call, named by its native number */
	CHECK(rv_arch_syscall_nr(&r) == X64_read, "read: %ld", rv_arch_syscall_nr(&r));
	u->orig_rax = __NR_epoll_wait;
	CHECK(rv_arch_syscall_nr(&r) == X64_epoll_wait, "epoll_wait: %ld", rv_arch_syscall_nr(&r));
	u->orig_rax = __NR_futex_time64;
	CHECK(rv_arch_syscall_nr(&r) == X64_futex, "futex_time64");
	u->orig_rax = __NR_fcntl;
	CHECK(rv_arch_syscall_nr(&r) == X64_fcntl, "fcntl");
	/* not in the list: in a syscall, but no native call's number */
	u->orig_rax = __NR_waitpid;
	CHECK(rv_arch_syscall_nr(&r) > 1000, "waitpid: %ld", rv_arch_syscall_nr(&r));
	u->orig_rax = (unsigned long long)-1;
	CHECK(rv_arch_syscall_nr(&r) == -1, "not in a syscall");
	compat_regs(&r);
	CHECK(rv_arch_syscall_restarts(&r), "-ERESTARTSYS restarts");
	CHECK(rv_arch_syscall_arg(&r, 0) == 3 && rv_arch_syscall_arg(&r, 1) == 0xffd01300 &&
		  rv_arch_syscall_arg(&r, 2) == 1 && rv_arch_syscall_arg(&r, 3) == 0x55555555 &&
		  rv_arch_syscall_arg(&r, 4) == 0x66666666 &&
		  rv_arch_syscall_arg(&r, 5) == 0xffd01278,
	      "arguments from ebx, ecx, edx, esi, edi, ebp");

	rv_arch_prepare_syscall(&r, 0x1000, __NR_dup3, args);
	CHECK(u->rip == 0x1000 && u->rax == __NR_dup3 && u->orig_rax == (unsigned long long)-1,
	      "prepare: ip, nr, orig_ax");
	CHECK(u->rbx == 7 && u->rcx == 0xffffff9c && u->rdx == 0x1000 && u->rsi == 4 &&
		  u->rdi == 5 && u->rbp == 6,
	      "prepare: ebx %llx ecx %llx edx %llx esi %llx edi %llx ebp %llx", u->rbx, u->rcx,
	      u->rdx, u->rsi, u->rdi, u->rbp);

	compat_regs(&r);
	u->eflags |= 0x400;
	rv_arch_enter_stub(&r, 0xf7f1d800, 0xffd00a08, 0xffd00c00);
	CHECK(u->rip == 0xf7f1d800 && u->rsp == 0xffd00a08, "enter: ip, sp");
	CHECK(u->rax == 0xffd00c00 && u->rdi == 0x66666666, "enter: regparm(1) argument in eax");
	CHECK(u->orig_rax == (unsigned long long)-1 && !(u->eflags & 0x400),
	      "enter: no restart, DF");

	/* the native convention is untouched */
	memset(&r, 0, sizeof(r));
	u->cs = 0x33;
	rv_arch_enter_stub(&r, 0x7f0000001000, 0x7ffd00000000, 0x7ffd00000100);
	CHECK(!rv_arch_is_compat(&r) && u->rdi == 0x7ffd00000100 && u->rax == 0, "native entry");
}

/* Offsets in the kernel's layouts. */
#define F_SIG	   4
#define F_PINFO	   8
#define F_PUC	   12
#define F_UC	   144
#define UC_FLAGS   0
#define UC_STACK   8
#define UC_MC	   20
#define UC_SIGMASK 108
#define SC_GS	   0
#define SC_FS	   4
#define SC_ES	   8
#define SC_DS	   12
#define SC_DI	   16
#define SC_SI	   20
#define SC_BP	   24
#define SC_SP	   28
#define SC_BX	   32
#define SC_DX	   36
#define SC_CX	   40
#define SC_AX	   44
#define SC_IP	   56
#define SC_CS	   60
#define SC_FLAGS   64
#define SC_SS	   72
#define SC_FPSTATE 76
#define SC_OLDMASK 80
#define FPSTATE_32 112 /* the FSAVE head; the FXSAVE image follows */

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}
static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* An XSAVE image as rv_arch_get_fpu() gives it: FXSAVE legacy area with
 * software bytes (magic1, xstate_size 832). x87: TOP = 6, st0 = pi
 * (physical register 6), st1 = 1.0 (physical 7), the rest empty. */
static void make_fpu(uint8_t *fpu, size_t len)
{
	static const uint8_t pi80[10] = {0x35, 0xc2, 0x68, 0x21, 0xa2,
					 0xda, 0x0f, 0xc9, 0x00, 0x40};
	static const uint8_t one80[10] = {0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f};
	uint16_t cwd = 0x0c7f, swd = 6 << 11, fop = 0x01d9;
	uint8_t twd = 0xc0; /* physical registers 6 (st0) and 7 (st1) */
	uint32_t sw[4] = {0x46505853u, 832 + 4, 0x7, 0};
	uint64_t rip = 0xf7e01234, rdp = 0xffd01000, xcomp = 0;

	memset(fpu, 0xa5, len);
	memcpy(fpu + 0, &cwd, 2);
	memcpy(fpu + 2, &swd, 2);
	memcpy(fpu + 4, &twd, 1);
	fpu[5] = 0;
	memcpy(fpu + 6, &fop, 2);
	memcpy(fpu + 8, &rip, 8);
	memcpy(fpu + 16, &rdp, 8);
	memset(fpu + 32, 0, 128);
	/* physical register i is at slot (i - TOP) & 7 */
	memcpy(fpu + 32 + 16 * 0, pi80, 10);
	memcpy(fpu + 32 + 16 * 1, one80, 10);
	sw[3] = 832;
	memcpy(fpu + 464, &sw[0], 4);
	memcpy(fpu + 468, &sw[1], 4);
	memcpy(fpu + 472, &sw[2], 4); /* xfeatures, low half */
	memset(fpu + 476, 0, 4);
	memcpy(fpu + 480, &sw[3], 4);
	memcpy(fpu + 512 + 8, &xcomp, 8);
}

static void test_frame(void)
{
	const size_t fpu_len = 1024, size = rv_arch_frame_size(fpu_len);
	uint8_t *fpu = malloc(fpu_len), *buf = malloc(size), *f, *sc, *fp;
	uint64_t top = 0xffd01230 - 128, low, sp, alt, frame, fx;
	struct rv_regs r;
	int n;

	CHECK(fpu && buf, "malloc");
	make_fpu(fpu, fpu_len);
	compat_regs(&r);
	n = rv_arch_build_frame(&r, 0, 0x0000000100000a00ull, fpu, fpu_len, top, buf, &low, &sp,
				&alt);
	CHECK(n > 0 && (size_t)n <= size && low + (uint64_t)n == top, "frame: %d bytes of %zu", n,
	      size);
	frame = low;
	f = buf + (frame - low);
	/* sys32_rt_sigreturn: frame = esp - 4; the handler's esp + 4 16-aligned */
	CHECK(sp == frame + 4 && sp % 16 == 0, "sp %#llx, frame %#llx", (unsigned long long)sp,
	      (unsigned long long)frame);
	CHECK(alt == frame + F_UC + UC_STACK, "altstack at uc_stack");
	CHECK(rd32(f + F_PINFO) == frame + 16 && rd32(f + F_PUC) == frame + F_UC &&
		  rd32(f + F_SIG) == 0,
	      "pinfo, puc");
	CHECK(rd32(f + F_UC + UC_FLAGS) == 1, "uc_flags UC_FP_XSTATE");
	CHECK(rd32(f + F_UC + UC_SIGMASK) == 0xa00 && rd32(f + F_UC + UC_SIGMASK + 4) == 1,
	      "uc_sigmask");
	sc = f + F_UC + UC_MC;
	CHECK(rd16(sc + SC_GS) == 0x63 && rd16(sc + SC_FS) == 0 && rd16(sc + SC_ES) == 0x2b &&
		  rd16(sc + SC_DS) == 0x2b && rd16(sc + SC_CS) == 0x23 && rd16(sc + SC_SS) == 0x2b,
	      "segments");
	CHECK(rd32(sc + SC_BX) == 3 && rd32(sc + SC_CX) == 0xffd01300 && rd32(sc + SC_DX) == 1 &&
		  rd32(sc + SC_SI) == 0x55555555 && rd32(sc + SC_DI) == 0x66666666 &&
		  rd32(sc + SC_BP) == 0xffd01278 && rd32(sc + SC_SP) == 0xffd01230 &&
		  rd32(sc + SC_FLAGS) == 0x246,
	      "general registers");
	/* interrupted read: back to the int $0x80, eax = the call again */
	CHECK(rd32(sc + SC_IP) == 0xf7f1c579 - 2 && rd32(sc + SC_AX) == __NR_read,
	      "restart: ip %#x ax %u", rd32(sc + SC_IP), rd32(sc + SC_AX));
	CHECK(rd32(sc + SC_OLDMASK) == 0xa00, "oldmask");

	/* fpstate: the FSAVE head, then the XSAVE image 64-byte aligned */
	CHECK(rd32(sc + SC_FPSTATE) > frame && rd32(sc + SC_FPSTATE) < top, "fpstate in the frame");
	fp = buf + (rd32(sc + SC_FPSTATE) - low);
	fx = rd32(sc + SC_FPSTATE) + FPSTATE_32;
	CHECK(fx % 64 == 0, "XSAVE image at %#llx", (unsigned long long)fx);
	CHECK(memcmp(buf + (fx - low), fpu, 832) == 0, "XSAVE image copied");
	CHECK(rd32(buf + (fx - low) + 832) == 0x46505845u, "MAGIC2 after xstate_size");
	CHECK(rd32(fp + 0) == 0xffff0c7f && rd32(fp + 4) == (0xffff0000u | 6 << 11),
	      "FSAVE cwd %#x swd %#x", rd32(fp + 0), rd32(fp + 4));
	/* physical 6 (st0) valid, 7 (st1) valid, the rest empty */
	CHECK(rd32(fp + 8) == 0xffff0fff, "FSAVE twd %#x", rd32(fp + 8));
	CHECK(rd32(fp + 12) == 0xf7e01234 && rd32(fp + 20) == 0xffd01000, "fip, foo");
	CHECK(rd32(fp + 16) == (0x23u | 0x01d9u << 16), "fcs with fop: %#x", rd32(fp + 16));
	CHECK(memcmp(fp + 28, fpu + 32, 10) == 0 && memcmp(fp + 38, fpu + 48, 10) == 0,
	      "st registers");
	CHECK(rd16(fp + 108) == (6 << 11) && rd16(fp + 110) == 0, "status, X86_FXSR_MAGIC");

	/* not in a syscall: ip and eax as they are; an rseq abort ip wins */
	compat_regs(&r);
	U(&r)->orig_rax = (unsigned long long)-1;
	U(&r)->rax = 0x11111111;
	n = rv_arch_build_frame(&r, 0, 0, fpu, fpu_len, top, buf, &low, &sp, &alt);
	CHECK(n > 0, "frame");
	sc = buf + F_UC + UC_MC;
	CHECK(rd32(sc + SC_IP) == 0xf7f1c579 && rd32(sc + SC_AX) == 0x11111111, "no restart");
	n = rv_arch_build_frame(&r, 0xf7f00000, 0, fpu, fpu_len, top, buf, &low, &sp, &alt);
	CHECK(n > 0 && rd32(buf + F_UC + UC_MC + SC_IP) == 0xf7f00000, "rseq abort ip");

	/* no XSAVE (FXSAVE only, magic1 0): no MAGIC2, no UC_FP_XSTATE */
	memset(fpu + 464, 0, 48);
	n = rv_arch_build_frame(&r, 0, 0, fpu, 512, top, buf, &low, &sp, &alt);
	CHECK(n > 0 && rd32(buf + F_UC + UC_FLAGS) == 0, "FXSAVE only");
	/* a stack above 4 GiB is no 32-bit stack */
	n = rv_arch_build_frame(&r, 0, 0, fpu, 512, 0x100001000ull, buf, &low, &sp, &alt);
	CHECK(n == -EINVAL, "top above 4 GiB: %d", n);
	free(fpu);
	free(buf);
}

static void test_stub(void)
{
	size_t len = 0;
	const uint8_t *code = rv_arch_compat_stub(&len);

	if (!code)
		SKIP("the build has no 32-bit stub (no -m32 compiler: gcc-multilib)");
	/* it must fit where place.c puts it: a vDSO's or a segment's tail */
	CHECK(len > 64 && len < 2048, "stub of %zu bytes", len);
}

TEST_MAIN("unit-ia32", {"numbers", test_numbers, 0}, {"registers", test_registers, 0},
	  {"frame", test_frame, 0}, {"stub", test_stub, 0})
#else
static void test_none(void)
{
	SKIP("32-bit (ia32) holders exist on x86_64 only");
}
TEST_MAIN("unit-ia32", {"numbers", test_none, 0})
#endif
