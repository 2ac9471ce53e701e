// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_names: names for the uapi constants - status and policy to a
 * string, and a policy name or number back.  Calls nothing in libsdr.
 */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "libsdr.h"

const char *sdr_status_str(uint32_t status)
{
	switch (status) {
	case SDR_STATUS_OK:		return "ok";
	case SDR_STATUS_PARTIAL:	return "partial";
	case SDR_STATUS_FAILED:		return "failed";
	case SDR_STATUS_FLUSHED:	return "flushed";
	}
	return "unknown";
}

static const char *const policy_names[] = {
	[SDR_POLICY_NONE]	= "none",
	[SDR_POLICY_SR]		= "sr",
	[SDR_POLICY_EC]		= "ec",
	[SDR_POLICY_ADAPTIVE]	= "adaptive",
	[SDR_POLICY_AUTO]	= "auto",
};

const char *sdr_policy_str(uint32_t policy)
{
	if (policy < sizeof(policy_names) / sizeof(policy_names[0]) &&
	    policy_names[policy])
		return policy_names[policy];
	return "unknown";
}

int sdr_policy_parse(const char *s, uint32_t *policy)
{
	uint32_t i;
	char *end;
	unsigned long v;

	if (!s || !policy)
		return -EINVAL;
	for (i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
		if (policy_names[i] && !strcasecmp(s, policy_names[i])) {
			*policy = i;
			return 0;
		}
	}
	errno = 0;
	v = strtoul(s, &end, 0);
	if (!*s || *end || errno || v > UINT32_MAX)
		return -EINVAL;
	*policy = (uint32_t)v;
	return 0;
}
