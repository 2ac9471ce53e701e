// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: /sys/class/sdr/<ibdev>/ - one directory per bound device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/string.h>

#include "sdr.h"
#include "sdr_flow.h"
#include "sdr_stats.h"

static struct class *sdr_class;

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", dev_name(&sdev->ibdev->dev));
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t port_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sdev->port);
}
static DEVICE_ATTR_RO(port);

static ssize_t gid_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	union ib_gid gid;
	int ret;

	ret = sdr_dev_query_gid(sdev, &gid, NULL);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%pI6\n", gid.raw);
}
static DEVICE_ATTR_RO(gid);

static ssize_t gid_index_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	union ib_gid gid;
	u32 index;
	int ret;

	ret = sdr_dev_query_gid(sdev, &gid, &index);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%u\n", index);
}
static DEVICE_ATTR_RO(gid_index);

static ssize_t mtu_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sdr_dev_mtu(sdev));
}
static DEVICE_ATTR_RO(mtu);

/* The random Q_Key of the device's QPs: root's, like a flow's peer. */
static ssize_t qkey_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%#x\n", sdev->qkey);
}
static DEVICE_ATTR_ADMIN_RO(qkey);

static ssize_t nr_flows_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&sdev->nr_flows));
}
static DEVICE_ATTR_RO(nr_flows);

/* The receive ring: buffers made, posted now, and the most it grows to. */
static ssize_t recv_ring_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u %d %u\n", READ_ONCE(sdev->nr_rx),
			  atomic_read(&sdev->rx_posted), sdev->rx_cap);
}
static DEVICE_ATTR_RO(recv_ring);

/* counters/<name> and drops/<reason>: one u64 each, read-only. */
struct sdr_counter_attr {
	struct device_attribute	attr;
	bool			drop;
	int			index;
};

static ssize_t sdr_counter_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct sdr_counter_attr *ca = container_of(attr, struct sdr_counter_attr,
						   attr);
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	atomic64_t *c = ca->drop ? &sdev->drops[ca->index] :
				   &sdev->counters[ca->index];

	return sysfs_emit(buf, "%lld\n", atomic64_read(c));
}

#define SDR_COUNTER(_name, _idx) {					\
	.attr = __ATTR(_name, 0444, sdr_counter_show, NULL),		\
	.index = _idx,							\
}

static struct sdr_counter_attr sdr_counter_attrs[] = {
	SDR_COUNTER(tx_packets, SDR_DEV_TX_PACKETS),
	SDR_COUNTER(tx_bytes, SDR_DEV_TX_BYTES),
	SDR_COUNTER(rx_packets, SDR_DEV_RX_PACKETS),
	SDR_COUNTER(rx_bytes, SDR_DEV_RX_BYTES),
	SDR_COUNTER(tx_errors, SDR_DEV_TX_ERRORS),
	SDR_COUNTER(rx_errors, SDR_DEV_RX_ERRORS),
	SDR_COUNTER(qp_recoveries, SDR_DEV_QP_RECOVERIES),
	SDR_COUNTER(ctrl_dropped, SDR_DEV_CTRL_DROPPED),
	SDR_COUNTER(rx_grown, SDR_DEV_RX_GROWN),
	SDR_COUNTER(rx_err_length, SDR_DEV_RX_ERR_LENGTH),
	SDR_COUNTER(rx_err_local, SDR_DEV_RX_ERR_LOCAL),
	SDR_COUNTER(rx_err_other, SDR_DEV_RX_ERR_OTHER),
};

static struct attribute *sdr_counter_list[ARRAY_SIZE(sdr_counter_attrs) +
					  SDR_DEV_FLOW_SUMS + 1];

static const struct attribute_group sdr_counter_group = {
	.name	= "counters",
	.attrs	= sdr_counter_list,
};

/* Filled at init from the wire code's reason names. */
static struct sdr_counter_attr sdr_drop_attrs[SDR_DROP_NR];
static struct attribute *sdr_drop_list[SDR_DROP_NR];

static const struct attribute_group sdr_drop_group = {
	.name	= "drops",
	.attrs	= sdr_drop_list,
};

/* The QPN of each of the device's paths (uapi/sdr_uapi.h, "paths"). */
static ssize_t path_qpns_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	ssize_t n = 0;
	u32 i;

	for (i = 0; i < sdev->nr_paths; i++)
		n += sysfs_emit_at(buf, n, "%s%u", i ? " " : "",
				   sdev->path_qpn[i]);
	return n + sysfs_emit_at(buf, n, "\n");
}
static DEVICE_ATTR_RO(path_qpns);

