// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: policy EC in a flow - the payload side of erasure coding.  The SR
 * engine (sdr_sr.c) decides when parity is sent, which submessage can be
 * decoded and when the rest falls back to retransmission; this file
 * builds parity rows from the message with the codec (sdr_ec.c), keeps
 * received parity until its submessage is whole or decoded, and writes
 * the rebuilt packets into the receive region.
 *
 * EC is the SR policy (sdr_flow_sr.c) with parity: its ops are SR's but
 * for the parity hooks, which the SR code calls for EC's messages.
 *
 * Everything but sdr_eck_tx_init(), sdr_eck_flow_init() and the decode
 * worker runs under flow->lock, the receive side in softirq context:
 * parity payloads are held in GFP_ATOMIC buffers, and a parity packet that
 * finds no memory is dropped (counted as no_memory) and its submessage
 * falls back to SR.
 * Whatever k and m the peer picked, a receive holds no more parity
 * payloads than its message has packets: a submessage of kg packets is
 * decoded (and its parity freed) as soon as data and parity reach kg, so
 * it never holds more than kg rows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "sdr.h"
#include "sdr_flow.h"
#include "sdr_ec.h"
#include "sdr_trace.h"

/*
 * The codec (engine/sdr_ec.c) every EC flow of the module uses: "gfni"
 * or "avx2" where the CPU has it, "scalar", or "auto" (the fastest; the
 * default).
 * Writable live: a write takes effect at the next submessage coded, and
 * every implementation gives the same bytes.  Reading says which runs.
 */
static bool sdr_ec_codec_given;

static int sdr_ec_codec_set(const char *val, const struct kernel_param *kp)
{
	char name[16];
	int ret;

	if (strscpy(name, val, sizeof(name)) < 0)
		return -EINVAL;
	ret = sdr_ec_set_impl(strim(name));
	if (ret)
		return ret;
	sdr_ec_codec_given = true;
	return 0;
}

static int sdr_ec_codec_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", sdr_ec_impl());
}

static const struct kernel_param_ops sdr_ec_codec_ops = {
	.set	= sdr_ec_codec_set,
	.get	= sdr_ec_codec_get,
};
module_param_cb(ec_codec, &sdr_ec_codec_ops, NULL, 0644);
MODULE_PARM_DESC(ec_codec,
		 "EC codec: avx2 (where the CPU has it), scalar, or auto (the fastest, the default)");

/* At load: the fastest codec, unless ec_codec named one. */
void sdr_ec_codec_init(void)
{
	if (!sdr_ec_codec_given)
		sdr_ec_init();
	pr_info("EC codec %s\n", sdr_ec_impl());
}

static void sdr_eck_decode_work(struct work_struct *work);
static void sdr_eck_rx_free_group(struct sdr_flow *flow, u32 idx, u32 g);

/* EC runs on SR's flow state (its base), and has a decode queue. */
static int sdr_eck_flow_init(struct sdr_flow *flow)
{
	INIT_LIST_HEAD(&flow->ec_jobs);
	INIT_WORK(&flow->ec_work, sdr_eck_decode_work);
	return 0;
}

/*
 * Make @msg an EC message with the k and m it was posted with (the
 * flow's of the moment, or AUTO's), and give it room for every parity
 * row (m/k of the message: the bandwidth it costs, too).  May sleep.
 */
