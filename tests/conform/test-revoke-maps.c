/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: a revoked mapping keeps its address range (nothing else can
 * be mapped there behind the holder's back) and raises SIGBUS on the next
 * access, shared or private, whether or not the holder still has an fd.
 * Other mappings of the holder are untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "revoke.h"
#include "call.h"
#include "fork.h"
#include "proc.h"
#include "scratch.h"
#include "victim.h"

#define FILE_PATH "/tmp/file"
#define MAP_LEN	  8192

static void make_file(const char *path, char c)
{
	static char buf[MAP_LEN];

	memset(buf, c, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	test_write_file(path, buf);
}

/* Map FD in the victim; returns the address. */
static uint64_t victim_map(struct victim *v, int fd, int prot, int flags)
{
	struct victim_res r = victim_call(
	    v, VICTIM_REQ(.op = VOP_MMAP, .fd = fd, .len = MAP_LEN, .prot = prot, .flags = flags));

	CHECK(r.ret != -1, "mmap in the victim: %s", strerror(r.err));
	return (uint64_t)r.ret;
}

static struct victim_res victim_load(struct victim *v, uint64_t addr)
{
	return victim_call(v, VICTIM_REQ(.op = VOP_LOAD, .arg = (long)addr));
}

#define CHECK_SIGBUS(r, what)                                                                      \
	CHECK((r).sig == SIGBUS, "%s: access to the revoked mapping gave signal %d, value %ld",    \
	      what, (r).sig, (r).ret)

/* Is [start, start+MAP_LEN) still a mapping of its own in PID's maps? */
static int maps_has_range(pid_t pid, uint64_t start)
{
	char path[64], line[512];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	CHECK(f, "open %s: %m", path);
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t a, b;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &a, &b) == 2)
			found = a == start && b == start + MAP_LEN;
	}
	fclose(f);
	return found;
}

static int setup(struct victim *v)
{
	test_scratch();
	make_file(FILE_PATH, 'M');
	victim_start(v);
	return victim_open(v, FILE_PATH, O_RDWR);
}

static void do_revoke(void)
{
	CHECK(test_revoke(FILE_PATH) == 0, "revoke(%s): %m", FILE_PATH);
}

static void shared_mapping_sigbus(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ | PROT_WRITE, MAP_SHARED);
	struct victim_res r = victim_load(&v, a);

	CHECK(r.sig == 0 && r.ret == 'M', "load before revoke: sig %d value %ld", r.sig, r.ret);
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load, shared");
	r = victim_call(&v, VICTIM_REQ(.op = VOP_STORE, .arg = (long)(a + 4096), .data = "x"));
	CHECK_SIGBUS(r, "store, shared");
}

static void private_mapping_sigbus(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	struct victim_res r;

	/* A private copy of the first page, the second still the file's. */
	r = victim_call(&v, VICTIM_REQ(.op = VOP_STORE, .arg = (long)a, .data = "p"));
	CHECK(r.sig == 0, "store before revoke: sig %d", r.sig);
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load of a copied-on-write page, private");
	r = victim_load(&v, a + 4096);
	CHECK_SIGBUS(r, "load, private");
}

static void range_kept_in_maps(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t shared = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	uint64_t private = victim_map(&v, fd, PROT_READ, MAP_PRIVATE);
	struct victim_res r;

	do_revoke();
	r = victim_load(&v, shared);
	CHECK_SIGBUS(r, "precondition: load, shared");
	r = victim_load(&v, private);
	CHECK_SIGBUS(r, "precondition: load, private");
	CHECK(maps_has_range(v.pid, shared), "the shared mapping's range %#" PRIx64 " is gone",
	      shared);
	CHECK(maps_has_range(v.pid, private), "the private mapping's range %#" PRIx64 " is gone",
	      private);
}

static void other_mapping_untouched(void)
{
	struct victim v;
	int fd = setup(&v), ofd;
	uint64_t a, o;
	struct victim_res r;

	make_file("/tmp/other", 'O');
	ofd = victim_open(&v, "/tmp/other", O_RDONLY);
	a = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	o = victim_map(&v, ofd, PROT_READ, MAP_SHARED);
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load");
	for (uint64_t off = 0; off < MAP_LEN - 1; off += 4095) {
		r = victim_load(&v, o + off);
		CHECK(r.sig == 0 && r.ret == 'O',
		      "the other file's mapping at +%" PRIu64 ": signal %d value %ld", off, r.sig,
		      r.ret);
	}
	r = victim_read(&v, ofd, 4);
	CHECK(r.ret == 4 && memcmp(r.data, "OOOO", 4) == 0, "the other file's fd: %s",
	      strerror(r.err));
}

static void mapping_only_holder_cut(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	struct victim_res r = victim_call(&v, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));

	CHECK(r.ret == 0, "close: %s", strerror(r.err));
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load, the holder had no fd");
	CHECK(maps_has_range(v.pid, a), "the range %#" PRIx64 " is gone", a);
}

static void exec_mapping_sigbus(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	struct victim_res r = victim_load(&v, a);

	CHECK(r.sig == 0 && r.ret == 'M', "load before revoke: sig %d value %ld", r.sig, r.ret);
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load, PROT_EXEC");
}

/* One mm, many threads: the one that touches it is not the one that mapped it. */
static void mapping_seen_by_other_thread(void)
{
	struct victim v, t;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	struct victim_res r;

	victim_spawn(&v, VOP_THREAD, &t);
	do_revoke();
	r = victim_load(&t, a);
	CHECK(r.tid != v.pid, "the load ran in the main thread");
	CHECK_SIGBUS(r, "load in another thread");
}

