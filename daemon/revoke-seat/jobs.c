/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The revocations, one at a time: a user who left a seat is a job, queued;
 * the main loop runs one step of the first job at a time (start it: the
 * seat's devices as udev has them now, all revoked in one call when they can
 * be; else revoke one device; end it) and reads logind between steps, so a
 * switch during a revocation waits its turn, and a user back at the seat
 * before their job is over keeps the devices not yet done. Each device is
 * revoked from that user's processes only (librevoke's uid selection, since
 * 1.4), all or nothing, and each one that someone held gets one journal
 * entry.
 * The queue is kept in the runtime directory, so a revoke-seat killed in the
 * middle finishes the job when systemd starts it again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include <revoke.h>

#include "seat.h"

#define MAX_JOBS 64
/* journalctl MESSAGE_ID=...: one device revoked from a user; a user's
 * departure from a seat, summed up. */
#define MESSAGE_ID_DEVICE "0e59f55eb8864b86bf9218f23a7a36c9"
#define MESSAGE_ID_LEFT	  "4a0220c3fe89492e95da0798741974a4"

struct job {
	char seat[SEAT_ID_MAX];
	char user[USER_NAME_MAX];
	char session[SEAT_ID_MAX];
	char reason[16]; /* switch, logout, startup, restart */
	uid_t uid;
	uint64_t since_ns; /* when the departure was seen */
	bool started;
	struct seat_device *devs; /* those the user holds */
	size_t ndevs, next, kept, listed;
	unsigned int holders, refs, devices, failed;
};

static struct job jobs[MAX_JOBS];
static size_t njobs;
static const struct seat_conf *conf;
static const char *state_dir;
static bool dry_run, lib_selects;
static uint64_t total_holders;

void jobs_init(const struct seat_conf *c, const char *dir, bool dry, bool selects)
{
	conf = c;
	state_dir = dir;
	dry_run = dry;
	lib_selects = selects;
}

bool jobs_pending(void)
{
	return njobs > 0;
}

uint64_t jobs_total_holders(void)
{
	return total_holders;
}

/* The queue, written whole (a temporary file renamed over the old one): the
 * jobs not finished, for the next revoke-seat if this one is killed. */
static void save(void)
{
	char path[512], tmp[520];
	FILE *f;

	if (!state_dir)
		return;
	snprintf(path, sizeof(path), "%s/pending", state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		say(LOG_WARNING, "%s: %m (a restart would not finish the revocations queued now)",
		    tmp);
		return;
	}
	for (size_t i = 0; i < njobs; i++)
		fprintf(f, "%s %u %s %s %s\n", jobs[i].seat, (unsigned)jobs[i].uid,
			*jobs[i].session ? jobs[i].session : "-", jobs[i].reason, jobs[i].user);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0 || fclose(f) != 0 || rename(tmp, path) < 0)
		say(LOG_WARNING, "%s: %m", path);
}

int jobs_add(const char *seat, uid_t uid, const char *user, const char *session, const char *reason,
	     uint64_t since_ns)
{
	struct job *j;

	if (seat_conf_ignores(conf, uid))
		return 0;
	/* One waiting job per user and seat is enough: it revokes whatever
	 * the seat has when it starts. */
	for (size_t i = 0; i < njobs; i++)
		if (!jobs[i].started && jobs[i].uid == uid && strcmp(jobs[i].seat, seat) == 0)
			return 0;
	if (njobs == MAX_JOBS) {
		say(LOG_ERR,
		    "%s: %s (uid %u) left, but %d revocations are queued already: not "
		    "revoking their devices",
		    seat, user, (unsigned)uid, MAX_JOBS);
		return -ENOSPC;
	}
	j = &jobs[njobs++];
	*j = (struct job){.uid = uid, .since_ns = since_ns};
	snprintf(j->seat, sizeof(j->seat), "%s", seat);
	snprintf(j->user, sizeof(j->user), "%s", user);
	snprintf(j->session, sizeof(j->session), "%s", session ? session : "");
	snprintf(j->reason, sizeof(j->reason), "%s", reason);
	save();
	return 1;
}

/* The queue a killed revoke-seat left: its jobs again, from the start
 * (devices already done have no holder of that user left). */
void jobs_restore(void)
{
	char path[512], line[512];
	FILE *f;

	if (!state_dir)
		return;
	snprintf(path, sizeof(path), "%s/pending", state_dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char seat[SEAT_ID_MAX], session[SEAT_ID_MAX], reason[16], user[USER_NAME_MAX];
		unsigned int uid;

		if (sscanf(line, "%63s %u %63s %15s %63s", seat, &uid, session, reason, user) != 5)
			continue;
		say(LOG_NOTICE,
		    "%s: resuming the revocation from %s (uid %u, %s) that a previous "
		    "revoke-seat left unfinished",
		    seat, user, uid, reason);
		jobs_add(seat, (uid_t)uid, user, strcmp(session, "-") ? session : "", "restart",
			 now_ns());
	}
	fclose(f);
}

