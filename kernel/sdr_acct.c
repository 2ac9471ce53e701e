// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: what a context's memory and flows are charged to, and the memory
 * itself.
 *
 * A context's opener pays for what it maps: the completion ring and each
 * flow's regions are charged, as io_uring and ib_umem charge theirs, to
 * the user's RLIMIT_MEMLOCK (user->locked_vm, unless the opener had
 * CAP_IPC_LOCK) and to the mm's pinned_vm; to sdr's own limits per file
 * descriptor and per user (module parameters ctx_max_flows, ctx_max_mb,
 * user_max_flows, user_max_mb); and, allocated with __GFP_ACCOUNT, to the
 * memory cgroup.  One struct sdr_acct per context holds the references;
 * each flow holds one on it until it is freed, each registration and
 * each charge of mapped memory (struct sdr_mcharge) one until it is
 * given back.  What a flow's sends hold (copies of user data, sender
 * state, parity) is charged the same way, within the flow's own bound
 * (sdr_flow_lib.c).  Calls nothing else of sdr.
 */
#include <linux/memcontrol.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "sdr.h"

/* sdr's own counts of one user, across its contexts (sdr_users). */
struct sdr_uacct {
	refcount_t		ref;
	u32			uid;
	atomic_t		flows;
	atomic64_t		pages;
};

static DEFINE_XARRAY(sdr_users);
static DEFINE_MUTEX(sdr_users_lock);	/* entries come and go under it */

static struct sdr_uacct *sdr_uacct_get(u32 uid)
{
	struct sdr_uacct *ua;

	mutex_lock(&sdr_users_lock);
	ua = xa_load(&sdr_users, uid);
	if (ua) {
		refcount_inc(&ua->ref);
		goto out;
	}
	ua = kzalloc(sizeof(*ua), GFP_KERNEL);
	if (!ua)
		goto out;
	refcount_set(&ua->ref, 1);
	ua->uid = uid;
	if (xa_err(xa_store(&sdr_users, uid, ua, GFP_KERNEL))) {
		kfree(ua);
		ua = NULL;
	}
out:
	mutex_unlock(&sdr_users_lock);
	return ua;
}

static void sdr_uacct_put(struct sdr_uacct *ua)
{
	mutex_lock(&sdr_users_lock);
	if (refcount_dec_and_test(&ua->ref)) {
		xa_erase(&sdr_users, ua->uid);
		kfree(ua);
	}
	mutex_unlock(&sdr_users_lock);
}

/* The opener of the current file: who pays for the context (may sleep). */
struct sdr_acct *sdr_acct_new(void)
{
	struct sdr_acct *a;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return ERR_PTR(-ENOMEM);
	a->ua = sdr_uacct_get(from_kuid(&init_user_ns, current_uid()));
	if (!a->ua) {
		kfree(a);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&a->ref);
	a->user = get_uid(current_user());
	a->mm = current->mm;
	mmgrab(a->mm);
	a->unlimited = capable(CAP_IPC_LOCK);
	a->memlock_pages = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	a->memcg = get_mem_cgroup_from_mm(current->mm);
	return a;
}

static void sdr_acct_release(struct kref *ref)
{
	struct sdr_acct *a = container_of(ref, struct sdr_acct, ref);

	WARN_ON_ONCE(atomic64_read(&a->pages) || atomic_read(&a->flows));
	sdr_uacct_put(a->ua);
	mem_cgroup_put(a->memcg);
	mmdrop(a->mm);
	free_uid(a->user);
	kfree(a);
}

void sdr_acct_get(struct sdr_acct *a)
{
	kref_get(&a->ref);
}

void sdr_acct_put(struct sdr_acct *a)
{
	if (a)
		kref_put(&a->ref, sdr_acct_release);
}

/* Add @n to @v unless that passes @limit: 0, or -1 with nothing added. */
static int sdr_add_below(atomic64_t *v, s64 n, s64 limit)
{
	s64 cur = atomic64_read(v);

	do {
		if (cur + n > limit)
			return -1;
	} while (!atomic64_try_cmpxchg(v, &cur, cur + n));
	return 0;
}

static int sdr_add_below32(atomic_t *v, int n, int limit)
{
	int cur = atomic_read(v);

	do {
		if (cur + n > limit)
			return -1;
	} while (!atomic_try_cmpxchg(v, &cur, cur + n));
	return 0;
}

/*
 * Charge @bytes (rounded up to pages) to @a: -ENOMEM, with nothing
 * charged, when that would pass the context's or the user's sdr limit or
 * the opener's RLIMIT_MEMLOCK (as it was at open; CAP_IPC_LOCK: none).
 */
int sdr_acct_charge(struct sdr_acct *a, size_t bytes)
{
	s64 n = PAGE_ALIGN(bytes) >> PAGE_SHIFT;
	s64 ctx_max = (s64)READ_ONCE(sdr_ctx_max_mb) << (20 - PAGE_SHIFT);
	s64 user_max = (s64)READ_ONCE(sdr_user_max_mb) << (20 - PAGE_SHIFT);
	atomic_long_t *locked = &a->user->locked_vm;
	long cur;

	if (sdr_add_below(&a->pages, n, ctx_max))
		return -ENOMEM;
	if (sdr_add_below(&a->ua->pages, n, user_max))
		goto undo_ctx;
	cur = atomic_long_read(locked);
	do {
		if (!a->unlimited && cur + n > (long)a->memlock_pages)
			goto undo_user;
	} while (!atomic_long_try_cmpxchg(locked, &cur, cur + n));
	atomic64_add(n, &a->mm->pinned_vm);
	return 0;

undo_user:
	atomic64_sub(n, &a->ua->pages);
undo_ctx:
	atomic64_sub(n, &a->pages);
	return -ENOMEM;
}

