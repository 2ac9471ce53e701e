// SPDX-License-Identifier: GPL-2.0
/*
 * The paths of one flow: scheduling and health (sdr_path.h).
 */
#include "sdr_path.h"

void sdr_path_cfg_default(struct sdr_path_cfg *cfg)
{
	cfg->drain_pct = 15;
	cfg->probe_pkts = 64;
	cfg->probe_ns = 100000000ULL;		/* 100 ms */
	cfg->probe_max_ns = 3200000000ULL;	/* 3.2 s */
	cfg->alpha_pct = 25;
}

/* Every path of @ps, as a mask. */
static u32 sdr_path_all(const struct sdr_paths *ps)
{
	return (u32)(BIT(ps->n) - 1);
}

int sdr_paths_init(struct sdr_paths *ps, u32 n, const struct sdr_path_cfg *cfg)
{
	memset(ps, 0, sizeof(*ps));
	if (!n || n > SDR_PATH_MAX || !cfg->probe_pkts || !cfg->probe_ns ||
	    cfg->probe_max_ns < cfg->probe_ns || cfg->drain_pct >= 100)
		return -EINVAL;
	ps->cfg = *cfg;
	ps->n = n;
	ps->allow = sdr_path_all(ps);
	/* no floor nor cap of its own: the flow's RTO is the floor */
	for (n = 0; n < ps->n; n++)
		sdr_rtt_init(&ps->p[n].rtt, 0, 0, U64_MAX, cfg->alpha_pct);
	return 0;
}

/*
 * The longest retransmission timeout a path in use needs: its own
 * estimator's (sdr_rtt.h, cfg.alpha_pct), or @init_ns for one with
 * packets out and no sample yet.
 */
u64 sdr_path_rto(const struct sdr_paths *ps, u64 init_ns)
{
	u64 rto = 0;
	u32 i;

	for (i = 0; i < ps->n; i++) {
		const struct sdr_path *p = &ps->p[i];

		if (p->state == SDR_PATH_DOWN)
			continue;
		if (p->rtt.samples)
			rto = max(rto, sdr_rtt_rto(&p->rtt));
		else if (p->inflight)
			rto = max(rto, init_ns);
	}
	return rto;
}

u32 sdr_path_usable(const struct sdr_paths *ps)
{
	u32 i, n = 0;

	for (i = 0; i < ps->n; i++)
		n += ps->p[i].state == SDR_PATH_UP;
	return n;
}

static void sdr_path_window_reset(struct sdr_path *p)
{
	p->win_acked = 0;
	p->win_lost = 0;
}

static void sdr_path_drain(struct sdr_paths *ps, struct sdr_path *p, u64 now)
{
	p->state = SDR_PATH_DRAINED;
	p->testing = false;
	p->train_left = 0;
	p->drains++;
	p->test_wait_ns = ps->cfg.probe_ns;
	p->test_at_ns = now + p->test_wait_ns;
	sdr_path_window_reset(p);
}

/*
 * A drained path's test train is over: use it again, or wait longer.  A
 * train whose messages ended before half of it was answered or lost says
 * nothing: it runs again.
 */
static void sdr_path_test_end(struct sdr_paths *ps, struct sdr_path *p,
			      u64 now)
{
	u32 loss;

	p->testing = false;
	if (2 * p->train_done < ps->cfg.probe_pkts)
		return;
	loss = p->train_lost * 100 / p->train_done;
	if (2 * loss <= ps->cfg.drain_pct) {
		p->state = SDR_PATH_UP;
		p->loss_pct = loss;
		p->windows = 1;
		p->restores++;
		sdr_path_window_reset(p);
		return;
	}
	p->test_wait_ns = min(2 * p->test_wait_ns, ps->cfg.probe_max_ns);
	p->test_at_ns = now + p->test_wait_ns;
}

/*
 * Drained paths whose wait is over and whose old packets are all
 * resolved start a test train (so every packet in flight on a testing
 * path belongs to its train).
 */
