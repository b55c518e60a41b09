/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helper's wire format (helper-proto.h): pure functions over bytes. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "helper/proto.h"

static const char req_magic[4] = {'R', 'V', 'K', 'Q'};
static const char rep_magic[4] = {'R', 'V', 'K', 'R'};

static void put_header(uint8_t *p, const char magic[4], uint32_t body_len)
{
	uint16_t version = RV_HELPER_VERSION, zero = 0;

	memcpy(p, magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &zero, 2);
	memcpy(p + 8, &body_len, 4);
}

static int get_header(const uint8_t *p, size_t len, const char magic[4], uint32_t *ret_body_len)
{
	uint16_t version, zero;

	if (len < RV_HELPER_HEADER_SIZE || memcmp(p, magic, 4) != 0)
		return -EBADMSG;
	memcpy(&version, p + 4, 2);
	memcpy(&zero, p + 6, 2);
	if (version != RV_HELPER_VERSION)
		return -EPROTONOSUPPORT;
	if (zero != 0)
		return -EBADMSG;
	memcpy(ret_body_len, p + 8, 4);
	return 0;
}

static bool has_selection(const struct rv_helper_req *req)
{
	return req->npids || req->nuids || req->cgroup[0];
}

size_t rv_helper_encode_request(const struct rv_helper_req *req, uint8_t buf[RV_HELPER_REQ_MAX])
{
	uint32_t body[4] = {req->flags, req->timeout_ms, req->nfds, req->keep};
	size_t len = RV_HELPER_REQ_SIZE;

	memcpy(buf + RV_HELPER_HEADER_SIZE, body, sizeof(body));
	if (has_selection(req)) {
		uint32_t sel[3] = {req->npids, req->nuids, (uint32_t)strlen(req->cgroup)};

		memcpy(buf + len, sel, sizeof(sel));
		len += sizeof(sel);
		memcpy(buf + len, req->pids, req->npids * sizeof(int32_t));
		len += req->npids * sizeof(int32_t);
		memcpy(buf + len, req->uids, req->nuids * sizeof(uint32_t));
		len += req->nuids * sizeof(uint32_t);
		memcpy(buf + len, req->cgroup, sel[2]);
		len += sel[2];
	}
	put_header(buf, req_magic, (uint32_t)(len - RV_HELPER_HEADER_SIZE));
	return len;
}

/* The selection part of a request (BUF, LEN bytes after the fixed body). */
static int parse_selection(const uint8_t *buf, size_t len, struct rv_helper_req *req)
{
	uint32_t sel[3];

	if (len < sizeof(sel))
		return -EBADMSG;
	memcpy(sel, buf, sizeof(sel));
	if (sel[0] > RV_SELECT_MAX || sel[1] > RV_SELECT_MAX || sel[2] > RV_HELPER_MAX_CGROUP ||
	    (!sel[0] && !sel[1] && !sel[2]) ||
	    len != sizeof(sel) + 4 * (size_t)sel[0] + 4 * (size_t)sel[1] + sel[2])
		return -EBADMSG;
	buf += sizeof(sel);
	req->npids = sel[0];
	req->nuids = sel[1];
	memcpy(req->pids, buf, 4 * (size_t)sel[0]);
	buf += 4 * (size_t)sel[0];
	memcpy(req->uids, buf, 4 * (size_t)sel[1]);
	buf += 4 * (size_t)sel[1];
	memcpy(req->cgroup, buf, sel[2]);
	req->cgroup[sel[2]] = '\0';
	if (strlen(req->cgroup) != sel[2])
		return -EBADMSG; /* a NUL inside */
	return 0;
}

int rv_helper_parse_request(const void *buf, size_t len, struct rv_helper_req *ret)
{
	struct rv_helper_req req = {0};
	uint32_t body_len, body[4];
	int r;

	r = get_header(buf, len, req_magic, &body_len);
	if (r < 0)
		return r;
	if (body_len < RV_HELPER_REQ_BODY || len != RV_HELPER_HEADER_SIZE + (size_t)body_len ||
	    len > RV_HELPER_REQ_MAX)
		return -EBADMSG;
	memcpy(body, (const uint8_t *)buf + RV_HELPER_HEADER_SIZE, sizeof(body));
	if (body[2] < 1 || body[2] > RV_HELPER_MAX_FDS)
		return -EBADMSG;
	if (body[3] != RV_HELPER_KEEP_NONE && body[3] >= body[2])
		return -EBADMSG;
	req.flags = body[0];
	req.timeout_ms = body[1];
	req.nfds = body[2];
	req.keep = body[3];
	if (len > RV_HELPER_REQ_SIZE) {
		r = parse_selection((const uint8_t *)buf + RV_HELPER_REQ_SIZE,
				    len - RV_HELPER_REQ_SIZE, &req);
		if (r < 0)
			return r;
	}
	*ret = req;
	return 0;
}

int rv_helper_parse_reply_header(const void *buf, size_t len, size_t *ret_body_len)
{
	uint32_t body_len;
	int r;

	r = get_header(buf, len, rep_magic, &body_len);
	if (r < 0)
		return r;
	if (body_len > RV_HELPER_MAX_REPLY)
		return -EBADMSG;
	*ret_body_len = body_len;
	return 0;
}

