/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of reference kinds (refkind.h). */
#include <fcntl.h>
#include <sys/mman.h>

#include "kinds/refkind.h"

static const struct rv_refkind kinds[] = {
    {
	.type = REVOKE_REF_FD,
	.name = "fd",
	.found_in = RV_FOUND_FD_TABLE,
	.add_cut = rv_cut_add_fd,
	.in_table = true,
	.shows_cut = rv_fd_shows_cut,
    },
    {
	.type = REVOKE_REF_MAP,
	.name = "map",
	.found_in = RV_FOUND_MAPS,
	.add_cut = rv_cut_add_map,
	.shows_cut = rv_map_shows_cut,
    },
    {
	.type = REVOKE_REF_CWD,
	.name = "cwd",
	.found_in = RV_FOUND_LINK,
	.link = "cwd",
	.add_cut = rv_cut_add_cwd,
	.dir = RV_DIR_CWD,
    },
    {
	.type = REVOKE_REF_ROOT,
	.name = "root",
	.found_in = RV_FOUND_LINK,
	.link = "root",
	.add_cut = rv_cut_add_root,
	.dir = RV_DIR_ROOT,
    },
    {
	.type = REVOKE_REF_EXE,
	.name = "exe",
	.found_in = RV_FOUND_LINK,
	.link = "exe",
	.unreachable = "the running executable",
    },
    {
	.type = REVOKE_REF_URING,
	.name = "uring",
	.found_in = RV_FOUND_FDINFO,
	.add_cut = rv_cut_add_uring,
	.check = rv_uring_check,
	.add_probe = rv_cut_add_ring_probe,
	.outcome = rv_cut_uring_outcome,
    },
    {
	.type = REVOKE_REF_INFLIGHT,
	.name = "inflight",
	.found_in = RV_FOUND_FDINFO,
	.unreachable = "a descriptor in flight in a unix socket",
    },
    {
	.type = REVOKE_REF_SWAP,
	.name = "swap",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "an active swap file",
    },
    {
	.type = REVOKE_REF_LOOP,
	.name = "loop",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "the backing file of a loop device",
    },
    {
	.type = REVOKE_REF_MOUNT,
	.name = "mount",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "mounted in another mount namespace",
    },
};

const struct rv_refkind *rv_refkind(int type)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].type == type)
			return &kinds[i];
	return NULL;
}

const struct rv_refkind *rv_refkind_of(const struct revoke_ref *ref)
{
	static const struct rv_refkind unknown = {.type = -1, .name = "?"};
	const struct rv_refkind *k = rv_refkind(ref->type);

	return k ? k : &unknown;
}

int rv_ref_native_refusal(const struct revoke_ref *ref)
{
	if (ref->type == REVOKE_REF_EXE)
		return EOPNOTSUPP;
	if (ref->type == REVOKE_REF_MAP && (ref->prot & PROT_EXEC))
		return ETXTBSY;
	return 0;
}

bool rv_ref_maybe_lookup(const struct revoke_ref *ref)
{
	return (ref->type == REVOKE_REF_FD && (ref->open_flags & O_PATH)) ||
	       ref->type == REVOKE_REF_INFLIGHT;
}

const struct rv_refkind *rv_refkinds(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(kinds);
	return kinds;
}
