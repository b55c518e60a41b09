/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The revocations themselves, through librevoke's public API: which of a
 * seat's devices one user's processes hold, and one device revoked from
 * that user's processes (revoke_opts.uids, since librevoke 1.4), all or
 * nothing. Run by the cutter (cutter.c), or in revoke-seat itself when no
 * cutter answers (by hand, as root).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <revoke.h>

#include "seat.h"

/* The selection of one user's processes came with librevoke 1.4: an older
 * library ignores the fields it does not know and would cut everyone, so
 * nothing is asked of it. */
bool cut_library_selects(void)
{
	unsigned int major = 0, minor = 0;

	return sscanf(revoke_version(), "%u.%u", &major, &minor) == 2 &&
	       (major > 1 || (major == 1 && minor >= 4));
}

static struct revoke_opts opts_for(const uid_t *uid, unsigned int timeout_ms, unsigned int flags)
{
	return (struct revoke_opts){
	    .sz = sizeof(struct revoke_opts),
	    .flags = flags | REVOKE_NO_HANGUP | REVOKE_NO_HELPER,
	    .timeout_ms = (int)timeout_ms,
	    .keep_fd = -1,
	    .uids = uid,
	    .nuids = 1,
	};
}

int cut_list_held(uid_t uid, unsigned int timeout_ms, const char *const *devs, size_t n, bool *held)
{
	struct revoke_opts o = opts_for(&uid, timeout_ms, REVOKE_LIST_ONLY);
	struct revoke_report *rep = NULL;
	int r;

	if (!cut_library_selects())
		return -EOPNOTSUPP;
	r = revoke_ex(devs, n, &o, &rep) < 0 ? -errno : 0;
	if (r == 0 && (!rep || rep->ntargets != n))
		r = -EPROTO;
	if (r < 0) {
		revoke_report_free(rep);
		return r;
	}
	memset(held, 0, n * sizeof(*held));
	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		for (size_t k = 0; h && k < h->nrefs; k++) {
			const struct revoke_ref *ref = revoke_report_ref(rep, h, k);

			if (ref && ref->target < n)
				held[ref->target] = true;
		}
	}
	revoke_report_free(rep);
	return 0;
}

/* "pid 543 (seat-agent), pid 601 (arecord)", as much as fits. */
static void holder_list(const struct revoke_report *rep, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);
		int n;

		if (!h)
			continue;
		n = snprintf(buf + len, size - len, "%spid %d (%s)", len ? ", " : "", (int)h->pid,
			     h->comm);
		if (n < 0 || (size_t)n >= size - len) {
			buf[len] = 0;
			break;
		}
		len += (size_t)n;
	}
}

/* Why a failed revocation failed, naming the process when the report does. */
static void failure(const struct revoke_report *rep, int error, char *buf, size_t size)
{
	for (size_t i = 0; rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		if (h && h->error) {
			snprintf(buf, size, "pid %d (%s): %s", (int)h->pid, h->comm,
				 *h->reason ? h->reason : strerror(h->error));
			return;
		}
	}
	if (rep && rep->failed_pid)
		snprintf(buf, size, "%s while %s pid %d%s%s", strerror(error),
			 revoke_phase_name(rep->failed_phase) ?: "working on", (int)rep->failed_pid,
			 *rep->failed_detail ? ", " : "", rep->failed_detail);
	else
		snprintf(buf, size, "%s", strerror(error));
}

void cut_device(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *dev,
		struct cut_result *res)
{
	const char *paths[1] = {dev};
	struct revoke_opts o = opts_for(&uid, timeout_ms, dry_run ? REVOKE_LIST_ONLY : 0);
	struct revoke_report *rep = NULL;
	int want = dry_run ? REVOKE_STATE_FOUND : REVOKE_STATE_CUT;
	uint64_t t0 = now_ns();

	*res = (struct cut_result){0};
	if (!cut_library_selects()) {
		res->error = EOPNOTSUPP;
		snprintf(res->why, sizeof(res->why),
			 "librevoke %s cannot revoke from one user's processes (1.4 can)",
			 revoke_version());
		return;
	}
	if (revoke_ex(paths, 1, &o, &rep) < 0)
		res->error = errno;
	res->elapsed_us = (now_ns() - t0) / 1000;
	for (size_t i = 0; rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		if (!h)
			continue;
		res->holders += h->state == want;
		for (size_t k = 0; k < h->nrefs; k++) {
			const struct revoke_ref *ref = revoke_report_ref(rep, h, k);

			res->refs += ref && ref->state == want;
		}
	}
	holder_list(rep, res->pids, sizeof(res->pids));
	if (res->error)
		failure(rep, res->error, res->why, sizeof(res->why));
	revoke_report_free(rep);
}

void cut_devices(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *const *devs,
		 size_t n, struct cut_all_result *res)
{
	struct revoke_opts o = opts_for(&uid, timeout_ms, dry_run ? REVOKE_LIST_ONLY : 0);
	struct revoke_report *rep = NULL;
	int want = dry_run ? REVOKE_STATE_FOUND : REVOKE_STATE_CUT;
	uint64_t t0 = now_ns();

	memset(res, 0, sizeof(*res));
	res->n = n;
	if (!cut_library_selects()) {
		res->error = EOPNOTSUPP;
		snprintf(res->why, sizeof(res->why),
			 "librevoke %s cannot revoke from one user's processes (1.4 can)",
			 revoke_version());
		return;
	}
	if (revoke_ex(devs, n, &o, &rep) < 0)
		res->error = errno;
	res->elapsed_us = (now_ns() - t0) / 1000;
	if (res->error) {
		failure(rep, res->error, res->why, sizeof(res->why));
		revoke_report_free(rep);
		return;
	}
	for (size_t i = 0; rep && i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);
		bool seen[CUT_MAX_DEVS] = {false};

		for (size_t k = 0; h && k < h->nrefs; k++) {
			const struct revoke_ref *ref = revoke_report_ref(rep, h, k);
			struct cut_dev_result *d;
			size_t len;

			if (!ref || ref->state != want || ref->target >= n)
				continue;
			d = &res->dev[ref->target];
			d->refs++;
			if (seen[ref->target])
				continue;
			seen[ref->target] = true;
			d->holders++;
			len = strlen(d->pids);
			snprintf(d->pids + len, sizeof(d->pids) - len, "%spid %d (%s)",
				 len ? ", " : "", (int)h->pid, h->comm);
		}
	}
	revoke_report_free(rep);
}
