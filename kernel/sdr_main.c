// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: software-defined reliability over UD - module init and ib_client.
 *
 * sdr binds to every RoCE device as it appears (ib_client add) and releases
 * it in remove.  A bound device is a struct sdr_dev on sdr_devs; contexts
 * (open /dev/sdr files) hold a reference to it, so remove() first marks it
 * dying, then tears down everything that uses the ib_device, and the
 * memory goes with the last reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "sdr.h"

#define CREATE_TRACE_POINTS
#include "sdr_trace.h"

/* Guards sdr_devs. */
DEFINE_MUTEX(sdr_devs_lock);
LIST_HEAD(sdr_devs);
atomic_t sdr_nr_ctx = ATOMIC_INIT(0);
atomic_t sdr_nr_flows = ATOMIC_INIT(0);
static atomic_t sdr_nr_devs = ATOMIC_INIT(0);
struct workqueue_struct *sdr_wq;

/*
 * Module parameters.  Each is range checked: a write out of range fails
 * with EINVAL and keeps the old value.
 */
struct sdr_param_range {
	unsigned int	*val;
	unsigned int	min;
	unsigned int	max;
};

static int sdr_param_set(const char *val, const struct kernel_param *kp)
{
	const struct sdr_param_range *r = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < r->min || v > r->max)
		return -EINVAL;
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int sdr_param_get(char *buf, const struct kernel_param *kp)
{
	const struct sdr_param_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r->val));
}

static const struct kernel_param_ops sdr_param_ops = {
	.set	= sdr_param_set,
	.get	= sdr_param_get,
};

