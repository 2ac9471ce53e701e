// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: a context's completion ring, shared with the process: room is
 * reserved when an operation is accepted and the entry pushed when it
 * completes.  The flow core posts here; /dev/sdr (sdr_cdev.c) sets the
 * ring up and maps it.  Calls nothing else of sdr.
 */
#include <linux/wait.h>

#include "sdr.h"

static_assert(sizeof(struct sdr_ring_hdr) <= SDR_RING_CQES_OFF);
static_assert(sizeof(struct sdr_cqe) == 32);

static struct sdr_ring_hdr *sdr_ring(struct sdr_ctx *ctx)
{
	return ctx->ring;
}

/* Entries the process has not consumed yet; garbage in head reads as full. */
static u32 sdr_ring_used(struct sdr_ctx *ctx)
{
	u32 used = ctx->cq_tail - READ_ONCE(sdr_ring(ctx)->head);

	return min(used, ctx->cq_entries);
}

/* Reserve ring room for one future completion. */
bool sdr_ctx_cq_reserve(struct sdr_ctx *ctx)
{
	bool ok;

	spin_lock_bh(&ctx->cq_lock);
	ok = ctx->cq_pending + sdr_ring_used(ctx) < ctx->cq_entries;
	if (ok)
		ctx->cq_pending++;
	spin_unlock_bh(&ctx->cq_lock);
	return ok;
}

void sdr_ctx_cq_unreserve(struct sdr_ctx *ctx)
{
	spin_lock_bh(&ctx->cq_lock);
	if (!WARN_ON_ONCE(!ctx->cq_pending))
		ctx->cq_pending--;
	spin_unlock_bh(&ctx->cq_lock);
}

/* Post a completion that was reserved with sdr_ctx_cq_reserve(). */
void sdr_ctx_cq_push(struct sdr_ctx *ctx, const struct sdr_cqe *cqe)
{
	struct sdr_ring_hdr *hdr = sdr_ring(ctx);
	struct sdr_cqe *cqes = ctx->ring + SDR_RING_CQES_OFF;

	spin_lock_bh(&ctx->cq_lock);
	if (ctx->cq_pending)
		ctx->cq_pending--;
	if (sdr_ring_used(ctx) >= ctx->cq_entries) {
		/* Only a process that wrote garbage into head gets here. */
		WRITE_ONCE(hdr->overflow, READ_ONCE(hdr->overflow) + 1);
	} else {
		cqes[ctx->cq_tail & (ctx->cq_entries - 1)] = *cqe;
		ctx->cq_tail++;
		/* The entry is written before the tail says so. */
		smp_store_release(&hdr->tail, ctx->cq_tail);
	}
	spin_unlock_bh(&ctx->cq_lock);
	wake_up_interruptible(&ctx->wq);
}

/* The ring holds completions the process has not consumed. */
bool sdr_ctx_cq_ready(struct sdr_ctx *ctx)
{
	return READ_ONCE(sdr_ring(ctx)->head) != READ_ONCE(ctx->cq_tail);
}
