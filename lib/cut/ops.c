/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ops that cut each kind of reference, added to one holder's program
 * (struct rv_cut, cut.h); the table of kinds (kinds/refkind.c) names them.
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
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/io_uring.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cut/cut.h"

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
	char path[64] = {0};
	long args[6] = {0};
	int m, off, op, len;

	if (c->dead_op >= 0)
		return c->dead_op;
	m = need_memfd(c);
	if (m < 0)
		return m;
	/* thread-self: the leader may be a zombie, whose /proc/PID/fd is
	 * empty. Room after it for the memfd's number, which the program
	 * writes there (RV_OP_ITOA), then reopens as O_PATH. */
	len = rv_proc_path(path, sizeof(path) - 24, RV_PROC_THREAD_SELF, 0, "fd/");
	if (len < 0)
		return len;
	off = rv_prog_data(c->p, path, sizeof(path));
	if (off < 0)
		return off;
	args[0] = off + len;
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
	/* rv_cut_uring_outcome() finds it just before the update. */
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
long rv_cut_uring_outcome(const struct rv_prog *p, int op, long res)
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
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	d = rv_proc_opendir(pid, 0, "task");
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
int rv_cut_need_dead_dir(struct rv_cut *c)
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
int rv_cut_need_cwd_saved(struct rv_cut *c)
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
	int d = rv_cut_need_dead_dir(c), op;

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
	int d = rv_cut_need_dead_dir(c), op, off;

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

int rv_cut_add_close(struct rv_cut *c, int ref)
{
	if (ref < 0)
		return 0;
	return rv_prog_add(c->p, RV_OP_SYSCALL, SYS_close, NULL, RV_OPF_CLEANUP | RV_OPF_IF_REF_OK,
			   ref, 0);
}

int rv_cut_add_ring_probe(struct rv_cut *c, const struct revoke_ref *ref)
{
	return add_uring_update(c, ref, IORING_REGISTER_FILES_SKIP, RV_OPF_REQUIRED);
}
