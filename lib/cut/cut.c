/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cut: what each holder runs (one program for the stub, tracee/run.c),
 * or what the caller does to itself.
 *
 * The ops of each kind of reference: ops.c; the dead descriptor: ops.c.
 *
 * A holder's program makes the memfd and the O_PATH descriptor first, so a
 * failure there changes nothing; then one op per reference; then it closes
 * what it made.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/io_uring.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cut/cut.h"

/* One holder's program: the ops that cut refs [from, h->pub.nrefs), as
 * many as fit; *RET_NEXT where the next program starts. OPS[i] gets the op
 * of ref i (or -1). */
static int build(struct rv_holder *h, const struct rv_dead_dir *dd, size_t from,
		 struct rv_prog **ret, size_t *ret_next, int *ops, struct rv_room *room)
{
	struct rv_cut c = {.p = rv_prog_new(),
			   .raise_op = -1,
			   .orig_off = -1,
			   .restore_op = -1,
			   .memfd_op = -1,
			   .dead_op = -1,
			   .dd = dd,
			   .dd_how = h->dead_dir_how,
			   .pidfd_op = -1,
			   .ddir_op = -1,
			   .cwd_op = -1};
	bool dirs = false, root = false;
	size_t i;
	int r = 0;

	if (!c.p)
		return -ENOMEM;
	/* What can fail in the holder comes before the first cut op. */
	for (i = from; i < h->pub.nrefs; i++) {
		const struct revoke_ref *ref = &h->pub.refs[i];

		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		c.has_cwd |= rv_refkind_of(ref)->dir == RV_DIR_CWD;
		root |= rv_refkind_of(ref)->dir == RV_DIR_ROOT;
		dirs |= rv_refkind_of(ref)->dir != RV_DIR_NONE;
	}
	if (dirs)
		r = rv_cut_need_dead_dir(&c);
	if (r >= 0 && root)
		r = rv_cut_need_cwd_saved(&c);
	if (r < 0) {
		rv_prog_free(c.p);
		return r;
	}
	for (i = from; i < h->pub.nrefs; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];
		const struct rv_refkind *k = rv_refkind(ref->type);

		ops[i] = -1;
		if (ref->state != REVOKE_STATE_FOUND)
			continue;
		if (!k || !k->add_cut) {
			/* The engine marks these before a cut. */
			ref->state = REVOKE_STATE_FAILED;
			ref->error = EOPNOTSUPP;
			continue;
		}
		/* Room for this op and the closing ones. */
		if (c.p->nops + 8 >= RV_PROG_MAX_OPS || c.p->data_len + 128 >= RV_PROG_MAX_DATA)
			break;
		r = k->add_cut(&c, ref, &ops[i]);
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = rv_cut_add_close(&c, c.dead_op);
	if (r >= 0)
		r = rv_cut_add_close(&c, c.memfd_op);
	if (r >= 0)
		r = rv_cut_add_close(&c, c.ddir_op);
	if (r >= 0)
		r = rv_cut_add_close(&c, c.pidfd_op);
	if (r >= 0)
		r = rv_cut_add_close(&c, c.cwd_op);
	if (r >= 0 && c.raise_op >= 0) {
		long args[6] = {0, c.save_off};
		int op = rv_prog_add(c.p, RV_OP_RESTORE_NOFILE, 0, args,
				     RV_OPF_CLEANUP | RV_OPF_IF_REF_OK, c.raise_op, -1);

		if (op < 0)
			r = op;
		else
			rv_prog_arg_is_data(c.p, op, 1);
		c.restore_op = op;
	}
	if (r < 0) {
		rv_prog_free(c.p);
		return r;
	}
	*room = (struct rv_room){.raise_op = c.raise_op,
				 .restore_op = c.restore_op,
				 .orig_off = c.orig_off,
				 .nfds = (c.memfd_op >= 0) + (c.dead_op >= 0) + (c.ddir_op >= 0) +
					 (c.pidfd_op >= 0) + (c.cwd_op >= 0)};
	*ret = c.p;
	*ret_next = i;
	return 0;
}

static void set_outcome(struct revoke_ref *ref, int r, int *first)
{
	ref->state = r < 0 ? REVOKE_STATE_FAILED : REVOKE_STATE_CUT;
	ref->error = r < 0 ? -r : 0;
	if (r < 0 && *first == 0)
		*first = r;
}

/* The refs [from, to) of H after its program P ran (RUN: what running it
 * gave: < 0 when it did not run or not to its end). */