static struct attribute *sdr_dev_attrs[] = {
	&dev_attr_nr_flows.attr,
	&dev_attr_recv_ring.attr,
	&dev_attr_path_qpns.attr,
	&dev_attr_ibdev.attr,
	&dev_attr_port.attr,
	&dev_attr_gid.attr,
	&dev_attr_gid_index.attr,
	&dev_attr_mtu.attr,
	&dev_attr_qkey.attr,
	NULL,
};

static const struct attribute_group sdr_dev_group = {
	.attrs = sdr_dev_attrs,
};

static const struct attribute_group *sdr_dev_groups[] = {
	&sdr_dev_group,
	&sdr_counter_group,
	&sdr_drop_group,
	NULL,
};

int sdr_sysfs_add_dev(struct sdr_dev *sdev)
{
	struct device *dev;

	dev = device_create_with_groups(sdr_class, &sdev->ibdev->dev,
					MKDEV(0, 0), sdev, sdr_dev_groups,
					"%s", sdev->name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	sdev->flows_kobj = kobject_create_and_add("flows", &dev->kobj);
	if (!sdev->flows_kobj) {
		device_unregister(dev);
		return -ENOMEM;
	}
	sdev->cdev = dev;
	return 0;
}

void sdr_sysfs_del_dev(struct sdr_dev *sdev)
{
	kobject_put(sdev->flows_kobj);
	sdev->flows_kobj = NULL;
	device_unregister(sdev->cdev);
	sdev->cdev = NULL;
}

/* ------------------------------------------------------------------ */
/* flows/<id>/: one directory per flow; it holds a flow reference. */

struct sdr_flow_kobj {
	struct kobject		kobj;
	struct sdr_flow		*flow;
};

static struct sdr_flow *sdr_kobj_flow(const struct kobject *kobj)
{
	return container_of(kobj, struct sdr_flow_kobj, kobj)->flow;
}

static const char * const sdr_state_names[] = {
	[SDR_FLOW_IDLE]		= "idle",
	[SDR_FLOW_CONNECTED]	= "connected",
	[SDR_FLOW_CLOSED]	= "closed",
	[SDR_FLOW_FAILED]	= "failed",
};

struct sdr_flow_attr {
	struct kobj_attribute	attr;
	enum sdr_flow_field	field;
};

static ssize_t sdr_flow_u64_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct sdr_flow_attr *fa = container_of(attr, struct sdr_flow_attr, attr);
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	u64 v;

	spin_lock_bh(&flow->lock);
	v = sdr_flow_field(flow, fa->field);
	spin_unlock_bh(&flow->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

#define SDR_FLOW_ATTR_MODE(_name, _field, _mode)			\
	static struct sdr_flow_attr sdr_fa_##_name = {			\
		.attr = __ATTR(_name, _mode, sdr_flow_u64_show, NULL),	\
		.field = _field,					\
	}
#define SDR_FLOW_ATTR(_name, _field) SDR_FLOW_ATTR_MODE(_name, _field, 0444)

/*
 * A flow's files belong to its owner (sdr_flow_ownership()): who it is
 * and whom it talks to, only the owner and root read.
 */
SDR_FLOW_ATTR_MODE(owner_pid, SDR_FF_OWNER_PID, 0400);
SDR_FLOW_ATTR_MODE(owner_uid, SDR_FF_OWNER_UID, 0400);
SDR_FLOW_ATTR(mtu, SDR_FF_MTU);
SDR_FLOW_ATTR(payload, SDR_FF_PAYLOAD);
SDR_FLOW_ATTR(chunk_size, SDR_FF_CHUNK);
SDR_FLOW_ATTR(max_msg_size, SDR_FF_MAX_MSG);
SDR_FLOW_ATTR(max_msgs, SDR_FF_MAX_MSGS);
SDR_FLOW_ATTR(sends_inflight, SDR_FF_SENDS);
SDR_FLOW_ATTR(recvs_posted, SDR_FF_RECVS);
SDR_FLOW_ATTR(send_mem, SDR_FF_SEND_MEM);
SDR_FLOW_ATTR(recv_mem, SDR_FF_RECV_MEM);
SDR_FLOW_ATTR(srtt_us, SDR_FF_SRTT_US);
SDR_FLOW_ATTR(none_window, SDR_FF_NONE_WINDOW);
SDR_FLOW_ATTR(paths, SDR_FF_PATHS);
SDR_FLOW_ATTR(credit_waits, SDR_FF_CREDIT_WAITS);
SDR_FLOW_ATTR(probes_tx, SDR_FF_PROBES_TX);
SDR_FLOW_ATTR(credits_tx, SDR_FF_CREDITS_TX);
SDR_FLOW_ATTR(tx_packets, SDR_FF_TX_PACKETS);
SDR_FLOW_ATTR(tx_bytes, SDR_FF_TX_BYTES);
SDR_FLOW_ATTR(rx_packets, SDR_FF_RX_PACKETS);
SDR_FLOW_ATTR(rx_bytes, SDR_FF_RX_BYTES);
SDR_FLOW_ATTR(rx_dropped, SDR_FF_RX_DROPPED);
SDR_FLOW_ATTR(retransmits, SDR_FF_RETX);
SDR_FLOW_ATTR(timeouts, SDR_FF_TIMEOUTS);
SDR_FLOW_ATTR(acks_tx, SDR_FF_ACKS_TX);
SDR_FLOW_ATTR(acks_rx, SDR_FF_ACKS_RX);
SDR_FLOW_ATTR(nacks_tx, SDR_FF_NACKS_TX);
SDR_FLOW_ATTR(nacks_rx, SDR_FF_NACKS_RX);
SDR_FLOW_ATTR(rnr_tx, SDR_FF_RNR_TX);
SDR_FLOW_ATTR(rnr_rx, SDR_FF_RNR_RX);
SDR_FLOW_ATTR(spurious_retx, SDR_FF_SPURIOUS);
SDR_FLOW_ATTR(msgs_sent, SDR_FF_MSGS_SENT);
SDR_FLOW_ATTR(msgs_received, SDR_FF_MSGS_RECEIVED);
SDR_FLOW_ATTR(msgs_failed, SDR_FF_MSGS_FAILED);
SDR_FLOW_ATTR(parity_sent, SDR_FF_PARITY_TX);
SDR_FLOW_ATTR(parity_received, SDR_FF_PARITY_RX);
SDR_FLOW_ATTR(pkts_recovered, SDR_FF_RECOVERED);
SDR_FLOW_ATTR(decodes, SDR_FF_DECODES);

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);

	return sysfs_emit(buf, "%s\n", sdr_policy_name(READ_ONCE(flow->policy)));
}