#define SDR_PARAM(name, def, lo, hi, perm, desc)			\
	unsigned int sdr_##name = def;					\
	static struct sdr_param_range sdr_##name##_range = {		\
		&sdr_##name, lo, hi };					\
	module_param_cb(name, &sdr_param_ops, &sdr_##name##_range, perm); \
	MODULE_PARM_DESC(name, desc " [" #lo ".." #hi ", default " #def "]")

SDR_PARAM(recv_depth, 2048, 64, 16384, 0444,
	  "Receive buffers (pages) posted per device, read at bind");
SDR_PARAM(send_depth, 512, 16, 16384, 0444,
	  "Send contexts (packets in flight) per device, read at bind");
SDR_PARAM(max_region_mb, 1024, 1, 65536, 0644,
	  "Largest receive plus send region of one flow, MiB");
SDR_PARAM(none_idle_ms, 500, 1, 60000, 0644,
	  "Policy NONE: complete receives with holes once the flow saw no packet this long");
SDR_PARAM(default_policy, 0, 0, 2, 0644,
	  "Policy of flows created with SDR_POLICY_DEFAULT: 0 none, 1 sr, 2 ec");
SDR_PARAM(chunk_pkts, 16, 1, 1024, 0644,
	  "Packets per bitmap chunk of flows created with chunk_size 0");
SDR_PARAM(rto_min_us, 1000, 10, 10000000, 0644,
	  "SR: retransmission timeout floor, us (read at flow creation)");
SDR_PARAM(rto_max_us, 2000000, 1000, 60000000, 0644,
	  "SR: retransmission timeout cap (and backoff cap), us");
SDR_PARAM(rto_init_us, 100000, 100, 10000000, 0644,
	  "SR: retransmission timeout before the first RTT sample, us");
SDR_PARAM(alpha_pct, 25, 0, 1000, 0644,
	  "SR: RTO = SRTT + max(alpha% of SRTT, 4 RTTVAR)");
SDR_PARAM(dead_ms, 10000, 100, 3600000, 0644,
	  "SR: a peer silent this long fails the flow, ms");
SDR_PARAM(ack_every, 16, 1, 1024, 0644,
	  "SR: the receiver ACKs after this many new packets");
SDR_PARAM(ack_delay_us, 1000, 1, 1000000, 0644,
	  "SR: ... or this long after an unacknowledged packet, us");
SDR_PARAM(reorder_us, 5000, 1, 10000000, 0644,
	  "SR: a hole younger than this is reordering, not loss (no NACK yet), us");
SDR_PARAM(nack_interval_us, 20000, 100, 10000000, 0644,
	  "SR: time between NACK rounds of one message, us (about an RTT)");
SDR_PARAM(max_inflight, 256, 1, 65536, 0644,
	  "SR: packets in flight per flow (keep below the peer's recv_depth)");
SDR_PARAM(ec_k, 32, 1, 64, 0644,
	  "EC: data packets per submessage of messages posted from now on");
SDR_PARAM(ec_m, 8, 1, 32, 0644,
	  "EC: parity packets per full submessage (a short last one of kg gets max(m*kg/k, min(m, kg)))");
SDR_PARAM(ec_beta_pct, 100, 0, 10000, 0644,
	  "EC: a lost packet's RTO waits beta% of SRTT more, for parity to repair it");
SDR_PARAM(fail_qp_recovery, 0, 0, 1, 0644,
	  "Testing: 1 makes QP recoveries fail, as on a broken device");
SDR_PARAM(none_window, 512, 16, 16384, 0644,
	  "Policy NONE: packets a flow created from now on lets its peer have on the way (receive credits)");
SDR_PARAM(none_reorder_pkts, 1024, 0, 1048576, 0644,
	  "Policy NONE: packets of the flow to wait for reordered ones once the sender is done with a message");

static struct ib_client sdr_ib_client;

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

/* Look up a live device by name; returns it with a reference, or NULL. */
struct sdr_dev *sdr_dev_get_by_name(const char *name)
{
	struct sdr_dev *sdev, *found = NULL;

	mutex_lock(&sdr_devs_lock);
	list_for_each_entry(sdev, &sdr_devs, list) {
		if (!sdev->dying && !strcmp(sdev->name, name)) {
			kref_get(&sdev->ref);
			found = sdev;
			break;
		}
	}
	mutex_unlock(&sdr_devs_lock);
	return found;
}

/* Look up a live device by the GID it uses; with a reference, or NULL. */
struct sdr_dev *sdr_dev_get_by_gid(const u8 *gid)
{
	struct sdr_dev *sdev, *found = NULL;
	union ib_gid g;

	mutex_lock(&sdr_devs_lock);
	list_for_each_entry(sdev, &sdr_devs, list) {
		if (sdev->dying || sdr_dev_query_gid(sdev, &g, NULL) ||
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

static int sdr_ib_add(struct ib_device *ibdev)
{
	struct sdr_dev *sdev;
	u32 port;
	int ret;

	rdma_for_each_port(ibdev, port)
		if (rdma_protocol_roce(ibdev, port))
			break;
	if (port > rdma_end_port(ibdev)) {
		pr_info("%s: not a RoCE device, not binding\n",
			dev_name(&ibdev->dev));
		return -EOPNOTSUPP;
	}
	if (ibdev->attrs.max_send_sge < 3) {
		pr_info("%s: needs 3 send SGEs, device has %d, not binding\n",
			dev_name(&ibdev->dev), ibdev->attrs.max_send_sge);
		return -EOPNOTSUPP;
	}

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	kref_init(&sdev->ref);
	sdev->ibdev = ibdev;
	sdev->port = port;
	strscpy(sdev->name, dev_name(&ibdev->dev), sizeof(sdev->name));
	init_rwsem(&sdev->rwsem);
	spin_lock_init(&sdev->tx_lock);
	spin_lock_init(&sdev->stats_lock);
	INIT_LIST_HEAD(&sdev->tx_free);
	INIT_LIST_HEAD(&sdev->tx_flows);
	init_waitqueue_head(&sdev->tx_wait);
	xa_init_flags(&sdev->flows, XA_FLAGS_ALLOC1);
	atomic_inc(&sdr_nr_devs);

	ret = sdr_net_init(sdev);
	if (ret) {
		pr_info("%s: cannot set up the UD transport (%d), not binding\n",
			sdev->name, ret);
		goto err_put;
	}
	ret = sdr_sysfs_add_dev(sdev);
	if (ret)
		goto err_net;

	mutex_lock(&sdr_devs_lock);
	list_add_tail(&sdev->list, &sdr_devs);
	mutex_unlock(&sdr_devs_lock);
	ib_set_client_data(ibdev, &sdr_ib_client, sdev);
	pr_info("%s: bound, port %u, mtu %u\n", sdev->name, port,
		sdr_dev_mtu(sdev));
	return 0;

err_net:
	sdr_net_stop(sdev);
	sdr_net_free(sdev);
err_put:
	sdr_dev_put(sdev);
	return ret;
}

/*
 * The device is going away: stop new users, fail every flow's pending
 * work, drain the transport, drop what holds the ib_device, then free.
 * Contexts keep their (now dead) flows until they close.
 */
static void sdr_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;
	struct sdr_flow *flow;
	unsigned long id;
	struct ib_ah *ah;

	mutex_lock(&sdr_devs_lock);
	list_del(&sdev->list);
	mutex_unlock(&sdr_devs_lock);

	down_write(&sdev->rwsem);
	sdev->dying = true;
	xa_for_each(&sdev->flows, id, flow) {
		sdr_flow_shutdown(flow, SDR_STATUS_FLUSHED);
		sdr_sysfs_del_flow(flow);
	}
	sdr_net_stop(sdev);
	xa_for_each(&sdev->flows, id, flow) {
		ah = xchg(&flow->ah, NULL);
		if (ah)
			rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		xa_erase(&sdev->flows, id);
		atomic_dec(&sdev->nr_flows);
	}
	/* Flows freed meanwhile destroy their address handles there. */
	flush_workqueue(sdr_wq);
	sdr_net_free(sdev);
	up_write(&sdev->rwsem);

	sdr_sysfs_del_dev(sdev);
	pr_info("%s: released\n", sdev->name);
	sdr_dev_put(sdev);
}

static void sdr_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;

	mutex_lock(&sdr_devs_lock);
	strscpy(sdev->name, dev_name(&ibdev->dev), sizeof(sdev->name));
	mutex_unlock(&sdr_devs_lock);
}

static struct ib_client sdr_ib_client = {
	.name	= "sdr",
	.add	= sdr_ib_add,
	.remove	= sdr_ib_remove,
	.rename	= sdr_ib_rename,
};

static int __init sdr_init(void)
{
	int ret;

	sdr_wq = alloc_workqueue("sdr", WQ_UNBOUND, 0);
	if (!sdr_wq)
		return -ENOMEM;
	ret = sdr_sysfs_init();
	if (ret)
		goto err_wq;
	ret = sdr_cdev_init();
	if (ret)
		goto err_sysfs;
	ret = ib_register_client(&sdr_ib_client);
	if (ret)
		goto err_cdev;
	return 0;

err_cdev:
	sdr_cdev_exit();
err_sysfs:
	sdr_sysfs_exit();
err_wq:
	destroy_workqueue(sdr_wq);
	return ret;
}

static void __exit sdr_exit(void)
{
	/* No context can be open: each holds a module reference. */
	ib_unregister_client(&sdr_ib_client);
	sdr_cdev_exit();
	sdr_sysfs_exit();
	/* Flows freed after their device went still free from here. */
	destroy_workqueue(sdr_wq);
	rcu_barrier();
	if (atomic_read(&sdr_nr_devs) || atomic_read(&sdr_nr_ctx) ||
	    atomic_read(&sdr_nr_flows))
		pr_err("leak: %d devices, %d contexts, %d flows still allocated\n",
		       atomic_read(&sdr_nr_devs), atomic_read(&sdr_nr_ctx),
		       atomic_read(&sdr_nr_flows));
}

module_init(sdr_init);
module_exit(sdr_exit);

MODULE_AUTHOR("sdr developers");
MODULE_DESCRIPTION("Software-defined reliability over RDMA UD queue pairs");
MODULE_LICENSE("GPL");
