/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86_64's 32-bit (ia32, compat) tasks: shared by x86_64.c (the native
 * side, <asm/unistd_64.h>) and x86_64-ia32.c (<asm/unistd_32.h>); the two
 * tables of numbers cannot be seen from one file, so each side builds its
 * column of the list below.
 */
#ifndef REVOKE_X86_64_IA32_H
#define REVOKE_X86_64_IA32_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/user.h>

#include "arch.h"

/* A task in a 32-bit code segment (__USER32_CS): its int $0x80 (and the
 * compat vDSO's sysenter/syscall) go to the ia32 table, its signal frames
 * are ia32 frames. */
#define X86_64_USER32_CS 0x23

/*
 * X(native, ia32, callable): callable 1 where the ia32 call takes the same
 * arguments in the same places as the native one (so a program's op can be
 * renumbered as it is; futex_time64 reads the 64-bit timespec the native
 * futex does), 0 where the pair is only for telling which call a stopped
 * compat thread is in (its descriptor arguments are where the native call
 * has them).
 */
#define RV_IA32_CALLS(X)                                                                           \
	X(read, read, 1)                                                                           \
	X(write, write, 1)                                                                         \
	X(close, close, 1)                                                                         \
	X(openat, openat, 1)                                                                       \
	X(dup, dup, 1)                                                                             \
	X(dup3, dup3, 1)                                                                           \
	X(fcntl, fcntl64, 1)                                                                       \
	X(fcntl, fcntl, 0)                                                                         \
	X(getpid, getpid, 1)                                                                       \
	X(gettid, gettid, 1)                                                                       \
	X(getppid, getppid, 1)                                                                     \
	X(kill, kill, 1)                                                                           \
	X(tgkill, tgkill, 1)                                                                       \
	X(memfd_create, memfd_create, 1)                                                           \
	X(pidfd_open, pidfd_open, 1)                                                               \
	X(pidfd_getfd, pidfd_getfd, 1)                                                             \
	X(fchdir, fchdir, 1)                                                                       \
	X(chdir, chdir, 1)                                                                         \
	X(chroot, chroot, 1)                                                                       \
	X(sigaltstack, sigaltstack, 1)                                                             \
	X(rt_sigprocmask, rt_sigprocmask, 1)                                                       \
	X(futex, futex_time64, 1)                                                                  \
	X(futex, futex, 0)                                                                         \
	X(prlimit64, prlimit64, 1)                                                                 \
	X(munmap, munmap, 1)                                                                       \
	X(mprotect, mprotect, 1)                                                                   \
	X(flock, flock, 1)                                                                         \
	X(pipe2, pipe2, 1)                                                                         \
	X(getdents64, getdents64, 1)                                                               \
	X(exit, exit, 1)                                                                           \
	X(exit_group, exit_group, 1)                                                               \
	X(dup2, dup2, 1)                                                                           \
	X(close_range, close_range, 1)                                                             \
	X(setns, setns, 1)                                                                         \
	X(io_uring_register, io_uring_register, 1)                                                 \
	X(readv, readv, 0)                                                                         \
	X(writev, writev, 0)                                                                       \
	X(pread64, pread64, 0)                                                                     \
	X(pwrite64, pwrite64, 0)                                                                   \
	X(preadv, preadv, 0)                                                                       \
	X(pwritev, pwritev, 0)                                                                     \
	X(preadv2, preadv2, 0)                                                                     \
	X(pwritev2, pwritev2, 0)                                                                   \
	X(recvfrom, recvfrom, 0)                                                                   \
	X(recvmsg, recvmsg, 0)                                                                     \
	X(recvmmsg, recvmmsg, 0)                                                                   \
	X(recvmmsg, recvmmsg_time64, 0)                                                            \
	X(sendto, sendto, 0)                                                                       \
	X(sendmsg, sendmsg, 0)                                                                     \
	X(sendmmsg, sendmmsg, 0)                                                                   \
	X(accept4, accept4, 0)                                                                     \
	X(connect, connect, 0)                                                                     \
	X(ioctl, ioctl, 0)                                                                         \
	X(vmsplice, vmsplice, 0)                                                                   \
	X(splice, splice, 0)                                                                       \
	X(copy_file_range, copy_file_range, 0)                                                     \
	X(tee, tee, 0)                                                                             \
	X(sendfile, sendfile, 0)                                                                   \
	X(sendfile, sendfile64, 0)                                                                 \
	X(epoll_wait, epoll_wait, 0)                                                               \
	X(epoll_pwait, epoll_pwait, 0)                                                             \
	X(epoll_pwait2, epoll_pwait2, 0)                                                           \
	X(nanosleep, nanosleep, 0)

/* x86_64.c: the native column. */
extern const long rv_ia32_native_nrs[];
/* x86_64-ia32.c: the ia32 column and the callable flags. */
extern const long rv_ia32_nrs[];
extern const bool rv_ia32_callable[];
extern const size_t rv_ia32_ncalls;

/* The native number of the call a compat thread is in (ia32 number NR);
 * calls not in the list get a number no native call has. */
long rv_ia32_native_nr(long nr);

/* x86_64.c's restart rule, for both frames: the ip and ax to go back to. */
uint64_t rv_x86_restart_ip_ax(const struct user_regs_struct *u, uint64_t *ax);

int rv_ia32_build_frame(const struct user_regs_struct *u, uint64_t ip, uint64_t mask,
			const void *fpu, size_t fpu_len, uint64_t top, void *buf, uint64_t *ret_low,
			uint64_t *ret_sp, uint64_t *ret_altstack);
/* rv_arch_frame_mask() of an ia32 frame. */
uint64_t rv_ia32_frame_mask(uint64_t altstack);
/* Bytes an ia32 frame needs beyond the FPU state (at most what the native
 * frame needs: rv_arch_frame_size serves both). */
size_t rv_ia32_frame_overhead(void);

#endif
