/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table output (libsmartcols): one line per reference. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "cli.h"

struct row {
	const struct revoke_holder *h;
	const struct revoke_ref *r; /* NULL: a holder without references */
};

static int row_cmp(const void *a, const void *b, void *userdata)
{
	const struct revoke_report *rep = userdata;
	const struct row *x = a, *y = b;
	int c;

	/* Holders without references (nothing to show but their error) go last. */
	if (!x->r || !y->r) {
		if (x->r != y->r)
			return x->r ? -1 : 1;
	} else {
		c = strcmp(target_path(rep, x->r->target), target_path(rep, y->r->target));
		if (c)
			return c;
	}
	if (x->h->pid != y->h->pid)
		return x->h->pid < y->h->pid ? -1 : 1;
	if (!x->r || !y->r)
		return 0;
	if (x->r->type != y->r->type)
		return x->r->type < y->r->type ? -1 : 1;
	if (x->r->fd != y->r->fd)
		return x->r->fd < y->r->fd ? -1 : 1;
	if (x->r->start != y->r->start)
		return x->r->start < y->r->start ? -1 : 1;
	return 0;
}

/* The text of one cell into BUF (or a static string). */
static const char *cell(int col, const struct revoke_report *rep, const struct row *row, char *buf,
			size_t size)
{
	const struct revoke_holder *h = row->h;
	const struct revoke_ref *r = row->r;
	const struct revoke_target *t =
	    r && r->target < rep->ntargets ? &rep->targets[r->target] : NULL;
	const char *s;

	switch (col) {
	case COL_PATH:
		return r ? target_path(rep, r->target) : "";
	case COL_PID:
		snprintf(buf, size, "%d", (int)h->pid);
		return buf;
	case COL_USER:
		s = user_name(h->uid);
		if (s)
			return s;
		/* fall through */
	case COL_UID:
		snprintf(buf, size, "%u", (unsigned)h->uid);
		return buf;
	case COL_COMMAND:
		return h->comm;
	case COL_TYPE:
		s = r ? revoke_ref_type_name(r->type) : NULL;
		return s ? s : "";
	case COL_FD:
		if (!r || r->fd < 0)
			return "";
		snprintf(buf, size, "%d", r->fd);
		return buf;
	case COL_FLAGS:
		if (r && r->type == REVOKE_REF_FD)
			return open_flags_string(r->open_flags, r->fd_flags & FD_CLOEXEC, buf,
						 size);
		if (r && r->type == REVOKE_REF_MAP)
			return map_flags_string(r->prot, r->map_flags, buf, size);
		return "";
	case COL_RANGE:
		if (!r || r->type != REVOKE_REF_MAP)
			return "";
		snprintf(buf, size, "%" PRIx64 "-%" PRIx64, r->start, r->end);
		return buf;
	case COL_OFFSET:
		if (!r || (r->type != REVOKE_REF_FD && r->type != REVOKE_REF_MAP))
			return "";
		snprintf(buf, size, "%" PRIu64, r->offset);
		return buf;
	case COL_STATE:
		s = revoke_state_name(r ? r->state : h->state);
		return s ? s : "";
	case COL_ERROR:
		return r ? ref_error_string(h, r) : holder_error_string(h);
	case COL_DEV:
		if (!t)
			return "";
		snprintf(buf, size, "%u:%u", major(t->dev), minor(t->dev));
		return buf;
	case COL_INODE:
		if (!t)
			return "";
		snprintf(buf, size, "%ju", (uintmax_t)t->ino);
		return buf;
	}
	return "";
}

static int column_flags(int col)
{
	switch (col) {
	case COL_PID:
	case COL_UID:
	case COL_FD:
	case COL_OFFSET:
	case COL_INODE:
		return SCOLS_FL_RIGHT;
	case COL_ERROR:
		return SCOLS_FL_TRUNC;
	}
	return 0;
}

static size_t collect_rows(const struct revoke_report *rep, struct row *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = &rep->holders[i];

		if (h->nrefs == 0)
			rows[n++] = (struct row){h, NULL};
		for (size_t j = 0; j < h->nrefs; j++)
			rows[n++] = (struct row){h, &h->refs[j]};
	}
	return n;
}

/* Returns 0, or -errno (the caller names the failure). */
int print_table(const struct cli *cli, const struct revoke_report *rep)
{
	struct libscols_table *tb = NULL;
	struct row *rows = NULL;
	size_t nrows = 0;
	int r = -ENOMEM;

	for (size_t i = 0; i < rep->nholders; i++)
		nrows += rep->holders[i].nrefs ? rep->holders[i].nrefs : 1;
	rows = calloc(nrows ? nrows : 1, sizeof(*rows));
	if (!rows)
		goto out;
	nrows = collect_rows(rep, rows);
	qsort_r(rows, nrows, sizeof(*rows), row_cmp, (void *)rep);

	tb = scols_new_table();
	if (!tb)
		goto out;
	scols_table_enable_raw(tb, cli->raw);
	scols_table_enable_noheadings(tb, cli->noheadings);
	scols_table_set_stream(tb, stdout);

	for (size_t c = 0; c < cli->ncolumns; c++)
		if (!scols_table_new_column(tb, column_name(cli->columns[c]), 0,
					    column_flags(cli->columns[c])))
			goto out;

	for (size_t i = 0; i < nrows; i++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			goto out;
		for (size_t c = 0; c < cli->ncolumns; c++) {
			char buf[256];

			if (scols_line_set_data(
				ln, c, cell(cli->columns[c], rep, &rows[i], buf, sizeof(buf))) < 0)
				goto out;
		}
	}

	r = scols_print_table(tb);
	if (r > 0)
		r = -r;
out:
	scols_unref_table(tb);
	free(rows);
	return r;
}