/*
 * One line per rail: index, device, the flow's paths on it, its state
 * (idle: not connected; up; gone: its device was removed) and the
 * flow's packets over it, out and in.
 */
static ssize_t rails_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	const struct sdr_rail *rl;
	const struct sdr_txq *q;
	ssize_t n = 0;
	u32 r, first, last;
	const char *state;

	spin_lock_bh(&flow->lock);
	for (r = 0; r < flow->nrails; r++) {
		rl = r ? flow->rails[r - 1] : NULL;
		q = sdr_flow_txq(flow, r);
		first = rl ? rl->first : 0;
		last = first + (rl ? rl->n : flow->rail0_paths) - 1;
		state = !rl ? "up" : rl->gone ? "gone" :
			rl->connected ? "up" : "idle";
		n += sysfs_emit_at(buf, n, "%u %s paths %u-%u %s tx %llu rx %llu\n",
				   r, (rl ? rl->sdev : flow->sdev)->name, first,
				   last, state, q->tx_packets, q->rx_packets);
	}
	spin_unlock_bh(&flow->lock);
	return n;
}
static struct kobj_attribute sdr_fa_rails = __ATTR_RO(rails);

/* Changing a live flow: its owner, or an administrator. */
static bool sdr_flow_may_change(struct sdr_flow *flow)
{
	return uid_eq(current_euid(), make_kuid(&init_user_ns, flow->owner_uid)) ||
	       capable(CAP_NET_ADMIN);
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	int policy, ret;

	policy = sdr_policy_parse(buf);
	if (policy < 0)
		return policy;
	if (!sdr_flow_may_change(flow))
		return -EPERM;
	ret = sdr_flow_set_policy(flow, policy);
	return ret ? ret : count;
}
static struct kobj_attribute sdr_fa_policy = __ATTR_RW(policy);

/* "K M": the EC geometry of EC messages posted from now on. */
static ssize_t ec_geometry_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	u32 k, m;

	spin_lock_bh(&flow->lock);
	k = flow->ec_k;
	m = flow->ec_m;
	spin_unlock_bh(&flow->lock);
	return sysfs_emit(buf, "%u %u\n", k, m);
}

static ssize_t ec_geometry_store(struct kobject *kobj,
				 struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	char tmp[24], *rest = tmp, *first;
	unsigned int k, m;
	int ret;

	/* two decimal numbers and one space between, a newline at most after */
	if (count >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, count);
	tmp[count] = 0;
	first = strsep(&rest, " ");
	if (!rest || kstrtouint(first, 10, &k) || kstrtouint(rest, 10, &m))
		return -EINVAL;
	if (!sdr_flow_may_change(flow))
		return -EPERM;
	ret = sdr_flow_set_ec(flow, k, m);
	return ret ? ret : count;
}
static struct kobj_attribute sdr_fa_ec_geometry = __ATTR_RW(ec_geometry);