static int sdr_eck_tx_init(struct sdr_flow *flow, struct sdr_txmsg *msg)
{
	u32 k = msg->ec_k, m = msg->ec_m;
	int ret;

	ret = sdr_sr_tx_set_ec(&flow->sr, &msg->sr, k, m);
	if (ret)
		return ret;
	ret = sdr_txmsg_charge(flow, msg,
			       array3_size(msg->sr.ngroups, m, flow->payload) +
			       BITS_TO_LONGS(msg->sr.ngroups) * sizeof(long));
	if (ret)
		return ret;
	/* no warning for a size kvmalloc refuses: ENOMEM says it */
	msg->par_buf = kvmalloc(array3_size(msg->sr.ngroups, m, flow->payload),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	msg->par_built = bitmap_zalloc(msg->sr.ngroups,
				       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!msg->par_buf || !msg->par_built) {
		kvfree(msg->par_buf);
		msg->par_buf = NULL;
		bitmap_free(msg->par_built);
		msg->par_built = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Parity row @j of submessage @g, from par_buf.  The first row asked of a
 * submessage builds all of its rows, in one pass over its data.
 */
static const u8 *sdr_eck_tx_parity(struct sdr_flow *flow,
				   struct sdr_txmsg *msg, u32 g, u32 j)
{
	const u8 *data[SDR_EC_MAX_K];
	u8 *out[SDR_EC_MAX_M];
	u32 len[SDR_EC_MAX_K], pay = flow->payload, k = msg->sr.ec_k;
	u32 m = msg->sr.ec_m, first = g * k, kg = min(k, msg->npkts - first);
	u32 mg = sdr_sr_group_m(k, m, kg), i, off;
	u8 *rows = msg->par_buf + (size_t)g * m * pay;
	u64 t0, d;

	lockdep_assert_held(&flow->lock);
	if (__test_and_set_bit(g, msg->par_built))
		return rows + (size_t)j * pay;
	for (i = 0; i < kg; i++) {
		off = (first + i) * pay;
		data[i] = msg->data + off;
		len[i] = min(pay, msg->msg_len - off);
	}
	for (i = 0; i < mg; i++)
		out[i] = rows + (size_t)i * pay;
	/* g, j, kg and mg come from the engine: the codec cannot refuse them */
	t0 = ktime_get_ns();
	sdr_ec_encode_rows(kg, 0, mg, data, len, pay, out);
	/* what coding costs, for AUTO: per row per packet it takes in, averaged */
	d = div_u64((ktime_get_ns() - t0) * 1000, kg * mg);
	flow->ec_code_ps = flow->ec_code_ps ? (flow->ec_code_ps * 7 + d) / 8 : d;
	return rows + (size_t)j * pay;
}

/* Where parity row j of submessage g of slot @idx is held. */
static u8 **sdr_eck_slot(struct sdr_flow *flow, u32 idx, u32 g, u32 j)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	size_t i = (size_t)g * slot->sr.ec_m + j;

	return slot->ec_par && i < slot->ec_par_n ? &slot->ec_par[i] : NULL;
}

/*
 * A copy of parity packet @pkt's payload for the engine, or NULL: the
 * peer decides how much parity a receive holds, so it is charged to the
 * flow (flow_recv_max_mb, the opener's limits) and, though this is
 * softirq, to the opener's memory cgroup; past them the packet is
 * dropped and SR repairs.
 */
static u8 *sdr_eck_rx_buf(struct sdr_flow *flow, const u8 *payload)
{
	struct mem_cgroup *old;
	u8 *buf;

	if (sdr_flow_rx_charge(flow, flow->payload))
		return NULL;
	old = sdr_acct_memcg_enter(flow->acct);
	buf = kmalloc(flow->payload, GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN);
	sdr_acct_memcg_leave(old);
	if (!buf) {
		sdr_flow_rx_uncharge(flow, flow->payload);
		return NULL;
	}
	memcpy(buf, payload, flow->payload);
	return buf;
}

/* sdr_eck_rx_buf()'s buffer back, and its charge (NULL: none). */
static void sdr_eck_rx_put(struct sdr_flow *flow, u8 *buf)
{
	if (!buf)
		return;
	kfree(buf);
	sdr_flow_rx_uncharge(flow, flow->payload);
}

/*
 * The engine took parity packet @pkt: hold @buf for its submessage.  The
 * table of held parity is sized, on the message's first parity packet,
 * from the k and m the engine accepted.  Without memory for it, the
 * submessage is left to SR.
 */
static void sdr_eck_rx_keep(struct sdr_flow *flow, u32 idx,
			    const struct sdr_pkt *pkt, u8 *buf, u64 now)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	u32 g = pkt->offset / flow->payload / slot->sr.ec_k;
	u32 n = slot->sr.ngroups * slot->sr.ec_m;
	struct mem_cgroup *old;
	u8 **p;

	lockdep_assert_held(&flow->lock);
	/* the table is the peer's doing too: charged as the parity is */
	if (!slot->ec_par && !sdr_flow_rx_charge(flow, n * sizeof(u8 *))) {
		old = sdr_acct_memcg_enter(flow->acct);
		slot->ec_par = kcalloc(n, sizeof(*slot->ec_par), GFP_ATOMIC |
				       __GFP_ACCOUNT | __GFP_NOWARN);
		sdr_acct_memcg_leave(old);
		if (slot->ec_par)
			slot->ec_par_n = n;
		else
			sdr_flow_rx_uncharge(flow, n * sizeof(u8 *));
	}
	p = sdr_eck_slot(flow, idx, g, SDR_EC_AUX_J(pkt->aux));
	if (!p) {
		sdr_eck_rx_put(flow, buf);
		sdr_eck_rx_free_group(flow, idx, g);
		sdr_sr_rx_undecodable(&flow->sr, &slot->sr, g, now);
		return;
	}
	sdr_eck_rx_put(flow, *p);
	*p = buf;
}

static void sdr_eck_rx_free_group(struct sdr_flow *flow, u32 idx, u32 g)
{
	u32 j, m = flow->slots[idx].sr.ec_m;
	u8 **p;

	lockdep_assert_held(&flow->lock);
	for (j = 0; j < m; j++) {
		p = sdr_eck_slot(flow, idx, g, j);
		if (p) {
			sdr_eck_rx_put(flow, *p);
			*p = NULL;
		}
	}
}

/* Free every parity payload slot @idx holds. */
static void sdr_eck_rx_release(struct sdr_flow *flow, u32 idx)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	u32 i;

	lockdep_assert_held(&flow->lock);
	if (!slot->ec_par)
		return;
	for (i = 0; i < slot->ec_par_n; i++)
		sdr_eck_rx_put(flow, slot->ec_par[i]);
	kfree(slot->ec_par);
	sdr_flow_rx_uncharge(flow, slot->ec_par_n * sizeof(u8 *));
	slot->ec_par = NULL;
	slot->ec_par_n = 0;
}

