// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: the reliability policies this kernel runs, by id (uapi
 * SDR_POLICY_*, also the packets' policy field), and the default_policy
 * module parameter, which may name only one of them.  A new policy is its
 * file, which fills a struct sdr_policy_ops, and one line here.
 */
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "sdr.h"
#include "sdr_flow.h"

static const struct sdr_policy_ops * const sdr_policies[] = {
	[SDR_POLICY_NONE]	= &sdr_none_ops,
	[SDR_POLICY_SR]		= &sdr_sr_ops,
	[SDR_POLICY_EC]		= &sdr_ec_ops,
	[SDR_POLICY_ADAPTIVE]	= &sdr_adaptive_ops,
};

/*
 * AUTO is no entry of the table: it runs these, one per message, by the
 * engine's candidate (engine/sdr_auto.h), and it runs where they all do.
 */
static const u32 sdr_auto_cands[SDR_AUTO_NCAND] = {
	[SDR_AUTO_SR]		= SDR_POLICY_SR,
	[SDR_AUTO_ADAPTIVE]	= SDR_POLICY_ADAPTIVE,
	[SDR_AUTO_EC]		= SDR_POLICY_EC,
};

/* every defined policy's word, so a known one the kernel lacks is EOPNOTSUPP */
static const char * const sdr_policy_names[SDR_POLICY_NR] = SDR_POLICY_NAMES;

/* The name of policy @id (uapi's SDR_POLICY_NAMES), or "?". */
const char *sdr_policy_name(u32 id)
{
	return id < SDR_POLICY_NR && sdr_policy_names[id] ?
	       sdr_policy_names[id] : "?";
}

/*
 * The id of the policy @buf names, by its name ("sr", a trailing newline
 * allowed) or its number: -EINVAL if it names none uapi defines.
 */
int sdr_policy_parse(const char *buf)
{
	unsigned int id;
	int ret;

	ret = sysfs_match_string(sdr_policy_names, buf);
	if (ret >= 0)
		return ret;
	if (kstrtouint(buf, 0, &id) || id >= SDR_POLICY_NR)
		return -EINVAL;
	return id;
}

/* The policy with id @id, or NULL if this kernel does not run it. */
const struct sdr_policy_ops *sdr_policy_get(u32 id)
{
	return id < ARRAY_SIZE(sdr_policies) ? sdr_policies[id] : NULL;
}

/* The policy AUTO runs for the model's candidate @cand. */
u32 sdr_auto_cand_policy(u32 cand)
{
	return sdr_auto_cands[cand < SDR_AUTO_NCAND ? cand : SDR_AUTO_SR];
}

/* The policies an AUTO flow readies: each one it may pick. */
unsigned long sdr_auto_policies(void)
{
	unsigned long mask = 0;
	u32 i;

	for (i = 0; i < SDR_AUTO_NCAND; i++)
		mask |= BIT(sdr_auto_cands[i]);
	return mask;
}

/*
 * Whether a flow may have policy @id (a defined one): one in the table,
 * or AUTO where the table has all it picks from.
 */
bool sdr_policy_runs(u32 id)
{
	u32 i;

	if (id != SDR_POLICY_AUTO)
		return !!sdr_policy_get(id);
	for (i = 0; i < SDR_AUTO_NCAND; i++)
		if (!sdr_policy_get(sdr_auto_cands[i]))
			return false;
	return true;
}

/*
 * The first policy this kernel runs from id *@i on whose bit is set in
 * @mask (moving *@i to it), or NULL past the end.
 */
const struct sdr_policy_ops *sdr_policy_iter(u32 *i, unsigned long mask)
{
	for (; *i < ARRAY_SIZE(sdr_policies); (*i)++)
		if (sdr_policies[*i] && test_bit(*i, &mask))
			return sdr_policies[*i];
	return NULL;
}

/*
 * default_policy: the policy of flows created with SDR_POLICY_DEFAULT.
 * A write takes a name or a number; one this kernel does not run fails
 * (EINVAL if uapi defines no such policy, EOPNOTSUPP if it does).
 */
unsigned int sdr_default_policy = SDR_POLICY_NONE;

static int sdr_default_policy_set(const char *val, const struct kernel_param *kp)
{
	int id = sdr_policy_parse(val);

	if (id < 0)
		return id;
	if (!sdr_policy_runs(id))
		return -EOPNOTSUPP;
	WRITE_ONCE(sdr_default_policy, id);
	return 0;
}

static int sdr_default_policy_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sdr_default_policy));
}

static const struct kernel_param_ops sdr_default_policy_ops = {
	.set	= sdr_default_policy_set,
	.get	= sdr_default_policy_get,
};
module_param_cb(default_policy, &sdr_default_policy_ops, NULL, 0644);
MODULE_PARM_DESC(default_policy,
		 "Policy of flows created with SDR_POLICY_DEFAULT, by number or name: 0 none, 1 sr, 2 ec, 3 adaptive, 4 auto [default 0]");
