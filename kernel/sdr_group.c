// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: a context's groups (SDR_IOC_GROUP) - sends and receives of any of
 * its flows that complete together, one collective step say.  A group
 * holds a completion ring entry from its open on; once it is closed and
 * each member has its completion in the ring, the group's own entry
 * follows.  The oldest group not yet completed is the one the
 * application waits for first: its members are urgent (the flows ask
 * sdr_group_urgent() as they send).
 *
 * The table is a fixed array of SDR_GROUPS_MAX entries, allocated at the
 * first open; a group's id is its key, entry id % SDR_GROUPS_MAX, so a
 * member's completion finds its group without a search.  Everything in it
 * is under ctx->grp_lock (inside flow->lock, outside ctx->cq_lock);
 * ctx->grp_oldest is also read without it, as a hint of which id is
 * urgent.  Calls only sdr_ctx.c.
 */
#include <linux/slab.h>

#include "sdr.h"

static struct sdr_grp *sdr_grp_find(struct sdr_ctx *ctx, u32 id)
{
	struct sdr_grp *g;

	lockdep_assert_held(&ctx->grp_lock);
	if (!id || !ctx->grps)
		return NULL;
	g = &ctx->grps[id % SDR_GROUPS_MAX];
	return g->id == id ? g : NULL;
}

/* The oldest group left, by open order, is the urgent one. */
static void sdr_grp_set_oldest(struct sdr_ctx *ctx)
{
	struct sdr_grp *g, *oldest = NULL;
	u32 i;

	lockdep_assert_held(&ctx->grp_lock);
	for (i = 0; ctx->grp_live && i < SDR_GROUPS_MAX; i++) {
		g = &ctx->grps[i];
		if (g->id && (!oldest || g->born < oldest->born))
			oldest = g;
	}
	WRITE_ONCE(ctx->grp_oldest, oldest ? oldest->id : 0);
}

/* Closed and no member pending: the group's entry, and its end. */
static void sdr_grp_maybe_done(struct sdr_ctx *ctx, struct sdr_grp *g)
{
	struct sdr_cqe cqe = {
		.user_data	= g->user_data,
		.seq		= g->id,
		.slot		= g->members,
		.imm		= g->not_ok,
		.type		= SDR_CQE_GROUP,
		.status		= g->status,
	};

	lockdep_assert_held(&ctx->grp_lock);
	if (!g->closed || g->pending)
		return;
	sdr_ctx_cq_push(ctx, &cqe);
	memset(g, 0, sizeof(*g));
	ctx->grp_live--;
	sdr_grp_set_oldest(ctx);
}

static int sdr_grp_open(struct sdr_ctx *ctx, struct sdr_group *arg)
{
	struct sdr_grp *tbl = NULL, *g;
	u32 id;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->grps) {
		tbl = kcalloc(SDR_GROUPS_MAX, sizeof(*tbl), GFP_KERNEL_ACCOUNT);
		if (!tbl)
			return -ENOMEM;
	}
	spin_lock_bh(&ctx->grp_lock);
	if (tbl)
		ctx->grps = tbl;	/* ctx->lock: no other open races */
	if (ctx->grp_live >= SDR_GROUPS_MAX || !sdr_ctx_cq_reserve(ctx)) {
		spin_unlock_bh(&ctx->grp_lock);
		return -EAGAIN;
	}
	/* the next id whose entry is free: one is, fewer than all live */
	do {
		id = ctx->grp_next++;
	} while (!id || ctx->grps[id % SDR_GROUPS_MAX].id);
	g = &ctx->grps[id % SDR_GROUPS_MAX];
	*g = (struct sdr_grp) {
		.id		= id,
		.born		= ++ctx->grp_born,
		.user_data	= arg->user_data,
	};
	if (!ctx->grp_live++)
		WRITE_ONCE(ctx->grp_oldest, id);
	spin_unlock_bh(&ctx->grp_lock);
	arg->group = id;
	return 0;
}

static int sdr_grp_close(struct sdr_ctx *ctx, u32 id)
{
	struct sdr_grp *g;
	int ret = -ENOENT;

	spin_lock_bh(&ctx->grp_lock);
	g = sdr_grp_find(ctx, id);
	if (g && !g->closed) {
		g->closed = true;
		sdr_grp_maybe_done(ctx, g);
		ret = 0;
	}
	spin_unlock_bh(&ctx->grp_lock);
	return ret;
}

/* SDR_IOC_GROUP (ctx->lock held). */
int sdr_group_ioctl(struct sdr_ctx *ctx, struct sdr_group *arg)
{
	switch (arg->op) {
	case SDR_GROUP_OPEN:
		if (arg->group)
			return -EINVAL;
		return sdr_grp_open(ctx, arg);
	case SDR_GROUP_CLOSE:
		if (arg->user_data)
			return -EINVAL;
		return sdr_grp_close(ctx, arg->group);
	default:
		return -EINVAL;
	}
}

/*
 * A send or receive joins open group @id as it is posted (flow->lock
 * held, its completion reserved): 0, or -ENOENT if @id is not open.
 */
int sdr_group_join(struct sdr_ctx *ctx, u32 id)
{
	struct sdr_grp *g;
	int ret = -ENOENT;

	spin_lock(&ctx->grp_lock);
	g = sdr_grp_find(ctx, id);
	if (g && !g->closed) {
		g->members++;
		g->pending++;
		ret = 0;
	}
	spin_unlock(&ctx->grp_lock);
	return ret;
}

/*
 * A member of group @id has its completion in the ring with @status, or
 * was abandoned (FAILED) (flow->lock held).
 */
void sdr_group_done(struct sdr_ctx *ctx, u32 id, u8 status)
{
	struct sdr_grp *g;

	spin_lock(&ctx->grp_lock);
	g = sdr_grp_find(ctx, id);
	if (g && !WARN_ON_ONCE(!g->pending)) {
		g->pending--;
		if (status != SDR_STATUS_OK)
			g->not_ok++;
		g->status = max(g->status, status);
		sdr_grp_maybe_done(ctx, g);
	}
	spin_unlock(&ctx->grp_lock);
}

/* Whether group @id is the context's oldest: its members are urgent. */
bool sdr_group_urgent(struct sdr_ctx *ctx, u32 id)
{
	return id && id == READ_ONCE(ctx->grp_oldest);
}

/* The context ends (no flow left to complete a member). */
void sdr_group_free(struct sdr_ctx *ctx)
{
	kfree(ctx->grps);
	ctx->grps = NULL;
}
