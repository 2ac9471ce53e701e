// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: the reliability policies this kernel runs, by id (uapi
 * SDR_POLICY_*, also the packets' policy field).  A new policy is its
 * file, which fills a struct sdr_policy_ops, and one line here.
 */
#include "sdr.h"
#include "sdr_flow.h"

static const struct sdr_policy_ops * const sdr_policies[] = {
	[SDR_POLICY_NONE]	= &sdr_none_ops,
	[SDR_POLICY_SR]		= &sdr_sr_ops,
	[SDR_POLICY_EC]		= &sdr_ec_ops,
};

static const char * const sdr_policy_names[SDR_POLICY_NR] = SDR_POLICY_NAMES;

/* The name of policy @id (uapi's SDR_POLICY_NAMES), or "?". */
const char *sdr_policy_name(u32 id)
{
	return id < SDR_POLICY_NR && sdr_policy_names[id] ?
	       sdr_policy_names[id] : "?";
}

/* The policy with id @id, or NULL if this kernel does not run it. */
const struct sdr_policy_ops *sdr_policy_get(u32 id)
{
	return id < ARRAY_SIZE(sdr_policies) ? sdr_policies[id] : NULL;
}

/* The first policy from id *@i on (moving *@i to it), or NULL past the end. */
const struct sdr_policy_ops *sdr_policy_iter(u32 *i)
{
	for (; *i < ARRAY_SIZE(sdr_policies); (*i)++)
		if (sdr_policies[*i])
			return sdr_policies[*i];
	return NULL;
}