void sdr_acct_uncharge(struct sdr_acct *a, size_t bytes)
{
	s64 n = PAGE_ALIGN(bytes) >> PAGE_SHIFT;

	atomic64_sub(n, &a->mm->pinned_vm);
	atomic_long_sub(n, &a->user->locked_vm);
	atomic64_sub(n, &a->ua->pages);
	atomic64_sub(n, &a->pages);
}

/*
 * Allocations made for @a from here on charge its memory cgroup, though
 * they are made by a worker or in softirq (where nothing would be
 * charged); until sdr_acct_memcg_leave() with what this returned.
 */
struct mem_cgroup *sdr_acct_memcg_enter(struct sdr_acct *a)
{
	return set_active_memcg(a->memcg);
}

void sdr_acct_memcg_leave(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

/*
 * The charge of memory a process maps (a flow's regions).  A page
 * vm_insert_pages() put in a mapping lives as long as the mapping, freed
 * memory or not, so its charge must too: the flow holds one reference,
 * each mapping (VMA: fork and split take theirs in open) one more, and
 * the last gives the charge back.  Destroying a flow therefore needs no
 * unmapping first and cannot fail, and nothing stays mapped uncharged.
 */
struct sdr_mcharge {
	refcount_t		ref;
	struct sdr_acct		*acct;
	size_t			bytes;
};

/* Charge @bytes to @a (sdr_acct_charge()), held by the caller. */
struct sdr_mcharge *sdr_mcharge_new(struct sdr_acct *a, size_t bytes)
{
	struct sdr_mcharge *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	int ret;

	if (!c)
		return ERR_PTR(-ENOMEM);
	ret = sdr_acct_charge(a, bytes);
	if (ret) {
		kfree(c);
		return ERR_PTR(ret);
	}
	refcount_set(&c->ref, 1);
	sdr_acct_get(a);
	c->acct = a;
	c->bytes = bytes;
	return c;
}

struct sdr_mcharge *sdr_mcharge_get(struct sdr_mcharge *c)
{
	refcount_inc(&c->ref);
	return c;
}

/* May sleep (the account's last reference may go with it). */
void sdr_mcharge_put(struct sdr_mcharge *c)
{
	if (!c || !refcount_dec_and_test(&c->ref))
		return;
	sdr_acct_uncharge(c->acct, c->bytes);
	sdr_acct_put(c->acct);
	kfree(c);
}

static void sdr_mcharge_vm_open(struct vm_area_struct *vma)
{
	sdr_mcharge_get(vma->vm_private_data);
}

static void sdr_mcharge_vm_close(struct vm_area_struct *vma)
{
	sdr_mcharge_put(vma->vm_private_data);
}

static const struct vm_operations_struct sdr_mcharge_vm_ops = {
	.open	= sdr_mcharge_vm_open,
	.close	= sdr_mcharge_vm_close,
};

/*
 * One flow more: -EMFILE when the context already has ctx_max_flows or
 * the user user_max_flows of them.
 */
int sdr_acct_flow_add(struct sdr_acct *a)
{
	if (sdr_add_below32(&a->flows, 1, READ_ONCE(sdr_ctx_max_flows)))
		return -EMFILE;
	if (sdr_add_below32(&a->ua->flows, 1, READ_ONCE(sdr_user_max_flows))) {
		atomic_dec(&a->flows);
		return -EMFILE;
	}
	return 0;
}

void sdr_acct_flow_del(struct sdr_acct *a)
{
	atomic_dec(&a->ua->flows);
	atomic_dec(&a->flows);
}

/*
 * Zeroed memory a process will map (sdr_map_vmalloc()), charged to the
 * memory cgroup: over its limit the allocation fails (NORETRY: no OOM
 * kill for it), as it fails over sdr's limits.
 */
void *sdr_vmalloc_user(size_t size)
{
	return __vmalloc(PAGE_ALIGN(size), GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			 __GFP_NORETRY | __GFP_NOWARN);
}

/*
 * Map all of @mem (sdr_vmalloc_user(), @size bytes) at @vma, mmap_lock
 * held; the mapping holds a reference on @c (NULL: the memory's owner
 * lives as long as any mapping of it, as a context's ring does).
 */
int sdr_map_vmalloc(struct vm_area_struct *vma, void *mem, size_t size,
		    struct sdr_mcharge *c)
{
	unsigned long addr = vma->vm_start, left, n, i;
	struct page *pages[32];
	int ret;

	if (vma->vm_end - vma->vm_start != PAGE_ALIGN(size))
		return -EINVAL;
	/* as remap_vmalloc_range(): no growing it, no core dump of it */
	sdr_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (left = PAGE_ALIGN(size) >> PAGE_SHIFT; left; left -= n) {
		n = min_t(unsigned long, left, ARRAY_SIZE(pages));
		for (i = 0; i < n; i++)
			pages[i] = vmalloc_to_page(mem + (addr - vma->vm_start) +
						   i * PAGE_SIZE);
		i = n;
		ret = vm_insert_pages(vma, addr, pages, &i);
		if (ret)
			return ret;
		addr += n * PAGE_SIZE;
	}
	/* only now: a failed mmap is undone without close */
	if (c) {
		vma->vm_ops = &sdr_mcharge_vm_ops;
		vma->vm_private_data = sdr_mcharge_get(c);
	}
	return 0;
}
