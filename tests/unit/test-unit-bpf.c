/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * BPF iterator discovery against /proc discovery: on the same load (fds with
 * various flags and positions, dups, mapping-only holders, threads, a zombie
 * leader with a live thread, cwd, exe, an io_uring fixed file, an fd in
 * flight, the caller itself), rv_scan with REVOKE_DISCOVERY_BPF and with
 * REVOKE_DISCOVERY_PROC must return identical holder and ref lists.
 * Skipped only when this kernel or caller cannot use BPF iterators.
 */
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fork.h"
#include "harness.h"
#include "internal.h"
#include "kinds/target.h"
#include "proc.h"
#include "scratch.h"

struct victims {
	pid_t pid[512];
	size_t n;
};

static char dir_tmpl[] = "/tmp/revoke-bpf-XXXXXX";
static char file_path[256], dir_path[256], exe_path[256];
static char ovl_path[320];
/* Whether a holder has a pidfd depends on how many were open before it
 * (rlimit_nofile): not compared then. */
static bool cmp_pidfds = true; /* a file on an overlayfs mount (test_overlayfs) */

static void setup_files(void)
{
	int fd;

	CHECK(mkdtemp(dir_tmpl), "mkdtemp: %s", strerror(errno));
	snprintf(file_path, sizeof(file_path), "%s/target", dir_tmpl);
	snprintf(dir_path, sizeof(dir_path), "%s/dir", dir_tmpl);
	snprintf(exe_path, sizeof(exe_path), "%s/sleeper", dir_tmpl);
	fd = open(file_path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "open %s: %s", file_path, strerror(errno));
	CHECK(ftruncate(fd, 4 * 4096) == 0, "ftruncate: %s", strerror(errno));
	close(fd);
	CHECK(mkdir(dir_path, 0755) == 0, "mkdir: %s", strerror(errno));
	test_copy_file("/bin/sleep", exe_path, 0755);
}

static void cleanup_files(void)
{
	if (test_remove_tree(dir_tmpl) < 0)
		fprintf(stderr, "  (could not remove %s)\n", dir_tmpl);
}

static void target_of(const char *path, struct rv_target *t)
{
	struct stat st;

	t->path_fd = open(path, O_PATH | O_CLOEXEC);
	CHECK(t->path_fd >= 0, "open %s: %s", path, strerror(errno));
	CHECK(fstat(t->path_fd, &st) == 0, "fstat: %s", strerror(errno));
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->mode = st.st_mode;
	t->uid = st.st_uid;
	t->rdev = st.st_rdev;
	t->path = (char *)path;
}

