/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The --json document: the whole report, nested (targets, holders, their
 * references). Written by a small emitter rather than libsmartcols because
 * the document is not a table: it has top-level fields and two levels of
 * arrays. Strings are escaped for any bytes: command names and paths can
 * hold quotes, backslashes, control characters and invalid UTF-8 (each
 * invalid byte becomes U+FFFD).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "cli.h"

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool has_members[JSON_MAX_DEPTH];
};

/* Length of the valid UTF-8 sequence at S (1-4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff)
		return 0;
	return n;
}

static void json_put_string(struct json *j, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	putc('"', j->f);
	while (*s) {
		size_t n;

		switch (*s) {
		case '"':
			fputs("\\\"", j->f);
			s++;
			continue;
		case '\\':
			fputs("\\\\", j->f);
			s++;
			continue;
		case '\n':
			fputs("\\n", j->f);
			s++;
			continue;
		case '\t':
			fputs("\\t", j->f);
			s++;
			continue;
		case '\r':
			fputs("\\r", j->f);
			s++;
			continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(j->f, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", j->f);
			s++;
			continue;
		}
		fwrite(s, 1, n, j->f);
		s += n;
	}
	putc('"', j->f);
}

/* Separator, indentation and key before a value (KEY NULL in arrays). */
static void json_prefix(struct json *j, const char *key)
{
	if (j->depth > 0) {
		fputs(j->has_members[j->depth] ? ",\n" : "\n", j->f);
		j->has_members[j->depth] = true;
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	if (key) {
		json_put_string(j, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_prefix(j, key);
	putc(c, j->f);
	j->depth++; /* the document nests 4 deep, well under JSON_MAX_DEPTH */
	j->has_members[j->depth] = false;
}

static void json_close(struct json *j, char c)
{
	bool members = j->has_members[j->depth];

	j->depth--;
	if (members)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	putc(c, j->f);
}

static void json_string(struct json *j, const char *key, const char *value)
{
	json_prefix(j, key);
	if (value)
		json_put_string(j, value);
	else
		fputs("null", j->f);
}

/* The string, or null when it is empty. */
static void json_string_or_null(struct json *j, const char *key, const char *value)
{
	json_string(j, key, value && value[0] ? value : NULL);
}

static void json_uint(struct json *j, const char *key, uint64_t value)
{
	json_prefix(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

static void json_int(struct json *j, const char *key, int64_t value)
{
	json_prefix(j, key);
	fprintf(j->f, "%" PRId64, value);
}

static void json_bool(struct json *j, const char *key, bool value)
{
	json_prefix(j, key);
	fputs(value ? "true" : "false", j->f);
}

static void json_null(struct json *j, const char *key)
{
	json_prefix(j, key);
	fputs("null", j->f);
}

static void json_errno(struct json *j, const char *key, int error)
{
	json_string(j, key, error ? strerror(error) : NULL);
}

static void print_ref(struct json *j, const struct revoke_report *rep, const struct revoke_ref *r)
{
	bool is_fd = r->type == REVOKE_REF_FD, is_map = r->type == REVOKE_REF_MAP;
	char buf[128];

	json_open(j, NULL, '{');
	json_string(j, "path", target_path(rep, r->target));
	json_string(j, "type", revoke_ref_type_name(r->type));
	if (r->fd >= 0)
		json_int(j, "fd", r->fd);
	else
		json_null(j, "fd");
	if (is_fd) {
		json_bool(j, "cloexec", r->fd_flags & FD_CLOEXEC);
		json_string(j, "open_flags",
			    open_flags_string(r->open_flags, false, buf, sizeof(buf)));
	} else {
		json_null(j, "cloexec");
		json_null(j, "open_flags");
	}
	if (is_map) {
		json_uint(j, "start", r->start);
		json_uint(j, "end", r->end);
	} else {
		json_null(j, "start");
		json_null(j, "end");
	}
	if (is_fd || is_map)
		json_uint(j, "offset", r->offset);
	else
		json_null(j, "offset");
	if (is_map) {
		snprintf(buf, sizeof(buf), "%c%c%c", r->prot & PROT_READ ? 'r' : '-',
			 r->prot & PROT_WRITE ? 'w' : '-', r->prot & PROT_EXEC ? 'x' : '-');
		json_string(j, "prot", buf);
		json_bool(j, "shared", r->map_flags & MAP_SHARED);
	} else {
		json_null(j, "prot");
		json_null(j, "shared");
	}
	json_string(j, "state", revoke_state_name(r->state));
	json_errno(j, "error", r->error);
	json_close(j, '}');
}

static void print_holder(struct json *j, const struct revoke_report *rep,
			 const struct revoke_holder *h)
{
	const char *user = user_name(h->uid);

	json_open(j, NULL, '{');
	json_int(j, "pid", h->pid);
	json_uint(j, "uid", h->uid);
	json_string(j, "user", user);
	json_string(j, "command", h->comm);
	json_string(j, "state", revoke_state_name(h->state));
	json_errno(j, "error", h->error);
	json_string_or_null(j, "reason", h->reason);
	json_uint(j, "stopped_ns", h->stopped_ns);
	json_open(j, "refs", '[');
	for (size_t i = 0; i < h->nrefs; i++)
		print_ref(j, rep, &h->refs[i]);
	json_close(j, ']');
	json_close(j, '}');
}

static int holder_cmp(const void *a, const void *b)
{
	const struct revoke_holder *x = *(const struct revoke_holder *const *)a;
	const struct revoke_holder *y = *(const struct revoke_holder *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Returns 0, or -ENOMEM. */
int print_json(FILE *out, const struct revoke_report *rep)
{
	const struct revoke_holder **order;
	struct json j = {.f = out};
	char buf[64];

	order = calloc(rep->nholders ? rep->nholders : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < rep->nholders; i++)
		order[i] = &rep->holders[i];
	qsort(order, rep->nholders, sizeof(*order), holder_cmp);

	json_open(&j, NULL, '{');
	json_string(&j, "engine", revoke_engine_name(rep->engine));
	json_string(&j, "discovery", revoke_discovery_name(rep->discovery));
	json_errno(&j, "error", rep->error);
	json_uint(&j, "elapsed_ns", rep->elapsed_ns);
	json_uint(&j, "max_stopped_ns", rep->max_stopped_ns);

	json_open(&j, "targets", '[');
	for (size_t i = 0; i < rep->ntargets; i++) {
		const struct revoke_target *t = &rep->targets[i];

		json_open(&j, NULL, '{');
		json_string(&j, "path", t->path ? t->path : "");
		snprintf(buf, sizeof(buf), "%u:%u", major(t->dev), minor(t->dev));
		json_string(&j, "dev", buf);
		json_uint(&j, "ino", t->ino);
		json_uint(&j, "mode", t->mode);
		json_uint(&j, "uid", t->uid);
		json_close(&j, '}');
	}
	json_close(&j, ']');

	json_open(&j, "holders", '[');
	for (size_t i = 0; i < rep->nholders; i++)
		print_holder(&j, rep, order[i]);
	json_close(&j, ']');
	json_close(&j, '}');
	putc('\n', out);
	free(order);
	return 0; /* write errors: the caller checks ferror(OUT) */
}
