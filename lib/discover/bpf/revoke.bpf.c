/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * BPF iterators that find the holders of a set of files in one pass over the
 * kernel's task, fd and vma lists, instead of a readlink/stat per fd in /proc.
 * They only select and copy: bpf.c (user space) builds the holder list.
 *
 * Matching uses the inode of the file's path (f_path.dentry->d_inode), which
 * is what stat() of /proc/PID/fd/N and of the target's path reports, rather
 * than f_inode (the real inode under overlayfs). Up to Linux 6.7 that is also
 * right for the internal files overlayfs (and FUSE passthrough) put behind a
 * mapping: their f_path was the "fake" user-visible path. Since 6.8 such a
 * "backing file" (FMODE_BACKING, embedded in struct backing_file) has the
 * real lower/upper path in f_path and the user's in backing_file.user_path:
 * see match_file(). An fd never holds a backing file (open() on overlayfs
 * gives the overlayfs file, whose private_data is the backing one).
 *
 * Threads: the task_file and task_vma iterators skip threads that share the
 * leader's fd table; a thread is used only when its leader has given up its
 * fd table or mm (the leader exited and its threads live on), as
 * /proc/PID/task/TID is then the only way in. User space keeps the first
 * thread per thread group.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "records.h"

/* bpf_seq_write and bpf_probe_read_kernel are GPL-only helpers: the kernel
 * requires a GPL-compatible declaration (the LGPL allows distribution under
 * the GPL). */
char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD	0x00200000
#define FMODE_NOACCOUNT 0x20000000
#define S_IFMT		00170000
#define S_IFSOCK	0140000
#define SOCKFS_MAGIC	0x534F434B
#define AF_UNIX		1

/* FMODE_BACKING of the running kernel (a macro, so not in BTF: 1 << 25 up
 * to 6.13, 1 << 24 since), or 0 when user space does not know it for this
 * kernel version; set before load (bpf.c). */
const volatile __u32 fmode_backing = 0;

/* Whether the targets are mounts (REVOKE_MOUNT): then every path is also
 * looked up by its mount's id; set before load (bpf.c). */
const volatile __u32 by_mount = 0;

/* fs/file_table.c, 6.8+ (6.5-6.7 have real_path instead, with the user's
 * path in f_path). CO-RE finds user_path inside the anonymous union. */
struct backing_file___rv {
	struct file file;
	struct path user_path;
} __attribute__((preserve_access_index));

/* The project's patched kernel (kernel/): set once the file was revoked by
 * revoke(2). Absent elsewhere, where the test below compiles to nothing. */
struct file___revoke {
	void *f_revoked;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RV_BPF_MAX_TARGETS);
	__type(key, struct rv_bpf_key);
	__type(value, __u32);
} targets SEC(".maps");

/* Thread groups (global tgid) found holding a target, by any pass: the first
 * to find one sends its identity (INFO), so the passes need no order. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* allocated as holders are found */
	__uint(max_entries, RV_BPF_MAX_HOLDERS);
	__type(key, __u32);
	__type(value, __u32);
} holders SEC(".maps");

/* One element: the targets' keys as bits (records.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rv_bpf_sieve);
} sieve SEC(".maps");

static __always_inline int match_key(struct rv_bpf_key *key, __u32 *ret_target)
{
	__u32 zero = 0, bit = rv_bpf_key_bit(key->ino, key->dev, key->kind);
	struct rv_bpf_sieve *sv = bpf_map_lookup_elem(&sieve, &zero);
	__u32 *t;

	if (sv && !((sv->w[bit / 64] >> (bit % 64)) & 1))
		return 0;
	t = bpf_map_lookup_elem(&targets, key);
	if (!t)
		return 0;
	*ret_target = *t;
	return 1;
}

/* For an inode reached through BTF pointers from the iterator's context:
 * direct loads (faulting loads the kernel catches) cost a fraction of a
 * bpf_probe_read_kernel call each, and this runs for every fd and vma. */
