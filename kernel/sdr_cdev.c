// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: /dev/sdr - one open file is one context: ioctl dispatch, mmap of
 * the completion ring and the flows' regions, poll.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "sdr.h"
#include "sdr_flow.h"
#include "sdr_ec.h"

#define SDR_CQ_DEFAULT	4096
#define SDR_CQ_MIN	64
#define SDR_CQ_MAX	65536

/*
 * SDR_IOC_BIND.  Called without locks: it takes the device's rwsem before
 * ctx->lock, the documented order.
 */
static int sdr_ioc_bind(struct sdr_ctx *ctx, void *p)
{
	struct sdr_bind *arg = p;
	struct sdr_ring_hdr *hdr;
	struct sdr_dev *sdev;
	union ib_gid gid;
	u32 entries;
	int ret;

	if (arg->__reserved)
		return -EINVAL;
	/* a quick refusal; ctx->lock decides below */
	if (smp_load_acquire(&ctx->sdev))
		return -EBUSY;
	entries = arg->cq_entries ?: SDR_CQ_DEFAULT;
	if (entries < SDR_CQ_MIN || entries > SDR_CQ_MAX ||
	    !is_power_of_2(entries))
		return -EINVAL;
	if (arg->flags & SDR_BIND_BY_GID) {
		sdev = sdr_dev_get_by_gid(arg->gid);
	} else {
		if (!memchr(arg->ibdev, 0, sizeof(arg->ibdev)))
			return -EINVAL;
		sdev = sdr_dev_get_by_name(arg->ibdev);
	}
	if (!sdev)
		return -ENODEV;
	ret = -ENODEV;
	if (arg->port && arg->port != sdev->port)
		goto err_put;

	down_read(&sdev->rwsem);
	mutex_lock(&ctx->lock);
	ret = -EBUSY;
	if (ctx->sdev)		/* another thread bound it meanwhile */
		goto err_unlock;
	ctx->ring_size = PAGE_ALIGN(SDR_RING_CQES_OFF +
				    entries * sizeof(struct sdr_cqe));
	ret = sdr_acct_charge(ctx->acct, ctx->ring_size);
	if (ret)
		goto err_unlock;
	ctx->ring = sdr_vmalloc_user(ctx->ring_size);
	ret = -ENOMEM;
	if (!ctx->ring)
		goto err_uncharge;
	ctx->cq_entries = entries;
	hdr = ctx->ring;
	hdr->mask = entries - 1;

	ret = sdev->dying ? -ENODEV : sdr_dev_query_gid(sdev, &gid, NULL);
	if (ret)
		goto err_free_ring;
	arg->mtu = sdev->mtu;
	memcpy(arg->gid, gid.raw, sizeof(arg->gid));

	memset(arg->ibdev, 0, sizeof(arg->ibdev));
	strscpy(arg->ibdev, sdev->name, sizeof(arg->ibdev));
	arg->port = sdev->port;
	arg->cq_entries = entries;
	arg->ring_offset = 0;
	arg->ring_size = ctx->ring_size;
	arg->ring = (struct sdr_ring_offsets) {
		.head		= offsetof(struct sdr_ring_hdr, head),
		.tail		= offsetof(struct sdr_ring_hdr, tail),
		.mask		= offsetof(struct sdr_ring_hdr, mask),
		.overflow	= offsetof(struct sdr_ring_hdr, overflow),
		.cqes		= SDR_RING_CQES_OFF,
	};
	/* Published last: it tells every other ioctl the context is bound. */
	smp_store_release(&ctx->sdev, sdev);
	mutex_unlock(&ctx->lock);
	up_read(&sdev->rwsem);
	return 0;

err_free_ring:
	vfree(ctx->ring);
	ctx->ring = NULL;
err_uncharge:
	sdr_acct_uncharge(ctx->acct, ctx->ring_size);
err_unlock:
	mutex_unlock(&ctx->lock);
	up_read(&sdev->rwsem);
err_put:
	sdr_dev_put(sdev);
	return ret;
}

