/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The report through libsmartcols: the table (one line per reference) and
 * the --json document. libsmartcols writes one table per document,
 * {"NAME": [lines]}, every line with the same columns; the report also has
 * report-wide fields and its targets. So the document is three tables (the
 * report-wide fields as a table of one line, the targets, the holders as a
 * tree whose children are their references), each printed by libsmartcols
 * into memory, joined here by their outermost punctuation only: every value,
 * its JSON type and its escaping come from libsmartcols. HACKING.md, "The
 * command's JSON", says why.
 */
#include <errno.h>
#include <libsmartcols.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- lines --------------------------------------------------------------- */

/* A reference's line (R) or a holder's own line (R NULL). */
struct row {
	const struct revoke_holder *h;
	const struct revoke_ref *r;
};

static int ref_cmp(const struct revoke_report *rep, const struct revoke_ref *x,
		   const struct revoke_ref *y)
{
	int c = strcmp(target_path(rep, x->target), target_path(rep, y->target));

	if (c)
		return c;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The table: by path, then pid; holders without references last. */
static int row_cmp(const void *a, const void *b, void *userdata)
{
	const struct revoke_report *rep = userdata;
	const struct row *x = a, *y = b;

	if (!x->r != !y->r)
		return x->r ? -1 : 1;
	if (x->r) {
		int c = strcmp(target_path(rep, x->r->target), target_path(rep, y->r->target));

		if (c)
			return c;
	}
	if (x->h->pid != y->h->pid)
		return x->h->pid < y->h->pid ? -1 : 1;
	return x->r ? ref_cmp(rep, x->r, y->r) : 0;
}

/* The JSON tree: holders by pid, each followed by its references. */
static int tree_cmp(const void *a, const void *b, void *userdata)
{
	const struct row *x = a, *y = b;

	if (x->h->pid != y->h->pid)
		return x->h->pid < y->h->pid ? -1 : 1;
	if (!x->r || !y->r)
		return !x->r ? (!y->r ? 0 : -1) : 1;
	return ref_cmp(userdata, x->r, y->r);
}

/* Every reference as a row, plus a row of its own for every holder when
 * HOLDER_ROWS (the tree), else only for those without references. */
static struct row *collect_rows(const struct revoke_report *rep, bool holder_rows, size_t *ret_n)
{
	struct row *rows;
	size_t n = 0;

	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		n += h->nrefs + (holder_rows || h->nrefs == 0);
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	n = 0;
	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		if (holder_rows || h->nrefs == 0)
			rows[n++] = (struct row){h, NULL};
		for (size_t j = 0; j < h->nrefs; j++)
			rows[n++] = (struct row){h, revoke_report_ref(rep, h, j)};
	}
	qsort_r(rows, n, sizeof(*rows), holder_rows ? tree_cmp : row_cmp, (void *)rep);
	*ret_n = n;
	return rows;
}

/* ---- tables ----------------------------------------------------------- */

struct scols_out {
	struct libscols_table *tb;
	bool json;
	char *fixbuf; /* utf8_valid()'s */
};

