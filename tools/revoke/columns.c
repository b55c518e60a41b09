/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The columns, as lsfd's infos[]: for each one its name (the JSON key,
 * lower-cased), libsmartcols flags, JSON type, help and the
 * function that gives its text. Three tables: the references (the table
 * and the holders of the --json document), the targets and the report-wide
 * fields (both only in --json). Defaults and -o parsing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "cli.h"

#define FMT(...) (snprintf(buf, size, __VA_ARGS__), buf)

/* ---- the references (and their holders) ------------------------------ */

/* The reference's kind has FIELDS: R is a reference and shows them. */
static bool ref_has(const struct cell *c, unsigned int fields)
{
	return c->r && (ref_kind(c->r->type)->fields & fields);
}

static const char *bool_text(bool b)
{
	return b ? "1" : "0"; /* what SCOLS_JSON_BOOLEAN* reads as false and true */
}

static const char *get_path(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return c->r ? target_path(c->rep, c->r->target) : NULL;
}

static const char *get_pid(const struct cell *c, char *buf, size_t size)
{
	return FMT("%d", (int)c->h->pid);
}

/* The holder's pid in its own pid namespace (the report's holder_nspids[],
 * by the holder's index), or NULL when the report does not know it. */
static pid_t nspid_of(const struct revoke_report *rep, const struct revoke_holder *h)
{
	size_t hs =
	    REPORT_HAS(rep, holder_size) && rep->holder_size ? rep->holder_size : sizeof(*h);
	size_t i = (size_t)((const char *)h - (const char *)rep->holders) / hs;

	if (!REPORT_HAS(rep, holder_nspids) || !rep->holder_nspids || i >= rep->nholders)
		return 0;
	return rep->holder_nspids[i];
}

static const char *get_nspid(const struct cell *c, char *buf, size_t size)
{
	pid_t p = nspid_of(c->rep, c->h);

	return p > 0 ? FMT("%d", (int)p) : NULL;
}

static const char *get_user(const struct cell *c, char *buf, size_t size)
{
	const char *s = user_name(c->h->uid);

	return s ? s : FMT("%u", (unsigned)c->h->uid);
}

static const char *get_uid(const struct cell *c, char *buf, size_t size)
{
	return FMT("%u", (unsigned)c->h->uid);
}

static const char *get_command(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return c->h->comm;
}

static const char *get_type(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return c->r ? revoke_ref_type_name(c->r->type) : NULL;
}

static const char *get_fd(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_FD_NUMBER | REF_FD_OTHER) && c->r->fd >= 0 ? FMT("%d", c->r->fd)
									 : NULL;
}

static const char *get_flags(const struct cell *c, char *buf, size_t size)
{
	if (ref_has(c, REF_OPEN))
		return open_flags_string(c->r->open_flags, c->r->fd_flags & FD_CLOEXEC, buf, size);
	if (ref_has(c, REF_MAP))
		return map_flags_string(c->r->prot, c->r->map_flags, buf, size);
	return NULL;
}

static const char *get_range(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_MAP) ? FMT("%" PRIx64 "-%" PRIx64, c->r->start, c->r->end) : NULL;
}

static const char *get_offset(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_OFFSET) ? FMT("%" PRIu64, c->r->offset) : NULL;
}

static const char *get_state(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return revoke_state_name(c->r ? c->r->state : c->h->state);
}

static const char *get_error(const struct cell *c, char *buf, size_t size)
{
	const char *s = c->r ? ref_error_string(c->h, c->r) : holder_error_string(c->h);

	(void)buf, (void)size;
	return *s ? s : NULL;
}

static const char *get_errno(const struct cell *c, char *buf, size_t size)
{
	int e = c->r ? c->r->error : c->h->error;

	(void)buf, (void)size;
	return e ? strerrorname_np(e) : NULL;
}

static const char *get_dev(const struct cell *c, char *buf, size_t size)
{
	const struct revoke_target *t =
	    c->r && c->r->target < c->rep->ntargets ? &c->rep->targets[c->r->target] : NULL;

	return t ? FMT("%u:%u", major(t->dev), minor(t->dev)) : NULL;
}

static const char *get_inode(const struct cell *c, char *buf, size_t size)
{
	const struct revoke_target *t =
	    c->r && c->r->target < c->rep->ntargets ? &c->rep->targets[c->r->target] : NULL;

	return t ? FMT("%ju", (uintmax_t)t->ino) : NULL;
}