static void *thread_sleep(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Runs KIND in a child; the child writes one byte on READY once set up. */
static void victim_body(int kind, int ready)
{
	pthread_t th;
	char c = 'x';
	int fd, fd2;
	void *p;

	/* Only what the victim opens itself (not the test's O_PATH fds). */
	ready = dup3(ready, 200, O_CLOEXEC) < 0 ? ready : 200;
	if (syscall(SYS_close_range, 3, 199, 0) < 0)
		_exit(1);
	switch (kind) {
	case 0: /* fds: several flags and positions, dups */
		fd = open(file_path, O_RDONLY);
		lseek(fd, 123, SEEK_SET);
		fd2 = open(file_path, O_RDWR | O_APPEND | O_CLOEXEC);
		dup2(fd, 100);
		dup3(fd2, 101, O_CLOEXEC);
		fd = open(file_path, O_WRONLY | O_NONBLOCK);
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		break;
	case 1: /* mappings only */
		fd = open(file_path, O_RDWR);
		p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 2 * 4096);
		CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 3 * 4096);
		CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
		close(fd);
		break;
	case 2: /* threads, an fd and a mapping */
		fd = open(file_path, O_RDONLY);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		for (int i = 0; i < 3; i++)
			pthread_create(&th, NULL, thread_sleep, NULL);
		break;
	case 3: /* zombie leader: the main thread exits, a thread lives on */
		fd = open(file_path, O_RDONLY);
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
		if (chdir(dir_path) < 0)
			_exit(1);
		pthread_create(&th, NULL, thread_sleep, NULL);
		if (write(ready, &c, 1) != 1)
			_exit(1);
		syscall(SYS_exit, 0);
		break;
	case 4: /* cwd, and an fd on the directory */
		if (chdir(dir_path) < 0)
			_exit(1);
		fd = open(dir_path, O_RDONLY | O_DIRECTORY);
		break;
	case 5: { /* io_uring fixed file only */
		static struct io_uring ring;

		fd = open(file_path, O_RDONLY);
		if (io_uring_queue_init(4, &ring, 0) < 0 ||
		    io_uring_register_files(&ring, &fd, 1) < 0)
			_exit(3);
		close(fd);
		break;
	}
	case 6: { /* an fd in flight in an SCM_RIGHTS message */
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = &c, .iov_len = 1};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		int sv[2];

		fd = open(file_path, O_RDONLY);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			_exit(1);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		if (sendmsg(sv[0], &msg, 0) != 1)
			_exit(1);
		close(fd);
		break;
	}
	case 7: /* exe */
		if (write(ready, &c, 1) != 1)
			_exit(1);
		execl(exe_path, "sleeper", "1000", (char *)NULL);
		_exit(1);
	case 8: /* noise: holds nothing */
		fd = open("/dev/null", O_RDONLY);
		break;
	case 9: /* an fd on the overlayfs file */
		fd = open(ovl_path, O_RDONLY);
		CHECK(fd >= 0, "open %s: %s", ovl_path, strerror(errno));
		break;
	case 10: /* a shared mapping only of the overlayfs file (still lower) */
	case 11: /* a writable one (copied up) */
		fd = open(ovl_path, kind == 10 ? O_RDONLY : O_RDWR);
		CHECK(fd >= 0, "open %s: %s", ovl_path, strerror(errno));
		p = mmap(NULL, 4096, kind == 10 ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
		close(fd);
		break;
	}
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static pid_t spawn(int kind)
{
	int p[2];
	char c;
	pid_t pid;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	pid = test_fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		victim_body(kind, p[1]);
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1, "victim %d (kind %d) did not start", pid, kind);
	close(p[0]);
	return pid;
}

/* Waits until every thread of PID sleeps (or is a zombie): the two scans
 * must see the same State letter. */
static void wait_settled(pid_t pid)
{
	for (int tries = 0; tries < 2000; tries++) {
		char state = proc_state(pid);

		CHECK(state, "victim %d vanished", pid);
		if (strchr("SZ", state))
			return;
		usleep(1000);
	}
	test_fail("victim %d never went to sleep", pid);
}

static const char *cmp_holders(const struct rv_holders *a, const struct rv_holders *b, char *why,
			       size_t size)
{
	if (a->n != b->n) {
		snprintf(why, size, "%zu holders by /proc, %zu by BPF", a->n, b->n);
		return why;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct rv_holder *x = &a->v[i], *y = &b->v[i];

		if (x->pub.pid != y->pub.pid || x->pub.uid != y->pub.uid ||
		    strcmp(x->pub.comm, y->pub.comm) != 0 || x->self != y->self ||
		    x->zombie_leader != y->zombie_leader || x->seccomp != y->seccomp ||
		    x->tracer != y->tracer || x->state != y->state || x->nspid != y->nspid ||
		    x->pub.nrefs != y->pub.nrefs ||
		    (cmp_pidfds && (x->pidfd < 0) != (y->pidfd < 0))) {
			snprintf(
			    why, size,
			    "holder %zu: /proc pid %d uid %u comm %s self %d zl %d sc %d tr %d "
			    "st %c nspid %d nrefs %zu; BPF pid %d uid %u comm %s self %d zl %d "
			    "sc %d tr %d st %c nspid %d nrefs %zu",
			    i, x->pub.pid, x->pub.uid, x->pub.comm, x->self, x->zombie_leader,
			    x->seccomp, x->tracer, x->state, x->nspid, x->pub.nrefs, y->pub.pid,
			    y->pub.uid, y->pub.comm, y->self, y->zombie_leader, y->seccomp,
			    y->tracer, y->state, y->nspid, y->pub.nrefs);
			return why;
		}
		for (size_t k = 0; k < x->pub.nrefs; k++) {
			const struct revoke_ref *r = &x->pub.refs[k], *s = &y->pub.refs[k];

			if (memcmp(r, s, sizeof(*r)) != 0) {
				snprintf(why, size,
					 "pid %d ref %zu: /proc type %d fd %d fdfl %#x of %#o pos "
					 "%llu [%llx,%llx) prot %d mf %d t %u; BPF type %d fd %d "
					 "fdfl %#x of %#o pos %llu [%llx,%llx) prot %d mf %d t %u",
					 x->pub.pid, k, r->type, r->fd, r->fd_flags, r->open_flags,
					 (unsigned long long)r->offset,
					 (unsigned long long)r->start, (unsigned long long)r->end,
					 r->prot, r->map_flags, r->target, s->type, s->fd,
					 s->fd_flags, s->open_flags, (unsigned long long)s->offset,
					 (unsigned long long)s->start, (unsigned long long)s->end,
					 s->prot, s->map_flags, s->target);
				return why;
			}
		}
	}
	return NULL;
}

