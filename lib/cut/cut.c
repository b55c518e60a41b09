/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut: what each holder runs (one program for the stub, tracee/run.c),
 * or what the caller does to itself.
 *
 * The dead descriptor is an O_PATH descriptor of a memfd named "revoked",
 * made by each holder for itself: readlink of /proc/PID/fd/N shows
 * "/memfd:revoked (deleted)", fstat an empty regular file with no links,
 * and every operation but close() fails with EBADF (as on any O_PATH
 * descriptor): read, write, ioctl, mmap, getdents, fchdir, and openat() with
 * it as the directory (it is not one). It is no file that anyone else uses,
 * so revoking it again cannot reach anything else (engine.c refuses it).
 * Revoked mappings become MAP_SHARED mappings of the same empty memfd over
 * the same range: every access raises SIGBUS.
 *
 * A holder's program makes the memfd and the O_PATH descriptor first, so a
 * failure there changes nothing; then one op per reference; then it closes
 * what it made.
 */
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kinds/refkind.h"

struct rv_cut {
	struct rv_prog *p;
	int raise_op; /* RV_OP_RAISE_NOFILE, or -1 */
	int save_off; /* where it keeps the old limits */
	int orig_off; /* the limits to put back, when we raised the hard one */
	int restore_op;
	int memfd_op; /* memfd_create, or -1 */
	int dead_op;  /* the O_PATH open, or -1 */
	/* cwd and root (REVOKE_MOUNT): the dead directory, as the holder
	 * reaches it (rv_dead_dir_how), and its cwd kept across a chroot */
	const struct rv_dead_dir *dd;
	int dd_how;
	int pidfd_op; /* pidfd_open() of us, or -1 */
	int ddir_op;  /* its descriptor of the dead directory, or -1 */
	int cwd_op;   /* its cwd, opened before a chroot that must not move it */
	bool has_cwd; /* a cwd ref is cut in this program (then cwd moves anyway) */
};

/*
 * The program's own descriptors (the memfd and its O_PATH reopening, the
 * dead directory, a pidfd, a saved cwd: rv_cut_room() counts them) take
 * free slots of the holder's table for the length of the program. A table
 * full up to its soft RLIMIT_NOFILE gets them from the limit, raised inside
 * the holder for that long and put back at the end, also when the program
 * stops early. A hard limit that leaves no room is raised from outside
 * before anything runs (rv_cut_room), or the holder is refused untouched.
 */
static int need_room(struct rv_cut *c)
{
	long args[6] = {0, 0};
	int off, op;

	if (c->raise_op >= 0)
		return c->raise_op;
	off = rv_prog_data(c->p, NULL, 32);
	if (off < 0)
		return off;
	args[1] = off;
	/* Not required: rv_cut_room() decides, before the program runs,
	 * whether there is room; with none to raise, a table that is not full
	 * still has its slots. */
	op = rv_prog_add(c->p, RV_OP_RAISE_NOFILE, 0, args, RV_OPF_OPTIONAL, -1, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 1);
	c->save_off = off;
	c->orig_off = off + 16;
	return c->raise_op = op;
}

/* thread-self: the leader may be a zombie, whose /proc/PID/fd is empty. */
static const char proc_fd[] = "/proc/thread-self/fd/";

static int need_memfd(struct rv_cut *c)
{
	long args[6] = {0, MFD_CLOEXEC};
	int off, op;

	if (c->memfd_op >= 0)
		return c->memfd_op;
	off = need_room(c);
	if (off < 0)
		return off;
	off = rv_prog_data(c->p, RV_DEAD_NAME, sizeof(RV_DEAD_NAME));
	if (off < 0)
		return off;
	args[0] = off;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_memfd_create, args, RV_OPF_REQUIRED, -1, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 0);
	return c->memfd_op = op;
}

static int need_dead(struct rv_cut *c)
{
	char path[sizeof(proc_fd) + 24] = {0};
	long args[6] = {0};
	int m, off, op;

	if (c->dead_op >= 0)
		return c->dead_op;
	m = need_memfd(c);
	if (m < 0)
		return m;
	memcpy(path, proc_fd, sizeof(proc_fd) - 1);
	off = rv_prog_data(c->p, path, sizeof(path));
	if (off < 0)
		return off;
	/* "/proc/thread-self/fd/" + the memfd's number, then reopened as O_PATH. */
	args[0] = off + (long)sizeof(proc_fd) - 1;
	op = rv_prog_add(c->p, RV_OP_ITOA, 0, args, RV_OPF_REQUIRED, m, 1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 0);
	args[0] = AT_FDCWD;
	args[1] = off;
	args[2] = O_PATH | O_CLOEXEC;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_openat, args, RV_OPF_REQUIRED, -1, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 1);
	return c->dead_op = op;
}