/* Another node of a device target (same i_rdev): its key, and the target
 * with RV_BPF_ALIAS. Only device inodes cost a second lookup. */
static __always_inline int match_alias(__u16 mode, __u32 rdev, __u32 *ret_target)
{
	struct rv_bpf_key key = {};

	if ((mode & 0170000) == 0020000)
		key.kind = RV_BPF_KEY_CHR;
	else if ((mode & 0170000) == 0060000)
		key.kind = RV_BPF_KEY_BLK;
	else
		return 0;
	key.dev = rdev;
	if (!match_key(&key, ret_target))
		return 0;
	*ret_target |= RV_BPF_ALIAS;
	return 1;
}

static __always_inline int match_inode(struct inode *inode, __u32 *ret_target)
{
	struct rv_bpf_key key = {};

	if (!inode)
		return 0;
	key.ino = inode->i_ino;
	key.dev = inode->i_sb->s_dev;
	return match_key(&key, ret_target) || match_alias(inode->i_mode, inode->i_rdev, ret_target);
}

/* For an inode pointer read with bpf_probe_read_kernel (a plain number to
 * the verifier). */
static __always_inline int match_inode_read(struct inode *inode, __u32 *ret_target)
{
	struct rv_bpf_key key = {};

	if (!inode)
		return 0;
	key.ino = BPF_CORE_READ(inode, i_ino);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	return match_key(&key, ret_target) ||
	       match_alias(BPF_CORE_READ(inode, i_mode), BPF_CORE_READ(inode, i_rdev), ret_target);
}

/* A path's mount MNT (a vfsmount pointer read as a number) is a mount
 * target: by the id of the struct mount around it. */
static __always_inline int match_mnt(unsigned long mnt, __u32 *ret_target)
{
	struct rv_bpf_key key = {.kind = RV_BPF_KEY_MNT};
	struct mount *m;

	if (!by_mount || !mnt)
		return 0;
	m = (struct mount *)(mnt - bpf_core_field_offset(struct mount, mnt));
	key.ino = (__u64)BPF_CORE_READ(m, mnt_id);
	return match_key(&key, ret_target);
}

/* The kernel keeps the user's path of a backing file in user_path. */
static __always_inline int has_user_path(void)
{
	return bpf_core_type_exists(struct backing_file___rv) &&
	       bpf_core_field_exists(struct backing_file___rv, user_path);
}

/*
 * Whether FILE is a target, by the inode stat() of its user's path reports:
 * f_path's, except for a backing file of 6.8+ (the file behind an overlayfs
 * or FUSE passthrough mapping), whose f_path is the real file on the layer
 * below. 1 (match, *RET_TARGET set), 0, or -1 when FILE may be a backing file
 * of a target that cannot be told for sure: then user space reads the
 * process through /proc instead. That is when FMODE_BACKING is unknown here
 * or wrong (user space derives it from the kernel version): backing files
 * also have FMODE_NOACCOUNT (1 << 29 since 2.6), like only a few other
 * internal files, and for those whatever follows struct file is checked for
 * a path to a target.
 */
static __always_inline int match_file(struct file *file, __u32 *ret_target)
{
	struct backing_file___rv *bf = (void *)file;
	struct dentry *dentry = NULL;
	struct vfsmount *mnt = NULL;
	fmode_t mode;
	int backing;

	if (match_inode(file->f_path.dentry->d_inode, ret_target))
		return 1;
	if (by_mount) {
		unsigned long fmnt = 0;

		bpf_core_read(&fmnt, sizeof(fmnt), &file->f_path.mnt);
		if (match_mnt(fmnt, ret_target))
			return 1;
	}
	if (!has_user_path())
		return 0;
	mode = file->f_mode;
	backing = fmode_backing && (mode & fmode_backing);
	if (!backing && !(mode & FMODE_NOACCOUNT))
		return 0;
	bpf_core_read(&dentry, sizeof(dentry), &bf->user_path.dentry);
	bpf_core_read(&mnt, sizeof(mnt), &bf->user_path.mnt);
	if (!dentry || !mnt || BPF_CORE_READ(mnt, mnt_sb) != BPF_CORE_READ(dentry, d_sb))
		/* No path there: not a backing file, unless it says it is. */
		return backing ? -1 : 0;
	if (!match_inode_read(BPF_CORE_READ(dentry, d_inode), ret_target) &&
	    !match_mnt((unsigned long)mnt, ret_target))
		return 0;
	return backing ? 1 : -1;
}