static const struct rv_holder *find(const struct rv_holders *hs, pid_t pid)
{
	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].pub.pid == pid)
			return &hs->v[i];
	return NULL;
}

static size_t count_type(const struct rv_holder *h, int type)
{
	size_t n = 0;

	for (size_t i = 0; h && i < h->pub.nrefs; i++)
		n += h->pub.refs[i].type == type;
	return n;
}

/* Scans with BPF and with /proc and compares. Skips when BPF is unusable. */
static void scan_both(const struct rv_target *t, size_t nt, const int *ignore, size_t nignore,
		      struct rv_holders *proc, struct rv_holders *bpf)
{
	struct rv_scan_opts o = {
	    .flags = REVOKE_DISCOVERY_BPF, .ignore_fds = ignore, .nignore_fds = nignore};
	char why[1024];
	const char *diff;
	int r;

	r = rv_scan(t, nt, &o, bpf);
	/* rv_scan says EOPNOTSUPP too when built without BPF (meson -Dbpf). */
	if (r == -EOPNOTSUPP || r == -EPERM || r == -ENOSYS)
		SKIP(
		    "BPF iterator discovery unusable (built without it, or the kernel lacks BTF or "
		    "task/fd/vma iterators, or no CAP_BPF/CAP_PERFMON, or lockdown): %s",
		    strerror(-r));
	CHECK(r == REVOKE_DISC_BPF, "rv_scan(BPF) = %d (%s)", r, r < 0 ? strerror(-r) : "");
	o.flags = REVOKE_DISCOVERY_PROC;
	r = rv_scan(t, nt, &o, proc);
	CHECK(r == REVOKE_DISC_PROC, "rv_scan(PROC) = %d (%s)", r, r < 0 ? strerror(-r) : "");
	/* What /proc could not look at (pid 1 of some sandboxes, even for
	 * root), BPF sees: those are compared by what BPF found in them. */
	{
		size_t k = 0;

		for (size_t i = 0; i < proc->n; i++) {
			if (proc->v[i].uninspected && !rv_holders_find(bpf, proc->v[i].pub.pid)) {
				rv_holder_clear(&proc->v[i]);
				continue;
			}
			proc->v[k++] = proc->v[i];
		}
		proc->n = k;
	}
	diff = cmp_holders(proc, bpf, why, sizeof(why));
	CHECK(!diff, "BPF and /proc differ: %s", diff);
}