static int sdr_ioc_flow_create(struct sdr_ctx *ctx, void *p)
{
	struct sdr_flow_create *arg = p;

	int ret;

	if (arg->__reserved || arg->__reserved3)
		return -EINVAL;
	ret = sdr_flow_create(ctx, arg);
	if (ret)
		return ret;
	ret = sdr_sysfs_add_flow(sdr_ctx_flow(ctx, arg->flow_id));
	if (ret)
		sdr_flow_destroy(ctx, arg->flow_id);
	return ret;
}

static int sdr_ioc_flow_connect(struct sdr_ctx *ctx, void *p)
{
	struct sdr_flow_connect *arg = p;

	if (arg->__reserved)
		return -EINVAL;
	return sdr_flow_connect(ctx, arg);
}

static int sdr_ioc_flow_rail(struct sdr_ctx *ctx, void *p)
{
	return sdr_flow_rail(ctx, p);
}

static int sdr_ioc_flow_destroy(struct sdr_ctx *ctx, void *p)
{
	struct sdr_flow_destroy *arg = p;

	struct sdr_flow *flow;

	if (arg->__reserved)
		return -EINVAL;
	flow = sdr_ctx_flow(ctx, arg->flow_id);
	if (!flow)
		return -ENOENT;
	/* flows/<id> goes first: no attribute method runs on a dying flow */
	sdr_sysfs_del_flow(flow);
	return sdr_flow_destroy(ctx, arg->flow_id);
}

static int sdr_ioc_flow_info(struct sdr_ctx *ctx, void *p)
{
	return sdr_flow_info(ctx, p);
}

static int sdr_ioc_recv_post(struct sdr_ctx *ctx, void *p)
{
	struct sdr_recv_post *arg = p;

	if ((!(arg->flags & SDR_RECV_GROUP) && arg->group) ||
	    (!(arg->flags & SDR_RECV_MR) &&
	     (arg->mr_id || arg->mr_addr || arg->mr_len)))
		return -EINVAL;
	return sdr_recv_post(ctx, arg);
}

static int sdr_ioc_recv_complete(struct sdr_ctx *ctx, void *p)
{
	struct sdr_recv_complete *arg = p;

	if (arg->__reserved)
		return -EINVAL;
	return sdr_recv_complete(ctx, arg);
}

static int sdr_ioc_send_post(struct sdr_ctx *ctx, void *p)
{
	return sdr_send_post(ctx, p);
}

static int sdr_ioc_group(struct sdr_ctx *ctx, void *p)
{
	return sdr_group_ioctl(ctx, p);
}

static int sdr_ioc_mr_reg(struct sdr_ctx *ctx, void *p)
{
	return sdr_mr_reg(ctx, p);
}

static int sdr_ioc_mr_dereg(struct sdr_ctx *ctx, void *p)
{
	return sdr_mr_dereg(ctx, p);
}

static int sdr_ioc_kex_check(struct sdr_ctx *ctx, void *p)
{
	return sdr_kex_check(p);
}

static int sdr_ioc_flow_modify(struct sdr_ctx *ctx, void *p)
{
	struct sdr_flow_modify *arg = p;
	struct sdr_flow *flow = sdr_ctx_flow(ctx, arg->flow_id);
	int ret;

	if (!flow)
		return -ENOENT;
	if (!arg->flags)
		return -EINVAL;
	/* checked first: an error changes nothing */
	if ((arg->flags & SDR_FLOW_MODIFY_EC) &&
	    !sdr_ec_geometry_ok(arg->ec_k, arg->ec_m))
		return -EINVAL;
	if ((arg->flags & SDR_FLOW_MODIFY_RATE) &&
	    (arg->size < SDR_FLOW_MODIFY_SIZE_V3 ||
	     arg->rate_mbit > SDR_RATE_MAX_MBIT))
		return -EINVAL;
	if (arg->__reserved)
		return -EINVAL;
	if (arg->flags & SDR_FLOW_MODIFY_POLICY) {
		ret = sdr_flow_set_policy(flow, arg->policy);
		if (ret)
			return ret;
	}
	if (arg->flags & SDR_FLOW_MODIFY_EC) {
		ret = sdr_flow_set_ec(flow, arg->ec_k, arg->ec_m);
		if (ret)
			return ret;
	}
	if (arg->flags & SDR_FLOW_MODIFY_RATE)
		sdr_flow_set_rate(flow, arg->rate_mbit);
	return 0;
}

