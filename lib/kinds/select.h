/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A selection of holders (select.c). */
#ifndef REVOKE_SELECT_H
#define REVOKE_SELECT_H

#include "internal.h"

struct rv_select {
	bool any; /* some criterion given: else every process is in */
	pid_t *pids;
	size_t npids;
	uid_t *uids;
	size_t nuids;
	char *cgroup; /* the subtree as /proc/PID/cgroup prints it, or NULL */
};

/* REQ's selection, copied (the call may outlive the caller's arrays) and its
 * cgroup resolved: -ENOENT, -ENOTDIR, -EINVAL (not a cgroup2 directory). */
int rv_select_init(const struct rv_request *req, struct rv_select *ret);
void rv_select_done(struct rv_select *s);
/* 1: PID is in the selection, 0: it is not, -errno: nothing tells. */
int rv_select_has(const struct rv_select *s, pid_t pid);
/* Leaves HS[FROM..] holders of the selection only: a holder outside it is
 * emptied (never stopped, never counted); one nothing tells about becomes an
 * uninspected process. Returns how many were left out. */
size_t rv_select_filter(const struct rv_select *s, struct rv_holders *hs, size_t from);

#endif