static void outcomes(struct rv_holder *h, size_t from, size_t to, const struct rv_prog *p,
		     const int *ops, int run, int *first)
{
	long prep = 0;

	if (run >= 0 && p->failed >= 0)
		prep = rv_prog_result(p, p->failed, NULL); /* making the dead file failed */
	for (size_t i = from; i < to; i++) {
		struct revoke_ref *ref = &h->pub.refs[i];
		bool ran;
		long res;

		if (ops[i] < 0)
			continue;
		if (run < 0) {
			set_outcome(ref, run, first);
			continue;
		}
		res = rv_prog_result(p, ops[i], &ran);
		if (!ran)
			res = prep < 0 ? prep : -ECANCELED;
		else if (rv_refkind_of(ref)->outcome)
			res = rv_refkind_of(ref)->outcome(p, ops[i], res);
		set_outcome(ref, res < 0 ? (int)res : 0, first);
	}
}

struct done_ctx {
	struct rv_holder *h;
	const struct rv_cut_hooks *hooks;
};

static void on_done(struct rv_tracee *t, void *arg)
{
	struct done_ctx *d = arg;

	if (d->hooks && d->hooks->done)
		d->hooks->done(d->h, rv_prog_all_ok(rv_tracee_prog(t)), d->hooks->arg);
}

/*
 * Each io_uring ring must take updates from the thread that will run the
 * cut (a SINGLE_ISSUER ring takes them from its submitter only, on kernels
 * that check): asked of every holder with a ring, before any holder is
 * changed, by a program that updates nothing (IORING_REGISTER_FILES_SKIP).
 * A holder whose ring refuses has its ring's refs FAILED with the error;
 * returns how many holders that is (-ENOMEM, nothing asked).
 */
static int probe_rings(struct rv_holder **hs, size_t n)
{
	_cleanup_free_ struct rv_prog **progs = calloc(n ? n : 1, sizeof(*progs));
	_cleanup_free_ struct rv_tracee **ts = calloc(n ? n : 1, sizeof(*ts));
	_cleanup_free_ int *runs = calloc(n ? n : 1, sizeof(*runs));
	int refused = 0, r = 0;

	if (!progs || !ts || !runs)
		return -ENOMEM;
	for (size_t i = 0; i < n && r >= 0; i++) {
		struct rv_holder *h = hs[i];
		struct rv_cut c = {.raise_op = -1};

		for (size_t j = 0; j < h->pub.nrefs && r >= 0; j++) {
			const struct revoke_ref *ref = &h->pub.refs[j];
			bool probed = false;

			if (ref->state != REVOKE_STATE_FOUND || !rv_refkind_of(ref)->add_probe)
				continue;
			/* One probe per ring: its slots are refs of one fd. */
			for (size_t k = 0; k < j && !probed; k++)
				probed = h->pub.refs[k].type == ref->type &&
					 h->pub.refs[k].state == REVOKE_STATE_FOUND &&
					 h->pub.refs[k].fd == ref->fd;
			if (probed)
				continue;
			if (!c.p && !(c.p = rv_prog_new()))
				r = -ENOMEM;
			if (r >= 0)
				r = rv_refkind_of(ref)->add_probe(&c, ref);
		}
		progs[i] = c.p;
		if (c.p && h->self)
			rv_prog_run_local(c.p);
		else if (c.p)
			ts[i] = h->tracee;
	}
	if (r >= 0)
		rv_tracees_run(ts, progs, n, runs);
	for (size_t i = 0; i < n; i++) {
		struct rv_holder *h = hs[i];
		long e = 0;

		if (r < 0 || !progs[i])
			goto next;
		if (ts[i] && runs[i] == -ESRCH)
			goto next; /* it died: it holds nothing */
		if (ts[i] && runs[i] < 0) {
			e = runs[i];
			snprintf(h->pub.reason, sizeof(h->pub.reason), "%s", rv_tracee_why(ts[i]));
		} else if (progs[i]->failed >= 0)
			e = rv_prog_result(progs[i], progs[i]->failed, NULL);
		if (e < 0) {
			for (size_t j = 0; j < h->pub.nrefs; j++)
				if (h->pub.refs[j].state == REVOKE_STATE_FOUND &&
				    rv_refkind_of(&h->pub.refs[j])->add_probe) {
					h->pub.refs[j].state = REVOKE_STATE_FAILED;
					h->pub.refs[j].error = (int)-e;
				}
			refused++;
		}
	next:
		rv_prog_free(progs[i]);
	}
	return r < 0 ? r : refused;
}

/* The programs of N holders, round after round (a holder with more refs than
 * one program holds runs several). */
struct batch {
	struct rv_holder **hs;
	size_t n;
	unsigned int flags;
	const struct rv_cut_hooks *hooks;
	struct done_ctx *dcs;
	struct rv_prog **progs;
	struct rv_tracee **ts;
	size_t *from, *to; /* each holder's refs in this round's program */
	int *runs, *first; /* what running gave; each holder's first failure */
	struct rv_room *rooms;
	int **ops; /* each holder's op per ref */
	bool refused;
	int commit_r;
};