/* The pid of PID in the reader's pid namespace (the iterator runs in the
 * read() of the scanning process), 0 if it has none there. */
static __always_inline __s32 ns_nr(struct pid *pid)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	unsigned int level = BPF_CORE_READ(cur, thread_pid, level);
	int nr = 0;

	if (!pid || level > 32 || BPF_CORE_READ(pid, level) < level)
		return 0;
	bpf_core_read(&nr, sizeof(nr), &pid->numbers[level].nr);
	return nr;
}

/* The pid of PID in its own (innermost) pid namespace: NSpid's last. */
static __always_inline __s32 ns_inner(struct pid *pid)
{
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	if (!pid || level > 32)
		return 0;
	bpf_core_read(&nr, sizeof(nr), &pid->numbers[level].nr);
	return nr;
}

static __always_inline void fill_ids(struct rv_bpf_rec *rec, __u32 kind, struct task_struct *task,
				     struct task_struct *leader)
{
	rec->kind = kind;
	rec->tid = ns_nr(BPF_CORE_READ(task, thread_pid));
	rec->tgid = ns_nr(BPF_CORE_READ(leader, thread_pid));
}

static __always_inline void emit_info(struct seq_file *seq, struct task_struct *task,
				      struct task_struct *leader)
{
	struct rv_bpf_rec rec = {};

	fill_ids(&rec, RV_BPF_INFO, task, leader);
	rec.nspid = ns_inner(BPF_CORE_READ(leader, thread_pid));
	rec.uid = BPF_CORE_READ(leader, real_cred, uid.val);
	rec.seccomp = BPF_CORE_READ(leader, seccomp.mode);
	if (BPF_CORE_READ(leader, ptrace))
		rec.tracer = ns_nr(BPF_CORE_READ(leader, parent, thread_pid));
	rec.state = BPF_CORE_READ(leader, __state);
	rec.exit_state = BPF_CORE_READ(leader, exit_state);
	rec.flags = BPF_CORE_READ(leader, flags);
	/* Where the cut's code will go (lib/tracee/place.c): saves a read of
	 * /proc/PID/auxv per holder. TASK is a live thread (the leader may be
	 * a zombie without an mm). */
	rec.start = (__u64)(unsigned long)BPF_CORE_READ(task, mm, context.vdso);
	BPF_CORE_READ_STR_INTO(&rec.comm, leader, comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
}

/* TASK's thread group holds a target: the first time, with its identity. */
static __always_inline void mark_holder(struct seq_file *seq, struct task_struct *task,
					struct task_struct *leader)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), one = 1;

	/* A lookup first: the verifier inlines it, while a failed update
	 * takes the bucket's lock (most holders are found more than once). */
	if (bpf_map_lookup_elem(&holders, &tgid))
		return;
	if (bpf_map_update_elem(&holders, &tgid, &one, BPF_NOEXIST) == 0)
		emit_info(seq, task, leader);
}

/* TASK may hold a target behind a file that cannot be told for sure (see
 * match_file): user space reads the whole process through /proc. */
static __always_inline void emit_rescan(struct seq_file *seq, struct task_struct *task,
					struct task_struct *leader)
{
	struct rv_bpf_rec rec = {};