static const char *get_open_flags(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_OPEN) ? open_flags_string(c->r->open_flags, false, buf, size) : NULL;
}

static const char *get_cloexec(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return ref_has(c, REF_OPEN) ? bool_text(c->r->fd_flags & FD_CLOEXEC) : NULL;
}

static const char *get_start(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_MAP) ? FMT("%" PRIu64, c->r->start) : NULL;
}

static const char *get_end(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_MAP) ? FMT("%" PRIu64, c->r->end) : NULL;
}

static const char *get_prot(const struct cell *c, char *buf, size_t size)
{
	return ref_has(c, REF_MAP) ? prot_string(c->r->prot, buf, size) : NULL;
}

static const char *get_shared(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return ref_has(c, REF_MAP) ? bool_text(c->r->map_flags & MAP_SHARED) : NULL;
}

static const char *get_stopped_ns(const struct cell *c, char *buf, size_t size)
{
	return FMT("%" PRIu64, c->h->stopped_ns);
}

#define H COLW_HOLDER
#define J COLW_JSON
static const struct column columns[COL_COUNT] = {
    [COL_PATH] = {"PATH", 0, SCOLS_JSON_STRING, J, "the file being revoked, as given", get_path},
    [COL_PID] = {"PID", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, H | J, "process ID of the holder",
		 get_pid},
    [COL_NSPID] = {"NSPID", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, H | J,
		   "process ID of the holder in its own pid namespace", get_nspid},
    [COL_USER] = {"USER", 0, SCOLS_JSON_STRING, H | J,
		  "user name of the holder (the number if it has none)", get_user},
    [COL_UID] = {"UID", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, H | J, "real user ID of the holder",
		 get_uid},
    [COL_COMMAND] = {"COMMAND", 0, SCOLS_JSON_STRING, H | J, "command name of the holder",
		     get_command},
    [COL_TYPE] = {"TYPE", 0, SCOLS_JSON_STRING, J,
		  "reference type: fd, map, cwd, root, exe, uring, inflight", get_type},
    [COL_FD] = {"FD", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, J,
		"descriptor (the ring for uring, the socket for inflight)", get_fd},
    [COL_FLAGS] = {"FLAGS", 0, SCOLS_JSON_STRING, 0,
		   "open flags of a descriptor, protection of a mapping", get_flags},
    [COL_RANGE] = {"RANGE", 0, SCOLS_JSON_STRING, 0, "address range of a mapping (hex)", get_range},
    [COL_OFFSET] =
	{"OFFSET", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, J,
	 "file position of a descriptor, file offset of a mapping, slot of an io_uring fixed file",
	 get_offset},
    [COL_STATE] = {"STATE", 0, SCOLS_JSON_STRING, J,
		   "found, cut, kept, skipped, failed, unreachable, uninspected", get_state},
    [COL_ERROR] = {"ERROR", SCOLS_FL_TRUNC, SCOLS_JSON_STRING, J,
		   "why the reference was not cut, or the holder not stopped", get_error},
    [COL_ERRNO] = {"ERRNO", 0, SCOLS_JSON_STRING, J, "the error's name, e.g. ETIMEDOUT", get_errno},
    [COL_DEV] = {"DEV", 0, SCOLS_JSON_STRING, 0, "device that holds the file (major:minor)",
		 get_dev},
    [COL_INODE] = {"INODE", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, 0, "inode number of the file",
		   get_inode},
    [COL_OPEN_FLAGS] = {"OPEN_FLAGS", 0, SCOLS_JSON_STRING, J,
			"access mode and status flags of a descriptor", get_open_flags},
    [COL_CLOEXEC] = {"CLOEXEC", SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN_OPTIONAL, J,
		     "1 if the descriptor is close-on-exec", get_cloexec},
    [COL_START] = {"START", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, J,
		   "start address of a mapping (decimal)", get_start},
    [COL_END] = {"END", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, J,
		 "end address of a mapping (decimal, excluded)", get_end},
    [COL_PROT] = {"PROT", 0, SCOLS_JSON_STRING, J, "protection of a mapping (rwx)", get_prot},
    [COL_SHARED] = {"SHARED", SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN_OPTIONAL, J,
		    "1 for a shared mapping, 0 for a private one", get_shared},
    [COL_STOPPED_NS] = {"STOPPED_NS", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, H | J,
			"how long the holder was stopped, in nanoseconds", get_stopped_ns},
};