static void test_same_holders(void)
{
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target t[3] = {0};
	pid_t v[9];
	int selffd;

	setup_files();
	target_of(file_path, &t[0]);
	target_of(dir_path, &t[1]);
	target_of(exe_path, &t[2]);
	for (int k = 0; k < 9; k++)
		v[k] = spawn(k);
	for (int k = 0; k < 9; k++)
		wait_settled(v[k]);
	selffd = open(file_path, O_RDONLY | O_CLOEXEC);
	CHECK(selffd >= 0, "open: %s", strerror(errno));

	{
		int ignore[3] = {t[0].path_fd, t[1].path_fd, t[2].path_fd};

		scan_both(t, 3, ignore, 3, &proc, &bpf);
	}
	/* Equal, and right: every victim is there with what it holds. */
	CHECK(count_type(find(&bpf, v[0]), REVOKE_REF_FD) == 5, "fd victim: %zu fds",
	      count_type(find(&bpf, v[0]), REVOKE_REF_FD));
	CHECK(count_type(find(&bpf, v[1]), REVOKE_REF_MAP) == 3 &&
		  count_type(find(&bpf, v[1]), REVOKE_REF_FD) == 0,
	      "mapping victim not found with 3 mappings");
	CHECK(count_type(find(&bpf, v[2]), REVOKE_REF_FD) == 1 &&
		  count_type(find(&bpf, v[2]), REVOKE_REF_MAP) == 1,
	      "threaded victim: refs counted once per process");
	CHECK(find(&bpf, v[3]) && find(&bpf, v[3])->zombie_leader &&
		  count_type(find(&bpf, v[3]), REVOKE_REF_FD) == 1 &&
		  count_type(find(&bpf, v[3]), REVOKE_REF_CWD) == 1,
	      "zombie leader with a live thread not found through the thread");
	CHECK(count_type(find(&bpf, v[4]), REVOKE_REF_CWD) == 1 &&
		  count_type(find(&bpf, v[4]), REVOKE_REF_FD) == 1,
	      "cwd victim not found");
	CHECK(count_type(find(&bpf, v[5]), REVOKE_REF_URING) == 1, "io_uring victim not found");
	CHECK(count_type(find(&bpf, v[6]), REVOKE_REF_INFLIGHT) == 1, "in-flight victim not found");
	CHECK(count_type(find(&bpf, v[7]), REVOKE_REF_EXE) == 1, "exe victim not found");
	CHECK(!find(&bpf, v[8]), "a process holding nothing was listed");
	CHECK(find(&bpf, getpid()) && find(&bpf, getpid())->self &&
		  find(&bpf, getpid())->pub.nrefs == 1,
	      "the caller's own fd (and only it, not the ignored O_PATH ones)");
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	cleanup_files();
}

static void require_bpf(const struct rv_target *t);

/* A mount as the target (REVOKE_MOUNT, --umount): BPF finds what was opened
 * through it by the mount's id, as /proc does by each file's mnt_id. The
 * test's scratch directory is a tmpfs of its own in a mount namespace of its
 * own; the victims' files, mappings, cwd, threads and executable are on it. */