	fill_ids(&rec, RV_BPF_RESCAN, task, leader);
	rec.fd = -1;
	bpf_seq_write(seq, &rec, sizeof(rec));
}

/* A descriptor or mapping that is no target's: is it a ring or a socket
 * with descriptors in flight (is_candidate)? */
static __always_inline void emit_candidate(struct seq_file *seq, struct task_struct *task,
					   struct task_struct *leader, int fd)
{
	struct rv_bpf_rec rec = {};

	fill_ids(&rec, RV_BPF_CANDIDATE, task, leader);
	rec.fd = fd;
	bpf_seq_write(seq, &rec, sizeof(rec));
}

static __always_inline int skip_task(struct task_struct *task)
{
	return !task || (BPF_CORE_READ(task, flags) & PF_KTHREAD);
}

/* io_uring instances and unix sockets with descriptors queued on them: the
 * files they hold are in no fd table. User space looks at those through
 * /proc (fdinfo) for these processes only. */
static __always_inline int is_candidate(struct file *file, struct inode *inode, umode_t mode)
{
	if ((mode & S_IFMT) == 0) { /* anon inode */
		const unsigned char *p = BPF_CORE_READ(file, f_path.dentry, d_name.name);
		/* Compared as two words: a loop of byte compares made clang
		 * compute each byte's result apart, and the verifier walked
		 * all 2^11 combinations (90% of the programs' verification). */
		union {
			char c[16];
			__u64 w[2];
		} name = {}, uring = {.c = "[io_uring]"};

		bpf_probe_read_kernel_str(name.c, sizeof(name.c), p);
		return name.w[0] == uring.w[0] && name.w[1] == uring.w[1];
	}
	if ((mode & S_IFMT) == S_IFSOCK && BPF_CORE_READ(inode, i_sb, s_magic) == SOCKFS_MAGIC) {
		struct socket *sock = BPF_CORE_READ(file, private_data);
		struct sock *sk = BPF_CORE_READ(sock, sk);
		struct unix_sock *u = (struct unix_sock *)sk;
		int nr = 0;

		if (!sk || BPF_CORE_READ(sk, __sk_common.skc_family) != AF_UNIX)
			return 0;
		bpf_core_read(&nr, sizeof(nr), &u->scm_stat.nr_fds.counter);
		return nr > 0;
	}
	return 0;
}

SEC("iter/task_file")
int rv_task_file(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task, *leader;
	struct seq_file *seq = ctx->meta->seq;
	struct file *file = ctx->file;
	struct inode *inode;
	unsigned long word = 0;
	unsigned long *coe;
	__u32 fd = ctx->fd, target = 0;
	int m;

	if (!file || !task || (task->flags & PF_KTHREAD))
		return 0;
	leader = task->group_leader;
	if (task != leader && leader->files)
		return 0;
	/* A descriptor revoke(2) revoked no longer holds the file: /proc/PID/fd
	 * refuses to name it, and so does this. */
	if (bpf_core_field_exists(struct file___revoke, f_revoked) &&
	    BPF_CORE_READ((struct file___revoke *)file, f_revoked))
		return 0;
	/* An fd holds the file open() made, never a backing file (those are
	 * overlayfs' and FUSE's own, behind the user's file): match_file is
	 * for the rare case only. */
	m = match_file(file, &target);
	if (!m) {
		/* Every descriptor comes here: direct loads, and no record
		 * zeroed, until one is to be written. */
		inode = file->f_path.dentry->d_inode;
		if (inode && is_candidate(file, inode, inode->i_mode))
			emit_candidate(seq, task, leader, (int)fd);
		return 0;
	}
	if (m < 0)
		emit_rescan(seq, task, leader);
	else {
		struct rv_bpf_rec rec = {.target = target};

		fill_ids(&rec, RV_BPF_FD, task, leader);
		rec.fd = (int)fd;
		rec.flags = BPF_CORE_READ(file, f_flags);
		rec.pos = BPF_CORE_READ(file, f_pos);
		coe = BPF_CORE_READ(task, files, fdt, close_on_exec);
		if (coe &&
		    bpf_probe_read_kernel(&word, sizeof(word), coe + fd / (8 * sizeof(long))) == 0)
			rec.cloexec = (word >> (fd % (8 * sizeof(long)))) & 1;
		bpf_seq_write(seq, &rec, sizeof(rec));
	}
	mark_holder(seq, task, leader);
	return 0;
}

