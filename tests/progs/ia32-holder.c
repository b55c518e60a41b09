/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 32-bit (ia32) holder for tests/test-revoke-ia32.c, built with -m32
 * -static (tests/meson.build). It holds a target in one way (MODE), writes
 * "R" on stdout when it is in place, waits (for the cut, then for a byte on
 * stdin) and reports on one line what it sees afterwards:
 *
 *   read FIFO    blocked in read() of FIFO (the thread the cut runs in)
 *                -> "read RET ERRNO mask M fds F"
 *   hold FILE    holds FILE, blocked in read() of stdin (not a target)
 *                -> "hold RET ERRNO go G mask M fds F"
 *   map FILE     a shared mapping of FILE, a SIGBUS handler
 *                -> "map SIGBUS|BYTE mask M fds F"
 *   threads FIFO three threads blocked in read() of FIFO, the main one in
 *                read() of stdin -> "threads EBADF-COUNT go G mask M fds F"
 *   regs FILE    holds FILE (and FILE.1, FILE.2 if they exist) and spins
 *                checking every general register, the
 *                x87 stack and control word, xmm0-7 and MXCSR (and across
 *                int $0x80); stdin's byte ends the spin
 *                -> "regs OK|BAD ITERATIONS RET ERRNO mask M fds F"
 *
 * M is 1 when the signal mask is what it set (SIGUSR2 and SIGWINCH blocked),
 * F when its descriptor 5 (/dev/null, not a target) is still /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(void *) == 4, "built with -m32");

static sigset_t want_mask;
static struct stat null_st;

static void setup(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || dup2(fd, 5) != 5 || fstat(5, &null_st) < 0)
		exit(2);
	close(fd);
	sigemptyset(&want_mask);
	sigaddset(&want_mask, SIGUSR2);
	sigaddset(&want_mask, SIGWINCH);
	sigprocmask(SIG_SETMASK, &want_mask, NULL);
}

static int mask_ok(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	for (int s = 1; s < 65; s++)
		if (sigismember(&cur, s) != sigismember(&want_mask, s))
			return 0;
	return 1;
}

static int fds_ok(void)
{
	struct stat st;

	return fstat(5, &st) == 0 && st.st_dev == null_st.st_dev && st.st_ino == null_st.st_ino &&
	       (fcntl(5, F_GETFL) & O_ACCMODE) == O_RDONLY;
}

static void ready(void)
{
	if (write(1, "R", 1) != 1)
		exit(2);
}

/* The byte on stdin that says "the cut is over, report". */
static int wait_go(void)
{
	char c = 0;
	ssize_t n;

	do
		n = read(0, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? c : -1;
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(1, buf, (size_t)n) != n)
		exit(2);
}

/* FIFOs are opened for reading and writing: the open does not wait for a
 * writer, and the read waits for data, not for EOF. */
static int mode_read(const char *path)
{
	int fd = open(path, O_RDWR);
	char c;
	ssize_t n;

	if (fd < 0)
		return 2;
	ready();
	n = read(fd, &c, 1);
	report("read %zd %d mask %d fds %d\n", n, n < 0 ? errno : 0, mask_ok(), fds_ok());
	return 0;
}

static int mode_hold(const char *path)
{
	int fd = open(path, O_RDONLY), go;
	char c;
	ssize_t n;

	if (fd < 0)
		return 2;
	ready();
	go = wait_go();
	n = read(fd, &c, 1);
	report("hold %zd %d go %c mask %d fds %d\n", n, n < 0 ? errno : 0, go, mask_ok(), fds_ok());
	return 0;
}

static sigjmp_buf bus_jmp;

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static int mode_map(const char *path)
{
	int fd = open(path, O_RDONLY);
	volatile unsigned char *p;
	struct sigaction sa = {.sa_handler = on_bus};

	if (fd < 0)
		return 2;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	close(fd);
	sigaction(SIGBUS, &sa, NULL);
	ready();
	wait_go();
	if (sigsetjmp(bus_jmp, 1))
		report("map SIGBUS mask %d fds %d\n", mask_ok(), fds_ok());
	else
		report("map %c mask %d fds %d\n", p[0], mask_ok(), fds_ok());
	return 0;
}

static int thread_fd;

static void *reader(void *arg)
{
	char c;
	ssize_t n = read(thread_fd, &c, 1);

	(void)arg;
	return (void *)(long)(n < 0 && errno == EBADF);
}

static int mode_threads(const char *path)
{
	pthread_t th[3];
	int go, ebadf = 0;

	thread_fd = open(path, O_RDWR);
	if (thread_fd < 0)
		return 2;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, reader, NULL) != 0)
			return 2;
	ready();
	go = wait_go();
	for (int i = 0; i < 3; i++) {
		void *r;

		pthread_join(th[i], &r);
		ebadf += (int)(long)r;
	}
	report("threads %d go %c mask %d fds %d\n", ebadf, go, mask_ok(), fds_ok());
	return 0;
}

/* ---- the register workload ------------------------------------------------ */

volatile int spin_stop;
unsigned int spin_iterations;
unsigned short spin_cw;
unsigned int spin_mxcsr;
const double spin_xmm[8] = {1.25, -2.5, 3.75, 1e300, -1e-300, 6.0, 7.5, 0.125};
int spin_regs(void);

