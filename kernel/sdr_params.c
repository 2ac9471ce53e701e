// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: module parameters, the defaults of what a device or flow is made
 * with.  A leaf: it calls nothing else of sdr.
 */
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include "sdr.h"

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
	  "Receive buffers (pages) posted per device at bind: the floor of the ring");
/* the literal ranges below are these (modinfo shows them as written) */
static_assert(SDR_RX_MAX == 65536);
static_assert(SDR_RATE_MAX_MBIT == 1000000);
SDR_PARAM(recv_max, 16384, 64, 65536, 0444,
	  "Receive buffers a device's ring grows to with its flows (at least recv_depth; the device's QP limit caps it), read at bind");
SDR_PARAM(flow_rx_window, 4096, 16, 65536, 0644,
	  "Receive buffers a device's ring grows by for each flow on it, up to recv_max; its flows' share is the window their senders keep to");
SDR_PARAM(send_depth, 512, 16, 16384, 0444,
	  "Send contexts (packets in flight) per device, read at bind");
SDR_PARAM(dev_paths, 4, 1, SDR_PATHS_MAX, 0444,
	  "QPs (paths) per device a flow can spread its packets over, read at bind");
SDR_PARAM(max_region_mb, 1024, 1, 65536, 0644,
	  "Largest receive plus send region and state area of one flow, MiB");
SDR_PARAM(ctx_max_flows, 1024, 1, 32768, 0644,
	  "Flows one open /dev/sdr may hold (more: EMFILE)");
SDR_PARAM(ctx_max_mrs, 4096, 1, 1048576, 0644,
	  "Memory registrations one open /dev/sdr may hold (more: EMFILE)");
SDR_PARAM(ctx_max_mb, 4096, 1, 1048576, 0644,
	  "Memory one open /dev/sdr may map (its ring and its flows' regions), MiB (more: ENOMEM)");
SDR_PARAM(user_max_flows, 4096, 1, 1048576, 0644,
	  "Flows one user's open /dev/sdr files may hold together (more: EMFILE)");
SDR_PARAM(user_max_mb, 16384, 1, 1048576, 0644,
	  "Memory one user's open /dev/sdr files may map together, MiB (more: ENOMEM)");
SDR_PARAM(flow_send_max_mb, 1024, 1, 65536, 0644,
	  "Kernel memory one flow's sends may hold (copies of user-pointer data, stream part tables, SR/EC sender state, parity), MiB (more: EAGAIN while its sends hold some, else ENOMEM)");
SDR_PARAM(flow_recv_max_mb, 64, 1, 65536, 0644,
	  "EC parity one flow's receives may hold for submessages not yet decoded, MiB (more: the parity is dropped, SR repairs)");
SDR_PARAM(none_idle_ms, 500, 1, 60000, 0644,
	  "Policy NONE: complete receives with holes once the flow saw no packet this long");
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
SDR_PARAM(max_inflight, 65536, 16, 4194304, 0644,
	  "SR/EC/ADAPTIVE: the most packets in flight per flow; the window is sized from the path up to it");
SDR_PARAM(win_init, 256, 0, 4194304, 0644,
	  "SR/EC/ADAPTIVE: packets in flight before the path is measured; 0: the window is max_inflight, fixed, and SR/EC are paced only at rate_mbit");
SDR_PARAM(rate_mbit, 0, 0, 1000000, 0644,
	  "SR/EC: a fixed sending rate for new flows, Mbit/s of sdr packets, payload and header (a dedicated link); 0: the path's, measured");
SDR_PARAM(loss_cut_pct, 25, 0, 100, 0644,
	  "SR/EC: a round losing more than this % of what it sent restarts the rate estimate; 0: never");
SDR_PARAM(ec_k, 32, 1, 64, 0644,
	  "EC: data packets per submessage, the default of flows created from now on");
SDR_PARAM(ec_m, 8, 1, 32, 0644,
	  "EC: parity packets per full submessage (a short last one of kg gets max(m*kg/k, min(m, kg))), the default of flows created from now on");
SDR_PARAM(ec_rx_max_k, 64, 1, 64, 0644,
	  "EC: the largest k (data packets per submessage) a flow takes from its peer, fixed at connect (more: bad_ec)");
SDR_PARAM(ec_rx_max_m, 32, 1, 32, 0644,
	  "EC: the largest m (parity packets per submessage) a flow takes from its peer, fixed at connect (more: bad_ec)");
SDR_PARAM(ec_beta_pct, 100, 0, 10000, 0644,
	  "EC: a lost packet's RTO waits beta% of SRTT more, for parity to repair it");
SDR_PARAM(fail_qp_recovery, 0, 0, 1, 0644,
	  "Testing: 1 makes QP recoveries fail, as on a broken device");
SDR_PARAM(none_window, 512, 16, 16384, 0644,
	  "Policy NONE: packets a flow created from now on lets its peer have on the way (receive credits)");
SDR_PARAM(none_reorder_pkts, 1024, 0, 1048576, 0644,
	  "Policy NONE: packets of the flow to wait for reordered ones once the sender is done with a message");