/* fork() copies the mapping into a second mm: both are cut. */
static void inherited_mapping_cut(void)
{
	struct victim v, c;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	struct victim_res r;

	r = victim_call(&v, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));
	CHECK(r.ret == 0, "close: %s", strerror(r.err));
	victim_spawn(&v, VOP_FORK, &c);
	r = victim_load(&c, a);
	CHECK(r.sig == 0 && r.ret == 'M', "the child's inherited mapping before revoke: sig %d",
	      r.sig);
	do_revoke();
	r = victim_load(&c, a);
	CHECK_SIGBUS(r, "load in the child that inherited the mapping");
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load in the parent");
}

/* A deleted file mapped by a holder without an fd: its only name left is
 * /proc/PID/map_files/START-END. */
static void deleted_mapping_via_map_files(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ, MAP_SHARED);
	struct victim_res r = victim_call(&v, VICTIM_REQ(.op = VOP_CLOSE, .fd = fd));
	char path[128];

	CHECK(r.ret == 0, "close: %s", strerror(r.err));
	CHECK(unlink(FILE_PATH) == 0, "unlink: %m");
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)v.pid, a,
		 a + MAP_LEN);
	CHECK(test_revoke(path) == 0, "revoke(%s): %m", path);
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "load from the deleted file's mapping");
}

/* The permissions ("rw-s") /proc/PID/maps shows for [start, end), or "". */
static const char *maps_perms(pid_t pid, uint64_t start, uint64_t end)
{
	static char perms[8];
	char path[64], line[512];
	FILE *f;

	perms[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	CHECK(f, "open %s: %m", path);
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;
		char p[8];
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &a, &b, p) == 3 && a == start &&
		    b == end) {
			snprintf(perms, sizeof(perms), "%s", p);
			break;
		}
	}
	fclose(f);
	return perms;
}

/* One mapping split by mprotect() into two ranges of different protection:
 * each keeps its own. */
static void prot_kept_per_range(void)
{
	struct victim v;
	int fd = setup(&v);
	uint64_t a = victim_map(&v, fd, PROT_READ | PROT_WRITE, MAP_SHARED);
	struct victim_res r;
	char before_lo[8], before_hi[8];

	r = victim_call(&v, VICTIM_REQ(.op = VOP_MPROTECT, .arg = (long)(a + 4096), .len = 4096,
				       .prot = PROT_READ));
	CHECK(r.ret == 0, "mprotect: %s", strerror(r.err));
	snprintf(before_lo, sizeof(before_lo), "%s", maps_perms(v.pid, a, a + 4096));
	snprintf(before_hi, sizeof(before_hi), "%s", maps_perms(v.pid, a + 4096, a + MAP_LEN));
	CHECK(strcmp(before_lo, "rw-s") == 0 && strcmp(before_hi, "r--s") == 0,
	      "setup: the ranges are \"%s\" and \"%s\"", before_lo, before_hi);
	do_revoke();
	r = victim_load(&v, a);
	CHECK_SIGBUS(r, "precondition: load");
	CHECK(strcmp(maps_perms(v.pid, a, a + 4096), before_lo) == 0,
	      "the first range is \"%s\", was \"%s\"", maps_perms(v.pid, a, a + 4096), before_lo);
	CHECK(strcmp(maps_perms(v.pid, a + 4096, a + MAP_LEN), before_hi) == 0,
	      "the second range is \"%s\", was \"%s\"", maps_perms(v.pid, a + 4096, a + MAP_LEN),
	      before_hi);
}

static sigjmp_buf own_jmp;

static void own_on_sigbus(int sig)
{
	siglongjmp(own_jmp, sig);
}

static void own_mapping_sigbus(void)
{
	struct sigaction sa = {.sa_handler = own_on_sigbus};
	volatile uint8_t *p;
	int fd, sig;

	test_scratch();
	make_file(FILE_PATH, 'M');
	fd = open(FILE_PATH, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open: %m");
	p = mmap(NULL, MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap: %m");
	CHECK(close(fd) == 0, "close: %m");
	CHECK(p[0] == 'M', "the mapping does not read the file");
	CHECK(sigaction(SIGBUS, &sa, NULL) == 0, "sigaction: %m");
	do_revoke();
	CHECK(maps_has_range(getpid(), (uint64_t)(uintptr_t)p), "the caller's own range is gone");
	sig = sigsetjmp(own_jmp, 1);
	if (sig == 0) {
		uint8_t c = p[0];
		test_fail("the caller's own revoked mapping still reads (%#x)", c);
	}
	CHECK(sig == SIGBUS, "signal %d", sig);
}

/* clang-format off */
TEST_MAIN("revoke-maps",
	  {"shared_mapping_sigbus", shared_mapping_sigbus, 0},
	  {"private_mapping_sigbus", private_mapping_sigbus, 0},
	  {"range_kept_in_maps", range_kept_in_maps, 0},
	  {"other_mapping_untouched", other_mapping_untouched, 0},
	  {"mapping_only_holder_cut", mapping_only_holder_cut, 0},
	  {"exec_mapping_sigbus", exec_mapping_sigbus, 0},
	  {"mapping_seen_by_other_thread", mapping_seen_by_other_thread, 0},
	  {"inherited_mapping_cut", inherited_mapping_cut, 0},
	  {"deleted_mapping_via_map_files", deleted_mapping_via_map_files, 0},
	  {"prot_kept_per_range", prot_kept_per_range, 0},
	  {"own_mapping_sigbus", own_mapping_sigbus, 0},
)
/* clang-format on */
