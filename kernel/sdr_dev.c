// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: the bound devices (struct sdr_dev), their registry and lifetime,
 * what sdr asks of a device's port, and the module's workqueue and leak
 * counters.  Calls nothing else of sdr.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/nsproxy.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "sdr.h"

/* Guards sdr_devs. */
DEFINE_MUTEX(sdr_devs_lock);
LIST_HEAD(sdr_devs);
atomic_t sdr_nr_ctx = ATOMIC_INIT(0);
atomic_t sdr_nr_flows = ATOMIC_INIT(0);
static atomic_t sdr_nr_devs = ATOMIC_INIT(0);
struct workqueue_struct *sdr_wq;

int sdr_dev_init(void)
{
	sdr_wq = alloc_workqueue("sdr", WQ_UNBOUND, 0);
	return sdr_wq ? 0 : -ENOMEM;
}

/* Module exit, once every device, context and flow should be gone. */
void sdr_dev_exit(void)
{
	/* Flows freed after their device went still free from here. */
	destroy_workqueue(sdr_wq);
	rcu_barrier();
	if (atomic_read(&sdr_nr_devs) || atomic_read(&sdr_nr_ctx) ||
	    atomic_read(&sdr_nr_flows))
		pr_err("leak: %d devices, %d contexts, %d flows still allocated\n",
		       atomic_read(&sdr_nr_devs), atomic_read(&sdr_nr_ctx),
		       atomic_read(&sdr_nr_flows));
}

/* A new device on @port of @ibdev, with one reference, not yet listed. */
struct sdr_dev *sdr_dev_alloc(struct ib_device *ibdev, u32 port)
{
	struct sdr_dev *sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);

	if (!sdev)
		return NULL;
	kref_init(&sdev->ref);
	sdev->ibdev = ibdev;
	sdev->port = port;
	strscpy(sdev->name, dev_name(&ibdev->dev), sizeof(sdev->name));
	/* random, so a sender must have seen ours; the top bit is privileged */
	sdev->qkey = get_random_u32() & ~SDR_QKEY_CONTROLLED;
	init_rwsem(&sdev->rwsem);
	spin_lock_init(&sdev->tx_lock);
	spin_lock_init(&sdev->stats_lock);
	INIT_LIST_HEAD(&sdev->tx_free);
	INIT_LIST_HEAD(&sdev->tx_flows);
	init_waitqueue_head(&sdev->tx_wait);
	xa_init_flags(&sdev->flows, XA_FLAGS_ALLOC1);
	atomic_inc(&sdr_nr_devs);
	return sdev;
}

void sdr_dev_list_add(struct sdr_dev *sdev)
{
	mutex_lock(&sdr_devs_lock);
	list_add_tail(&sdev->list, &sdr_devs);
	mutex_unlock(&sdr_devs_lock);
}

void sdr_dev_list_del(struct sdr_dev *sdev)
{
	mutex_lock(&sdr_devs_lock);
	list_del(&sdev->list);
	mutex_unlock(&sdr_devs_lock);
}

void sdr_dev_rename(struct sdr_dev *sdev, const char *name)
{
	mutex_lock(&sdr_devs_lock);
	strscpy(sdev->name, name, sizeof(sdev->name));
	mutex_unlock(&sdr_devs_lock);
}

static void sdr_dev_release(struct kref *ref)
{
	struct sdr_dev *sdev = container_of(ref, struct sdr_dev, ref);

	atomic_dec(&sdr_nr_devs);
	kfree(sdev);
}

void sdr_dev_put(struct sdr_dev *sdev)
{
	kref_put(&sdev->ref, sdr_dev_release);
}

/*
 * Whether the calling process may use @sdev: its RDMA device is one the
 * caller's network namespace reaches, as ib_core decides for its own users
 * (every device in the default shared mode; in exclusive mode, "rdma
 * system set netns exclusive", only those of the namespace).
 */
static bool sdr_dev_visible(const struct sdr_dev *sdev)
{
	return rdma_dev_access_netns(sdev->ibdev, current->nsproxy->net_ns);
}

/*
 * Look up a live device the caller may use by name; returns it with a
 * reference, or NULL.
 */
struct sdr_dev *sdr_dev_get_by_name(const char *name)
{
	struct sdr_dev *sdev, *found = NULL;

	mutex_lock(&sdr_devs_lock);
	list_for_each_entry(sdev, &sdr_devs, list) {
		if (!sdev->dying && !strcmp(sdev->name, name) &&
		    sdr_dev_visible(sdev)) {
			kref_get(&sdev->ref);
			found = sdev;
			break;
		}
	}
	mutex_unlock(&sdr_devs_lock);
	return found;
}

/*
 * Look up a live device the caller may use by the GID it uses; with a
 * reference, or NULL.
 */
struct sdr_dev *sdr_dev_get_by_gid(const u8 *gid)
{
	struct sdr_dev *sdev, *found = NULL;
	union ib_gid g;

	mutex_lock(&sdr_devs_lock);
	list_for_each_entry(sdev, &sdr_devs, list) {
		if (sdev->dying || !sdr_dev_visible(sdev) ||
		    sdr_dev_query_gid(sdev, &g, NULL) ||
		    memcmp(g.raw, gid, sizeof(g.raw)))
			continue;
		kref_get(&sdev->ref);
		found = sdev;
		break;
	}
	mutex_unlock(&sdr_devs_lock);
	return found;
}

/*
 * The GID sdr uses on a port: the first RoCE v2 GID that carries an IPv4
 * address (what rdma link add on an addressed netdev creates), else the
 * first RoCE v2 GID, else index 0.  The table changes with the netdev's
 * addresses, so this is asked each time, never cached.
 */
int sdr_dev_query_gid(struct sdr_dev *sdev, union ib_gid *gid, u32 *index)
{
	const struct ib_gid_attr *attr;
	int v2 = -1, v4 = -1;
	u32 i, len;

	len = rdma_port_get_link_layer(sdev->ibdev, sdev->port) ==
	      IB_LINK_LAYER_ETHERNET ?
	      sdev->ibdev->port_data[sdev->port].immutable.gid_tbl_len : 1;
	for (i = 0; i < len && v4 < 0; i++) {
		attr = rdma_get_gid_attr(sdev->ibdev, sdev->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			if (v2 < 0)
				v2 = i;
			if (ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))
				v4 = i;
		}
		rdma_put_gid_attr(attr);
	}
	i = v4 >= 0 ? v4 : v2 >= 0 ? v2 : 0;
	if (index)
		*index = i;
	return rdma_query_gid(sdev->ibdev, sdev->port, i, gid);
}

/* Active IB MTU of the port in bytes (what one UD send may carry). */
u32 sdr_dev_mtu(struct sdr_dev *sdev)
{
	struct ib_port_attr attr;

	if (ib_query_port(sdev->ibdev, sdev->port, &attr))
		return 0;
	return ib_mtu_enum_to_int(attr.active_mtu);
}
