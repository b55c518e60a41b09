/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared declarations of the revoke command's files (tools/). */
#ifndef REVOKE_CLI_H
#define REVOKE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "revoke.h"

/* Output columns, in the order --help lists them. */
enum {
	COL_PATH,
	COL_PID,
	COL_USER,
	COL_UID,
	COL_COMMAND,
	COL_TYPE,
	COL_FD,
	COL_FLAGS,
	COL_RANGE,
	COL_OFFSET,
	COL_STATE,
	COL_ERROR,
	COL_DEV,
	COL_INODE,
	COL_COUNT,
};

#define MAX_COLUMNS 64

struct cli {
	bool list, json, raw, noheadings, quiet;
	int columns[MAX_COLUMNS];
	size_t ncolumns;
};

/* columns.c */
int column_by_name(const char *name, size_t len);
const char *column_name(int col);
void columns_help(FILE *out);
/* Parse -o LIST ("+LIST" appends to the current columns). On a bad name,
 * returns -1 and points *bad and *badlen at it; -2 for more than MAX_COLUMNS. */
int columns_parse(struct cli *cli, const char *list, const char **bad, size_t *badlen);
void columns_default(struct cli *cli);

/* format.c: text for fields, shared by the table, JSON and messages. */
const char *user_name(uid_t uid); /* cached; NULL when the uid has no name */
/* "rw,cloexec,append", "path"; BUF needs 128 bytes. */
const char *open_flags_string(int open_flags, bool cloexec, char *buf, size_t size);
/* "rw-s"; BUF needs 5 bytes. */
const char *map_flags_string(int prot, int map_flags, char *buf, size_t size);
/* The holder's error as text ("" when none). */
const char *holder_error_string(const struct revoke_holder *h);
/* The text for a reference's ERROR column ("" when none). */
const char *ref_error_string(const struct revoke_holder *h, const struct revoke_ref *r);
/* COMMAND with control characters and invalid bytes as \xHH, for messages. */
const char *comm_safe(const char *comm, char *buf, size_t size);
const char *target_path(const struct revoke_report *rep, unsigned int target);

/* table.c */
int print_table(const struct cli *cli, const struct revoke_report *rep);

/* json.c */
int print_json(FILE *out, const struct revoke_report *rep);

#endif