/*
 * SDR_IOC_QUERY.  Answers from constants, the policy table and what the
 * bound device was set up with, so it needs no lock: it works before bind
 * and after removal.
 */
static int sdr_ioc_query(struct sdr_ctx *ctx, void *p)
{
	const struct sdr_policy_ops *ops;
	struct sdr_query *arg = p;
	struct sdr_dev *sdev;
	u32 id;

	if (arg->__reserved0 ||
	    memchr_inv(arg->__reserved, 0, sizeof(arg->__reserved)))
		return -EINVAL;
	arg->abi_version = SDR_ABI_VERSION;
	arg->policy_nr = SDR_POLICY_NR;
	arg->policies = 0;
	sdr_for_each_policy(ops, id)
		arg->policies |= BIT_ULL(id);
	if (sdr_policy_runs(SDR_POLICY_AUTO))
		arg->policies |= BIT_ULL(SDR_POLICY_AUTO);
	arg->features = SDR_FEATURE_AUTH | SDR_FEATURE_MULTIPATH |
			SDR_FEATURE_RAILS | SDR_FEATURE_GROUPS | SDR_FEATURE_MR |
			SDR_FEATURE_KEX | SDR_FEATURE_AEAD;
	arg->ec_max_k = SDR_EC_MAX_K;
	arg->ec_max_m = SDR_EC_MAX_M;
	arg->max_msg_size = SDR_MAX_MSG_SIZE;
	arg->max_msgs = SDR_MAX_MSGS;
	/* bound: its device's (fixed when it was set up); else the parameter */
	sdev = smp_load_acquire(&ctx->sdev);
	arg->paths_max = sdev ? sdev->nr_paths : READ_ONCE(sdr_dev_paths);
	return 0;
}

static_assert(SDR_POLICY_NR <= 64, "sdr_query.policies has 64 bits");

/*
 * SDR_*_SIZE_V1 is the first published size of each struct, a number in
 * the uapi: version 1 ends at its last field there, however the struct
 * grows after it.
 */
#define SDR_V1_ENDS_AT(type, last, v1) \
	static_assert(offsetofend(struct type, last) == (v1))

SDR_V1_ENDS_AT(sdr_bind, ring, SDR_BIND_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_create, pkt_bitmap, SDR_FLOW_CREATE_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_connect, peer, SDR_FLOW_CONNECT_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_destroy, __reserved, SDR_FLOW_DESTROY_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_info, spurious_retx, SDR_FLOW_INFO_SIZE_V1);
SDR_V1_ENDS_AT(sdr_recv_post, user_data, SDR_RECV_POST_SIZE_V1);
SDR_V1_ENDS_AT(sdr_recv_complete, __reserved, SDR_RECV_COMPLETE_SIZE_V1);
SDR_V1_ENDS_AT(sdr_send_post, group, SDR_SEND_POST_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_modify, policy, SDR_FLOW_MODIFY_SIZE_V1);
SDR_V1_ENDS_AT(sdr_query, __reserved, SDR_QUERY_SIZE_V1);
SDR_V1_ENDS_AT(sdr_flow_rail, ep_paths, SDR_FLOW_RAIL_SIZE_V1);
SDR_V1_ENDS_AT(sdr_group, user_data, SDR_GROUP_SIZE_V1);
SDR_V1_ENDS_AT(sdr_mr_reg, __reserved, SDR_MR_REG_SIZE_V1);
SDR_V1_ENDS_AT(sdr_mr_dereg, __reserved, SDR_MR_DEREG_SIZE_V1);
SDR_V1_ENDS_AT(sdr_kex_check, peer_kex, SDR_KEX_CHECK_SIZE_V1);
/* and the later versions at their last fields, the structs it knows */
static_assert(offsetofend(struct sdr_flow_create, ec_m) ==
	      SDR_FLOW_CREATE_SIZE_V2);
static_assert(offsetofend(struct sdr_flow_create, ep_paths) ==
	      SDR_FLOW_CREATE_SIZE_V3);