static void sdr_path_tests_start(struct sdr_paths *ps, u64 now)
{
	u32 i;

	for (i = 0; i < ps->n; i++) {
		struct sdr_path *p = &ps->p[i];

		if (p->state != SDR_PATH_DRAINED || p->testing || p->inflight ||
		    now < p->test_at_ns)
			continue;
		p->testing = true;
		p->train_left = ps->cfg.probe_pkts;
		p->train_done = 0;
		p->train_lost = 0;
	}
}

/* Path @i may be picked now (ps->allow). */
static bool sdr_path_allowed(const struct sdr_paths *ps, u32 i)
{
	return ps->allow & BIT(i);
}

/* Usable (up) paths among those allowed. */
static u32 sdr_path_usable_allowed(const struct sdr_paths *ps)
{
	u32 i, n = 0;

	for (i = 0; i < ps->n; i++)
		n += ps->p[i].state == SDR_PATH_UP && sdr_path_allowed(ps, i);
	return n;
}

/*
 * The allowed usable path with the fewest packets in flight, @avoid only
 * if it is the only one; ties go round robin.  With none usable, the
 * allowed drained path that lost least; with every allowed path down,
 * the first allowed one (its packets are lost and time out: the flow
 * cannot send there; sdr_path_can_send() says so first).
 */
static u32 sdr_path_best(const struct sdr_paths *ps, u32 avoid)
{
	u32 i, j, best = U32_MAX, alt = U32_MAX, first = U32_MAX;
	u32 usable = sdr_path_usable_allowed(ps);

	for (j = 0; j < ps->n; j++) {
		const struct sdr_path *p;

		i = (ps->rr + j) % ps->n;
		p = &ps->p[i];
		if (!sdr_path_allowed(ps, i))
			continue;
		if (first == U32_MAX || i < first)
			first = i;
		if (p->state == SDR_PATH_UP) {
			if (i == avoid && usable > 1)
				continue;
			if (best == U32_MAX || p->inflight < ps->p[best].inflight)
				best = i;
		} else if (p->state == SDR_PATH_DRAINED &&
			   (alt == U32_MAX ||
			    p->loss_pct < ps->p[alt].loss_pct)) {
			alt = i;
		}
	}
	if (best != U32_MAX)
		return best;
	if (alt != U32_MAX)
		return alt;
	return first != U32_MAX ? first : 0;
}

/*
 * Narrow the picks to the paths of @mask (bit i: path i; bits past the
 * flow's paths are ignored, and a mask with none of them allows all).
 */
void sdr_path_allow(struct sdr_paths *ps, u32 mask)
{
	u32 all = sdr_path_all(ps);

	ps->allow = mask & all ? mask & all : all;
}

/*
 * Whether this caller resends now a packet whose last copy went on path
 * @last.  A resend avoids that path and goes before new packets, whatever
 * the callers' loads: so a caller with an allowed usable path other than
 * @last resends, one whose only usable path is @last leaves the resend
 * to a caller with another, and with no other up anywhere it resends
 * over @last; an allowed path's due test train takes packets first; with
 * nothing up at all, as sdr_path_can_send() says.
 */
bool sdr_path_resend_ok(struct sdr_paths *ps, u32 last, u64 now_ns)
{
	bool elsewhere = false, any = false;
	u32 i;

	if (ps->allow == sdr_path_all(ps))
		return true;
	sdr_path_tests_start(ps, now_ns);
	for (i = 0; i < ps->n; i++) {
		const struct sdr_path *p = &ps->p[i];
		bool ok = sdr_path_allowed(ps, i);

		if (ok && p->testing && p->train_left)
			return true;
		if (p->state != SDR_PATH_UP)
			continue;
		any = true;
		if (ok && i != last)
			return true;
		if (!ok)
			elsewhere = true;
	}
	if (!any)
		return sdr_path_can_send(ps, now_ns);
	/* @last is the only one up here */
	return last < ps->n && sdr_path_allowed(ps, last) && !elsewhere;
}

/*
 * Whether a pick now would be worth a packet: an allowed path runs a
 * test train (which takes packets before any other caller's), or is up
 * and not far more loaded than the flow's least loaded path; or no path
 * at all is up and an allowed one is drained (the flow's fallback).  A
 * caller allowed only paths that are drained or down while others are up
 * sends nothing: the others' callers will.  With every path allowed it
 * is always worth it (sdr_path_best() falls back as far as path 0).
 */
