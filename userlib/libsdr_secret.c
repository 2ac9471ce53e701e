// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr_secret: the job secret a context's authenticated flows name
 * (Documentation/library.rst, "The job secret").  The secret itself
 * lives in the kernel keyring, as a user key "sdr:NAME" the kernel reads
 * at flow create; libsdr only names it, or puts a file's bytes there
 * (SDR_SECRET_FILE) for jobs that hand a file to every rank.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include "libsdr_int.h"
#include "libsdr_sys.h"

/* The kernel's bounds on a job secret (kernel/sdr_kex.c). */
#define SECRET_MIN	16
#define SECRET_MAX	4096
/* The name SDR_SECRET_FILE's bytes get in the process keyring. */
#define SECRET_FILE_NAME	"file"

static int name_ok(const char *name)
{
	size_t i, len = strlen(name);

	if (len >= SDR_SECRET_NAME_LEN)
		return 0;
	for (i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return 0;
	return 1;
}

int sdr_ctx_set_secret(struct sdr_ctx *ctx, const char *name)
{
	if (!ctx)
		return -EINVAL;
	if (!name)
		name = "";
	if (!name_ok(name))
		return -EINVAL;
	memset(ctx->secret, 0, sizeof(ctx->secret));
	strcpy(ctx->secret, name);
	return 0;
}

int sdr_secret_file_load(const char *path, const char *name)
{
	char desc[4 + SDR_SECRET_NAME_LEN];
	unsigned char buf[SECRET_MAX + 1];
	ssize_t n, len = 0;
	long serial;
	int fd, ret = 0;

	if (!path || !name || !*name || !name_ok(name))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < (ssize_t)sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	if (!ret && (len < SECRET_MIN || len > SECRET_MAX))
		ret = -EINVAL;
	if (!ret) {
		snprintf(desc, sizeof(desc), "sdr:%s", name);
		serial = syscall(SYS_add_key, "user", desc, buf, (size_t)len,
				 KEY_SPEC_PROCESS_KEYRING);
		if (serial < 0)
			ret = -errno;
	}
	memset(buf, 0, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
	return ret;
}

int sdr_ctx_check_peer(struct sdr_ctx *ctx, const struct sdr_flow_peer *peer)
{
	struct sdr_kex_check k;

	if (!ctx || !peer)
		return -EINVAL;
	if (!ctx->secret[0])
		return 0;
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	memcpy(k.secret, ctx->secret, sizeof(k.secret));
	k.peer = peer->ep;
	k.peer_paths = peer->paths;
	k.peer_kex = peer->kex;
	return sdr__ioctl(ctx->fd, SDR_IOC_KEX_CHECK, &k);
}

/* sdr_open(): SDR_SECRET_FILE, else SDR_SECRET, names ctx's secret. */
int sdr__secret_from_env(struct sdr_ctx *ctx)
{
	const char *file = getenv("SDR_SECRET_FILE");
	const char *name = getenv("SDR_SECRET");
	int ret;

	if (file && *file) {
		ret = sdr_secret_file_load(file, SECRET_FILE_NAME);
		if (ret)
			return ret;
		name = SECRET_FILE_NAME;
	}
	return name ? sdr_ctx_set_secret(ctx, name) : 0;
}
