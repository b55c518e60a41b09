/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the BPF iterators (revoke.bpf.c) write with bpf_seq_write and bpf.c
 * reads back from the iterator fds: fixed-size records, host byte order.
 * Shared by the BPF object (vmlinux.h types) and user space (<linux/types.h>).
 */
#ifndef REVOKE_BPF_RECORDS_H
#define REVOKE_BPF_RECORDS_H

#define RV_BPF_MAX_TARGETS 1024
#define RV_BPF_MAX_HOLDERS 65536

/* The identity of a target as the kernel sees it: the superblock's s_dev
 * (kernel encoding: major << 20 | minor) and the inode number; or, for a
 * device target's other nodes (aliases), ino 0, dev its i_rdev and kind
 * RV_BPF_KEY_CHR or RV_BPF_KEY_BLK; or, for a mount target (REVOKE_MOUNT),
 * kind RV_BPF_KEY_MNT, dev 0 and ino the mount's id (struct mount's mnt_id,
 * statx's stx_mnt_id): every file, mapping, cwd and root opened through that
 * mount. */
struct rv_bpf_key {
	__u64 ino;
	__u32 dev;
	__u32 kind;
};

enum { RV_BPF_KEY_INODE = 0, RV_BPF_KEY_CHR, RV_BPF_KEY_BLK, RV_BPF_KEY_MNT };

/* A sieve before the targets map, which every descriptor and mapping of every
 * process is looked up in: bit rv_bpf_key_bit() of each target key is set,
 * and a key whose bit is clear is no target's without the hash lookup (7% of
 * a 3000 x 64 listing's samples went to hashing and probing the map). */
#define RV_BPF_SIEVE_BITS 4096
struct rv_bpf_sieve {
	__u64 w[RV_BPF_SIEVE_BITS / 64];
};

static inline __attribute__((always_inline)) __u32 rv_bpf_key_bit(__u64 ino, __u32 dev, __u32 kind)
{
	__u64 h = (ino ^ ((__u64)dev << 32 | kind)) * 0x9E3779B97F4A7C15ull;

	return (__u32)(h >> 52); /* the top 12 bits: 0 .. RV_BPF_SIEVE_BITS - 1 */
}

/* In a record's target: the file matched as an alias of the device target. */
#define RV_BPF_ALIAS 0x80000000u

enum {
	RV_BPF_FD = 1, /* a descriptor of a target */
	RV_BPF_MAP,    /* a mapping of a target */
	RV_BPF_CWD,    /* cwd, root, exe of a target */
	RV_BPF_ROOT,
	RV_BPF_EXE,
	RV_BPF_INFO,	  /* the thread group leader's identity, once per holder */
	RV_BPF_CANDIDATE, /* an io_uring or a unix socket with fds in flight */
	RV_BPF_RESCAN,	  /* may hold a target the iterators cannot tell: read /proc */
};

struct rv_bpf_rec {
	__u32 kind;
	__u32 target; /* index into the targets array */
	__s32 tid;    /* the task the iterator visited (caller's pid namespace) */
	__s32 tgid;
	__s32 fd;      /* FD, CANDIDATE */
	__u32 cloexec; /* FD: FD_CLOEXEC set in the fdtable */
	__u64 flags;   /* FD: f_flags; MAP: vm_flags; INFO: the leader's PF_* flags */
	__u64 pos;     /* FD: f_pos; MAP: vm_pgoff */
	__u64 start;   /* MAP: [vm_start, vm_end); INFO: the vDSO's address */
	__u64 end;
	/* INFO */
	__u32 uid; /* real uid (init user namespace) */
	__s32 seccomp;
	__s32 tracer;	  /* the tracing task's pid, 0 if not traced (as TracerPid:) */
	__u32 state;	  /* the leader's __state */
	__u32 exit_state; /* and exit_state */
	__s32 nspid;	  /* its pid in its own pid namespace (NSpid:'s last) */
	char comm[16];
};

#endif