bool sdr_path_can_send(struct sdr_paths *ps, u64 now_ns)
{
	u32 i, min_all = U32_MAX, min_ok = U32_MAX;
	bool drained = false;

	/* all allowed: as before, the best path even if every one is down */
	if (ps->allow == sdr_path_all(ps))
		return true;
	/* a drained path's test train may be due: it takes packets */
	sdr_path_tests_start(ps, now_ns);
	for (i = 0; i < ps->n; i++) {
		const struct sdr_path *p = &ps->p[i];
		bool ok = sdr_path_allowed(ps, i);

		if (p->state == SDR_PATH_UP) {
			min_all = min(min_all, p->inflight);
			if (ok)
				min_ok = min(min_ok, p->inflight);
		} else if (p->state == SDR_PATH_DRAINED) {
			/* a test train takes new packets before anyone */
			if (p->testing && p->train_left)
				return ok;
			drained |= ok;
		}
	}
	if (min_all == U32_MAX)		/* none up: the fallback */
		return drained;
	/*
	 * The flow's packets go to the paths with the fewest in flight:
	 * this caller's best may run ahead of the flow's best by a little
	 * (callers take turns), not fill the window alone.
	 */
	return min_ok != U32_MAX && min_ok <= min_all + SDR_PATH_RAIL_SLACK;
}

/*
 * The path of a tracked transmission; @avoid: the path the packet's
 * last copy took (a resend), or SDR_PATH_ANY.  A test train takes new
 * packets only: a resend should not meet a path known to be lossy.
 */
u32 sdr_path_pick(struct sdr_paths *ps, u32 avoid, u64 now_ns)
{
	struct sdr_path *p;
	u32 i;

	if (ps->n == 1) {
		ps->p[0].inflight++;
		ps->p[0].tx_pkts++;
		return 0;
	}
	sdr_path_tests_start(ps, now_ns);
	for (i = 0; avoid == SDR_PATH_ANY && i < ps->n; i++)
		if (ps->p[i].testing && ps->p[i].train_left &&
		    sdr_path_allowed(ps, i))
			break;
	if (avoid != SDR_PATH_ANY || i == ps->n)
		i = sdr_path_best(ps, avoid);
	p = &ps->p[i];
	if (p->testing && p->train_left)
		p->train_left--;
	p->inflight++;
	p->tx_pkts++;
	ps->rr = (i + 1) % ps->n;
	return i;
}

/* The path of a transmission the engine does not track. */
u32 sdr_path_pick_untracked(struct sdr_paths *ps, u32 avoid)
{
	u32 i = ps->n == 1 ? 0 : sdr_path_best(ps, avoid);

	ps->p[i].untracked++;
	if (ps->n > 1)
		ps->rr = (i + 1) % ps->n;
	return i;
}

/* A tracked packet on path @i is resolved: acked, or lost if @lost. */
static void sdr_path_resolve(struct sdr_paths *ps, u32 i, bool lost, u64 now)
{
	struct sdr_path *p = &ps->p[i];
	u32 total, loss, take;

	if (p->inflight)
		p->inflight--;
	if (lost)
		p->lost++;
	else
		p->acked++;
	if (p->state == SDR_PATH_DRAINED) {
		if (!p->testing)
			return;
		p->train_done++;
		p->train_lost += lost;
		if (!p->inflight && !p->train_left)
			sdr_path_test_end(ps, p, now);
		return;
	}
	if (p->state != SDR_PATH_UP)
		return;
	if (lost)
		p->win_lost++;
	else
		p->win_acked++;
	total = p->win_acked + p->win_lost;
	if (total < SDR_PATH_WIN)
		return;
	/* losses an earlier window counted that turned out answered */
	take = min(p->win_lost, p->win_unlost);
	p->win_unlost -= take;
	loss = (p->win_lost - take) * 100 / total;
	p->loss_pct = p->windows++ ? (3 * p->loss_pct + loss + 2) / 4 : loss;
	sdr_path_window_reset(p);
	if (p->loss_pct > ps->cfg.drain_pct && sdr_path_usable(ps) > 1)
		sdr_path_drain(ps, p, now);
}