static_assert(offsetofend(struct sdr_flow_create, ep_auth) ==
	      SDR_FLOW_CREATE_SIZE_V4);
static_assert(sizeof(struct sdr_flow_create) == SDR_FLOW_CREATE_SIZE_V5);
static_assert(offsetofend(struct sdr_flow_connect, peer_paths) ==
	      SDR_FLOW_CONNECT_SIZE_V2);
static_assert(offsetofend(struct sdr_flow_connect, peer_auth) ==
	      SDR_FLOW_CONNECT_SIZE_V3);
static_assert(sizeof(struct sdr_flow_connect) == SDR_FLOW_CONNECT_SIZE_V4);
static_assert(offsetofend(struct sdr_flow_modify, ec_m) ==
	      SDR_FLOW_MODIFY_SIZE_V2);
static_assert(sizeof(struct sdr_flow_modify) == SDR_FLOW_MODIFY_SIZE_V3);
static_assert(offsetofend(struct sdr_recv_post, group) + 4 ==
	      SDR_RECV_POST_SIZE_V2);
static_assert(sizeof(struct sdr_recv_post) == SDR_RECV_POST_SIZE_V3);
static_assert(sizeof(struct sdr_send_post) == SDR_SEND_POST_SIZE_V2);

/* struct sdr_ioctl_op.mode */
#define SDR_OP_OUT	BIT(0)	/* copy the struct back on success */
#define SDR_OP_UNLOCKED	BIT(1)	/* fn takes its own locks, or needs none */
#define SDR_OP_UNBOUND	BIT(2)	/* allowed before SDR_IOC_BIND */

struct sdr_ioctl_op {
	u32	size;		/* the struct this kernel knows */
	u32	size_v1;	/* the least it takes: SDR_*_SIZE_V1 */
	u32	flags;		/* flags it accepts */
	u32	mode;		/* SDR_OP_* */
	int	(*fn)(struct sdr_ctx *ctx, void *arg);
};

#define SDR_OP(_struct, _v1, _flags, _mode, _fn) {			\
	.size = sizeof(struct _struct), .size_v1 = (_v1),		\
	.flags = (_flags), .mode = (_mode), .fn = (_fn) }