const struct column *column_info(int col)
{
	return col >= 0 && col < COL_COUNT ? &columns[col] : NULL;
}

/* ---- the targets (--json) ------------------------------------------------ */

static const struct revoke_target *target_of(const struct cell *c)
{
	return &c->rep->targets[c->target];
}

/* A path whose lookup timed out: the library knows nothing of its file. */
static bool unresolved(const struct cell *c)
{
	return target_of(c)->mode == 0;
}

static const char *t_path(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return target_path(c->rep, c->target);
}

static const char *t_dev(const struct cell *c, char *buf, size_t size)
{
	if (unresolved(c))
		return NULL;
	return FMT("%u:%u", major(target_of(c)->dev), minor(target_of(c)->dev));
}

static const char *t_inode(const struct cell *c, char *buf, size_t size)
{
	if (unresolved(c))
		return NULL;
	return FMT("%ju", (uintmax_t)target_of(c)->ino);
}

static const char *t_mode(const struct cell *c, char *buf, size_t size)
{
	if (unresolved(c))
		return NULL;
	return FMT("%u", (unsigned)target_of(c)->mode);
}

static const char *t_uid(const struct cell *c, char *buf, size_t size)
{
	if (unresolved(c))
		return NULL;
	return FMT("%u", (unsigned)target_of(c)->uid);
}

const struct column target_columns[] = {
    {"PATH", 0, SCOLS_JSON_STRING, J, "the path as given", t_path},
    {"DEV", 0, SCOLS_JSON_STRING, J, "major:minor of its device", t_dev},
    {"INODE", 0, SCOLS_JSON_NUMBER, J, "inode number", t_inode},
    {"MODE", 0, SCOLS_JSON_NUMBER, J, "st_mode", t_mode},
    {"UID", 0, SCOLS_JSON_NUMBER, J, "owner", t_uid},
};
const size_t target_ncolumns = ARRAY_SIZE(target_columns);

/* ---- the report-wide fields (--json) ----------------------------------- */

static const char *r_engine(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return revoke_engine_name(c->rep->engine);
}

static const char *r_discovery(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return revoke_discovery_name(c->rep->discovery);
}

static const char *r_error(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return c->rep->error ? strerror(c->rep->error) : NULL;
}

static const char *r_errno(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return c->rep->error ? strerrorname_np(c->rep->error) : NULL;
}

static const char *r_elapsed_ns(const struct cell *c, char *buf, size_t size)
{
	return FMT("%" PRIu64, c->rep->elapsed_ns);
}

static const char *r_max_stopped_ns(const struct cell *c, char *buf, size_t size)
{
	return FMT("%" PRIu64, c->rep->max_stopped_ns);
}

static const char *r_timeout_ns(const struct cell *c, char *buf, size_t size)
{
	return REPORT_HAS(c->rep, timeout_ns) ? FMT("%" PRIu64, c->rep->timeout_ns) : NULL;
}

static const char *r_failed_phase(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return REPORT_HAS(c->rep, failed_phase) && c->rep->failed_phase
		   ? revoke_phase_name(c->rep->failed_phase)
		   : NULL;
}

static const char *r_failed_pid(const struct cell *c, char *buf, size_t size)
{
	return REPORT_HAS(c->rep, failed_pid) && c->rep->failed_pid > 0
		   ? FMT("%d", (int)c->rep->failed_pid)
		   : NULL;
}

static const char *r_failed_detail(const struct cell *c, char *buf, size_t size)
{
	(void)buf, (void)size;
	return REPORT_HAS(c->rep, failed_detail) && c->rep->failed_detail[0] ? c->rep->failed_detail
									     : NULL;
}

static const char *r_nholders(const struct cell *c, char *buf, size_t size)
{
	return FMT("%zu", c->rep->nholders);
}

static const char *r_nuninspected(const struct cell *c, char *buf, size_t size)
{
	return FMT("%zu", REPORT_HAS(c->rep, nuninspected) ? c->rep->nuninspected : 0);
}

static const char *r_nunmounted(const struct cell *c, char *buf, size_t size)
{
	return FMT("%zu", REPORT_HAS(c->rep, nunmounted) ? c->rep->nunmounted : 0);
}