SEC("iter/task_vma")
int rv_task_vma(struct bpf_iter__task_vma *ctx)
{
	struct task_struct *task = ctx->task, *leader;
	struct vm_area_struct *vma = ctx->vma;
	struct seq_file *seq = ctx->meta->seq;
	struct inode *inode;
	struct file *file;
	__u32 target = 0;
	int m;

	if (!vma || !task || (task->flags & PF_KTHREAD))
		return 0;
	file = vma->vm_file;
	if (!file)
		return 0;
	leader = task->group_leader;
	if (task != leader && leader->mm)
		return 0;
	/* An overlayfs or FUSE passthrough mapping has a backing file here. */
	m = match_file(file, &target);
	if (!m) {
		/* A ring it maps: /proc tells whether it also has a descriptor
		 * of it (whose fdinfo lists its files) or not. */
		inode = file->f_path.dentry->d_inode;
		if (inode && (inode->i_mode & S_IFMT) == 0 &&
		    is_candidate(file, inode, inode->i_mode))
			emit_candidate(seq, task, leader, -1);
		return 0;
	}
	if (m < 0)
		emit_rescan(seq, task, leader);
	else {
		struct rv_bpf_rec rec = {.target = target};

		fill_ids(&rec, RV_BPF_MAP, task, leader);
		rec.start = vma->vm_start;
		rec.end = vma->vm_end;
		rec.pos = vma->vm_pgoff;
		rec.flags = vma->vm_flags;
		bpf_seq_write(seq, &rec, sizeof(rec));
	}
	mark_holder(seq, task, leader);
	return 0;
}

static __always_inline int emit_path(struct seq_file *seq, __u32 kind, struct inode *inode,
				     unsigned long mnt, struct task_struct *task,
				     struct task_struct *leader)
{
	struct rv_bpf_rec rec = {};

	if (!match_inode_read(inode, &rec.target) && !match_mnt(mnt, &rec.target))
		return 0;
	fill_ids(&rec, kind, task, leader);
	rec.fd = -1;
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 1;
}

/* cwd, root and exe. */
SEC("iter/task")
int rv_task(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task, *leader;
	int held = 0;

	if (skip_task(task))
		return 0;
	leader = BPF_CORE_READ(task, group_leader);
	if (task == leader || !BPF_CORE_READ(leader, fs)) {
		struct fs_struct *fs = BPF_CORE_READ(task, fs);

		if (fs) {
			held |= emit_path(seq, RV_BPF_CWD, BPF_CORE_READ(fs, pwd.dentry, d_inode),
					  (unsigned long)BPF_CORE_READ(fs, pwd.mnt), task, leader);
			held |= emit_path(seq, RV_BPF_ROOT, BPF_CORE_READ(fs, root.dentry, d_inode),
					  (unsigned long)BPF_CORE_READ(fs, root.mnt), task, leader);
		}
	}
	if (task == leader || !BPF_CORE_READ(leader, mm)) {
		struct file *exe = BPF_CORE_READ(task, mm, exe_file);

		if (exe)
			held |=
			    emit_path(seq, RV_BPF_EXE, BPF_CORE_READ(exe, f_path.dentry, d_inode),
				      (unsigned long)BPF_CORE_READ(exe, f_path.mnt), task, leader);
	}
	if (held)
		mark_holder(seq, task, leader);
	return 0;
}