static const struct sdr_ioctl_op sdr_ioctl_ops[] = {
	[_IOC_NR(SDR_IOC_BIND)] =
		SDR_OP(sdr_bind, SDR_BIND_SIZE_V1, SDR_BIND_BY_GID,
		       SDR_OP_OUT | SDR_OP_UNLOCKED | SDR_OP_UNBOUND,
		       sdr_ioc_bind),
	[_IOC_NR(SDR_IOC_FLOW_CREATE)] =
		SDR_OP(sdr_flow_create, SDR_FLOW_CREATE_SIZE_V1,
		       SDR_FLOW_CREATE_MR, SDR_OP_OUT, sdr_ioc_flow_create),
	[_IOC_NR(SDR_IOC_FLOW_CONNECT)] =
		SDR_OP(sdr_flow_connect, SDR_FLOW_CONNECT_SIZE_V1, 0, 0,
		       sdr_ioc_flow_connect),
	[_IOC_NR(SDR_IOC_FLOW_DESTROY)] =
		SDR_OP(sdr_flow_destroy, SDR_FLOW_DESTROY_SIZE_V1, 0, 0,
		       sdr_ioc_flow_destroy),
	[_IOC_NR(SDR_IOC_FLOW_INFO)] =
		SDR_OP(sdr_flow_info, SDR_FLOW_INFO_SIZE_V1, 0, SDR_OP_OUT,
		       sdr_ioc_flow_info),
	[_IOC_NR(SDR_IOC_RECV_POST)] =
		SDR_OP(sdr_recv_post, SDR_RECV_POST_SIZE_V1,
		       SDR_RECV_GROUP | SDR_RECV_MR,
		       SDR_OP_OUT,
		       sdr_ioc_recv_post),
	[_IOC_NR(SDR_IOC_RECV_COMPLETE)] =
		SDR_OP(sdr_recv_complete, SDR_RECV_COMPLETE_SIZE_V1, 0, 0,
		       sdr_ioc_recv_complete),
	[_IOC_NR(SDR_IOC_SEND_POST)] =
		SDR_OP(sdr_send_post, SDR_SEND_POST_SIZE_V1,
		       SDR_SEND_USER_PTR | SDR_SEND_STREAM_START |
		       SDR_SEND_STREAM_CONT | SDR_SEND_STREAM_END |
		       SDR_SEND_GROUP | SDR_SEND_MR | SDR_SEND_PARTS,
		       SDR_OP_OUT | SDR_OP_UNLOCKED, sdr_ioc_send_post),
	[_IOC_NR(SDR_IOC_FLOW_MODIFY)] =
		SDR_OP(sdr_flow_modify, SDR_FLOW_MODIFY_SIZE_V1,
		       SDR_FLOW_MODIFY_POLICY | SDR_FLOW_MODIFY_EC |
		       SDR_FLOW_MODIFY_RATE, 0,
		       sdr_ioc_flow_modify),
	[_IOC_NR(SDR_IOC_QUERY)] =
		SDR_OP(sdr_query, SDR_QUERY_SIZE_V1, 0,
		       SDR_OP_OUT | SDR_OP_UNLOCKED | SDR_OP_UNBOUND,
		       sdr_ioc_query),
	[_IOC_NR(SDR_IOC_FLOW_RAIL)] =
		SDR_OP(sdr_flow_rail, SDR_FLOW_RAIL_SIZE_V1, 0, SDR_OP_OUT,
		       sdr_ioc_flow_rail),
	[_IOC_NR(SDR_IOC_GROUP)] =
		SDR_OP(sdr_group, SDR_GROUP_SIZE_V1, 0, SDR_OP_OUT,
		       sdr_ioc_group),
	/* they pin and unpin the process's pages: no rwsem, no ctx->lock */
	[_IOC_NR(SDR_IOC_MR_REG)] =
		SDR_OP(sdr_mr_reg, SDR_MR_REG_SIZE_V1, 0,
		       SDR_OP_OUT | SDR_OP_UNLOCKED, sdr_ioc_mr_reg),
	[_IOC_NR(SDR_IOC_MR_DEREG)] =
		SDR_OP(sdr_mr_dereg, SDR_MR_DEREG_SIZE_V1, 0, SDR_OP_UNLOCKED,
		       sdr_ioc_mr_dereg),
	/* reads the caller's keyrings only */
	[_IOC_NR(SDR_IOC_KEX_CHECK)] =
		SDR_OP(sdr_kex_check, SDR_KEX_CHECK_SIZE_V1, 0,
		       SDR_OP_UNLOCKED | SDR_OP_UNBOUND, sdr_ioc_kex_check),
};

union sdr_ioctl_buf {
	struct sdr_bind			bind;
	struct sdr_flow_create		flow_create;
	struct sdr_flow_connect		flow_connect;
	struct sdr_flow_destroy		flow_destroy;
	struct sdr_flow_info		flow_info;
	struct sdr_recv_post		recv_post;
	struct sdr_recv_complete	recv_complete;
	struct sdr_send_post		send_post;
	struct sdr_flow_modify		flow_modify;
	struct sdr_query		query;
	struct sdr_flow_rail		flow_rail;
	struct sdr_group		group;
	struct sdr_mr_reg		mr_reg;
	struct sdr_mr_dereg		mr_dereg;
	struct sdr_kex_check		kex_check;
};