int rv_cut_add_fd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op)
{
	bool cloexec = ref->fd_flags & FD_CLOEXEC;
	long args[6] = {0, ref->fd, cloexec ? O_CLOEXEC : 0, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD};
	int d = need_dead(c), op;

	if (d < 0)
		return d;
	op = rv_prog_add(c->p, RV_OP_DUP_OVER, 0, args, 0, d, 0);
	if (op < 0)
		return op;
	*ret_op = op;
	return 0;
}

int rv_cut_add_map(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op)
{
	long args[6] = {0, (long)ref->start, (long)(ref->end - ref->start), ref->prot,
			MAP_SHARED | MAP_FIXED};
	int m, op;

	if (ref->end <= ref->start)
		return -EINVAL;
	m = need_memfd(c);
	if (m < 0)
		return m;
	op = rv_prog_add(c->p, RV_OP_MAP_OVER, 0, args, 0, m, 0);
	if (op < 0)
		return op;
	*ret_op = op;
	return 0;
}

/*
 * An io_uring registered file: the slot is emptied in the holder
 * (io_uring_register from its own thread: a SINGLE_ISSUER ring takes
 * registrations from its submitter only, on kernels that check, so a probe
 * that updates nothing comes before the first cut op), after the requests in
 * flight on the file are cancelled (IORING_REGISTER_SYNC_CANCEL, 6.0; none
 * to cancel, an empty slot or an older kernel are no failure); a read or
 * write through the slot then fails with EBADF. Nothing is put in the slot:
 * an empty slot is no file anybody uses. The cancel waits at most
 * URING_CANCEL_NS for the requests to end: one the kernel cannot stop (a
 * read blocked in an io-wq worker of another thread) makes the ref fail
 * with ETIME, the slot emptied all the same.
 */
#define URING_CANCEL_NS 100000000L /* 100 ms */

/* io_uring_register(ring, OPC, ARG, 1), ARG copied into the data. */
static int add_uring_register(struct rv_cut *c, int ring, int opc, const void *arg, size_t len,
			      int ptr_at, int ptr_to, unsigned int flags)
{
	long args[6] = {ring, opc, 0, 1};
	int off = rv_prog_data(c->p, arg, len), op, r;

	if (off < 0)
		return off;
	if (ptr_at >= 0) {
		r = rv_prog_data_ptr(c->p, off + ptr_at, off + ptr_to);
		if (r < 0)
			return r;
	}
	args[2] = off;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_io_uring_register, args, flags, -1, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 2);
	return op;
}

/* IORING_REGISTER_FILES_UPDATE of REF's slot with FD (-1 empties it,
 * IORING_REGISTER_FILES_SKIP changes nothing). */
static int add_uring_update(struct rv_cut *c, const struct revoke_ref *ref, int32_t fd,
			    unsigned int flags)
{
	struct {
		struct io_uring_files_update upd;
		int32_t fd, pad;
	} a = {.upd = {.offset = (uint32_t)ref->offset}, .fd = fd};

	if (ref->fd < 0 || ref->offset > UINT32_MAX)
		return -EINVAL;
	return add_uring_register(c, ref->fd, IORING_REGISTER_FILES_UPDATE, &a, sizeof(a),
				  offsetof(typeof(a), upd.fds), offsetof(typeof(a), fd), flags);
}

int rv_cut_add_uring(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op)
{
	struct io_uring_sync_cancel_reg sc = {
	    .fd = (int32_t)ref->offset,
	    .flags =
		IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_FD_FIXED,
	    .timeout = {URING_CANCEL_NS / 1000000000, URING_CANCEL_NS % 1000000000},
	};
	int op;

	if (ref->fd < 0 || ref->offset > UINT32_MAX)
		return -EINVAL;
	/* uring_outcome() finds it just before the update. */
	op = add_uring_register(c, ref->fd, IORING_REGISTER_SYNC_CANCEL, &sc, sizeof(sc), -1, -1,
				RV_OPF_OPTIONAL);
	if (op < 0)
		return op;
	op = add_uring_update(c, ref, -1, 0);
	if (op < 0)
		return op;
	*ret_op = op;
	return 0;
}

/* What cutting a URING ref gave: the update's result (1 slot), or the
 * cancel's ETIME: a request still reads or writes the file. */
static long uring_outcome(const struct rv_prog *p, int op, long res)
{
	long cancel = rv_prog_result(p, op - 1, NULL);

	if (res < 0)
		return res;
	if (res != 1)
		return -EIO;
	return cancel == -ETIME ? -ETIME : 0;
}

