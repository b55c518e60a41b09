/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine's own interfaces, between the steps of one call: its shared
 * state (struct rv_run) and the functions of call.c, plan.c, freeze.c,
 * apply.c, apply-native.c, run.c and kinds/classify.c. Nothing outside those
 * files includes this.
 */
#ifndef REVOKE_RUN_H
#define REVOKE_RUN_H

#include <pthread.h>

#include "budget.h"
#include "internal.h"
#include "kinds/recheck.h"
#include "kinds/select.h"

struct rv_run {
	struct rv_request req;
	struct rv_budget budget;
	struct rv_target *targets;
	size_t ntargets;
	int *ignore_fds;
	struct rv_holders holders;
	/* REVOKE_MOUNT: swap, loop and other namespaces' users (mount.c),
	 * never stopped; the dead directory; how many mounts went. */
	struct rv_holders others;
	struct rv_dead_dir dead_dir;
	size_t nunmounted;
	uint64_t max_stopped_ns;
	int discovery;
	int engine;
	struct rv_bpf *bpf; /* the BPF scanner, loaded once for every scan */
	int lock_fd;
	/* For whom: the caller's uid, or the helper's client's. Its own calls
	 * and root's are believed (lock.c): calls_fd registers this one. */
	uid_t requester;
	int calls_fd;
	struct rv_calls calls;
	/* The selection of holders (kinds/select.c), resolved by the plan;
	 * the request's arrays copied (the caller may be gone before the
	 * worker reads them). */
	struct rv_select select;
	pid_t *req_pids;
	uid_t *req_uids;
	char *req_cgroup;
	/* REVOKE_RECHECK: each holder's answers from the kernel. */
	struct rv_recheck recheck;

	/* Where the time went (rv_run_step), for the report: the step now
	 * and since when. Written by the worker only. */
	uint64_t step_ns[REVOKE_STEP_COUNT];
	int step;
	uint64_t step_since;

	/* Where it failed, for the report. */
	int failed_phase;
	pid_t failed_pid;
	char failed_detail[128];

	/* Shared with the caller's thread (under mu). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int phase;  /* what the worker does now */
	pid_t busy; /* with which process, or 0 */
	bool done;  /* the worker finished: result and report are set */
	bool gone;  /* the caller stopped waiting: the worker frees everything */
	/* Past the point of no return (commit()): the caller waits for the
	 * worker to finish, whatever the time. */
	bool committed;
	int result;
	struct revoke_report *report;
	bool want_report;
};

/* run.c */
void rv_run_phase(struct rv_run *run, int phase, pid_t pid);
void rv_run_step(struct rv_run *run, int step);
bool rv_run_abandoned(struct rv_run *run);
void rv_run_fail(struct rv_run *run, int phase, pid_t pid, const char *detail);
int rv_run_commit(struct rv_run *run, uint64_t *ret_finish);
size_t rv_run_uninspected(const struct rv_run *run);
void rv_holder_mark(struct rv_holder *h, int from, int state, int error);
void rv_run_mark_all(struct rv_run *run, int from, int state, int error);
void rv_run_scan_opts(struct rv_run *run, int phase, struct rv_scan_opts *o);
size_t rv_run_refused(const struct rv_run *run);

/* kinds/classify.c */
void rv_ref_unreachable(struct revoke_ref *ref, int error, size_t *count);
void rv_mark_code(const struct rv_run *run, struct rv_holder *h, size_t *unreachable);
size_t rv_classify_all(const struct rv_run *run, bool native);
void rv_narrow_refs(struct rv_run *run, int phase);

/* REVOKE_DESCRIPTION's description: frevoke's descriptor, or the one the
 * helper's client sent. */
static inline int rv_run_description_fd(const struct rv_run *run)
{
	return run->req.fds ? run->targets[0].path_fd : run->req.fd;
}

/* freeze.c */
void rv_drop_revoke_calls(struct rv_run *run, size_t from);
int rv_freeze(struct rv_run *run, size_t *ret_failed);
void rv_note_stopped(struct rv_run *run, struct rv_holder *h);
void rv_release_all(struct rv_run *run);

/* apply.c */
int rv_keep_if_tty(int fd);
int rv_unmount_all(struct rv_run *run, int cut, bool native);
int rv_run_ptrace(struct rv_run *run);

/* apply-native.c */
int rv_run_native(struct rv_run *run);
int rv_run_native_umount(struct rv_run *run);

/* plan.c */
int rv_plan_report(struct rv_run *run, int error, struct revoke_report **ret);
int rv_plan(struct rv_run *run);

/* report.c */
struct revoke_report *rv_report_new(size_t ntargets, size_t nholders);

#endif