/* The policies whose per-flow state the flow made, in id order. */
static ssize_t policies_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	unsigned long ready = READ_ONCE(flow->policies_ready);
	const struct sdr_policy_ops *ops;
	ssize_t n = 0;
	u32 i;

	sdr_for_each_policy_in(ops, i, ready)
		n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "",
				   sdr_policy_name(ops->id));
	return n + sysfs_emit_at(buf, n, "\n");
}
static struct kobj_attribute sdr_fa_policies = __ATTR_RO(policies);

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);

	return sysfs_emit(buf, "%s\n", sdr_state_names[READ_ONCE(flow->state)]);
}
static struct kobj_attribute sdr_fa_state = __ATTR_RO(state);

/* Packet authentication: off or the MAC (fixed at create). */
static ssize_t auth_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  sdr_auth_name(sdr_kobj_flow(kobj)->auth.alg));
}
static struct kobj_attribute sdr_fa_auth = __ATTR_RO(auth);

/*
 * What the flow's keys rest on (fixed at create): none (auth off),
 * ephemeral (X25519 alone: a sniffer cannot forge, a host answering the
 * connect in the peer's place could) or psk (the job secret too).
 */
static ssize_t kex_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  sdr_kex_name(sdr_auth_kex(&sdr_kobj_flow(kobj)->auth)));
}
static struct kobj_attribute sdr_fa_kex = __ATTR_RO(kex);

static ssize_t peer_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	ssize_t n;

	spin_lock_bh(&flow->lock);
	if (flow->state == SDR_FLOW_IDLE)
		n = sysfs_emit(buf, "-\n");
	else
		n = sysfs_emit(buf, "%pI6 %u %u\n", flow->peer_gid.raw,
			       flow->peer_qpn, flow->peer_flow);
	spin_unlock_bh(&flow->lock);
	return n;
}
static struct kobj_attribute sdr_fa_peer = __ATTR(peer, 0400, peer_show, NULL);

static struct attribute *sdr_flow_attrs[] = {
	&sdr_fa_owner_pid.attr.attr,
	&sdr_fa_owner_uid.attr.attr,
	&sdr_fa_policy.attr,
	&sdr_fa_rails.attr,
	&sdr_fa_ec_geometry.attr,
	&sdr_fa_policies.attr,
	&sdr_fa_state.attr,
	&sdr_fa_auth.attr,
	&sdr_fa_kex.attr,
	&sdr_fa_peer.attr,
	&sdr_fa_mtu.attr.attr,
	&sdr_fa_payload.attr.attr,
	&sdr_fa_chunk_size.attr.attr,
	&sdr_fa_max_msg_size.attr.attr,
	&sdr_fa_max_msgs.attr.attr,
	&sdr_fa_sends_inflight.attr.attr,
	&sdr_fa_recvs_posted.attr.attr,
	&sdr_fa_send_mem.attr.attr,
	&sdr_fa_recv_mem.attr.attr,
	&sdr_fa_srtt_us.attr.attr,
	&sdr_fa_none_window.attr.attr,
	&sdr_fa_paths.attr.attr,
	NULL,
};

static const struct attribute_group sdr_flow_group = {
	.attrs = sdr_flow_attrs,
};

static struct attribute *sdr_flow_counter_attrs[] = {
	&sdr_fa_tx_packets.attr.attr,
	&sdr_fa_tx_bytes.attr.attr,
	&sdr_fa_rx_packets.attr.attr,
	&sdr_fa_rx_bytes.attr.attr,
	&sdr_fa_rx_dropped.attr.attr,
	&sdr_fa_retransmits.attr.attr,
	&sdr_fa_timeouts.attr.attr,
	&sdr_fa_acks_tx.attr.attr,
	&sdr_fa_acks_rx.attr.attr,
	&sdr_fa_nacks_tx.attr.attr,
	&sdr_fa_nacks_rx.attr.attr,
	&sdr_fa_rnr_tx.attr.attr,
	&sdr_fa_rnr_rx.attr.attr,
	&sdr_fa_spurious_retx.attr.attr,
	&sdr_fa_msgs_sent.attr.attr,
	&sdr_fa_msgs_received.attr.attr,
	&sdr_fa_msgs_failed.attr.attr,
	&sdr_fa_parity_sent.attr.attr,
	&sdr_fa_parity_received.attr.attr,
	&sdr_fa_pkts_recovered.attr.attr,
	&sdr_fa_decodes.attr.attr,
	&sdr_fa_credit_waits.attr.attr,
	&sdr_fa_probes_tx.attr.attr,
	&sdr_fa_credits_tx.attr.attr,
	NULL,
};

static const struct attribute_group sdr_flow_counter_group = {
	.name = "counters",
	.attrs = sdr_flow_counter_attrs,
};