/* ---- writing ------------------------------------------------------------ */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

static void put(struct wbuf *w, const void *data, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		uint8_t *p;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->failed = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}
static void put_i32(struct wbuf *w, int32_t v)
{
	put(w, &v, sizeof(v));
}
static void put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}
static void put_str(struct wbuf *w, const char *s, size_t max)
{
	size_t n = s ? strnlen(s, max) : 0;

	put_u32(w, (uint32_t)n);
	put(w, s, n);
}

int rv_helper_encode_reply(int result, const struct revoke_report *rep, uint8_t **ret_buf,
			   size_t *ret_len)
{
	struct wbuf w = {0};
	uint8_t header[RV_HELPER_HEADER_SIZE] = {0};

	put(&w, header, sizeof(header)); /* filled in at the end */
	put_i32(&w, result);
	put_u32(&w, rep != NULL);
	if (rep) {
		put_i32(&w, rep->engine);
		put_i32(&w, rep->discovery);
		put_i32(&w, rep->error);
		put_i32(&w, rep->failed_phase);
		put_i32(&w, rep->failed_pid);
		put_i32(&w, rep->helper_pid);
		put_u64(&w, rep->elapsed_ns);
		put_u64(&w, rep->max_stopped_ns);
		put_u64(&w, rep->timeout_ns);
		put_u64(&w, rep->nuninspected);
		put_u64(&w, rep->nunmounted);
		put_str(&w, rep->failed_detail, sizeof(rep->failed_detail));
		put_u32(&w, (uint32_t)rep->ntargets);
		for (size_t i = 0; i < rep->ntargets; i++) {
			const struct revoke_target *t = &rep->targets[i];

			put_str(&w, t->path, 65536);
			put_u64(&w, t->dev);
			put_u64(&w, t->ino);
			put_u32(&w, t->mode);
			put_u32(&w, t->uid);
		}
		put_u32(&w, (uint32_t)rep->nholders);
		for (size_t i = 0; i < rep->nholders; i++) {
			/* The engine's own report: its structs are ours. */
			const struct revoke_holder *h = &rep->holders[i];

			put_i32(&w, h->pid);
			put_u32(&w, h->uid);
			put_str(&w, h->comm, sizeof(h->comm));
			put_i32(&w, h->state);
			put_i32(&w, h->error);
			put_str(&w, h->reason, sizeof(h->reason));
			put_u64(&w, h->stopped_ns);
			put_u32(&w, (uint32_t)h->nrefs);
			for (size_t j = 0; j < h->nrefs; j++) {
				const struct revoke_ref *f = &h->refs[j];

				put_i32(&w, f->type);
				put_i32(&w, f->state);
				put_i32(&w, f->error);
				put_u32(&w, f->target);
				put_i32(&w, f->fd);
				put_i32(&w, f->fd_flags);
				put_i32(&w, f->open_flags);
				put_i32(&w, f->prot);
				put_i32(&w, f->map_flags);
				put_u64(&w, f->start);
				put_u64(&w, f->end);
				put_u64(&w, f->offset);
			}
		}
	}
	if (w.failed || w.len - RV_HELPER_HEADER_SIZE > RV_HELPER_MAX_REPLY) {
		free(w.p);
		return w.failed ? -ENOMEM : -E2BIG;
	}
	put_header(w.p, rep_magic, (uint32_t)(w.len - RV_HELPER_HEADER_SIZE));
	*ret_buf = w.p;
	*ret_len = w.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rbuf {
	const uint8_t *p, *end;
	bool bad;
};

static void get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

static uint32_t get_u32(struct rbuf *r)
{
	uint32_t v;
	get(r, &v, sizeof(v));
	return v;
}
static int32_t get_i32(struct rbuf *r)
{
	int32_t v;
	get(r, &v, sizeof(v));
	return v;
}
static uint64_t get_u64(struct rbuf *r)
{
	uint64_t v;
	get(r, &v, sizeof(v));
	return v;
}

/* A string into a fixed field of SIZE bytes: it must fit with its NUL and
 * have none inside. */
static void get_str_into(struct rbuf *r, char *out, size_t size)
{
	uint32_t n = get_u32(r);

	if (r->bad || n >= size || (size_t)(r->end - r->p) < n || memchr(r->p, 0, n)) {
		r->bad = true;
		return;
	}
	memcpy(out, r->p, n);
	out[n] = 0;
	r->p += n;
}

static char *get_str_dup(struct rbuf *r, size_t max)
{
	uint32_t n = get_u32(r);
	char *s;

	if (r->bad || n > max || (size_t)(r->end - r->p) < n || memchr(r->p, 0, n)) {
		r->bad = true;
		return NULL;
	}
	s = strndup((const char *)r->p, n);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return s;
}

/* A count of elements at least MIN_SIZE bytes each on the wire: never more
 * than what is left could hold, so a hostile count allocates nothing big. */
static size_t get_count(struct rbuf *r, size_t min_size)
{
	uint32_t n = get_u32(r);

	if (r->bad || n > (size_t)(r->end - r->p) / min_size) {
		r->bad = true;
		return 0;
	}
	return n;
}

#define WIRE_TARGET_MIN (4 + 8 + 8 + 4 + 4)
#define WIRE_HOLDER_MIN (4 + 4 + 4 + 4 + 4 + 4 + 8 + 4)
#define WIRE_REF_MIN	(9 * 4 + 3 * 8)

static struct revoke_report *parse_report(struct rbuf *r)
{
	struct revoke_report *rep = calloc(1, sizeof(*rep));
	size_t n;

	if (!rep)
		return NULL;
	rep->sz = sizeof(*rep);
	rep->holder_size = sizeof(struct revoke_holder);
	rep->ref_size = sizeof(struct revoke_ref);
	rep->engine = get_i32(r);
	rep->discovery = get_i32(r);
	rep->error = get_i32(r);
	rep->failed_phase = get_i32(r);
	rep->failed_pid = get_i32(r);
	rep->helper_pid = get_i32(r);
	rep->elapsed_ns = get_u64(r);
	rep->max_stopped_ns = get_u64(r);
	rep->timeout_ns = get_u64(r);
	rep->nuninspected = get_u64(r);
	rep->nunmounted = get_u64(r);
	get_str_into(r, rep->failed_detail, sizeof(rep->failed_detail));
	if (rep->error < 0 || rep->engine < 0 || rep->discovery < 0 || rep->failed_phase < 0)
		r->bad = true;

	n = get_count(r, WIRE_TARGET_MIN);
	rep->targets = calloc(n ? n : 1, sizeof(*rep->targets));
	if (!rep->targets)
		r->bad = true;
	for (size_t i = 0; i < n && !r->bad; i++) {
		struct revoke_target *t = &rep->targets[i];

		t->path = get_str_dup(r, 65536);
		rep->ntargets = i + 1; /* owns the path from here */
		t->dev = (dev_t)get_u64(r);
		t->ino = (ino_t)get_u64(r);
		t->mode = get_u32(r);
		t->uid = get_u32(r);
	}

	n = get_count(r, WIRE_HOLDER_MIN);
	rep->holders = r->bad ? NULL : calloc(n ? n : 1, sizeof(*rep->holders));
	if (!rep->holders)
		r->bad = true;
	for (size_t i = 0; i < n && !r->bad; i++) {
		struct revoke_holder *h = &rep->holders[i];
		size_t nrefs;

		rep->nholders = i + 1;
		h->pid = get_i32(r);
		h->uid = get_u32(r);
		get_str_into(r, h->comm, sizeof(h->comm));
		h->state = get_i32(r);
		h->error = get_i32(r);
		get_str_into(r, h->reason, sizeof(h->reason));
		h->stopped_ns = get_u64(r);
		nrefs = get_count(r, WIRE_REF_MIN);
		if (r->bad)
			break;
		h->refs = calloc(nrefs ? nrefs : 1, sizeof(*h->refs));
		if (!h->refs) {
			r->bad = true;
			break;
		}
		h->nrefs = nrefs;
		for (size_t j = 0; j < nrefs && !r->bad; j++) {
			struct revoke_ref *f = &h->refs[j];

			f->type = get_i32(r);
			f->state = get_i32(r);
			f->error = get_i32(r);
			f->target = get_u32(r);
			f->fd = get_i32(r);
			f->fd_flags = get_i32(r);
			f->open_flags = get_i32(r);
			f->prot = get_i32(r);
			f->map_flags = get_i32(r);
			f->start = get_u64(r);
			f->end = get_u64(r);
			f->offset = get_u64(r);
			/* Every reference names one of the report's targets:
			 * callers index targets[] with it. */
			if (f->target >= rep->ntargets)
				r->bad = true;
		}
		if (h->error < 0)
			r->bad = true;
	}
	if (r->bad) {
		rv_report_destroy(rep);
		return NULL;
	}
	return rep;
}

int rv_helper_parse_reply(const void *buf, size_t len, int *ret_result,
			  struct revoke_report **ret_report)
{
	struct rbuf r;
	struct revoke_report *rep = NULL;
	size_t body_len;
	int32_t result;
	uint32_t has_report;
	int k;

	k = rv_helper_parse_reply_header(buf, len, &body_len);
	if (k < 0)
		return k;
	if (len != RV_HELPER_HEADER_SIZE + body_len)
		return -EBADMSG;
	r = (struct rbuf){.p = (const uint8_t *)buf + RV_HELPER_HEADER_SIZE,
			  .end = (const uint8_t *)buf + len};
	result = get_i32(&r);
	has_report = get_u32(&r);
	if (r.bad || result < 0 || result > 4095 || has_report > 1)
		return -EBADMSG;
	if (has_report) {
		rep = parse_report(&r);
		if (!rep)
			return -EBADMSG;
	}
	/* Bytes after the report: not a reply this version wrote. */
	if (r.p != r.end) {
		rv_report_destroy(rep);
		return -EBADMSG;
	}
	*ret_result = result;
	*ret_report = rep;
	return 0;
}