/* The number of threads of PID (0 when it cannot be read). */
static size_t thread_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int rv_uring_check(const struct rv_holder *h, const struct revoke_ref *ref, char *why, size_t size)
{
	int32_t skip = IORING_REGISTER_FILES_SKIP;
	struct io_uring_files_update upd = {.offset = (uint32_t)ref->offset,
					    .fds = (uint64_t)(uintptr_t)&skip};
	_cleanup_close_ int copy = -1;
	int ring = ref->fd;

	if (ref->fd < 0) {
		snprintf(
		    why, size,
		    "maps an io_uring ring it has no descriptor of (IORING_REGISTER_RING_FDS): "
		    "the ring's files cannot be listed or updated");
		return EOPNOTSUPP;
	}
	if (!h->self) {
		if (h->pidfd < 0)
			return 0;
		copy = (int)syscall(SYS_pidfd_getfd, h->pidfd, ref->fd, 0);
		if (copy < 0)
			return 0; /* the holder's own probe (build()) decides */
		ring = copy;
	}
	if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES_UPDATE, &upd, 1) >= 0)
		return 0;
	switch (errno) {
	case EEXIST:
		/* SINGLE_ISSUER, on a kernel that takes updates from the
		 * submitter only. The cut runs in the holder's leader: in a
		 * single-threaded holder that is the submitter (or the probe
		 * of its program fails before anything is cut). In one with
		 * other threads it may not be, and finding that out in the
		 * holder, after others were cut, would break all or nothing. */
		if (thread_count(h->pub.pid) == 1)
			return 0;
		snprintf(why, size,
			 "io_uring ring fd %d is SINGLE_ISSUER and the process has other threads: "
			 "only its submitter thread may update it",
			 ref->fd);
		return EEXIST;
	case EACCES:
		snprintf(why, size,
			 "io_uring ring fd %d is restricted: updating its files is not allowed",
			 ref->fd);
		return EACCES;
	default:
		snprintf(why, size, "io_uring ring fd %d: updating slot %" PRIu64 " fails: %s",
			 ref->fd, ref->offset, strerror(errno));
		return errno;
	}
}

/*
 * The dead directory in the holder: opened by its path when the holder sees
 * our file tree, else taken from us with pidfd_open() + pidfd_getfd() (a
 * chrooted holder, another mount namespace). Made before any cut op, so that
 * a holder that cannot have it is left as it was.
 */
static int need_dead_dir(struct rv_cut *c)
{
	long args[6] = {0};
	int off, op;

	if (c->ddir_op >= 0)
		return c->ddir_op;
	if (!c->dd)
		return -EOPNOTSUPP;
	off = need_room(c);
	if (off < 0)
		return off;
	if (c->dd_how == RV_DEAD_DIR_PATH) {
		off = rv_prog_data(c->p, c->dd->path, strlen(c->dd->path) + 1);
		if (off < 0)
			return off;
		args[0] = AT_FDCWD;
		args[1] = off;
		args[2] = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
		op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_openat, args, RV_OPF_REQUIRED, -1, -1);
		if (op < 0)
			return op;
		rv_prog_arg_is_data(c->p, op, 1);
		return c->ddir_op = op;
	}
	if (c->dd_how != RV_DEAD_DIR_PIDFD)
		return -EOPNOTSUPP;
	args[0] = c->dd->pid;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_pidfd_open, args, RV_OPF_REQUIRED, -1, -1);
	if (op < 0)
		return op;
	c->pidfd_op = op;
	args[0] = 0; /* + the pidfd */
	args[1] = c->dd->fd;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_pidfd_getfd, args, RV_OPF_REQUIRED, c->pidfd_op,
			 0);
	if (op < 0)
		return op;
	return c->ddir_op = op;
}

/* Before a chroot of a holder whose cwd stays: its cwd, to go back to. */
static int need_cwd_saved(struct rv_cut *c)
{
	long args[6] = {AT_FDCWD, 0, O_PATH | O_DIRECTORY | O_CLOEXEC};
	int off, op;

	if (c->cwd_op >= 0 || c->has_cwd)
		return 0;
	off = need_room(c);
	if (off < 0)
		return off;
	off = rv_prog_data(c->p, ".", 2);
	if (off < 0)
		return off;
	args[1] = off;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_openat, args, RV_OPF_REQUIRED, -1, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 1);
	return c->cwd_op = op;
}

int rv_cut_add_cwd(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op)
{
	int d = need_dead_dir(c), op;

	(void)ref;
	if (d < 0)
		return d;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_fchdir, NULL, 0, d, 0);
	if (op < 0)
		return op;
	*ret_op = op;
	return 0;
}