/*
 * flows/<id>/drops/<reason>: the packets of this flow dropped, by reason.
 * Only the reasons a packet can have once it is known to be the flow's
 * (the parser's own, before the flow is looked up, are the device's).
 */
static const int sdr_flow_drop_reasons[] = {
	SDR_DROP_FLAGS, SDR_DROP_POLICY, SDR_DROP_ACK, SDR_DROP_NO_FLOW,
	SDR_DROP_PEER, SDR_DROP_STALE, SDR_DROP_NO_RECV, SDR_DROP_GEOMETRY,
	SDR_DROP_DUP, SDR_DROP_MSGLEN, SDR_DROP_EC, SDR_DROP_NOMEM,
	SDR_DROP_TOKEN, SDR_DROP_ACK_CLAIM, SDR_DROP_AUTH, SDR_DROP_REPLAY,
};

struct sdr_flow_drop_attr {
	struct kobj_attribute	attr;
	int			reason;
};

static ssize_t sdr_flow_drop_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct sdr_flow_drop_attr *da = container_of(attr,
						     struct sdr_flow_drop_attr,
						     attr);
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	u64 v;

	spin_lock_bh(&flow->lock);
	v = flow->stats.drops[da->reason];
	spin_unlock_bh(&flow->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

/* Filled at init from the wire code's reason names. */
static struct sdr_flow_drop_attr
	sdr_flow_drop_attrs[ARRAY_SIZE(sdr_flow_drop_reasons)];
static struct attribute *sdr_flow_drop_list[ARRAY_SIZE(sdr_flow_drop_reasons) + 1];

static const struct attribute_group sdr_flow_drop_group = {
	.name = "drops",
	.attrs = sdr_flow_drop_list,
};

/*
 * flows/<id>/path/<figure>: the flow's paths (uapi/sdr_uapi.h, "paths"; their
 * number is flows/<id>/paths), one value per path, space separated, path
 * 0 first.  A flow on one path has
 * no per-path figures beyond its QPN and state: "-" for the others (the
 * flow's own are in its counters).  peer_qpns: the QPNs its peer sends
 * from ("-" before connect).
 */
enum sdr_path_fig {
	SDR_PFIG_QPN, SDR_PFIG_STATE, SDR_PFIG_INFLIGHT, SDR_PFIG_SRTT_US,
	SDR_PFIG_RTO_US, SDR_PFIG_LOSS_PCT, SDR_PFIG_TX_PACKETS, SDR_PFIG_UNTRACKED,
	SDR_PFIG_ACKED, SDR_PFIG_LOST, SDR_PFIG_DRAINS, SDR_PFIG_RESTORES,
	SDR_PFIG_PEER_QPNS,
};

static const char * const sdr_path_state_names[] = {
	[SDR_PATH_UP]		= "up",
	[SDR_PATH_DRAINED]	= "drained",
	[SDR_PATH_DOWN]		= "down",
};

struct sdr_path_attr {
	struct kobj_attribute	attr;
	enum sdr_path_fig	fig;
};

/* Figure @fig of path @i of @flow (flow->lock held, flow->ps set). */
static u64 sdr_path_fig(struct sdr_flow *flow, u32 i, enum sdr_path_fig fig)
{
	const struct sdr_path *p = &flow->ps->p[i];

	switch (fig) {
	case SDR_PFIG_INFLIGHT:	return p->inflight;
	case SDR_PFIG_SRTT_US:	return div_u64(p->rtt.srtt_ns, NSEC_PER_USEC);
	case SDR_PFIG_RTO_US:
		return p->rtt.samples ? div_u64(sdr_rtt_rto(&p->rtt),
						NSEC_PER_USEC) : 0;
	case SDR_PFIG_LOSS_PCT:	return p->loss_pct;
	case SDR_PFIG_TX_PACKETS:	return p->tx_pkts;
	case SDR_PFIG_UNTRACKED:	return p->untracked;
	case SDR_PFIG_ACKED:	return p->acked;
	case SDR_PFIG_LOST:	return p->lost;
	case SDR_PFIG_DRAINS:	return p->drains;
	case SDR_PFIG_RESTORES:	return p->restores;
	default:		return 0;
	}
}

static ssize_t sdr_path_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct sdr_path_attr *pa = container_of(attr, struct sdr_path_attr,
						attr);
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	ssize_t n = 0;
	u32 i;

	spin_lock_bh(&flow->lock);
	if (pa->fig == SDR_PFIG_PEER_QPNS) {
		for (i = 0; i < flow->peer_npaths; i++)
			n += sysfs_emit_at(buf, n, "%s%u", i ? " " : "",
					   flow->peer_path_qpn[i]);
		if (!flow->peer_npaths)
			n += sysfs_emit_at(buf, n, "-");
	}
	for (i = 0; pa->fig != SDR_PFIG_PEER_QPNS && i < flow->paths; i++) {
		const char *sep = i ? " " : "";

		if (pa->fig == SDR_PFIG_QPN)
			n += sysfs_emit_at(buf, n, "%s%u", sep,
					   flow->path_qpn[i]);
		else if (pa->fig == SDR_PFIG_STATE)
			n += sysfs_emit_at(buf, n, "%s%s", sep, flow->ps ?
				sdr_path_state_names[flow->ps->p[i].state] :
				"up");
		else if (!flow->ps)
			n += sysfs_emit_at(buf, n, "%s-", sep);
		else
			n += sysfs_emit_at(buf, n, "%s%llu", sep,
					   sdr_path_fig(flow, i, pa->fig));
	}
	spin_unlock_bh(&flow->lock);
	return n + sysfs_emit_at(buf, n, "\n");
}

