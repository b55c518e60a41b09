/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to discover/bpf/ (and bench/iter.c, the raw iterators' own time):
 * loading the iterators of revoke.bpf.c for a set of targets (load.c) and
 * reading their records; bpf.c turns the records into holders.
 */
#ifndef REVOKE_DISCOVER_BPF_LOAD_H
#define REVOKE_DISCOVER_BPF_LOAD_H

#include <linux/types.h>

#include "internal.h"
#include "records.h"

enum { RV_BPF_PASS_FILE, RV_BPF_PASS_VMA, RV_BPF_PASS_TASK, RV_BPF_NPASS };

/* The programs, loaded and attached, with TARGETS in their map; -EOPNOTSUPP
 * or -EPERM when this kernel or caller cannot run them. */
int rv_bpf_load(const struct rv_target *targets, size_t ntargets, struct rv_bpf **ret);

/* Empties what a pass leaves behind (which thread groups hold a target),
 * for another pass of the same programs. */
int rv_bpf_clear_holders(struct rv_bpf *b);

/* Called with each record of each pass, never twice at once (the passes may
 * run in threads of their own); a negative return stops every pass. */
typedef int (*rv_bpf_sink)(void *arg, int pass, const struct rv_bpf_rec *rec);

/* Runs every pass to its end (-ETIMEDOUT past DEADLINE_NS, 0 = none), the
 * records to SINK (NULL: read and dropped). */
int rv_bpf_read(struct rv_bpf *b, uint64_t deadline_ns, rv_bpf_sink sink, void *arg);

#endif