static long sdr_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sdr_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct sdr_ioctl_op *op;
	union sdr_ioctl_buf buf;
	struct sdr_dev *sdev;
	u32 usize, *hdr;
	int ret;

	if (_IOC_TYPE(cmd) != SDR_IOC_MAGIC ||
	    _IOC_NR(cmd) >= ARRAY_SIZE(sdr_ioctl_ops) ||
	    cmd != _IO(SDR_IOC_MAGIC, _IOC_NR(cmd)))
		return -ENOTTY;
	op = &sdr_ioctl_ops[_IOC_NR(cmd)];

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->size_v1)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;
	hdr = (u32 *)&buf;
	if (hdr[1] & ~op->flags)
		return -EOPNOTSUPP;

	/* ctx->sdev goes from NULL to a device once (bind), never back. */
	sdev = smp_load_acquire(&ctx->sdev);
	if (!sdev && !(op->mode & SDR_OP_UNBOUND))
		return -EBADFD;
	if (op->mode & SDR_OP_UNLOCKED) {
		ret = op->fn(ctx, &buf);
		goto out_copy;
	}
	if (sdev) {
		down_read(&sdev->rwsem);
		if (sdev->dying) {
			up_read(&sdev->rwsem);
			return -ENODEV;
		}
		/* a broken device still lets flows be looked at and destroyed */
		if (READ_ONCE(sdev->broken) && cmd != SDR_IOC_FLOW_DESTROY &&
		    cmd != SDR_IOC_FLOW_INFO) {
			up_read(&sdev->rwsem);
			return -EIO;
		}
	}
	mutex_lock(&ctx->lock);
	ret = op->fn(ctx, &buf);
	mutex_unlock(&ctx->lock);
	if (sdev)
		up_read(&sdev->rwsem);

out_copy:
	/* an older caller's struct may end before the one the kernel knows */
	if (!ret && (op->mode & SDR_OP_OUT) &&
	    copy_to_user(uarg, &buf, min(usize, op->size)))
		ret = -EFAULT;
	return ret;
}

static int sdr_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sdr_ctx *ctx = file->private_data;
	u64 cookie = (u64)vma->vm_pgoff << PAGE_SHIFT;
	size_t len = vma->vm_end - vma->vm_start, size;
	struct sdr_flow *flow = NULL;
	struct sdr_mcharge *charge = NULL;
	bool writable = true;
	void *mem;
	int ret;

	/* pairs with bind's release: ring and flows are set up */
	if (!smp_load_acquire(&ctx->sdev))
		return -EBADFD;
	if (!cookie) {
		mem = ctx->ring;
		size = ctx->ring_size;
	} else {
		/*
		 * No ctx->lock here: ioctls fault user pages under it, and
		 * mmap_lock is held here.  A flow reference keeps the
		 * regions alive instead.
		 */
		rcu_read_lock();
		flow = sdr_flow_lookup_rcu(&ctx->flows, cookie >> 40);
		rcu_read_unlock();
		if (!flow)
			return -EINVAL;
		ret = sdr_flow_mmap_area(flow, cookie, &mem, &size, &writable,
					 &charge);
		if (ret)
			goto out_put;
	}
	ret = -EINVAL;
	if (len != size)
		goto out_put;
	ret = -EACCES;
	if (!writable) {
		if (vma->vm_flags & VM_WRITE)
			goto out_put;
		sdr_vm_flags_clear(vma, VM_MAYWRITE);
	}
	ret = sdr_map_vmalloc(vma, mem, size, charge);
out_put:
	sdr_mcharge_put(charge);
	if (flow)
		sdr_flow_put(flow);
	return ret;
}

static __poll_t sdr_poll(struct file *file, poll_table *wait)
{
	struct sdr_ctx *ctx = file->private_data;
	/* pairs with bind's release: the ring is set up */
	struct sdr_dev *sdev = smp_load_acquire(&ctx->sdev);
	__poll_t mask = 0;

	if (!sdev)
		return EPOLLERR;
	poll_wait(file, &ctx->wq, wait);
	if (sdr_ctx_cq_ready(ctx))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(sdev->dying))
		mask |= EPOLLERR | EPOLLHUP;
	else if (READ_ONCE(sdev->broken))
		mask |= EPOLLERR;
	return mask;
}

static int sdr_open(struct inode *inode, struct file *file)
{
	struct sdr_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->acct = sdr_acct_new();
	if (IS_ERR(ctx->acct)) {
		int ret = PTR_ERR(ctx->acct);

		kfree(ctx);
		return ret;
	}
	mutex_init(&ctx->lock);
	spin_lock_init(&ctx->cq_lock);
	spin_lock_init(&ctx->grp_lock);
	xa_init(&ctx->flows);
	xa_init_flags(&ctx->mrs, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&ctx->wq);
	ctx->pid = task_tgid_nr(current);
	atomic_inc(&sdr_nr_ctx);
	file->private_data = ctx;
	return 0;
}