#define SDR_PATH_ATTR(_name, _fig)					\
	static struct sdr_path_attr sdr_pa_##_name = {			\
		.attr = __ATTR(_name, 0444, sdr_path_show, NULL),	\
		.fig = _fig,						\
	}

SDR_PATH_ATTR(qpn, SDR_PFIG_QPN);
SDR_PATH_ATTR(state, SDR_PFIG_STATE);
SDR_PATH_ATTR(inflight, SDR_PFIG_INFLIGHT);
SDR_PATH_ATTR(srtt_us, SDR_PFIG_SRTT_US);
SDR_PATH_ATTR(rto_us, SDR_PFIG_RTO_US);
SDR_PATH_ATTR(loss_pct, SDR_PFIG_LOSS_PCT);
SDR_PATH_ATTR(tx_packets, SDR_PFIG_TX_PACKETS);
SDR_PATH_ATTR(untracked, SDR_PFIG_UNTRACKED);
SDR_PATH_ATTR(acked, SDR_PFIG_ACKED);
SDR_PATH_ATTR(lost, SDR_PFIG_LOST);
SDR_PATH_ATTR(drains, SDR_PFIG_DRAINS);
SDR_PATH_ATTR(restores, SDR_PFIG_RESTORES);
/* the peer's QPNs: the owner's and root's to read, as flows/<id>/peer */
static struct sdr_path_attr sdr_pa_peer_qpns = {
	.attr = __ATTR(peer_qpns, 0400, sdr_path_show, NULL),
	.fig = SDR_PFIG_PEER_QPNS,
};

static struct attribute *sdr_flow_path_list[] = {
	&sdr_pa_qpn.attr.attr,
	&sdr_pa_state.attr.attr,
	&sdr_pa_inflight.attr.attr,
	&sdr_pa_srtt_us.attr.attr,
	&sdr_pa_rto_us.attr.attr,
	&sdr_pa_loss_pct.attr.attr,
	&sdr_pa_tx_packets.attr.attr,
	&sdr_pa_untracked.attr.attr,
	&sdr_pa_acked.attr.attr,
	&sdr_pa_lost.attr.attr,
	&sdr_pa_drains.attr.attr,
	&sdr_pa_restores.attr.attr,
	&sdr_pa_peer_qpns.attr.attr,
	NULL,
};

static const struct attribute_group sdr_flow_path_group = {
	.name = "path",
	.attrs = sdr_flow_path_list,
};

/*
 * flows/<id>/auto/<name>: what AUTO chose and why (sdr_flow_auto.c);
 * a flow that never ran AUTO shows "sr" and zeros.
 */
struct sdr_auto_attr {
	struct kobj_attribute	attr;
	u32			idx;
};

static ssize_t sdr_auto_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct sdr_auto_attr *aa = container_of(attr, struct sdr_auto_attr,
						attr);
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	ssize_t n;

	spin_lock_bh(&flow->lock);
	n = sdr_flow_auto_show(flow, aa->idx, buf);
	spin_unlock_bh(&flow->lock);
	return n;
}

static struct sdr_auto_attr sdr_auto_attrs[SDR_AUTO_NSTATS];
static struct attribute *sdr_auto_list[SDR_AUTO_NSTATS + 1];

static const struct attribute_group sdr_flow_auto_group = {
	.name = "auto",
	.attrs = sdr_auto_list,
};

static void sdr_auto_attrs_init(void)
{
	u32 i;

	for (i = 0; i < SDR_AUTO_NSTATS; i++) {
		struct sdr_auto_attr *aa = &sdr_auto_attrs[i];

		sysfs_attr_init(&aa->attr.attr);
		aa->attr.attr.name = sdr_flow_auto_stats[i];
		aa->attr.attr.mode = 0444;
		aa->attr.show = sdr_auto_show;
		aa->idx = i;
		sdr_auto_list[i] = &aa->attr.attr;
	}
}