static void batch_free(struct batch *b)
{
	for (size_t i = 0; b->ops && i < b->n; i++)
		free(b->ops[i]);
	free(b->ops);
	free(b->dcs);
	free(b->progs);
	free(b->ts);
	free(b->from);
	free(b->to);
	free(b->runs);
	free(b->first);
	free(b->rooms);
}

static int batch_init(struct batch *b)
{
	size_t m = b->n ? b->n : 1;

	b->dcs = calloc(m, sizeof(*b->dcs));
	b->progs = calloc(m, sizeof(*b->progs));
	b->ts = calloc(m, sizeof(*b->ts));
	b->from = calloc(m, sizeof(*b->from));
	b->to = calloc(m, sizeof(*b->to));
	b->runs = calloc(m, sizeof(*b->runs));
	b->first = calloc(m, sizeof(*b->first));
	b->rooms = calloc(m, sizeof(*b->rooms));
	b->ops = calloc(m, sizeof(*b->ops));
	if (!b->dcs || !b->progs || !b->ts || !b->from || !b->to || !b->runs || !b->first ||
	    !b->rooms || !b->ops)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		b->ops[i] = calloc(b->hs[i]->pub.nrefs ? b->hs[i]->pub.nrefs : 1, sizeof(int));
		if (!b->ops[i])
			return -ENOMEM;
	}
	return 0;
}

static void refuse_if_all(struct batch *b)
{
	b->refused = b->refused || (b->flags & RV_CUT_ALL_OR_NOTHING);
}

/* This round's program of every holder with refs left, and its room: the
 * caller's own index, or N. */
static size_t build_round(struct batch *b)
{
	size_t self = b->n;

	for (size_t i = 0; i < b->n; i++) {
		struct rv_holder *h = b->hs[i];
		int r;

		b->ts[i] = NULL;
		b->progs[i] = NULL;
		if (b->from[i] >= h->pub.nrefs || b->first[i] < 0 || (!h->self && !h->tracee))
			continue;
		r = build(h, b->hooks ? b->hooks->dead_dir : NULL, b->from[i], &b->progs[i],
			  &b->to[i], b->ops[i], &b->rooms[i]);
		if (r < 0) {
			b->first[i] = r;
			refuse_if_all(b);
			continue;
		}
		r = rv_cut_make_room(h, b->progs[i], &b->rooms[i], h->pub.reason,
				     sizeof(h->pub.reason));
		if (r < 0) {
			/* Nothing of it changed: refused like a program that
			 * cannot be placed. */
			outcomes(h, b->from[i], b->to[i], b->progs[i], b->ops[i], r, &b->first[i]);
			rv_prog_free(TAKE_PTR(b->progs[i]));
			refuse_if_all(b);
			continue;
		}
		if (h->self)
			self = i;
		else
			b->ts[i] = h->tracee;
	}
	return self;
}

/* Everything that can fail before a program runs, for every holder first;
 * then, the first time, the point of no return (hooks->commit). False when
 * the round is refused: every byte put back, nothing ran. */
static bool prepare_round(struct batch *b, int round)
{
	rv_tracees_prepare(b->ts, b->progs, b->n, b->runs);
	for (size_t i = 0; i < b->n; i++) {
		if (!b->ts[i] || b->runs[i] >= 0)
			continue;
		outcomes(b->hs[i], b->from[i], b->to[i], b->progs[i], b->ops[i], b->runs[i],
			 &b->first[i]);
		b->ts[i] = NULL;
		/* Killed meanwhile (SIGKILL reaches stopped tracees): it holds
		 * nothing any more, which refuses nothing. */
		if (b->runs[i] == -ESRCH)
			continue;
		snprintf(b->hs[i]->pub.reason, sizeof(b->hs[i]->pub.reason), "%s",
			 rv_tracee_why(b->hs[i]->tracee));
		refuse_if_all(b);
	}
	if (!b->refused && round == 0 && b->hooks && b->hooks->commit) {
		uint64_t finish = 0;

		b->commit_r = b->hooks->commit(b->hooks->arg, &finish);
		b->refused = b->commit_r < 0;
		for (size_t i = 0; !b->refused && i < b->n; i++)
			if (b->hs[i]->tracee)
				rv_tracee_extend_deadline(b->hs[i]->tracee, finish);
	}
	if (b->refused && round == 0) {
		rv_tracees_unprepare(b->ts, b->n);
		for (size_t i = 0; i < b->n; i++) {
			rv_cut_unmake_room(b->hs[i], &b->rooms[i]);
			rv_prog_free(b->progs[i]);
		}
		return false;
	}
	return true;
}

/* Runs this round's programs (the caller's own here); whether any holder
 * has refs left for another round. */