static int sdr_release(struct inode *inode, struct file *file)
{
	struct sdr_ctx *ctx = file->private_data;
	struct sdr_dev *sdev = ctx->sdev;
	struct sdr_flow *flow;
	unsigned long id;

	if (sdev) {
		down_read(&sdev->rwsem);
		mutex_lock(&ctx->lock);
		xa_for_each(&ctx->flows, id, flow)
			sdr_sysfs_del_flow(flow);
		sdr_flow_destroy_all(ctx);
		mutex_unlock(&ctx->lock);
		up_read(&sdev->rwsem);
		sdr_dev_put(sdev);
	}
	xa_destroy(&ctx->flows);
	/* after the flows: what their receives and sends hold goes with them */
	sdr_mr_ctx_release(ctx);
	sdr_group_free(ctx);
	if (ctx->ring) {
		vfree(ctx->ring);
		sdr_acct_uncharge(ctx->acct, ctx->ring_size);
	}
	sdr_acct_put(ctx->acct);
	kfree(ctx);
	atomic_dec(&sdr_nr_ctx);
	return 0;
}

static const struct file_operations sdr_fops = {
	.owner		= THIS_MODULE,
	.open		= sdr_open,
	.release	= sdr_release,
	.unlocked_ioctl	= sdr_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= sdr_mmap,
	.poll		= sdr_poll,
	.llseek		= noop_llseek,
};

/*
 * The mode devtmpfs gives /dev/sdr (root:root): 0660 by default, so only
 * root and the group a udev rule names (make install's: "sdr") use sdr.
 * Read at load: "modprobe sdr dev_mode=0666" opens it to everyone.
 */
static unsigned int sdr_dev_mode = 0660;

static int sdr_dev_mode_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 8, &v);

	if (ret)
		return ret;
	if (!v || v > 0777)	/* misc takes 0 for "the default, 0600" */
		return -EINVAL;
	sdr_dev_mode = v;
	return 0;
}

static int sdr_dev_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%04o\n", sdr_dev_mode);
}

static const struct kernel_param_ops sdr_dev_mode_ops = {
	.set	= sdr_dev_mode_set,
	.get	= sdr_dev_mode_get,
};
module_param_cb(dev_mode, &sdr_dev_mode_ops, NULL, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/sdr, octal, at load (make install's udev rule keeps them) [default 0660]");

/*
 * The group /dev/sdr goes to: devtmpfs makes it root's, and udev gives it
 * the group this names (make install's rule reads the parameter; it
 * cannot be set from here, as for every misc device).  A group name or
 * number, at load: "modprobe sdr dev_group=rdma".
 */
static char sdr_dev_group[33] = "sdr";

static int sdr_dev_group_set(const char *val, const struct kernel_param *kp)
{
	size_t i, n = strcspn(val, "\n");

	if (!n || n >= sizeof(sdr_dev_group) || val[n + (val[n] != 0)])
		return -EINVAL;
	/* what a group name may be (useradd's NAME_REGEX), or a number */
	for (i = 0; i < n; i++)
		if (!isalnum(val[i]) && val[i] != '_' &&
		    (val[i] != '-' || !i) && (val[i] != '$' || i != n - 1))
			return -EINVAL;
	memcpy(sdr_dev_group, val, n);
	sdr_dev_group[n] = 0;
	return 0;
}

static int sdr_dev_group_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", sdr_dev_group);
}

static const struct kernel_param_ops sdr_dev_group_ops = {
	.set	= sdr_dev_group_set,
	.get	= sdr_dev_group_get,
};
module_param_cb(dev_group, &sdr_dev_group_ops, NULL, 0444);
MODULE_PARM_DESC(dev_group, "Group udev gives /dev/sdr, a name or number, at load (make install's rule reads it) [default sdr]");

static struct miscdevice sdr_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "sdr",
	.fops	= &sdr_fops,
};

int sdr_cdev_init(void)
{
	sdr_misc.mode = sdr_dev_mode;
	return misc_register(&sdr_misc);
}

void sdr_cdev_exit(void)
{
	misc_deregister(&sdr_misc);
}
