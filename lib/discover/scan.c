/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Discovery's entry points: rv_scan picks the BPF iterators when they can be
 * used (unless /proc is forced) and falls back to /proc silently when they
 * cannot; rv_scan_pid always reads /proc (one process, already stopped).
 */
#include "discover/proc.h"
#include "kinds/target.h"

#ifndef HAVE_BPF
#define HAVE_BPF 0
#endif

#if HAVE_BPF
/* Errors that mean "BPF is not available here", not "the scan failed". */
static int bpf_unavailable(int r)
{
	return r == -EOPNOTSUPP || r == -EPERM || r == -ENOSYS || r == -EACCES;
}
#endif

#if !HAVE_BPF
void rv_bpf_free(struct rv_bpf *b)
{
	(void)b;
}
#endif

int rv_scan(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
	    struct rv_holders *ret)
{
	unsigned int flags = opts ? opts->flags : 0;
	int r;

	if ((flags & REVOKE_DISCOVERY_PROC) && (flags & REVOKE_DISCOVERY_BPF))
		return -EINVAL;

	if (!(flags & REVOKE_DISCOVERY_PROC)) {
#if HAVE_BPF
		r = rv_scan_bpf(targets, ntargets, opts, ret);
		if (r >= 0)
			return REVOKE_DISC_BPF;
		if ((flags & REVOKE_DISCOVERY_BPF) || !bpf_unavailable(r))
			return r;
#else
		if (flags & REVOKE_DISCOVERY_BPF)
			return -EOPNOTSUPP; /* built without BPF */
#endif
	}

	r = rv_scan_proc(targets, ntargets, opts, ret);
	if (r < 0)
		return r;
	return REVOKE_DISC_PROC;
}

int rv_scan_pid(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holder *h)
{
	return rv_scan_proc_pid(targets, ntargets, opts, h);
}