/* Returns 0 when every check held until spin_stop, 1 at the first one that
 * did not. x87: control word 0x0c7f (round toward zero, extended precision,
 * all masked), st0 = pi, st1 = 1; MXCSR 0x7f80 | round toward zero. */
__asm__(
    ".text\n"
    ".globl spin_regs\n"
    "spin_regs:\n"
    "	push %ebp\n	push %ebx\n	push %esi\n	push %edi\n"
    "	sub $8, %esp\n"
    "	fninit\n"
    "	movw $0x0c7f, (%esp)\n	fldcw (%esp)\n"
    "	fld1\n	fldpi\n"
    "	movl $0x7f80 | 0x6000, (%esp)\n	ldmxcsr (%esp)\n"
    "	movsd spin_xmm+0, %xmm0\n	movsd spin_xmm+8, %xmm1\n"
    "	movsd spin_xmm+16, %xmm2\n	movsd spin_xmm+24, %xmm3\n"
    "	movsd spin_xmm+32, %xmm4\n	movsd spin_xmm+40, %xmm5\n"
    "	movsd spin_xmm+48, %xmm6\n	movsd spin_xmm+56, %xmm7\n"
    "	mov $0x11111111, %eax\n	mov $0x22222222, %ebx\n	mov $0x33333333, %ecx\n"
    "	mov $0x44444444, %edx\n	mov $0x55555555, %esi\n	mov $0x66666666, %edi\n"
    "	mov $0x77777777, %ebp\n"
    "1:\n"
    "	cmp $0x11111111, %eax\n	jne 9f\n"
    "	cmp $0x22222222, %ebx\n	jne 9f\n"
    "	cmp $0x33333333, %ecx\n	jne 9f\n"
    "	cmp $0x44444444, %edx\n	jne 9f\n"
    "	cmp $0x55555555, %esi\n	jne 9f\n"
    "	cmp $0x66666666, %edi\n	jne 9f\n"
    "	cmp $0x77777777, %ebp\n	jne 9f\n"
    "	fldpi\n	fucomip %st(1), %st\n	jne 9f\n"
    "	fld1\n	fucomip %st(2), %st\n	jne 9f\n"
    "	fnstcw spin_cw\n	cmpw $0x0c7f, spin_cw\n	jne 9f\n"
    "	stmxcsr spin_mxcsr\n	cmpl $0x7f80 | 0x6000, spin_mxcsr\n	jne 9f\n"
    "	ucomisd spin_xmm+0, %xmm0\n	jne 9f\n	ucomisd spin_xmm+8, %xmm1\n	jne 9f\n"
    "	ucomisd spin_xmm+16, %xmm2\n	jne 9f\n	ucomisd spin_xmm+24, %xmm3\n	jne 9f\n"
    "	ucomisd spin_xmm+32, %xmm4\n	jne 9f\n	ucomisd spin_xmm+40, %xmm5\n	jne 9f\n"
    "	ucomisd spin_xmm+48, %xmm6\n	jne 9f\n	ucomisd spin_xmm+56, %xmm7\n	jne 9f\n"
    "	incl spin_iterations\n"
    /* every 4096 rounds a system call (getppid), eax reloaded after it */
    "	testl $0xfff, spin_iterations\n	jnz 2f\n"
    "	mov $64, %eax\n	int $0x80\n	mov $0x11111111, %eax\n"
    "2:\n"
    "	cmpl $0, spin_stop\n	je 1b\n"
    "	xor %eax, %eax\n	jmp 8f\n"
    "9:\n	mov $1, %eax\n"
    "8:\n	fstp %st(0)\n	fstp %st(0)\n"
    "	movl $0x1f80, (%esp)\n	ldmxcsr (%esp)\n	fninit\n"
    "	add $8, %esp\n"
    "	pop %edi\n	pop %esi\n	pop %ebx\n	pop %ebp\n"
    "	ret\n");

static void *stopper(void *arg)
{
	(void)arg;
	wait_go();
	spin_stop = 1;
	return NULL;
}

static int mode_regs(const char *path)
{
	int fd = open(path, O_RDONLY), bad;
	char more[4096];

	/* PATH.1 and PATH.2 too, where they exist: one cut each. */
	for (int i = 1; i <= 2; i++) {
		snprintf(more, sizeof(more), "%s.%d", path, i);
		open(more, O_RDONLY);
	}
	pthread_t th;
	char c;
	ssize_t n;

	if (fd < 0)
		return 2;
	/* The byte on stdin is read by a second thread, so that the main one
	 * never leaves its loop for it. */
	if (pthread_create(&th, NULL, stopper, NULL) != 0)
		return 2;
	ready();
	bad = spin_regs();
	pthread_join(th, NULL);
	n = read(fd, &c, 1);
	report("regs %s %u %zd %d mask %d fds %d\n", bad ? "BAD" : "OK", spin_iterations, n,
	       n < 0 ? errno : 0, mask_ok(), fds_ok());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	setup();
	if (strcmp(argv[1], "read") == 0)
		return mode_read(argv[2]);
	if (strcmp(argv[1], "hold") == 0)
		return mode_hold(argv[2]);
	if (strcmp(argv[1], "map") == 0)
		return mode_map(argv[2]);
	if (strcmp(argv[1], "threads") == 0)
		return mode_threads(argv[2]);
	if (strcmp(argv[1], "regs") == 0)
		return mode_regs(argv[2]);
	return 2;
}
