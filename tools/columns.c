/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The output columns: names, help, defaults, and -o parsing. */
#include <string.h>
#include <strings.h>

#include "cli.h"

static const struct {
	const char *name;
	const char *help;
} columns[COL_COUNT] = {
    [COL_PATH] = {"PATH", "the file being revoked, as given"},
    [COL_PID] = {"PID", "process ID of the holder"},
    [COL_USER] = {"USER", "user name of the holder (the number if it has none)"},
    [COL_UID] = {"UID", "real user ID of the holder"},
    [COL_COMMAND] = {"COMMAND", "command name of the holder"},
    [COL_TYPE] = {"TYPE", "reference type: fd, map, cwd, root, exe, uring, inflight"},
    [COL_FD] = {"FD", "descriptor (the ring for uring, the socket for inflight)"},
    [COL_FLAGS] = {"FLAGS", "open flags of a descriptor, protection of a mapping"},
    [COL_RANGE] = {"RANGE", "address range of a mapping (hex)"},
    [COL_OFFSET] = {"OFFSET", "file position of a descriptor, file offset of a mapping"},
    [COL_STATE] = {"STATE", "found, cut, kept, skipped, failed, unreachable"},
    [COL_ERROR] = {"ERROR", "why the reference was not cut"},
    [COL_DEV] = {"DEV", "device that holds the file (major:minor)"},
    [COL_INODE] = {"INODE", "inode number of the file"},
};

const char *column_name(int col)
{
	return col >= 0 && col < COL_COUNT ? columns[col].name : NULL;
}

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
		fprintf(out, " %8s  %s\n", columns[i].name, columns[i].help);
}

void columns_default(struct cli *cli)
{
	static const int list_cols[] = {COL_PATH, COL_PID, COL_USER,  COL_COMMAND,
					COL_TYPE, COL_FD,  COL_FLAGS, COL_RANGE};
	static const int revoke_extra[] = {COL_STATE, COL_ERROR};

	cli->ncolumns = 0;
	for (size_t i = 0; i < sizeof(list_cols) / sizeof(list_cols[0]); i++)
		cli->columns[cli->ncolumns++] = list_cols[i];
	if (!cli->list)
		for (size_t i = 0; i < sizeof(revoke_extra) / sizeof(revoke_extra[0]); i++)
			cli->columns[cli->ncolumns++] = revoke_extra[i];
}

int columns_parse(struct cli *cli, const char *list, const char **bad, size_t *badlen)
{
	const char *p = list;

	if (*p == '+') {
		p++;
		if (cli->ncolumns == 0)
			columns_default(cli);
	} else
		cli->ncolumns = 0;

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