/*
 * Decoding runs in process context (sdr_wq), not in the receive softirq:
 * what it costs depends on the k and m the peer chose, up to (64,32).
 * The receive path only queues a job; the worker copies the submessage's
 * data packets out and takes its parity under the lock, decodes with no
 * lock held, and under the lock again writes back only what is still
 * missing of the same receive (a slot recycled meanwhile has another
 * seq, and its job is dropped).
 */
struct sdr_ec_job {
	struct list_head	node;	/* flow->ec_jobs */
	u32			idx;	/* slot */
	u32			seq;	/* its receive */
	u32			g;	/* submessage */
};

static void sdr_eck_rx_queue_decode(struct sdr_flow *flow, u32 idx, u32 g,
				    u64 now)
{
	struct sdr_rxslot *slot = &flow->slots[idx];
	struct sdr_ec_job *job;
	struct mem_cgroup *old;

	lockdep_assert_held(&flow->lock);
	list_for_each_entry(job, &flow->ec_jobs, node)
		if (job->idx == idx && job->seq == slot->seq && job->g == g)
			return;		/* already queued */
	old = sdr_acct_memcg_enter(flow->acct);
	job = kmalloc(sizeof(*job), GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN);
	sdr_acct_memcg_leave(old);
	if (!job) {
		sdr_eck_rx_free_group(flow, idx, g);
		sdr_sr_rx_undecodable(&flow->sr, &slot->sr, g, now);
		return;
	}
	job->idx = idx;
	job->seq = slot->seq;
	job->g = g;
	list_add_tail(&job->node, &flow->ec_jobs);
	/* a queued work holds a flow reference; it drops it when done */
	sdr_flow_get(flow);
	if (!queue_work(sdr_wq, &flow->ec_work))
		sdr_flow_put(flow);
}

/* Drop every queued job (the flow is shut down). */
static void sdr_eck_flow_stop(struct sdr_flow *flow)
{
	struct sdr_ec_job *job, *tmp;

	spin_lock_bh(&flow->lock);
	list_for_each_entry_safe(job, tmp, &flow->ec_jobs, node) {
		list_del(&job->node);
		kfree(job);
	}
	spin_unlock_bh(&flow->lock);
}

