/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire format between librevoke and its privileged helper revoked(8), on
 * a SOCK_SEQPACKET unix socket (it never leaves the machine: native byte
 * order). Every message starts with a header: 4 magic bytes ("RVKQ" for a
 * request, "RVKR" for a reply), a version (u16, RV_HELPER_VERSION), a u16
 * that is 0, and the length of the body that follows (u32).
 *
 * Request, one datagram, with 1..RV_HELPER_MAX_FDS descriptors (SCM_RIGHTS)
 * of the files, opened by the client (O_PATH, or frevoke's own descriptor):
 *   u32 flags (REVOKE_*), u32 timeout_ms, u32 nfds, u32 keep
 *   and, only with a selection of holders (1.4): u32 npids, u32 nuids,
 *   u32 cgroup length, npids i32 pids, nuids u32 uids, the cgroup's bytes
 *   (at most RV_SELECT_MAX pids and uids, RV_HELPER_MAX_CGROUP bytes; a
 *   request without one has no such part, so that each request has one
 *   spelling)
 * keep: the index of the descriptor whose open file description is kept
 * (frevoke), or UINT32_MAX. The client keeps its copies until the reply
 * (to send them again if the helper says EAGAIN): the helper's engine keeps
 * every descriptor that shares their open file descriptions.
 *
 * Reply, the header and the body split over datagrams of at most
 * RV_HELPER_CHUNK bytes:
 *   i32 result (0 or an errno), u32 has_report, then the report if any:
 *   i32 engine, discovery, error, failed_phase, failed_pid, helper_pid (the
 *   revoked process: SO_PEERCRED names whoever listen()ed, systemd when
 *   socket-activated); u64 elapsed_ns,
 *   max_stopped_ns, timeout_ns, nuninspected, nunmounted; str failed_detail;
 *   u32 ntargets, each: str path, u64 dev, u64 ino, u32 mode, u32 uid;
 *   u32 nholders, each: i32 pid, u32 uid, str comm, i32 state, i32 error,
 *     str reason, u64 stopped_ns, u32 nrefs, each: i32 type, state, error,
 *     u32 target, i32 fd, fd_flags, open_flags, prot, map_flags, u64 start,
 *     end, offset.
 *   str: u32 length, then that many bytes (no NUL).
 * The parsers take any bytes: every length and count is checked against
 * what is left and against the field it fills.
 */
#ifndef REVOKE_HELPER_PROTO_H
#define REVOKE_HELPER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define RV_HELPER_VERSION     1
#define RV_HELPER_HEADER_SIZE 12
#define RV_HELPER_REQ_BODY    16
#define RV_HELPER_REQ_SIZE    (RV_HELPER_HEADER_SIZE + RV_HELPER_REQ_BODY)
#define RV_HELPER_MAX_CGROUP  1024
/* The largest request: with a selection of every kind, full. */
#define RV_HELPER_REQ_MAX (RV_HELPER_REQ_SIZE + 12 + 8 * RV_SELECT_MAX + RV_HELPER_MAX_CGROUP)
#define RV_HELPER_MAX_FDS 16
#define RV_HELPER_CHUNK	  32768
/* A reply larger than this is refused (a report of ~100,000 references). */
#define RV_HELPER_MAX_REPLY (16u << 20)
#define RV_HELPER_KEEP_NONE UINT32_MAX

/* Where the helper listens unless $REVOKE_HELPER_SOCKET says otherwise. */
#define RV_HELPER_SOCKET "/run/revoke/revoked.sock"

struct rv_helper_req {
	uint32_t flags;
	uint32_t timeout_ms;
	uint32_t nfds;
	uint32_t keep;
	/* The selection of holders (1.4), empty when none. */
	uint32_t npids, nuids;
	int32_t pids[RV_SELECT_MAX];
	uint32_t uids[RV_SELECT_MAX];
	char cgroup[RV_HELPER_MAX_CGROUP + 1]; /* "" when none */
};

/* BUF gets the request, at most RV_HELPER_REQ_MAX bytes: its length. */
size_t rv_helper_encode_request(const struct rv_helper_req *req, uint8_t buf[RV_HELPER_REQ_MAX]);
/* 0, or -EBADMSG (not a request, wrong length, nfds out of 1..MAX, keep out
 * of range, a selection part that is empty, too large or not what its
 * counts say, a cgroup with a NUL), -EPROTONOSUPPORT (another version). RET
 * untouched on failure. The flags are not judged here. */
int rv_helper_parse_request(const void *buf, size_t len, struct rv_helper_req *ret);

/* A reply's header: the body length it announces (-EBADMSG: not a reply
 * header, or longer than RV_HELPER_MAX_REPLY; -EPROTONOSUPPORT). */
int rv_helper_parse_reply_header(const void *buf, size_t len, size_t *ret_body_len);

/* The whole reply (header included), malloc'd into *RET_BUF. REP may be NULL. */
int rv_helper_encode_reply(int result, const struct revoke_report *rep, uint8_t **ret_buf,
			   size_t *ret_len);
/* Parses a whole reply (header included): *RET_RESULT the errno (>= 0), and
 * *RET_REPORT a report to free with rv_report_destroy(), or NULL when it
 * had none. -EBADMSG for anything malformed; out-parameters untouched then. */
int rv_helper_parse_reply(const void *buf, size_t len, int *ret_result,
			  struct revoke_report **ret_report);

#endif
