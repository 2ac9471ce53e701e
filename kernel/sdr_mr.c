// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: registered application memory (SDR_IOC_MR_REG, SDR_IOC_MR_DEREG).
 *
 * A registration pins the pages of a range of the process's memory
 * (long-term, FOLL_WRITE, as ib_umem pins them), charges them as the
 * regions are charged (sdr_acct: RLIMIT_MEMLOCK, pinned_vm, sdr's limits)
 * and maps them into one contiguous kernel range with vmap(), so that a
 * receive lands in them and a send goes from them through the same code
 * as the receive and send regions: a kernel pointer, no fault possible.
 *
 * Lifetime: the context's table (ctx->mrs) holds one reference; each
 * receive or send that uses the registration holds another, taken under
 * the table's lock.  SDR_IOC_MR_DEREG removes a registration only while
 * the table's is its only reference, so it frees it at once, in process
 * context.  At close, what posted receives or sends still hold is freed
 * by the last of them, from a work item (they may let go in softirq).
 * Calls only sdr_acct.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "sdr.h"

struct sdr_mr {
	refcount_t		ref;
	u32			id;
	u64			addr;		/* the process's range */
	u64			len;
	struct page		**pages;
	unsigned long		npages;
	unsigned long		pinned;		/* of npages */
	u8			*kva;		/* vmap of the pages */
	struct sdr_acct		*acct;		/* charged to it */
	struct work_struct	free_work;
};

static void sdr_mr_free(struct sdr_mr *mr)
{
	if (mr->kva)
		vunmap(mr->kva);
	if (mr->pinned)
		unpin_user_pages_dirty_lock(mr->pages, mr->pinned, true);
	kvfree(mr->pages);
	sdr_acct_uncharge(mr->acct, mr->npages << PAGE_SHIFT);
	sdr_acct_put(mr->acct);
	kfree(mr);
}

static void sdr_mr_free_work(struct work_struct *work)
{
	sdr_mr_free(container_of(work, struct sdr_mr, free_work));
}

u32 sdr_mr_id(const struct sdr_mr *mr)
{
	return mr->id;
}

/* A user's reference back: any context, softirq included. */
void sdr_mr_put(struct sdr_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		queue_work(sdr_wq, &mr->free_work);
}

/* Pin [addr, addr + len) page by page into @mr (may sleep, faults). */
static int sdr_mr_pin(struct sdr_mr *mr)
{
	unsigned long start = mr->addr & PAGE_MASK;
	int n;

	while (mr->pinned < mr->npages) {
		n = pin_user_pages_fast(start + (mr->pinned << PAGE_SHIFT),
					min_t(unsigned long, mr->npages - mr->pinned,
					      INT_MAX >> PAGE_SHIFT),
					FOLL_WRITE | FOLL_LONGTERM,
					mr->pages + mr->pinned);
		if (n <= 0)
			return n ? n : -EFAULT;
		mr->pinned += n;
		cond_resched();
	}
	return 0;
}

int sdr_mr_reg(struct sdr_ctx *ctx, struct sdr_mr_reg *arg)
{
	struct sdr_mr *mr;
	u32 id;
	int ret;

	if (arg->__reserved || !arg->len || arg->len > SDR_MR_LEN_MAX ||
	    arg->addr + arg->len < arg->addr)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(arg->addr), arg->len))
		return -EFAULT;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	refcount_set(&mr->ref, 1);
	INIT_WORK(&mr->free_work, sdr_mr_free_work);
	mr->addr = arg->addr;
	mr->len = arg->len;
	mr->npages = (PAGE_ALIGN(arg->addr + arg->len) -
		      (arg->addr & PAGE_MASK)) >> PAGE_SHIFT;
	ret = sdr_acct_charge(ctx->acct, mr->npages << PAGE_SHIFT);
	if (ret) {
		kfree(mr);
		return ret;
	}
	sdr_acct_get(ctx->acct);
	mr->acct = ctx->acct;
	ret = -ENOMEM;
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		goto err_free;
	ret = sdr_mr_pin(mr);
	if (ret)
		goto err_free;
	ret = -ENOMEM;
	mr->kva = vmap(mr->pages, mr->npages, VM_MAP, PAGE_KERNEL);
	if (!mr->kva)
		goto err_free;
	if (atomic_inc_return(&ctx->nr_mrs) > READ_ONCE(sdr_ctx_max_mrs)) {
		ret = -EMFILE;
		goto err_count;
	}
	ret = xa_alloc(&ctx->mrs, &id, mr, xa_limit_32b, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_count;
	mr->id = id;
	arg->mr_id = id;
	return 0;

err_count:
	atomic_dec(&ctx->nr_mrs);
err_free:
	sdr_mr_free(mr);
	return ret;
}

int sdr_mr_dereg(struct sdr_ctx *ctx, struct sdr_mr_dereg *arg)
{
	struct sdr_mr *mr;

	if (arg->__reserved)
		return -EINVAL;
	xa_lock(&ctx->mrs);
	mr = xa_load(&ctx->mrs, arg->mr_id);
	if (!mr) {
		xa_unlock(&ctx->mrs);
		return -ENOENT;
	}
	/* users take theirs under this lock: none can come now */
	if (refcount_read(&mr->ref) != 1) {
		xa_unlock(&ctx->mrs);
		return -EBUSY;
	}
	__xa_erase(&ctx->mrs, arg->mr_id);
	xa_unlock(&ctx->mrs);
	atomic_dec(&ctx->nr_mrs);
	if (refcount_dec_and_test(&mr->ref))
		sdr_mr_free(mr);
	return 0;
}

/*
 * Registration @id of @ctx for [@addr, @addr + @len), with a reference
 * for the caller (sdr_mr_put() gives it back), and the kernel address of
 * @addr in *@kva.  ERR_PTR(-ENOENT) or ERR_PTR(-EFAULT) (the range is not
 * all inside it).  Process context (the posts).
 */
struct sdr_mr *sdr_mr_use(struct sdr_ctx *ctx, u32 id, u64 addr, u64 len,
			  u8 **kva)
{
	struct sdr_mr *mr;

	xa_lock(&ctx->mrs);
	mr = xa_load(&ctx->mrs, id);
	if (!mr) {
		mr = ERR_PTR(-ENOENT);
	} else if (addr < mr->addr || len > mr->len ||
		   addr - mr->addr > mr->len - len) {
		mr = ERR_PTR(-EFAULT);
	} else {
		refcount_inc(&mr->ref);
		*kva = mr->kva + offset_in_page(mr->addr) + (addr - mr->addr);
	}
	xa_unlock(&ctx->mrs);
	return mr;
}

/* The context closes: its registrations go with their last user. */
void sdr_mr_ctx_release(struct sdr_ctx *ctx)
{
	struct sdr_mr *mr;
	unsigned long id;

	xa_for_each(&ctx->mrs, id, mr) {
		xa_erase(&ctx->mrs, id);
		atomic_dec(&ctx->nr_mrs);
		if (refcount_dec_and_test(&mr->ref))
			sdr_mr_free(mr);
	}
	xa_destroy(&ctx->mrs);
}
