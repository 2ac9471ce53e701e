// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_names: names for the uapi constants - status and policy to a
 * string, a policy name or number back, and a policy mask as a list of
 * names.  Calls nothing in libsdr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The kernel's words too (sysfs flows/<id>/policy): one list, uapi/sdr_uapi.h. */
static const char *const policy_names[SDR_POLICY_NR] = SDR_POLICY_NAMES;

const char *sdr_policy_str(uint32_t policy)
{
	if (policy < sizeof(policy_names) / sizeof(policy_names[0]) &&
	    policy_names[policy])
		return policy_names[policy];
	return "unknown";
}

static const char *const auth_names[SDR_AUTH_NR] = SDR_AUTH_NAMES;

const char *sdr_auth_str(uint32_t auth)
{
	return auth < SDR_AUTH_NR ? auth_names[auth] : "unknown";
}

static const char *const kex_names[] = SDR_KEX_NAMES;

const char *sdr_kex_str(uint32_t kex)
{
	return kex < sizeof(kex_names) / sizeof(kex_names[0]) ?
	       kex_names[kex] : "unknown";
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

/* Append s to the list in buf as snprintf would; *n counts it all. */
static void list_put(char *buf, size_t len, size_t *n, const char *s)
{
	size_t l = strlen(s), c;

	if (*n + 1 < len) {
		c = len - 1 - *n < l ? len - 1 - *n : l;
		memcpy(buf + *n, s, c);
		buf[*n + c] = '\0';
	}
	*n += l;
}

int sdr_policy_list(uint64_t mask, const char *sep, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t i;

	if (!sep || (!buf && len))
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	for (i = 0; i < 64; i++) {
		char num[16];

		if (!(mask & (1ULL << i)))
			continue;
		if (n)
			list_put(buf, len, &n, sep);
		snprintf(num, sizeof(num), "%u", i);
		list_put(buf, len, &n, i < SDR_POLICY_NR && policy_names[i] ?
				       policy_names[i] : num);
	}
	return n > INT32_MAX ? -EINVAL : (int)n;
}