/* chroot() takes a path: into the dead directory, then chroot("."), then
 * back to the cwd it had unless that moves too. */
int rv_cut_add_root(struct rv_cut *c, const struct revoke_ref *ref, int *ret_op)
{
	long args[6] = {0};
	int d = need_dead_dir(c), op, off;

	(void)ref;
	if (d < 0)
		return d;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_fchdir, NULL, 0, d, 0);
	if (op < 0)
		return op;
	off = rv_prog_data(c->p, ".", 2);
	if (off < 0)
		return off;
	args[0] = off;
	op = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_chroot, args, 0, op, -1);
	if (op < 0)
		return op;
	rv_prog_arg_is_data(c->p, op, 0);
	*ret_op = op;
	if (c->cwd_op >= 0) {
		int back = rv_prog_add(c->p, RV_OP_SYSCALL, SYS_fchdir, NULL,
				       RV_OPF_CLEANUP | RV_OPF_IF_REF_OK, c->cwd_op, 0);

		if (back < 0)
			return back;
	}
	return 0;
}

static int add_close(struct rv_cut *c, int ref)
{
	if (ref < 0)
		return 0;
	return rv_prog_add(c->p, RV_OP_SYSCALL, SYS_close, NULL, RV_OPF_CLEANUP | RV_OPF_IF_REF_OK,
			   ref, 0);
}

/* What a program needs of its holder's descriptor table (build, make_room). */
struct rv_room {
	int raise_op, restore_op, orig_off;
	unsigned int nfds; /* descriptors the program holds at once */
	bool raised;	   /* the hard limit was raised from outside */
	struct rlimit orig;
};

static int rv_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The descriptor numbers of H's table, sorted; their count, or -errno. */
static int list_fds(const struct rv_holder *h, int **ret)
{
	_cleanup_free_ int *v = NULL;
	struct dirent *de;
	size_t n = 0, cap = 0;
	char path[64];
	DIR *d;

	/* The injecting thread's view: the leader may be a zombie. */
	if (h->self)
		snprintf(path, sizeof(path), "/proc/self/fd");
	else
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fd", (int)h->pub.pid,
			 (int)rv_tracee_tid(h->tracee));
	d = opendir(path);
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		int fd;

		if (rv_parse_int(de->d_name, &fd) < 0)
			continue;
		if (n == cap) {
			int *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = fd;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), rv_cmp_int);
	*ret = TAKE_PTR(v);
	return (int)n;
}

/*
 * Room in H's table for its program's own descriptors, decided before any
 * program runs: the soft RLIMIT_NOFILE is raised inside the holder by what
 * the slots take (ROOM->raise_op), and where the hard limit leaves too little
 * it is raised from outside now (CAP_SYS_RESOURCE) and put back by the
 * program itself at its end (lowering one's own limit needs no privilege),
 * or the holder is refused with nothing changed: -EMFILE, WHY says why.
 */