/* null when the library made the call itself */
static const char *r_helper(const struct cell *c, char *buf, size_t size)
{
	if (!REPORT_HAS(c->rep, helper_pid) || !c->rep->helper_pid)
		return NULL;
	return FMT("%d", (int)c->rep->helper_pid);
}

const struct column report_columns[] = {
    {"ENGINE", 0, SCOLS_JSON_STRING, J, "ptrace, syscall, none (listing)", r_engine},
    {"DISCOVERY", 0, SCOLS_JSON_STRING, J, "proc, bpf", r_discovery},
    {"ERROR", 0, SCOLS_JSON_STRING, J, "what the call failed with", r_error},
    {"ERRNO", 0, SCOLS_JSON_STRING, J, "its name", r_errno},
    {"ELAPSED_NS", 0, SCOLS_JSON_NUMBER, J, "wall time of the call", r_elapsed_ns},
    {"MAX_STOPPED_NS", 0, SCOLS_JSON_NUMBER, J, "longest stop", r_max_stopped_ns},
    {"TIMEOUT_NS", 0, SCOLS_JSON_NUMBER, J, "the bound the call had", r_timeout_ns},
    {"FAILED_PHASE", 0, SCOLS_JSON_STRING, J, "where it failed", r_failed_phase},
    {"FAILED_PID", 0, SCOLS_JSON_NUMBER, J, "with which process", r_failed_pid},
    {"FAILED_DETAIL", 0, SCOLS_JSON_STRING, J, "e.g. state D", r_failed_detail},
    {"NHOLDERS", 0, SCOLS_JSON_NUMBER, J, "holders in the report", r_nholders},
    {"NUNINSPECTED", 0, SCOLS_JSON_NUMBER, J, "of them, uninspected", r_nuninspected},
    {"UNMOUNTED", 0, SCOLS_JSON_NUMBER, J, "mounts unmounted (--umount)", r_nunmounted},
    {"HELPER_PID", 0, SCOLS_JSON_NUMBER, J, "revoked(8) that made the call, or null", r_helper},
};
const size_t report_ncolumns = ARRAY_SIZE(report_columns);

/* ---- where the time went (--json "steps_ns") --------------------------- */

/* null when the report has no steps: an older library, or revoked(8) made
 * the call (its report crosses the wire without them). */
static const char *step(const struct cell *c, char *buf, size_t size, int s)
{
	if (!REPORT_HAS(c->rep, step_ns) || (REPORT_HAS(c->rep, helper_pid) && c->rep->helper_pid))
		return NULL;
	return FMT("%" PRIu64, c->rep->step_ns[s]);
}

#define STEP(fn, s)                                                                                \
	static const char *fn(const struct cell *c, char *buf, size_t size)                        \
	{                                                                                          \
		return step(c, buf, size, s);                                                      \
	}
STEP(s_start, REVOKE_STEP_START)
STEP(s_resolve, REVOKE_STEP_RESOLVE)
STEP(s_lock, REVOKE_STEP_LOCK)
STEP(s_scan, REVOKE_STEP_SCAN)
STEP(s_stop, REVOKE_STEP_STOP)
STEP(s_rescan, REVOKE_STEP_RESCAN)
STEP(s_place, REVOKE_STEP_PLACE)
STEP(s_cut, REVOKE_STEP_CUT)
STEP(s_release, REVOKE_STEP_RELEASE)
STEP(s_sync, REVOKE_STEP_SYNC)
STEP(s_umount, REVOKE_STEP_UMOUNT)
STEP(s_report, REVOKE_STEP_REPORT)
#undef STEP

/* Named as revoke_step_name() names them. */
const struct column step_columns[] = {
    {"START", 0, SCOLS_JSON_NUMBER, J, "the call's setup", s_start},
    {"RESOLVE", 0, SCOLS_JSON_NUMBER, J, "looking the paths up", s_resolve},
    {"LOCK", 0, SCOLS_JSON_NUMBER, J, "waiting for another revoke", s_lock},
    {"SCAN", 0, SCOLS_JSON_NUMBER, J, "the first scan", s_scan},
    {"STOP", 0, SCOLS_JSON_NUMBER, J, "stopping the holders", s_stop},
    {"RESCAN", 0, SCOLS_JSON_NUMBER, J, "the scan of the stopped holders", s_rescan},
    {"PLACE", 0, SCOLS_JSON_NUMBER, J, "before the point of no return", s_place},
    {"CUT", 0, SCOLS_JSON_NUMBER, J, "from it to the last cut", s_cut},
    {"RELEASE", 0, SCOLS_JSON_NUMBER, J, "letting the holders go", s_release},
    {"SYNC", 0, SCOLS_JSON_NUMBER, J, "syncing (--umount)", s_sync},
    {"UMOUNT", 0, SCOLS_JSON_NUMBER, J, "unmounting", s_umount},
    {"REPORT", 0, SCOLS_JSON_NUMBER, J, "making the report", s_report},
};
const size_t step_ncolumns = ARRAY_SIZE(step_columns);
#undef H
#undef J

