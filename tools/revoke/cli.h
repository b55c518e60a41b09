/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared declarations of the revoke command's files (tools/). */
#ifndef REVOKE_CLI_H
#define REVOKE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "revoke.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Whether REP (a report of SZ bytes) has FIELD. */
#define REPORT_HAS(rep, field)                                                                     \
	((rep)->sz >= offsetof(struct revoke_report, field) + sizeof((rep)->field))

/* The columns of the table (one line per reference), in the order --help
 * lists them and the JSON has them: the holder's, the reference's, then
 * what happened, then the file's. Names, flags, JSON types, text: columns.c. */
enum {
	COL_PID,
	COL_NSPID,
	COL_USER,
	COL_UID,
	COL_COMMAND,
	COL_STOPPED_NS,
	COL_PATH,
	COL_TYPE,
	COL_FD,
	COL_FLAGS,
	COL_RANGE,
	COL_OFFSET,
	COL_OPEN_FLAGS,
	COL_CLOEXEC,
	COL_START,
	COL_END,
	COL_PROT,
	COL_SHARED,
	COL_STATE,
	COL_ERROR,
	COL_ERRNO,
	COL_DEV,
	COL_INODE,
	COL_COUNT,
};

#define MAX_COLUMNS 64

struct cli {
	bool list, best_effort, json, raw, noheadings, quiet;
	bool umount, dry_run; /* --umount, --umount --dry-run */
	bool mount;	      /* --mount or --umount: the targets are mounts */
	pid_t ns;	      /* --ns PID, or 0 */
	int columns[MAX_COLUMNS];
	size_t ncolumns;
	/* The first ndefault columns are the defaults (no -o, or -o +LIST). */
	size_t ndefault;
};

/* What a cell is about: the report, a holder, one of its references (NULL
 * on a line of the holder itself), or a target (the targets table). */
struct cell {
	const struct revoke_report *rep;
	const struct revoke_holder *h;
	const struct revoke_ref *r;
	size_t target;
};

/* Where a column belongs (struct column.where). */
enum {
	/* A property of the process: on its references' lines of the JSON
	 * tree it is null (their parent line has it); tables repeat it. */
	COLW_HOLDER = 1u << 0,
	/* Part of the --json document. */
	COLW_JSON = 1u << 1,
};

/* One column: lsfd's infos[]. */
struct column {
	const char *name; /* the header; lower-cased, the JSON key */
	int flags;	  /* SCOLS_FL_* */
	int json_type;	  /* SCOLS_JSON_* */
	unsigned int where;
	const char *help;
	/* The cell's text, using BUF (128 bytes) as needed; NULL when it has
	 * no value (an empty cell, null in JSON). */
	const char *(*get)(const struct cell *c, char *buf, size_t size);
};

/* columns.c: the three tables of columns. */
const struct column *column_info(int col); /* the table's, COL_* */
extern const struct column target_columns[];
extern const size_t target_ncolumns;
extern const struct column report_columns[];
extern const size_t report_ncolumns;
extern const struct column step_columns[];
extern const size_t step_ncolumns;
int column_by_name(const char *name, size_t len);
void columns_help(FILE *out);
void columns_default(struct cli *cli);
/* Parse -o LIST ("+LIST" appends to the default columns). On a bad name,
 * returns -1 and points *bad and *badlen at it; -2 for more than MAX_COLUMNS. */
int columns_parse(struct cli *cli, const char *list, const char **bad, size_t *badlen);
/* Add STATE and ERROR after the default columns when a listing needs them
 * (a holder that is not simply "found"), unless they are shown already. */
void columns_for_report(struct cli *cli, const struct revoke_report *rep);

/* format.c: text for fields, shared by the table, JSON and messages. */
const char *user_name(uid_t uid); /* cached; NULL when the uid has no name */
/* "rw,cloexec,append", "path"; BUF needs 128 bytes. */
const char *open_flags_string(int open_flags, bool cloexec, char *buf, size_t size);
/* "rw-" and "rw-s"; BUF needs 5 bytes. */
const char *prot_string(int prot, char *buf, size_t size);
const char *map_flags_string(int prot, int map_flags, char *buf, size_t size);
/* The holder's error as text ("" when none). */
const char *holder_error_string(const struct revoke_holder *h);
/* Why reference R of H was not cut ("" when it was, or nothing failed). */
const char *ref_error_string(const struct revoke_holder *h, const struct revoke_ref *r);
/* Whether R is a reference the call meant to cut and did not. */
bool ref_not_cut(const struct revoke_holder *h, const struct revoke_ref *r);
/* COMMAND with control characters and invalid bytes as \xHH, for messages. */
const char *comm_safe(const char *comm, char *buf, size_t size);
const char *target_path(const struct revoke_report *rep, size_t target);
/* S as valid UTF-8: each byte that is not part of a valid sequence becomes
 * U+FFFD. Returns S itself when it is valid, else a string in *BUF
 * (malloc'ed, freed and replaced by the next call with the same BUF). */
const char *utf8_valid(const char *s, char **buf);

/* The kinds of references, one entry each: which fields apply. */
enum {
	REF_FD_NUMBER = 1u << 0, /* fd is the reference itself ("fd 3") */
	REF_FD_OTHER = 1u << 1,	 /* fd is what holds it (the ring, the socket) */
	REF_OPEN = 1u << 2,	 /* open_flags, fd_flags */
	REF_MAP = 1u << 3,	 /* start, end, prot, map_flags */
	REF_OFFSET = 1u << 4,	 /* offset */
};
struct ref_kind {
	unsigned int fields;
	const char *noun;     /* in messages: "fd", "mapping", "cwd"... */
	const char *fd_label; /* REF_FD_OTHER: "ring fd", "socket fd" */
};
const struct ref_kind *ref_kind(int type); /* never NULL */
/* "fd 3", "mapping 7f00-7f10", "io_uring fixed file 0 (ring fd 5)". */
const char *ref_describe(const struct revoke_ref *r, char *buf, size_t size);

/* output.c (libsmartcols): returns 0, or -errno (write errors: ferror(stdout)). */
int print_table(const struct cli *cli, const struct revoke_report *rep);
int print_json(const struct revoke_report *rep);

/* messages.c */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* No report: name the paths that could not be looked up, and why. */
void report_lookup_failure(char *const *paths, size_t n, bool nofollow, bool mount, int err);
/* The same for paths looked up as process PID sees them (--ns PID). */
void report_ns_failure(char *const *paths, size_t n, pid_t pid, int err);
/* What was not revoked (or listed), per holder and per path; PATHS name the
 * targets when the report has none (the call timed out resolving them). */
void report_outcome(const struct cli *cli, const struct revoke_report *rep, int err,
		    char *const *paths, size_t npaths);
/* "timed out after 5.0 s stopping pid 123 (state D)" */
const char *timeout_text(const struct revoke_report *rep, char *buf, size_t size);
/* messages.c keeps stdout and stderr in order; revoke.c reports write errors. */
void flush_stdout(void);
extern int stdout_errno;
extern bool stdout_closed;

#endif