static int make_room(struct rv_holder *h, struct rv_prog *p, struct rv_room *room, char *why,
		     size_t size)
{
	pid_t pid = h->self ? 0 : h->pub.pid;
	_cleanup_free_ int *fds = NULL;
	struct rlimit lim, raised;
	rlim_t limit, free_slots = 0;
	int n, k = 0;

	if (room->raise_op < 0 || room->nfds == 0)
		return 0;
	/* Not allowed to read it (another user's process, without
	 * CAP_SYS_RESOURCE): the program's own raise does what it can. */
	if (prlimit(pid, RLIMIT_NOFILE, NULL, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
		return 0;
	n = list_fds(h, &fds);
	if (n < 0)
		return 0;
	/* The first limit under which the table has nfds free slots. */
	for (limit = 0; free_slots < room->nfds; limit++) {
		while (k < n && (rlim_t)fds[k] < limit)
			k++;
		if (k < n && (rlim_t)fds[k] == limit)
			continue;
		free_slots++;
	}
	if (limit <= lim.rlim_cur)
		return 0;
	p->ops[room->raise_op].args[0] = (int64_t)(limit - lim.rlim_cur);
	if (lim.rlim_max != RLIM_INFINITY && limit > lim.rlim_max) {
		uint64_t orig[2] = {lim.rlim_cur, lim.rlim_max};

		raised = (struct rlimit){lim.rlim_cur, limit};
		if (prlimit(pid, RLIMIT_NOFILE, &raised, NULL) < 0) {
			snprintf(
			    why, size,
			    "descriptor table full up to its hard RLIMIT_NOFILE (%llu): raising "
			    "it needs CAP_SYS_RESOURCE",
			    (unsigned long long)lim.rlim_max);
			return -EMFILE;
		}
		room->raised = true;
		room->orig = lim;
		memcpy(p->data + room->orig_off, orig, sizeof(orig));
		p->ops[room->restore_op].args[1] = room->orig_off;
	}
	return 0;
}

/* Puts back a hard limit make_room() raised, unless the program did. */
static void unmake_room(const struct rv_holder *h, struct rv_room *room)
{
	pid_t pid = h->self ? 0 : h->pub.pid;
	struct rlimit now;

	if (!room->raised)
		return;
	if (prlimit(pid, RLIMIT_NOFILE, NULL, &now) == 0 && now.rlim_max != room->orig.rlim_max)
		(void)prlimit(pid, RLIMIT_NOFILE, &room->orig, NULL);
	room->raised = false;
}

/* One holder's program: the ops that cut refs [from, h->pub.nrefs), as
 * many as fit; *RET_NEXT where the next program starts. OPS[i] gets the op
 * of ref i (or -1). */
static int build(struct rv_holder *h, const struct rv_dead_dir *dd, size_t from,
		 struct rv_prog **ret, size_t *ret_next, int *ops, struct rv_room *room)
{
	struct rv_cut c = {.p = rv_prog_new(),
			   .raise_op = -1,
			   .orig_off = -1,
			   .restore_op = -1,
			   .memfd_op = -1,
			   .dead_op = -1,
			   .dd = dd,
			   .dd_how = h->dead_dir_how,
			   .pidfd_op = -1,
			   .ddir_op = -1,
			   .cwd_op = -1};
	bool dirs = false, root = false;
	size_t i;
	int r = 0;

	if (!c.p)
		return -ENOMEM;
	/* What can fail in the holder comes before the first cut op. */
	for (i = from; i < h->pub.nrefs; i++) {
		const struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		c.has_cwd |= ref->type == REVOKE_REF_CWD;
		root |= ref->type == REVOKE_REF_ROOT;
		dirs |= ref->type == REVOKE_REF_CWD || ref->type == REVOKE_REF_ROOT;
	}
	if (dirs)
		r = need_dead_dir(&c);
	if (r >= 0 && root)
		r = need_cwd_saved(&c);
	if (r < 0) {
		rv_prog_free(c.p);
		return r;
	}
	for (i = from; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];
		const struct rv_refkind *k = rv_refkind(ref->type);

		ops[i] = -1;
		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (!k || !k->add_cut) {
			/* The engine marks these before a cut. */
			ref->state = REVOKE_STATE_FAILED;
			ref->error = EOPNOTSUPP;
			continue;
		}
		/* Room for this op and the closing ones. */
		if (c.p->nops + 8 >= RV_PROG_MAX_OPS || c.p->data_len + 128 >= RV_PROG_MAX_DATA)
			break;
		r = k->add_cut(&c, ref, &ops[i]);
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = add_close(&c, c.dead_op);
	if (r >= 0)
		r = add_close(&c, c.memfd_op);
	if (r >= 0)
		r = add_close(&c, c.ddir_op);
	if (r >= 0)
		r = add_close(&c, c.pidfd_op);
	if (r >= 0)
		r = add_close(&c, c.cwd_op);
	if (r >= 0 && c.raise_op >= 0) {
		long args[6] = {0, c.save_off};
		int op = rv_prog_add(c.p, RV_OP_RESTORE_NOFILE, 0, args,
				     RV_OPF_CLEANUP | RV_OPF_IF_REF_OK, c.raise_op, -1);

		if (op < 0)
			r = op;
		else
			rv_prog_arg_is_data(c.p, op, 1);
		c.restore_op = op;
	}
	if (r < 0) {
		rv_prog_free(c.p);
		return r;
	}
	*room = (struct rv_room){.raise_op = c.raise_op,
				 .restore_op = c.restore_op,
				 .orig_off = c.orig_off,
				 .nfds = (c.memfd_op >= 0) + (c.dead_op >= 0) + (c.ddir_op >= 0) +
					 (c.pidfd_op >= 0) + (c.cwd_op >= 0)};
	*ret = c.p;
	*ret_next = i;
	return 0;
}

static void set_outcome(struct revoke_ref *ref, int r, int *first)
{
	ref->state = r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT;
	ref->error = r < 0 ? -r : 0;
	if (r < 0 && *first == 0)
		*first = r;
}

/* The refs [from, to) of H after its program P ran (RUN: what running it
 * gave: < 0 when it did not run or not to its end). */
static void outcomes(struct rv_holder *h, size_t from, size_t to, const struct rv_prog *p,
		     const int *ops, int run, int *first)
{
	long prep = 0;

	if (run >= 0 && p->failed >= 0)
		prep = rv_prog_result(p, p->failed, NULL); /* making the dead file failed */
	for (size_t i = from; i < to; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];
		bool ran;
		long res;

		if (ops[i] < 0)
			continue;
		if (run < 0) {
			set_outcome(ref, run, first);
			continue;
		}
		res = rv_prog_result(p, ops[i], &ran);
		if (!ran)
			res = prep < 0 ? prep : -ECANCELED;
		else if (ref->type == REVOKE_REF_URING)
			res = uring_outcome(p, ops[i], res);
		set_outcome(ref, res < 0 ? (int)res : 0, first);
	}
}

struct done_ctx {
	struct rv_holder *h;
	const struct rv_cut_hooks *hooks;
};

static void on_done(struct rv_tracee *t, void *arg)
{
	struct done_ctx *d = arg;

	if (d->hooks && d->hooks->done)
		d->hooks->done(d->h, rv_prog_all_ok(rv_tracee_prog(t)), d->hooks->arg);
}

/*
 * Each io_uring ring must take updates from the thread that will run the
 * cut (a SINGLE_ISSUER ring takes them from its submitter only, on kernels
 * that check): asked of every holder with a ring, before any holder is
 * changed, by a program that updates nothing (IORING_REGISTER_FILES_SKIP).
 * A holder whose ring refuses has its ring's refs FAILED with the error;
 * returns how many holders that is (-ENOMEM, nothing asked).
 */
static int probe_rings(struct rv_holder **hs, size_t n)
{
	_cleanup_free_ struct rv_prog **progs = calloc(n ? n : 1, sizeof(*progs));
	_cleanup_free_ struct rv_tracee **ts = calloc(n ? n : 1, sizeof(*ts));
	_cleanup_free_ int *runs = calloc(n ? n : 1, sizeof(*runs));
	int refused = 0, r = 0;

	if (!progs || !ts || !runs)
		return -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct rv_holder *h = hs[i];
		struct rv_cut c = {.raise_op = -1};

		for (size_t j = 0; j < h->pub.nrefs && r >= 0; j++) {
			const struct revoke_ref *ref = &h->pub.refs[j];
			bool probed = false;

			if (ref->state != REVOKE_STATE_FOUND || ref->type != REVOKE_REF_URING)
				continue;
			for (size_t k = 0; k < j && !probed; k++)
				probed = h->pub.refs[k].type == REVOKE_REF_URING &&
					 h->pub.refs[k].state == REVOKE_STATE_FOUND &&
					 h->pub.refs[k].fd == ref->fd;
			if (probed)
				continue;
			if (!c.p && !(c.p = rv_prog_new()))
				r = -ENOMEM;
			if (r >= 0)
				r = add_uring_update(&c, ref, IORING_REGISTER_FILES_SKIP,
						     RV_OPF_REQUIRED);
		}
		progs[i] = c.p;
		if (c.p && h->self)
			rv_prog_run_local(c.p);
		else if (c.p)
			ts[i] = h->tracee;
	}
	if (r >= 0)
		rv_tracees_run(ts, progs, n, runs);
	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = hs[i];
		long e = 0;

		if (r < 0 || !progs[i])
			goto next;
		if (ts[i] && runs[i] == -ESRCH)
			goto next; /* it died: it holds nothing */
		if (ts[i] && runs[i] < 0) {
			e = runs[i];
			snprintf(h->pub.reason, sizeof(h->pub.reason), "%s", rv_tracee_why(ts[i]));
		} else if (progs[i]->failed >= 0)
			e = rv_prog_result(progs[i], progs[i]->failed, NULL);
		if (e < 0) {
			for (size_t j = 0; j < h->pub.nrefs; j++)
				if (h->pub.refs[j].state == REVOKE_STATE_FOUND &&
				    h->pub.refs[j].type == REVOKE_REF_URING) {
					h->pub.refs[j].state = REVOKE_STATE_FAILED;
					h->pub.refs[j].error = (int)-e;
				}
			refused++;
		}
	next:
		rv_prog_free(progs[i]);
	}
	return r < 0 ? r : refused;
}