static int out_init(struct scols_out *o, const char *name, bool json)
{
	*o = (struct scols_out){.tb = scols_new_table(), .json = json};
	if (!o->tb)
		return -ENOMEM;
	if (json) {
		scols_table_enable_json(o->tb, 1);
		if (scols_table_set_name(o->tb, name) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void out_done(struct scols_out *o)
{
	scols_unref_table(o->tb);
	free(o->fixbuf);
}

static int out_column(struct scols_out *o, const struct column *col, int flags)
{
	struct libscols_column *cl =
	    scols_table_new_column(o->tb, col->name, 0, col->flags | flags);

	if (!cl)
		return -ENOMEM;
	if (o->json && scols_column_set_json_type(cl, col->json_type) < 0)
		return -ENOMEM;
	return 0;
}

/* Fill cell N of LN with COL's text for C; none when SKIP. */
static int out_cell(struct scols_out *o, struct libscols_line *ln, size_t n,
		    const struct column *col, const struct cell *c, bool skip)
{
	char buf[128];
	const char *s = skip ? NULL : col->get(c, buf, sizeof(buf));

	/* libsmartcols 2.38 escapes quotes, backslashes and control
	 * characters but copies other bytes as they are: JSON must be UTF-8. */
	if (s && o->json && !(s = utf8_valid(s, &o->fixbuf)))
		return -ENOMEM;
	return scols_line_set_data(ln, n, s) < 0 ? -ENOMEM : 0;
}

/* Print O's table into *RET (malloc'ed). */
static int out_render(struct scols_out *o, char **ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return -errno;
	scols_table_set_stream(o->tb, f);
	r = scols_print_table(o->tb);
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}

int print_table(const struct cli *cli, const struct revoke_report *rep)
{
	struct scols_out o;
	struct row *rows = NULL;
	size_t nrows = 0;
	int r;

	r = out_init(&o, NULL, false);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	rows = collect_rows(rep, false, &nrows);
	if (!rows)
		goto out;
	scols_table_enable_raw(o.tb, cli->raw);
	scols_table_enable_noheadings(o.tb, cli->noheadings);
	scols_table_set_stream(o.tb, stdout);
	for (size_t c = 0; c < cli->ncolumns; c++)
		if ((r = out_column(&o, column_info(cli->columns[c]), 0)) < 0)
			goto out;
	for (size_t i = 0; i < nrows; i++) {
		struct libscols_line *ln = scols_table_new_line(o.tb, NULL);
		struct cell cell = {rep, rows[i].h, rows[i].r, 0};

		if (!ln) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t c = 0; c < cli->ncolumns; c++)
			if ((r = out_cell(&o, ln, c, column_info(cli->columns[c]), &cell, false)) <
			    0)
				goto out;
	}
	r = scols_print_table(o.tb);
	if (r > 0)
		r = -r;
out:
	out_done(&o);
	free(rows);
	return r;
}

/* ---- the JSON document ---------------------------------------------------- */

/* The holders: a tree, references as the children of their holder. */
static int render_holders(const struct revoke_report *rep, char **ret)
{
	struct libscols_line *parent = NULL;
	struct scols_out o;
	struct row *rows = NULL;
	size_t nrows = 0;
	int r;

	r = out_init(&o, "holders", true);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	rows = collect_rows(rep, true, &nrows);
	if (!rows)
		goto out;
	/* A tree needs a tree column; in JSON it only nests the lines. */
	for (int c = 0; c < COL_COUNT; c++)
		if ((column_info(c)->where & COLW_JSON) &&
		    (r = out_column(&o, column_info(c), c == COL_PID ? SCOLS_FL_TREE : 0)) < 0)
			goto out;
	for (size_t i = 0; i < nrows; i++) {
		struct libscols_line *ln = scols_table_new_line(o.tb, rows[i].r ? parent : NULL);
		struct cell cell = {rep, rows[i].h, rows[i].r, 0};
		size_t n = 0;

		if (!ln) {
			r = -ENOMEM;
			goto out;
		}
		if (!rows[i].r)
			parent = ln;
		for (int c = 0; c < COL_COUNT; c++) {
			const struct column *col = column_info(c);

			if (!(col->where & COLW_JSON))
				continue;
			r = out_cell(&o, ln, n++, col, &cell,
				     rows[i].r && (col->where & COLW_HOLDER));
			if (r < 0)
				goto out;
		}
	}
	r = out_render(&o, ret);
out:
	out_done(&o);
	free(rows);
	return r;
}

/* A table of one line per target, or of one line of NCOLS report-wide fields. */
static int render_flat(const struct revoke_report *rep, const char *name, const struct column *cols,
		       size_t ncols, size_t nlines, char **ret)
{
	struct scols_out o;
	int r;

	r = out_init(&o, name, true);
	for (size_t c = 0; r >= 0 && c < ncols; c++)
		r = out_column(&o, &cols[c], 0);
	for (size_t i = 0; r >= 0 && i < nlines; i++) {
		struct libscols_line *ln = scols_table_new_line(o.tb, NULL);
		struct cell cell = {.rep = rep, .target = i};

		r = ln ? 0 : -ENOMEM;
		for (size_t c = 0; r >= 0 && c < ncols; c++)
			r = out_cell(&o, ln, c, &cols[c], &cell, false);
	}
	if (r >= 0)
		r = out_render(&o, ret);
	out_done(&o);
	return r;
}

/* The array of a libsmartcols document {"NAME": [...]}: from its first '['
 * to its last ']'. Both are structural: NAME has no bracket, nothing follows
 * the array but whitespace and the closing brace. */
static int array_of(char *doc, const char **ret, size_t *ret_len)
{
	char *open = strchr(doc, '['), *close = strrchr(doc, ']');

	if (!open || !close || close < open)
		return -EPROTO;
	*ret = open;
	*ret_len = (size_t)(close - open) + 1;
	return 0;
}

/* The members of the one object in that array (between its braces). */
static int members_of(char *doc, const char **ret, size_t *ret_len)
{
	const char *a;
	size_t len;
	char *open, *close;
	int r = array_of(doc, &a, &len);

	if (r < 0)
		return r;
	open = memchr(a, '{', len);
	close = NULL;
	for (size_t i = len; i > 0 && !close; i--)
		if (a[i - 1] == '}')
			close = (char *)&a[i - 1];
	if (!open || !close || close < open)
		return -EPROTO;
	*ret = open + 1;
	*ret_len = (size_t)(close - open) - 1;
	return 0;
}

/* The members, one a line (libsmartcols escapes newlines in values), each
 * indented as a member of the document. */
static void put_members(const char *s, size_t len, const char *indent, FILE *out)
{
	const char *end = s + len;
	bool first = true;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;

		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (s < e) {
			fprintf(out, "%s%s%.*s", first ? "" : "\n", indent, (int)(e - s), s);
			first = false;
		}
		s = nl ? nl + 1 : end;
	}
}

int print_json(const struct revoke_report *rep)
{
	char *report = NULL, *steps = NULL, *targets = NULL, *holders = NULL;
	const char *m, *s, *t, *h;
	size_t mlen, slen, tlen, hlen;
	int r;

	r = render_flat(rep, "report", report_columns, report_ncolumns, 1, &report);
	if (r >= 0)
		r = render_flat(rep, "steps", step_columns, step_ncolumns, 1, &steps);
	if (r >= 0)
		r = render_flat(rep, "targets", target_columns, target_ncolumns, rep->ntargets,
				&targets);
	if (r >= 0)
		r = render_holders(rep, &holders);
	if (r >= 0)
		r = members_of(report, &m, &mlen);
	if (r >= 0)
		r = members_of(steps, &s, &slen);
	if (r >= 0)
		r = array_of(targets, &t, &tlen);
	if (r >= 0)
		r = array_of(holders, &h, &hlen);
	if (r >= 0) {
		fputs("{\n", stdout);
		put_members(m, mlen, "   ", stdout);
		fputs(",\n   \"steps_ns\": {\n", stdout);
		put_members(s, slen, "      ", stdout);
		printf("\n   },\n   \"targets\": %.*s,\n   \"holders\": %.*s\n}\n", (int)tlen, t,
		       (int)hlen, h);
	}
	free(report);
	free(steps);
	free(targets);
	free(holders);
	return r; /* write errors: the caller checks ferror(stdout) */
}