static bool run_round(struct batch *b, size_t self)
{
	bool more = false;

	for (size_t i = 0; i < b->n; i++) {
		if (!b->ts[i])
			continue;
		b->dcs[i] = (struct done_ctx){b->hs[i], b->hooks};
		/* Released the moment its last program is over. */
		rv_tracee_when_done(b->ts[i], on_done, &b->dcs[i],
				    b->hooks && b->hooks->release &&
					b->to[i] >= b->hs[i]->pub.nrefs,
				    b->to[i] >= b->hs[i]->pub.nrefs);
	}
	if (self < b->n) {
		rv_prog_run_local(b->progs[self]);
		outcomes(b->hs[self], b->from[self], b->to[self], b->progs[self], b->ops[self], 0,
			 &b->first[self]);
		b->from[self] = b->to[self];
		more |= b->from[self] < b->hs[self]->pub.nrefs && b->first[self] == 0;
	}
	rv_tracees_run(b->ts, NULL, b->n, b->runs);
	for (size_t i = 0; i < b->n; i++) {
		struct rv_holder *h = b->hs[i];

		/* The program put the hard limit back at its end; if it did not
		 * get there, we do. */
		rv_cut_unmake_room(h, &b->rooms[i]);
		if (b->ts[i]) {
			outcomes(h, b->from[i], b->to[i], b->progs[i], b->ops[i], b->runs[i],
				 &b->first[i]);
			if (b->runs[i] < 0 && !h->pub.reason[0])
				snprintf(h->pub.reason, sizeof(h->pub.reason), "%s",
					 rv_tracee_why(b->ts[i]));
			b->from[i] = b->to[i];
			more |= b->from[i] < h->pub.nrefs && b->first[i] == 0;
		}
		rv_prog_free(b->progs[i]);
		b->progs[i] = NULL;
	}
	return more;
}

int rv_cut_holders(struct rv_holder **hs, size_t n, unsigned int flags,
		   const struct rv_cut_hooks *hooks, int *ret)
{
	struct batch b = {.hs = hs, .n = n, .flags = flags, .hooks = hooks};
	int r = batch_init(&b);

	/* Before anything is placed or changed: rings that refuse our thread. */
	if (r >= 0)
		r = probe_rings(hs, n);
	if (r < 0) {
		batch_free(&b);
		return r;
	}
	b.refused = r > 0 && (flags & RV_CUT_ALL_OR_NOTHING);
	for (size_t i = 0; i < n && r > 0; i++)
		for (size_t j = 0; j < hs[i]->pub.nrefs; j++)
			if (hs[i]->pub.refs[j].state == REVOKE_STATE_FAILED && b.first[i] == 0)
				b.first[i] = -hs[i]->pub.refs[j].error;
	for (int round = 0, more = 1; more && !b.refused; round++) {
		size_t self = build_round(&b);

		if (!prepare_round(&b, round))
			break;
		more = run_round(&b, self);
	}
	for (size_t i = 0; i < n; i++) {
		/* Refs a failed round never reached. */
		for (size_t j = b.from[i]; j < hs[i]->pub.nrefs && b.first[i] < 0 && !b.refused;
		     j++)
			if (hs[i]->pub.refs[j].state == REVOKE_STATE_FOUND)
				set_outcome(&hs[i]->pub.refs[j], b.first[i], &b.first[i]);
		if (ret)
			ret[i] = b.first[i];
	}
	r = b.commit_r < 0 ? b.commit_r : b.refused ? -EBUSY : 0;
	batch_free(&b);
	return r;
}

int rv_cut_holder(struct rv_holder *h, struct rv_tracee *t)
{
	int r = 0, q;

	if (!h || (!t && !h->self))
		return -EINVAL;
	h->tracee = t;
	q = rv_cut_holders(&h, 1, 0, NULL, &r);
	return q < 0 ? q : r;
}

/* Whether REF of PID is cut, as /proc shows it now (verify.c). */
static bool ref_is_cut(pid_t pid, const struct revoke_ref *ref)
{
	const struct rv_refkind *k = rv_refkind_of(ref);

	return k->shows_cut && k->shows_cut(pid, ref);
}

size_t rv_cut_verify(struct rv_holder *h, uint64_t deadline)
{
	size_t left;

	for (unsigned int n = 0;;) {
		left = 0;
		for (size_t i = 0; i < h->pub.nrefs; i++) {
			struct revoke_ref *ref = &h->pub.refs[i];

			if (ref->state != REVOKE_STATE_FAILED || ref->error != ETIMEDOUT)
				continue;
			if (ref_is_cut(h->pub.pid, ref)) {
				ref->state = REVOKE_STATE_CUT;
				ref->error = 0;
			} else
				left++;
		}
		if (!left || !rv_ptrace_backoff(&n, deadline))
			return left;
	}
}