/*
 * flows/<id>/<policy>/<name>: what each policy this module runs shows of
 * the flow (struct sdr_policy_ops.stats), 0 until the flow readied it.
 * The groups are built at init from the policy table.
 */
struct sdr_pstat_attr {
	struct kobj_attribute		attr;
	const struct sdr_policy_ops	*ops;
	u32				idx;
};

static ssize_t sdr_pstat_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	struct sdr_pstat_attr *pa = container_of(attr, struct sdr_pstat_attr,
						 attr);
	struct sdr_flow *flow = sdr_kobj_flow(kobj);
	u64 v = 0;

	spin_lock_bh(&flow->lock);
	if (test_bit(pa->ops->id, &flow->policies_ready))
		v = pa->ops->stat(flow, pa->idx);
	spin_unlock_bh(&flow->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

/* the fixed groups, then one per policy with stats, then NULL */
#define SDR_FLOW_FIXED_GROUPS	5
static const struct attribute_group **sdr_flow_groups;
static struct attribute_group *sdr_pstat_groups;
static struct sdr_pstat_attr *sdr_pstat_attrs;
static struct attribute **sdr_pstat_lists;

static void sdr_pstat_free(void)
{
	kfree(sdr_flow_groups);
	kfree(sdr_pstat_groups);
	kfree(sdr_pstat_attrs);
	kfree(sdr_pstat_lists);
}

static int sdr_pstat_init(void)
{
	const struct sdr_policy_ops *ops;
	u32 i, j, ngroups = 0, nattrs = 0, g = 0, a = 0;

	sdr_for_each_policy(ops, i) {
		for (j = 0; ops->stats && ops->stats[j]; j++)
			nattrs++;
		if (j)
			ngroups++;
	}
	sdr_flow_groups = kcalloc(SDR_FLOW_FIXED_GROUPS + ngroups + 1,
				  sizeof(*sdr_flow_groups), GFP_KERNEL);
	sdr_pstat_groups = kcalloc(ngroups, sizeof(*sdr_pstat_groups),
				   GFP_KERNEL);
	sdr_pstat_attrs = kcalloc(nattrs, sizeof(*sdr_pstat_attrs), GFP_KERNEL);
	sdr_pstat_lists = kcalloc(nattrs + ngroups, sizeof(*sdr_pstat_lists),
				  GFP_KERNEL);
	if (!sdr_flow_groups || (ngroups && (!sdr_pstat_groups ||
	    !sdr_pstat_attrs || !sdr_pstat_lists))) {
		sdr_pstat_free();
		return -ENOMEM;
	}
	sdr_flow_groups[0] = &sdr_flow_group;
	sdr_flow_groups[1] = &sdr_flow_counter_group;
	sdr_flow_groups[2] = &sdr_flow_drop_group;
	sdr_flow_groups[3] = &sdr_flow_auto_group;
	sdr_flow_groups[4] = &sdr_flow_path_group;
	sdr_for_each_policy(ops, i) {
		struct attribute **list = &sdr_pstat_lists[a + g];

		if (!ops->stats || !ops->stats[0])
			continue;
		for (j = 0; ops->stats[j]; j++, a++) {
			struct sdr_pstat_attr *pa = &sdr_pstat_attrs[a];

			sysfs_attr_init(&pa->attr.attr);
			pa->attr.attr.name = ops->stats[j];
			pa->attr.attr.mode = 0444;
			pa->attr.show = sdr_pstat_show;
			pa->ops = ops;
			pa->idx = j;
			list[j] = &pa->attr.attr;
		}
		sdr_pstat_groups[g].name = sdr_policy_name(ops->id);
		sdr_pstat_groups[g].attrs = list;
		sdr_flow_groups[SDR_FLOW_FIXED_GROUPS + g] = &sdr_pstat_groups[g];
		g++;
	}
	return 0;
}

static void sdr_flow_kobj_release(struct kobject *kobj)
{
	struct sdr_flow_kobj *fk = container_of(kobj, struct sdr_flow_kobj,
						kobj);

	sdr_flow_put(fk->flow);
	kfree(fk);
}

/*
 * flows/<id>/ and its files are its owner's: the writable ones (policy,
 * ec_geometry) take its writes (their store checks the owner again, or
 * CAP_NET_ADMIN), the 0400 ones only its and root's reads.
 */
static sdr_get_ownership(sdr_flow_ownership)
{
	kuid_t owner = make_kuid(&init_user_ns, sdr_kobj_flow(kobj)->owner_uid);

	if (uid_valid(owner))
		*uid = owner;
}

static struct kobj_type sdr_flow_ktype = {
	.release	= sdr_flow_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.get_ownership	= sdr_flow_ownership,
	/* .default_groups: sdr_flow_groups, set by sdr_sysfs_init() */
};

int sdr_sysfs_add_flow(struct sdr_flow *flow)
{
	struct sdr_flow_kobj *fk;
	int ret;

	fk = kzalloc(sizeof(*fk), GFP_KERNEL);
	if (!fk)
		return -ENOMEM;
	sdr_flow_get(flow);
	fk->flow = flow;
	ret = kobject_init_and_add(&fk->kobj, &sdr_flow_ktype,
				   flow->sdev->flows_kobj, "%u", flow->id);
	if (ret) {
		kobject_put(&fk->kobj);
		return ret;
	}
	flow->kobj = &fk->kobj;
	return 0;
}

/* ------------------------------------------------------------------ */
/* counters/ of the device: totals of the per-flow counters below */

static ssize_t sdr_dev_sum_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct sdr_counter_attr *ca = container_of(attr, struct sdr_counter_attr,
						   attr);

	return sysfs_emit(buf, "%llu\n",
			  sdr_dev_flow_sum(dev_get_drvdata(dev), ca->index));
}