static void drop_first(void)
{
	free(jobs[0].devs);
	memmove(&jobs[0], &jobs[1], (njobs - 1) * sizeof(jobs[0]));
	njobs--;
	save();
}

/* The journal entry of D's revocation from J's user (RES), if someone of
 * theirs held it or it failed. */
static void record(struct job *j, const struct seat_device *d, const struct cut_result *res)
{
	uint64_t since = now_ns() - j->since_ns, elapsed = res->elapsed_us * 1000;
	unsigned int cut = res->holders, refs = res->refs;
	const char *pids = res->pids, *why = res->why;
	int error = res->error;

	if (error == ENOENT)
		return; /* unplugged since the job started */
	if (!error && !cut)
		return; /* nobody of theirs held it */
	if (!error) {
		j->holders += cut;
		j->refs += refs;
		j->devices++;
		total_holders += cut;
		sd_journal_send(
		    "MESSAGE=%s: %s %s %s (uid %u), who left the seat (%s%s%s): %u holder%s %s "
		    "(%s), %u reference%s, in %" PRIu64 " ms",
		    j->seat, d->devnode, dry_run ? "would be revoked from" : "revoked from",
		    j->user, (unsigned)j->uid, j->reason, *j->session ? ", session " : "",
		    j->session, cut, cut == 1 ? "" : "s", dry_run ? "found" : "cut", pids, refs,
		    refs == 1 ? "" : "s", elapsed / 1000000, "MESSAGE_ID=" MESSAGE_ID_DEVICE,
		    "PRIORITY=%d", LOG_NOTICE, "REVOKE_SEAT=%s", j->seat, "REVOKE_SESSION=%s",
		    j->session, "REVOKE_USER=%s", j->user, "REVOKE_UID=%u", (unsigned)j->uid,
		    "REVOKE_REASON=%s", j->reason, "REVOKE_DEVICE=%s", d->devnode,
		    "REVOKE_SUBSYSTEM=%s", d->subsystem, "REVOKE_HOLDERS=%u", cut,
		    "REVOKE_HOLDER_PIDS=%s", pids, "REVOKE_REFERENCES=%u", refs,
		    "REVOKE_ELAPSED_USEC=%" PRIu64, elapsed / 1000,
		    "REVOKE_SINCE_LEFT_USEC=%" PRIu64, since / 1000, "REVOKE_DRY_RUN=%d",
		    (int)dry_run, NULL);
		if (!getenv("JOURNAL_STREAM"))
			say(LOG_NOTICE,
			    "%s: %s: %s from %s (uid %u): %u holder%s (%s), %" PRIu64 " ms",
			    j->seat, d->devnode, dry_run ? "would revoke" : "revoked", j->user,
			    (unsigned)j->uid, cut, cut == 1 ? "" : "s", pids, elapsed / 1000000);
	} else {
		j->failed++;
		sd_journal_send(
		    "MESSAGE=%s: %s not revoked from %s (uid %u), who left the seat (%s): %s; "
		    "nothing of it was cut",
		    j->seat, d->devnode, j->user, (unsigned)j->uid, j->reason, why,
		    "MESSAGE_ID=" MESSAGE_ID_DEVICE, "PRIORITY=%d", LOG_ERR, "REVOKE_SEAT=%s",
		    j->seat, "REVOKE_SESSION=%s", j->session, "REVOKE_USER=%s", j->user,
		    "REVOKE_UID=%u", (unsigned)j->uid, "REVOKE_REASON=%s", j->reason,
		    "REVOKE_DEVICE=%s", d->devnode, "REVOKE_SUBSYSTEM=%s", d->subsystem,
		    "REVOKE_HOLDERS=0", "REVOKE_HOLDER_PIDS=%s", pids, "REVOKE_ERRNO=%d", error,
		    "REVOKE_ERROR=%s", why, "REVOKE_ELAPSED_USEC=%" PRIu64, elapsed / 1000,
		    "REVOKE_SINCE_LEFT_USEC=%" PRIu64, since / 1000, NULL);
		if (!getenv("JOURNAL_STREAM"))
			say(LOG_ERR, "%s: %s: not revoked from %s (uid %u): %s", j->seat,
			    d->devnode, j->user, (unsigned)j->uid, why);
	}
}

static void revoke_device(struct job *j, const struct seat_device *d)
{
	struct cut_result res;

	seat_cut(j->uid, conf->timeout_ms, dry_run, d->devnode, &res);
	record(j, d, &res);
}

/*
 * All of J's devices in one revocation: one scan of the processes and one
 * stop of the user's holders instead of one per device. If one device
 * cannot be revoked, that call changes nothing, and false sends the job to
 * the devices one at a time (each all or nothing, the failing one named).
 */