/* The job's receive is still waiting for submessage g to be rebuilt. */
static bool sdr_eck_job_live(struct sdr_flow *flow, const struct sdr_ec_job *job)
{
	struct sdr_rxslot *slot = &flow->slots[job->idx];

	return !flow->dead && slot->state == SDR_RECV_ACTIVE &&
	       slot->seq == job->seq && slot->sr.ec_k &&
	       job->g < slot->sr.ngroups;
}

/*
 * Under flow->lock, with the job live: rebuilt packets of @buf (kg rows
 * of pay bytes) go into the receive region where they are still missing,
 * then the engine counts them.
 */
static void sdr_eck_job_apply(struct sdr_flow *flow, const struct sdr_ec_job *job,
			      const u8 *buf, u64 now, struct sdr_ctrlq *q)
{
	struct sdr_rxslot *slot = &flow->slots[job->idx];
	struct sdr_sr_rx *r = &slot->sr;
	u32 pay = flow->payload, first, kg, i, n, len, last = r->npkts - 1;
	u8 *base = sdr_slot_data(flow, job->idx);
	u64 have;
	int ret;

	lockdep_assert_held(&flow->lock);
	sdr_sr_rx_group(r, job->g, &first, &kg, &have);
	for (i = 0; i < kg; i++) {
		if (have & BIT_ULL(i))
			continue;
		len = first + i == last ? r->msg_len - last * pay : pay;
		memcpy(base + (size_t)(first + i) * pay, buf + (size_t)i * pay,
		       len);
	}
	ret = sdr_sr_rx_decoded(&flow->sr, r, job->g, now, &n);
	if (ret < 0)
		return;		/* whole by now, or parity it had is gone */
	sdr_eck_rx_free_group(flow, job->idx, job->g);
	for (i = 0; i < kg; i++)
		if (!(have & BIT_ULL(i)))
			sdr_slot_mark(flow, job->idx, first + i,
				      first + i == last ? r->msg_len - last * pay :
							  pay);
	trace_sdr_pkt_recovered(flow->id, slot->seq, job->g, n);
	if (ret & SDR_SR_RX_COMPLETE)
		sdr_slot_complete(flow, job->idx, SDR_STATUS_OK);
	sdr_srk_rx_say(flow, job->idx, now, q);
}

static void sdr_eck_decode_work(struct work_struct *work)
{
	struct sdr_flow *flow = container_of(work, struct sdr_flow, ec_work);
	u32 pay = flow->payload, first, kg, i, m, last, len;
	struct sdr_ec_job *job;
	struct mem_cgroup *old;
	u8 **data, **par;
	struct sdr_sr_rx *r;
	u8 *buf, *base;
	u64 have;
	int ret;

	/*
	 * Room for k data packets, the one place the codec writes, and the
	 * codec's row pointers (too big for a stack under KASAN).
	 */
	old = sdr_acct_memcg_enter(flow->acct);
	buf = kvmalloc(array_size(SDR_EC_MAX_K, pay), GFP_KERNEL_ACCOUNT);
	data = kmalloc_array(SDR_EC_MAX_K + SDR_EC_MAX_M, sizeof(*data),
			     GFP_KERNEL_ACCOUNT);
	sdr_acct_memcg_leave(old);
	if (!data) {
		kvfree(buf);
		buf = NULL;
	}
	par = data ? data + SDR_EC_MAX_K : NULL;
	for (;;) {
		struct sdr_ctrlq q = { .n = 0 };

		spin_lock_bh(&flow->lock);
		job = list_first_entry_or_null(&flow->ec_jobs,
					       struct sdr_ec_job, node);
		if (!job) {
			spin_unlock_bh(&flow->lock);
			break;
		}
		list_del(&job->node);
		if (!sdr_eck_job_live(flow, job)) {
			spin_unlock_bh(&flow->lock);
			kfree(job);
			continue;
		}
		r = &flow->slots[job->idx].sr;
		if (!buf) {
			sdr_eck_rx_free_group(flow, job->idx, job->g);
			sdr_sr_rx_undecodable(&flow->sr, r, job->g,
					      ktime_get_ns());
			goto next_unlock;
		}
		sdr_sr_rx_group(r, job->g, &first, &kg, &have);
		m = r->ec_m;
		last = r->npkts - 1;
		base = sdr_slot_data(flow, job->idx);
		for (i = 0; i < kg; i++) {
			data[i] = buf + (size_t)i * pay;
			len = first + i == last ? r->msg_len - last * pay : pay;
			if (have & BIT_ULL(i))
				memcpy(data[i], base + (size_t)(first + i) * pay,
				       len);
			if (len < pay)	/* a short last packet is zero padded */
				memset(data[i] + len, 0, pay - len);
		}
		for (i = 0; i < m; i++) {	/* the worker owns them now */
			u8 **p = sdr_eck_slot(flow, job->idx, job->g, i);

			par[i] = p ? *p : NULL;
			if (p)
				*p = NULL;
		}
		spin_unlock_bh(&flow->lock);

		ret = sdr_ec_decode(kg, m, have, data, par, pay);
		for (i = 0; i < m; i++)
			sdr_eck_rx_put(flow, par[i]);

		spin_lock_bh(&flow->lock);
		if (sdr_eck_job_live(flow, job)) {
			if (ret < 0)	/* held parity went missing: SR repairs */
				sdr_sr_rx_undecodable(&flow->sr, r, job->g,
						      ktime_get_ns());
			else
				sdr_eck_job_apply(flow, job, buf, ktime_get_ns(),
						  &q);
		}
next_unlock:
		spin_unlock_bh(&flow->lock);
		kfree(job);
		sdr_ctrlq_send(flow, &q);
		cond_resched();
	}
	kfree(data);
	kvfree(buf);
	sdr_flow_put(flow);
}