#define SDR_DEV_SUM(_name, _idx) {					\
	.attr = __ATTR(_name, 0444, sdr_dev_sum_show, NULL),		\
	.index = _idx,							\
}

static struct sdr_counter_attr sdr_dev_sum_attrs[] = {
	SDR_DEV_SUM(retransmits, 0),
	SDR_DEV_SUM(timeouts, 1),
	SDR_DEV_SUM(spurious_retx, 2),
	SDR_DEV_SUM(acks_tx, 3),
	SDR_DEV_SUM(acks_rx, 4),
	SDR_DEV_SUM(nacks_tx, 5),
	SDR_DEV_SUM(nacks_rx, 6),
	SDR_DEV_SUM(rnr_tx, 7),
	SDR_DEV_SUM(rnr_rx, 8),
	SDR_DEV_SUM(parity_sent, 9),
	SDR_DEV_SUM(parity_received, 10),
	SDR_DEV_SUM(pkts_recovered, 11),
	SDR_DEV_SUM(decodes, 12),
	SDR_DEV_SUM(msgs_sent, 13),
	SDR_DEV_SUM(msgs_received, 14),
	SDR_DEV_SUM(msgs_failed, 15),
};
static_assert(ARRAY_SIZE(sdr_dev_sum_attrs) == SDR_DEV_FLOW_SUMS);

/* Removes flows/<id>; after it returns no attribute method runs. */
void sdr_sysfs_del_flow(struct sdr_flow *flow)
{
	struct kobject *kobj = xchg(&flow->kobj, NULL);

	if (!kobj)
		return;
	kobject_del(kobj);
	kobject_put(kobj);
}

int sdr_sysfs_init(void)
{
	int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(sdr_counter_attrs); i++)
		sdr_counter_list[n++] = &sdr_counter_attrs[i].attr.attr;
	for (i = 0; i < SDR_DEV_FLOW_SUMS; i++)
		sdr_counter_list[n++] = &sdr_dev_sum_attrs[i].attr.attr;
	n = 0;
	/* Every reason but "none" (0) gets a file. */
	for (i = 1; i < SDR_DROP_NR; i++) {
		struct sdr_counter_attr *ca = &sdr_drop_attrs[n];

		sysfs_attr_init(&ca->attr.attr);
		ca->attr.attr.name = sdr_drop_reason_name(i);
		ca->attr.attr.mode = 0444;
		ca->attr.show = sdr_counter_show;
		ca->drop = true;
		ca->index = i;
		sdr_drop_list[n++] = &ca->attr.attr;
	}
	for (i = 0; i < ARRAY_SIZE(sdr_flow_drop_reasons); i++) {
		struct sdr_flow_drop_attr *da = &sdr_flow_drop_attrs[i];

		sysfs_attr_init(&da->attr.attr);
		da->attr.attr.name = sdr_drop_reason_name(sdr_flow_drop_reasons[i]);
		da->attr.attr.mode = 0444;
		da->attr.show = sdr_flow_drop_show;
		da->reason = sdr_flow_drop_reasons[i];
		sdr_flow_drop_list[i] = &da->attr.attr;
	}
	sdr_auto_attrs_init();
	if (sdr_pstat_init())
		return -ENOMEM;
	sdr_flow_ktype.default_groups = sdr_flow_groups;
	sdr_class = sdr_class_create("sdr");
	if (IS_ERR(sdr_class)) {
		sdr_pstat_free();
		return PTR_ERR(sdr_class);
	}
	return 0;
}

void sdr_sysfs_exit(void)
{
	class_destroy(sdr_class);
	sdr_pstat_free();
}