static void test_mount(void)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	bool gone = false;
	const struct rv_guard guard = {&mu, &gone};
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target *t = NULL;
	const char *mp = dir_tmpl;
	struct rv_request req = {.paths = &mp,
				 .npaths = 1,
				 .fd = -1,
				 .keep_fd = -1,
				 .flags = REVOKE_MOUNT,
				 .ns_root_fd = -1,
				 .ns_cwd_fd = -1};
	size_t nt = 0;
	pid_t v[9];

	CHECK(mkdtemp(dir_tmpl), "mkdtemp: %s", strerror(errno));
	CHECK(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): %s", strerror(errno));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %m");
	CHECK(mount("tmpfs", dir_tmpl, "tmpfs", 0, NULL) == 0, "mount tmpfs: %m");
	{
		/* setup_files() in the mounted directory */
		int fd;

		snprintf(file_path, sizeof(file_path), "%s/target", dir_tmpl);
		snprintf(dir_path, sizeof(dir_path), "%s/dir", dir_tmpl);
		snprintf(exe_path, sizeof(exe_path), "%s/sleeper", dir_tmpl);
		fd = open(file_path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
		CHECK(fd >= 0 && ftruncate(fd, 4 * 4096) == 0, "target file: %m");
		close(fd);
		CHECK(mkdir(dir_path, 0755) == 0, "mkdir: %m");
		test_copy_file("/bin/sleep", exe_path, 0755);
	}
	for (int k = 0; k < 9; k++)
		v[k] = spawn(k);
	for (int k = 0; k < 9; k++)
		wait_settled(v[k]);
	req.deadline_ns = now_ns() + 5000000000ull;
	CHECK(rv_mounts_resolve(&req, &guard, &t, &nt) == 0 && nt >= 1, "resolve the mount: %m");
	{
		int ignore[1] = {t[0].path_fd};
		struct rv_scan_opts o = {
		    .flags = REVOKE_DISCOVERY_BPF, .ignore_fds = ignore, .nignore_fds = 1};
		struct rv_target ft = {0};
		int r;

		/* BPF usable here at all (else SKIP), then for a mount too (it
		 * was /proc only: EOPNOTSUPP). */
		target_of(file_path, &ft);
		require_bpf(&ft);
		close(ft.path_fd);
		r = rv_scan(t, nt, &o, &bpf);
		CHECK(r == REVOKE_DISC_BPF, "BPF discovery of a mount: %d (%s)", r,
		      r < 0 ? strerror(-r) : "");
		rv_holders_free(&bpf);
		scan_both(t, nt, ignore, 1, &proc, &bpf);
	}
	CHECK(count_type(find(&bpf, v[0]), REVOKE_REF_FD) == 5, "fd victim: %zu fds",
	      count_type(find(&bpf, v[0]), REVOKE_REF_FD));
	CHECK(count_type(find(&bpf, v[1]), REVOKE_REF_MAP) == 3, "map victim: %zu maps",
	      count_type(find(&bpf, v[1]), REVOKE_REF_MAP));
	CHECK(count_type(find(&bpf, v[3]), REVOKE_REF_CWD) == 1, "the cwd on the mount not found");
	CHECK(count_type(find(&bpf, v[7]), REVOKE_REF_EXE) == 1, "the executable on it not found");
	CHECK(!find(&bpf, v[8]), "a process holding nothing was listed");
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	rv_targets_free(t, nt);
	for (int k = 0; k < 9; k++)
		kill(v[k], SIGKILL);
	for (int k = 0; k < 9; k++)
		waitpid(v[k], NULL, 0);
	CHECK(umount2(dir_tmpl, MNT_DETACH) == 0, "umount: %m");
	cleanup_files();
}

/* Many processes, each with a few target fds among others and a mapping;
 * one in four holds the target through the mapping only. */