static bool revoke_all(struct job *j)
{
	static struct cut_all_result all;

	seat_cut_all(j->uid, conf->timeout_ms, dry_run, j->devs, j->ndevs, &all);
	if (all.error) {
		say(LOG_INFO, "%s: the %zu devices at once from %s (uid %u): %s; one at a time",
		    j->seat, j->ndevs, j->user, (unsigned)j->uid, all.why);
		return false;
	}
	for (size_t i = 0; i < j->ndevs; i++) {
		struct cut_result res = {
		    .holders = all.dev[i].holders,
		    .refs = all.dev[i].refs,
		    .elapsed_us = all.elapsed_us,
		};

		snprintf(res.pids, sizeof(res.pids), "%s", all.dev[i].pids);
		record(j, &j->devs[i], &res);
	}
	return true;
}

/*
 * The devices of J that the user's processes hold, found in one pass over
 * /proc for all of them (a revocation scans once per device, and most
 * devices are held by nobody). If the listing fails, every device is tried
 * on its own.
 */
static void keep_held(struct job *j)
{
	bool *held = calloc(j->ndevs ? j->ndevs : 1, sizeof(*held));
	size_t k = 0;

	if (!held || !j->ndevs ||
	    seat_list_held(j->uid, conf->timeout_ms, j->devs, j->ndevs, held) < 0) {
		free(held);
		return;
	}
	for (size_t i = 0; i < j->ndevs; i++)
		if (held[i])
			j->devs[k++] = j->devs[i];
	j->ndevs = k;
	free(held);
}

void jobs_step(void)
{
	struct job *j;

	if (!njobs)
		return;
	j = &jobs[0];
	/* Back at the seat: what is not done yet stays theirs (a job whose
	 * devices are all done still gets its summary). */
	if ((!j->started || j->next < j->ndevs) && seat_has_user(j->seat, j->uid)) {
		if (j->started)
			say(LOG_NOTICE,
			    "%s: %s (uid %u) is back before the revocation was over: %zu "
			    "of %zu devices left alone",
			    j->seat, j->user, (unsigned)j->uid, j->ndevs - j->next, j->ndevs);
		drop_first();
		return;
	}
	if (!j->started) {
		int r;

		j->started = true;
		if (!lib_selects) {
			say(LOG_ERR,
			    "%s: %s (uid %u) left (%s), but librevoke %s cannot revoke from "
			    "one user's processes (1.4 can): their devices are left alone",
			    j->seat, j->user, (unsigned)j->uid, j->reason, revoke_version());
			drop_first();
			return;
		}
		r = seat_devices(j->seat, conf, &j->devs, &j->ndevs, &j->kept);
		if (r < 0) {
			say(LOG_ERR,
			    "%s: %s (uid %u) left (%s), but the seat's devices could not be "
			    "listed: %s",
			    j->seat, j->user, (unsigned)j->uid, j->reason, strerror(-r));
			drop_first();
			return;
		}
		j->listed = j->ndevs;
		if (j->ndevs && revoke_all(j)) {
			j->next = j->ndevs;
			return;
		}
		keep_held(j);
		say(LOG_INFO,
		    "%s: %s (uid %u) left (%s%s%s): their processes hold %zu of the seat's %zu "
		    "devices to revoke (%zu more kept by Classes=)",
		    j->seat, j->user, (unsigned)j->uid, j->reason, *j->session ? ", session " : "",
		    j->session, j->ndevs, j->listed, j->kept);
		return;
	}
	if (j->next < j->ndevs) {
		revoke_device(j, &j->devs[j->next++]);
		return;
	}
	sd_journal_send("MESSAGE=%s: %s (uid %u) left the seat (%s): %u holder%s %s on %u of %zu "
			"devices%s, %u failed, %" PRIu64 " ms after leaving",
			j->seat, j->user, (unsigned)j->uid, j->reason, j->holders,
			j->holders == 1 ? "" : "s", dry_run ? "found" : "cut", j->devices,
			j->listed, j->kept ? " (others kept by Classes=)" : "", j->failed,
			(now_ns() - j->since_ns) / 1000000, "MESSAGE_ID=" MESSAGE_ID_LEFT,
			"PRIORITY=%d", j->failed ? LOG_WARNING : LOG_INFO, "REVOKE_SEAT=%s",
			j->seat, "REVOKE_SESSION=%s", j->session, "REVOKE_USER=%s", j->user,
			"REVOKE_UID=%u", (unsigned)j->uid, "REVOKE_REASON=%s", j->reason,
			"REVOKE_HOLDERS=%u", j->holders, "REVOKE_DEVICES=%zu", j->listed,
			"REVOKE_FAILED=%u", j->failed, "REVOKE_SINCE_LEFT_USEC=%" PRIu64,
			(now_ns() - j->since_ns) / 1000, NULL);
	drop_first();
}