/* ---- selection --------------------------------------------------------- */

int column_by_name(const char *name, size_t len)
{
	for (int i = 0; i < COL_COUNT; i++)
		if (strlen(columns[i].name) == len && strncasecmp(columns[i].name, name, len) == 0)
			return i;
	return -1;
}

void columns_help(FILE *out)
{
	fputs("\nAvailable output columns:\n", out);
	for (int i = 0; i < COL_COUNT; i++)
		fprintf(out, " %10s  %s\n", columns[i].name, columns[i].help);
}

void columns_default(struct cli *cli)
{
	static const int list_cols[] = {COL_PATH, COL_PID, COL_USER,  COL_COMMAND,
					COL_TYPE, COL_FD,  COL_FLAGS, COL_RANGE};
	static const int revoke_extra[] = {COL_STATE, COL_ERROR};

	cli->ncolumns = 0;
	for (size_t i = 0; i < ARRAY_SIZE(list_cols); i++) {
		cli->columns[cli->ncolumns++] = list_cols[i];
		if (list_cols[i] == COL_PID && cli->ns)
			cli->columns[cli->ncolumns++] = COL_NSPID;
	}
	if (!cli->list)
		for (size_t i = 0; i < ARRAY_SIZE(revoke_extra); i++)
			cli->columns[cli->ncolumns++] = revoke_extra[i];
	cli->ndefault = cli->ncolumns;
}

int columns_parse(struct cli *cli, const char *list, const char **bad, size_t *badlen)
{
	const char *p = list;

	if (*p == '+')
		p++;
	else
		cli->ncolumns = cli->ndefault = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		int col = column_by_name(p, len);

		if (col < 0) {
			*bad = p;
			*badlen = len;
			return -1;
		}
		if (cli->ncolumns >= MAX_COLUMNS)
			return -2;
		cli->columns[cli->ncolumns++] = col;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

static bool column_shown(const struct cli *cli, int col)
{
	for (size_t i = 0; i < cli->ncolumns; i++)
		if (cli->columns[i] == col)
			return true;
	return false;
}

void columns_for_report(struct cli *cli, const struct revoke_report *rep)
{
	static const int needed[] = {COL_STATE, COL_ERROR};
	bool want = false;

	if (cli->ndefault == 0)
		return; /* -o LIST: exactly what was asked for */
	/* A holder that another pid namespace knows by another number: both. */
	for (size_t i = 0; i < rep->nholders && !column_shown(cli, COL_NSPID); i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);
		pid_t ns = nspid_of(rep, h);

		if (ns > 0 && ns != h->pid && cli->ncolumns < MAX_COLUMNS) {
			size_t at = 0;

			while (at < cli->ndefault && cli->columns[at] != COL_PID)
				at++;
			at = at < cli->ndefault ? at + 1 : cli->ndefault;
			memmove(&cli->columns[at + 1], &cli->columns[at],
				(cli->ncolumns - at) * sizeof(cli->columns[0]));
			cli->columns[at] = COL_NSPID;
			cli->ncolumns++;
			cli->ndefault++;
		}
	}
	for (size_t i = 0; i < rep->nholders && !want; i++)
		want = revoke_report_holder(rep, i)->state != REVOKE_STATE_FOUND;
	for (size_t k = 0; want && k < ARRAY_SIZE(needed); k++) {
		if (column_shown(cli, needed[k]) || cli->ncolumns >= MAX_COLUMNS)
			continue;
		memmove(&cli->columns[cli->ndefault + 1], &cli->columns[cli->ndefault],
			(cli->ncolumns - cli->ndefault) * sizeof(cli->columns[0]));
		cli->columns[cli->ndefault++] = needed[k];
		cli->ncolumns++;
	}
}