static void test_many(void)
{
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target t = {0};
	enum { N = 200 };
	pid_t pids[N];
	int p[2];

	setup_files();
	target_of(file_path, &t);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	for (int i = 0; i < N; i++) {
		pid_t pid = test_fork();

		CHECK(pid >= 0, "fork: %s", strerror(errno));
		pids[i] = pid;
		if (pid == 0) {
			int fd = open(file_path, O_RDONLY);
			char c = 'x';

			close(t.path_fd);
			for (int k = 0; k < 8; k++)
				open("/dev/null", O_RDONLY);
			mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			if (i % 4 == 0)
				close(fd);
			else
				dup2(fd, 20 + i % 7);
			if (write(p[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	for (int i = 0; i < N; i++) {
		char c;
		CHECK(read(p[0], &c, 1) == 1, "victim did not start");
	}
	for (int i = 0; i < N; i++)
		wait_settled(pids[i]);
	scan_both(&t, 1, &t.path_fd, 1, &proc, &bpf);
	CHECK(bpf.n == N, "%zu holders found, %d expected", bpf.n, N);
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	cleanup_files();
}

/* A holder that is pid 1 of a pid namespace of its own: both scanners say
 * so (the report's NSPID column), BPF from the kernel's struct pid (before,
 * the report read every holder's status for it). */
static void test_nspid(void)
{
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target t = {0};
	const struct rv_holder *h;
	pid_t mid, inner = 0;
	int p[2];

	setup_files();
	target_of(file_path, &t);
	require_bpf(&t); /* and root, who may make a pid namespace */
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	mid = test_fork();
	CHECK(mid >= 0, "fork: %s", strerror(errno));
	if (mid == 0) {
		int q[2];
		pid_t pid;
		char c;

		if (pipe2(q, O_CLOEXEC) < 0)
			_exit(1);
		if (unshare(CLONE_NEWPID) < 0) { /* 0: no pid namespace for us */
			pid = 0;
			_exit(write(p[1], &pid, sizeof(pid)) == sizeof(pid) ? 0 : 1);
		}
		pid = test_fork();
		if (pid == 0) {
			if (open(file_path, O_RDONLY) < 0 || write(q[1], "x", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		close(q[1]);
		/* Its pid out here, once it holds the file. */
		if (pid < 0 || read(q[0], &c, 1) != 1 ||
		    write(p[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK(read(p[0], &inner, sizeof(inner)) == sizeof(inner),
	      "the victim in a pid namespace of its own did not start");
	close(p[0]);
	if (inner == 0) {
		waitpid(mid, NULL, 0);
		SKIP("cannot make a pid namespace (unshare: CAP_SYS_ADMIN)");
	}
	wait_settled(inner);
	scan_both(&t, 1, &t.path_fd, 1, &proc, &bpf);
	h = find(&bpf, inner);
	CHECK(h && h->nspid == 1, "pid %d: nspid %d, 1 expected", inner, h ? h->nspid : -1);
	kill(mid, SIGKILL);
	waitpid(mid, NULL, 0);
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	cleanup_files();
}

/* A file nobody holds: empty lists (no qsort or memcpy of a NULL array,
 * which UBSan reports with UBSAN_OPTIONS=halt_on_error=1). */
static void test_no_holders(void)
{
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target t = {0};

	setup_files();
	target_of(file_path, &t);
	scan_both(&t, 1, &t.path_fd, 1, &proc, &bpf);
	CHECK(bpf.n == 0 && proc.n == 0, "%zu and %zu holders of a file nobody holds", bpf.n,
	      proc.n);
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	cleanup_files();
}

/* More holders than RLIMIT_NOFILE allows pidfds for: all found. */
static void test_rlimit_nofile(void)
{
	enum { N = 100 };
	struct rlimit rl = {.rlim_cur = 64, .rlim_max = 64};
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target t = {0};
	pid_t pids[N];
	int p[2];

	setup_files();
	target_of(file_path, &t);
	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	for (int i = 0; i < N; i++) {
		pids[i] = test_fork();
		CHECK(pids[i] >= 0, "fork: %s", strerror(errno));
		if (pids[i] == 0) {
			char c = 'x';

			close(t.path_fd);
			if (open(file_path, O_RDONLY) < 0 || write(p[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(p[1]);
	for (int i = 0; i < N; i++) {
		char c;
		CHECK(read(p[0], &c, 1) == 1, "victim did not start");
	}
	close(p[0]);
	for (int i = 0; i < N; i++)
		wait_settled(pids[i]);
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	cmp_pidfds = false;
	scan_both(&t, 1, &t.path_fd, 1, &proc, &bpf);
	for (int i = 0; i < N; i++)
		CHECK(count_type(find(&bpf, pids[i]), REVOKE_REF_FD) == 1, "holder %d of %d missed",
		      i, N);
	CHECK(bpf.n == N, "%zu holders found, %d expected", bpf.n, N);
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	cleanup_files();
}

/* Skips when BPF discovery cannot run here at all (a plain file's scan). */
static void require_bpf(const struct rv_target *t)
{
	struct rv_scan_opts o = {
	    .flags = REVOKE_DISCOVERY_BPF, .ignore_fds = &t->path_fd, .nignore_fds = 1};
	struct rv_holders hs = {0};
	int r = rv_scan(t, 1, &o, &hs);

	if (r == -EOPNOTSUPP || r == -EPERM || r == -ENOSYS)
		SKIP("BPF iterator discovery unusable here: %s", strerror(-r));
	CHECK(r == REVOKE_DISC_BPF, "rv_scan(BPF) = %d", r);
	rv_holders_free(&hs);
}

/*
 * In a private mount namespace (the child's, so that the mount dies with
 * it whatever happens): a file on overlayfs held through an fd, a read-only
 * shared mapping of the lower file, and a writable one of its copy-up. Since
 * 6.8 a mapping's vm_file is a backing file whose f_path is the lower or
 * upper file, not the overlayfs one stat() of the path reports.
 */
static void overlayfs_child(void)
{
	struct rv_holders proc = {0}, bpf = {0};
	struct rv_target plain = {0}, t = {0};
	char lower[256], upper[256], work[256], merged[256], opts[1024], path[320];
	pid_t v[3];
	int fd;

	CHECK(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): %s", strerror(errno));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private: %s",
	      strerror(errno));
	target_of(file_path, &plain);
	require_bpf(&plain);
	snprintf(lower, sizeof(lower), "%s/lower", dir_tmpl);
	snprintf(upper, sizeof(upper), "%s/upper", dir_tmpl);
	snprintf(work, sizeof(work), "%s/work", dir_tmpl);
	snprintf(merged, sizeof(merged), "%s/merged", dir_tmpl);
	CHECK(mkdir(lower, 0755) == 0 && mkdir(upper, 0755) == 0 && mkdir(work, 0755) == 0 &&
		  mkdir(merged, 0755) == 0,
	      "mkdir: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/file", lower);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 2 * 4096) == 0, "create %s: %s", path, strerror(errno));
	close(fd);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", merged, "overlay", 0, opts) < 0) {
		CHECK(errno == ENODEV, "mount overlay: %s", strerror(errno));
		SKIP("the kernel has no overlayfs");
	}
	snprintf(ovl_path, sizeof(ovl_path), "%s/file", merged);
	for (int k = 0; k < 3; k++)
		v[k] = spawn(9 + k);
	for (int k = 0; k < 3; k++)
		wait_settled(v[k]);
	target_of(ovl_path, &t);
	scan_both(&t, 1, &t.path_fd, 1, &proc, &bpf);
	CHECK(count_type(find(&bpf, v[0]), REVOKE_REF_FD) == 1, "overlayfs fd holder: %zu fds",
	      count_type(find(&bpf, v[0]), REVOKE_REF_FD));
	CHECK(count_type(find(&bpf, v[1]), REVOKE_REF_MAP) == 1 &&
		  count_type(find(&proc, v[1]), REVOKE_REF_MAP) == 1,
	      "mapping of the lower file: BPF %zu, /proc %zu",
	      count_type(find(&bpf, v[1]), REVOKE_REF_MAP),
	      count_type(find(&proc, v[1]), REVOKE_REF_MAP));
	CHECK(count_type(find(&bpf, v[2]), REVOKE_REF_MAP) == 1 &&
		  count_type(find(&proc, v[2]), REVOKE_REF_MAP) == 1,
	      "mapping of the copied-up file: BPF %zu, /proc %zu",
	      count_type(find(&bpf, v[2]), REVOKE_REF_MAP),
	      count_type(find(&proc, v[2]), REVOKE_REF_MAP));
	CHECK(bpf.n == 3, "%zu holders, 3 expected", bpf.n);
	rv_holders_free(&proc);
	rv_holders_free(&bpf);
	for (int k = 0; k < 3; k++) {
		kill(v[k], SIGKILL);
		waitpid(v[k], NULL, 0);
	}
	close(t.path_fd);
	CHECK(umount2(merged, 0) == 0, "umount %s: %s", merged, strerror(errno));
}

static void test_overlayfs(void)
{
	int status;
	pid_t pid;

	setup_files();
	pid = test_fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		overlayfs_child();
		_exit(0);
	}
	test_wait(pid, &status, 0);
	/* The mount namespace went with the child (and its victims, through
	 * PR_SET_PDEATHSIG): only the directories are left. */
	cleanup_files();
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_EXIT_SKIP)
		SKIP("see above");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "overlayfs case failed (status %#x)",
	      status);
}

TEST_MAIN("unit-bpf", {"same_holders", test_same_holders, 60}, {"many", test_many, 60},
	  {"overlayfs", test_overlayfs, 60}, {"rlimit_nofile", test_rlimit_nofile, 60},
	  {"no_holders", test_no_holders, 30}, {"mount", test_mount, 60}, {"nspid", test_nspid, 30})
