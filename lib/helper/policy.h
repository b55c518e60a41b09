/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The helper's one client policy (HACKING.md, "The shape of lib/"): what a
 * client may ask for, the longest it may make the helper work, the owner
 * rule, and the line the helper logs for each request. revoked(8) only
 * transports requests and writes the line to syslog.
 */
#ifndef REVOKE_HELPER_POLICY_H
#define REVOKE_HELPER_POLICY_H

#include <stddef.h>
#include <sys/types.h>

#include "helper/proto.h"
#include "internal.h"

/* The engine's request for client UID's HR on FDS (which the request
 * takes): flags a client may ask for only (-EINVAL otherwise, FDS left to
 * the caller), the timeout clamped to MAX_TIMEOUT_MS, and the owner rule
 * (for_client: every file must be the client's). */
int rv_helper_policy_request(const struct rv_helper_req *hr, uid_t uid, int *fds, size_t nfds,
			     unsigned int max_timeout_ms, struct rv_request *ret);

/* The log line of one request, in two steps: what the client asked for,
 * read from FDS before the engine takes them (its command name in COMM, the
 * files in FILES), then "uid U pid P (COMM): revoke FILES, flags F: RESULT"
 * in BUF once the engine returned R and REP. No control character of the
 * client's reaches it. */
void rv_helper_policy_log_files(pid_t pid, const int *fds, size_t nfds, char *comm, size_t csize,
				char *files, size_t fsize);
void rv_helper_policy_log_line(uid_t uid, pid_t pid, const char *comm, uint32_t flags,
			       const char *files, int r, const struct revoke_report *rep, char *buf,
			       size_t size);

#endif