/*
 * A tracked packet sent at @tx_ns on path @i was acknowledged; @sample:
 * the answer is to that copy (it was sent once, and not rebuilt from
 * parity): an RTT sample of the path, which delivered what it was sent
 * until then.
 */
void sdr_path_acked(struct sdr_paths *ps, u32 i, u64 tx_ns, bool sample,
		    u64 now_ns)
{
	struct sdr_path *p;

	if (i >= ps->n)
		return;
	p = &ps->p[i];
	if (sample && now_ns >= tx_ns) {
		sdr_rtt_sample(&p->rtt, now_ns - tx_ns);
		if (tx_ns > p->newest_tx_ns)
			p->newest_tx_ns = tx_ns;
	}
	sdr_path_resolve(ps, i, false, now_ns);
}

void sdr_path_lost(struct sdr_paths *ps, u32 i, u64 now_ns)
{
	if (i < ps->n)
		sdr_path_resolve(ps, i, true, now_ns);
}

/*
 * A packet declared lost on path @i was answered after all, its copy on
 * @i having arrived late: the loss is taken back, from the window that
 * counted it or, once that one was sampled, from the next window's (at
 * most a window's worth kept).
 */
void sdr_path_unlost(struct sdr_paths *ps, u32 i)
{
	struct sdr_path *p;

	if (i >= ps->n)
		return;
	p = &ps->p[i];
	if (!p->lost)
		return;
	p->lost--;
	p->acked++;
	p->unlost++;
	if (p->state == SDR_PATH_DRAINED) {
		if (p->testing && p->train_lost)
			p->train_lost--;
		return;
	}
	if (p->win_lost) {
		p->win_lost--;
		p->win_acked++;
	} else if (p->win_unlost < SDR_PATH_WIN) {
		p->win_unlost++;
	}
}

/* A tracked packet's message ended with it in flight: no verdict. */
void sdr_path_forget(struct sdr_paths *ps, u32 i, u64 now_ns)
{
	struct sdr_path *p;

	if (i >= ps->n)
		return;
	p = &ps->p[i];
	if (p->inflight)
		p->inflight--;
	if (p->testing && !p->inflight && !p->train_left)
		sdr_path_test_end(ps, p, now_ns);
}

/*
 * Whether a packet sent at @tx_ns on path @i had time to arrive: a
 * packet sent after it on the same path has.
 */
bool sdr_path_overdue(const struct sdr_paths *ps, u32 i, u64 tx_ns)
{
	return i < ps->n && ps->p[i].newest_tx_ns > tx_ns;
}

/*
 * Whether some path delivered a packet sent after @tx_ns: the flow's
 * packets were getting through meanwhile.
 */
bool sdr_path_heard_after(const struct sdr_paths *ps, u64 tx_ns)
{
	u32 i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].newest_tx_ns > tx_ns)
			return true;
	return false;
}

/*
 * The retransmission timeout of path @i (its own estimator's), or
 * @fallback_ns before it has a sample.
 */
u64 sdr_path_rto_of(const struct sdr_paths *ps, u32 i, u64 fallback_ns)
{
	if (i >= ps->n || !ps->p[i].rtt.samples)
		return fallback_ns;
	return sdr_rtt_rto(&ps->p[i].rtt);
}

/*
 * The caller reports path @i down (its device or QP is gone; the SR
 * engine's sdr_sr_tx_path_down() then declares its packets lost) or up
 * again: a path back is tested before it carries data.
 */
int sdr_path_set_down(struct sdr_paths *ps, u32 i, bool down, u64 now_ns)
{
	struct sdr_path *p;

	if (i >= ps->n)
		return -EINVAL;
	p = &ps->p[i];
	if (down) {
		p->state = SDR_PATH_DOWN;
		p->testing = false;
		p->train_left = 0;
		return 0;
	}
	if (p->state != SDR_PATH_DOWN)
		return 0;
	p->state = SDR_PATH_DRAINED;
	p->testing = false;
	p->test_wait_ns = ps->cfg.probe_ns;
	p->test_at_ns = now_ns;
	sdr_path_window_reset(p);
	return 0;
}