static void sdr_eck_tx_free(struct sdr_txmsg *msg)
{
	kvfree(msg->par_buf);
	bitmap_free(msg->par_built);
	sdr_srk_tx_free(msg);
}

static const struct sdr_parity_ops sdr_ec_parity = {
	.tx_init		= sdr_eck_tx_init,
	.tx_row			= sdr_eck_tx_parity,
	.rx_buf			= sdr_eck_rx_buf,
	.rx_put			= sdr_eck_rx_put,
	.rx_keep		= sdr_eck_rx_keep,
	.rx_free_group		= sdr_eck_rx_free_group,
	.rx_queue_decode	= sdr_eck_rx_queue_decode,
};

static const char * const sdr_eck_stats[] = {
	"k", "m", "parity_sent", "parity_received", "pkts_recovered",
	"decodes", NULL,
};

/* k and m of messages posted from now on, and the engine's EC counters. */
static u64 sdr_eck_stat(struct sdr_flow *flow, u32 i)
{
	const struct sdr_sr_stats *st = &flow->sr.st;

	switch (i) {
	case 0: return flow->ec_k;
	case 1: return flow->ec_m;
	case 2: return st->parity_tx;
	case 3: return st->parity_rx;
	case 4: return st->ec_recovered;
	case 5: return st->ec_decodes;
	}
	return 0;
}

const struct sdr_policy_ops sdr_ec_ops = {
	.id		= SDR_POLICY_EC,
	.features	= SDR_PF_ACKED | SDR_PF_PARITY | SDR_PF_PATHS,
	.parity		= &sdr_ec_parity,
	.base		= &sdr_sr_ops,
	.engine		= sdr_srk_engine,
	.flow_init	= sdr_eck_flow_init,
	.flow_stop	= sdr_eck_flow_stop,
	.tx_init	= sdr_srk_tx_init,
	.tx_free	= sdr_eck_tx_free,
	.tx_ready	= sdr_srk_tx_ready,
	.tx_next	= sdr_srk_tx_next,
	.tx_status	= sdr_srk_tx_status,
	.tx_poll	= sdr_srk_tx_poll,
	.rx_post	= sdr_srk_rx_post,
	.rx_data	= sdr_srk_rx_data,
	.rx_unmatched	= sdr_srk_rx_unmatched,
	.rx_ctrl	= sdr_srk_rx_ctrl,
	.rx_abandon	= sdr_srk_rx_abandon,
	.rx_release	= sdr_eck_rx_release,
	.rx_poll	= sdr_srk_rx_poll,
	.stats		= sdr_eck_stats,
	.stat		= sdr_eck_stat,
};
