/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The SDR SDK's memory registration (SDR-RDMA's sdr_mr.h), implemented by
 * libsdr over sdr.ko's SDR_IOC_MR_REG: the pages are pinned long-term and
 * charged to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK); receives land in them
 * and sends go from them.  Include <sdr.h> first.
 */
#ifndef SDR_SDK_MR_H
#define SDR_SDK_MR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sdr_context;
struct sdr_mr;

enum sdr_access_flags { SDR_ACCESS_REMOTE_WRITE = 0 };

struct sdr_mr *sdr_mr_reg(struct sdr_context *sdr_ctx, void *addr,
			  size_t length, enum sdr_access_flags access);
int sdr_mr_dereg(struct sdr_mr *mr);
int sdr_mr_lkey_get(struct sdr_mr *mr, uint32_t *lkey);
int sdr_mr_rkey_get(struct sdr_mr *mr, uint32_t *rkey);

#ifdef __cplusplus
}
#endif

#endif /* SDR_SDK_MR_H */