int rv_cut_holders(struct rv_holder **hs, size_t n, unsigned int flags,
		   const struct rv_cut_hooks *hooks, int *ret)
{
	_cleanup_free_ struct done_ctx *dcs = calloc(n ? n : 1, sizeof(*dcs));
	_cleanup_free_ struct rv_prog **progs = calloc(n ? n : 1, sizeof(*progs));
	_cleanup_free_ struct rv_tracee **ts = calloc(n ? n : 1, sizeof(*ts));
	_cleanup_free_ size_t *from = calloc(n ? n : 1, sizeof(*from));
	_cleanup_free_ size_t *to = calloc(n ? n : 1, sizeof(*to));
	_cleanup_free_ int *runs = calloc(n ? n : 1, sizeof(*runs));
	_cleanup_free_ int *first = calloc(n ? n : 1, sizeof(*first));
	_cleanup_free_ struct rv_room *rooms = calloc(n ? n : 1, sizeof(*rooms));
	int **ops = calloc(n ? n : 1, sizeof(*ops));
	bool more = true, refused = false;
	int commit_r = 0;

	if (!progs || !ts || !from || !to || !runs || !first || !ops || !dcs || !rooms) {
		free(ops);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ops[i] = calloc(hs[i]->pub.nrefs ? hs[i]->pub.nrefs : 1, sizeof(int));
		if (!ops[i]) {
			for (size_t j = 0; j < i; j++)
				free(ops[j]);
			free(ops);
			return -ENOMEM;
		}
	}
	/* Before anything is placed or changed: rings that refuse our thread. */
	{
		int r = probe_rings(hs, n);

		if (r < 0) {
			for (size_t i = 0; i < n; i++)
				free(ops[i]);
			free(ops);
			return r;
		}
		refused = r > 0 && (flags & RV_CUT_ALL_OR_NOTHING);
		for (size_t i = 0; i < n && r > 0; i++)
			for (size_t j = 0; j < hs[i]->pub.nrefs; j++)
				if (hs[i]->pub.refs[j].state == REVOKE_STATE_FAILED &&
				    first[i] == 0)
					first[i] = -hs[i]->pub.refs[j].error;
	}
	/* Rounds: a holder with more refs than one program holds runs several. */
	for (int round = 0; more && !refused; round++) {
		size_t self = n;

		more = false;
		for (size_t i = 0; i < n; i++) {
			struct rv_holder *h = hs[i];
			int r;

			ts[i] = NULL;
			progs[i] = NULL;
			if (from[i] >= h->pub.nrefs || first[i] < 0 || (!h->self && !h->tracee))
				continue;
			r = build(h, hooks ? hooks->dead_dir : NULL, from[i], &progs[i], &to[i],
				  ops[i], &rooms[i]);
			if (r < 0) {
				first[i] = r;
				refused = refused || (flags & RV_CUT_ALL_OR_NOTHING);
				continue;
			}
			r = make_room(h, progs[i], &rooms[i], h->pub.reason, sizeof(h->pub.reason));
			if (r < 0) {
				/* Nothing of it changed: refused like a program
				 * that cannot be placed. */
				outcomes(h, from[i], to[i], progs[i], ops[i], r, &first[i]);
				rv_prog_free(TAKE_PTR(progs[i]));
				refused = refused || (flags & RV_CUT_ALL_OR_NOTHING);
				continue;
			}
			if (h->self)
				self = i;
			else
				ts[i] = h->tracee;
		}
		/* Everything that can fail before a program runs, for every holder
		 * first: then all of them run, or none. */
		rv_tracees_prepare(ts, progs, n, runs);
		for (size_t i = 0; i < n; i++) {
			if (!ts[i] || runs[i] >= 0)
				continue;
			outcomes(hs[i], from[i], to[i], progs[i], ops[i], runs[i], &first[i]);
			ts[i] = NULL;
			/* Killed meanwhile (SIGKILL reaches stopped tracees): it
			 * holds nothing any more, which refuses nothing. */
			if (runs[i] == -ESRCH)
				continue;
			snprintf(hs[i]->pub.reason, sizeof(hs[i]->pub.reason), "%s",
				 rv_tracee_why(hs[i]->tracee));
			refused = refused || (flags & RV_CUT_ALL_OR_NOTHING);
		}
		if (!refused && round == 0 && hooks && hooks->commit) {
			uint64_t finish = 0;

			commit_r = hooks->commit(hooks->arg, &finish);
			refused = commit_r < 0;
			for (size_t i = 0; !refused && i < n; i++)
				if (hs[i]->tracee)
					rv_tracee_extend_deadline(hs[i]->tracee, finish);
		}
		if (refused && round == 0) {
			rv_tracees_unprepare(ts, n);
			for (size_t i = 0; i < n; i++) {
				unmake_room(hs[i], &rooms[i]);
				rv_prog_free(progs[i]);
			}
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (!ts[i])
				continue;
			dcs[i] = (struct done_ctx){hs[i], hooks};
			/* Released the moment its last program is over. */
			rv_tracee_when_done(ts[i], on_done, &dcs[i],
					    hooks && hooks->release && to[i] >= hs[i]->pub.nrefs,
					    to[i] >= hs[i]->pub.nrefs);
		}
		if (self < n) {
			rv_prog_run_local(progs[self]);
			outcomes(hs[self], from[self], to[self], progs[self], ops[self], 0,
				 &first[self]);
			from[self] = to[self];
			if (from[self] < hs[self]->pub.nrefs && first[self] == 0)
				more = true;
		}
		rv_tracees_run(ts, NULL, n, runs);
		for (size_t i = 0; i < n; i++) {
			struct rv_holder *h = hs[i];

			/* The program put the hard limit back at its end; if it
			 * did not get there, we do. */
			unmake_room(h, &rooms[i]);

			if (ts[i]) {
				outcomes(h, from[i], to[i], progs[i], ops[i], runs[i], &first[i]);
				if (runs[i] < 0 && !h->pub.reason[0])
					snprintf(h->pub.reason, sizeof(h->pub.reason), "%s",
						 rv_tracee_why(ts[i]));
				from[i] = to[i];
				if (from[i] < h->pub.nrefs && first[i] == 0)
					more = true;
			}
			rv_prog_free(progs[i]);
			progs[i] = NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		/* Refs a failed round never reached. */
		for (size_t j = from[i]; j < hs[i]->pub.nrefs && first[i] < 0 && !refused; j++)
			if (hs[i]->pub.refs[j].state == REVOKE_STATE_FOUND)
				set_outcome(&hs[i]->pub.refs[j], first[i], &first[i]);
		if (ret)
			ret[i] = first[i];
		free(ops[i]);
	}
	free(ops);
	return commit_r < 0 ? commit_r : refused ? -EBUSY : 0;
}

int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t)
{
	int r = 0, q;

	if (!h || (!t && !h->self))
		return -EINVAL;
	h->tracee = t;
	q = rv_cut_holders(&h, 1, 0, NULL, &r);
	return q < 0 ? q : r;
}

/* Whether REF of PID is cut, as /proc shows it now: a descriptor or a
 * mapping of the dead file, a cwd or root that left the target. */
static bool ref_is_cut(pid_t pid, const struct revoke_ref *ref)
{
	static const char dead[] = "/memfd:" RV_DEAD_NAME " (deleted)";
	char path[96], buf[sizeof(dead) + 1];
	ssize_t n;

	switch (ref->type) {
	case REVOKE_REF_FD:
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, ref->fd);
		n = readlink(path, buf, sizeof(buf));
		return n == (ssize_t)sizeof(dead) - 1 && memcmp(buf, dead, (size_t)n) == 0;
	case REVOKE_REF_MAP: {
		char line[512];
		bool cut = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		f = fopen(path, "re");
		if (!f)
			return false;
		while (!cut && fgets(line, sizeof(line), f)) {
			struct rv_maps_entry e;

			line[strcspn(line, "\n")] = 0;
			cut = rv_parse_maps_line(line, &e) == 0 && e.start == ref->start &&
			      e.path && strcmp(e.path, dead) == 0;
		}
		fclose(f);
		return cut;
	}
	default:
		return false; /* nothing in /proc tells */
	}
}

size_t rv_cut_verify(struct rv_holder *h, uint64_t deadline)
{
	size_t left;

	for (unsigned int n = 0;;) {
		left = 0;
		for (size_t i = 0; i < h->pub.nrefs; i++) {
			struct revoke_ref *ref = &h->pub.refs[i];

			if (ref->state != REVOKE_STATE_FAILED || ref->error != ETIMEDOUT)
				continue;
			if (ref_is_cut(h->pub.pid, ref)) {
				ref->state = REVOKE_STATE_CUT;
				ref->error = 0;
			} else
				left++;
		}
		if (!left || !rv_ptrace_backoff(&n, deadline))
			return left;
	}
}

bool rv_is_dead_fd(int fd)
{
	static const char want[] = "/memfd:" RV_DEAD_NAME " (deleted)";
	char link[64], buf[sizeof(want) + 1];
	struct statx stx;
	ssize_t n;

	/* DONT_SYNC: FD may be a file of a FUSE server that does not answer. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_NLINK | STATX_SIZE,
		  &stx) < 0 ||
	    !S_ISREG(stx.stx_mode) || stx.stx_nlink != 0 || stx.stx_size != 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf));
	return n == (ssize_t)sizeof(want) - 1 && memcmp(buf, want, (size_t)n) == 0;
}
