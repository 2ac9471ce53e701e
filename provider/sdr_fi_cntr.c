// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr-fi: completion counters (fi_cntr(3)).  An endpoint bound to a
 * counter with FI_SEND counts its completed sends there, with FI_RECV its
 * completed receives: value for each success, errors for each failure
 * (truncated, cancelled, or its flow failed), whether or not the operation
 * also reports to a CQ.  Under the domain's lock, like the CQs; waiting
 * progresses the domain and sleeps on the device's file.
 */
#include <stdlib.h>

#include "sdr_fi.h"

static struct sdr_fi_cntr *cntr_of(struct fid_cntr *c)
{
	return container_of(c, struct sdr_fi_cntr, cntr);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct sdr_fi_cntr *c = cntr_of(fc);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	sdr_fi_progress(c->dom);
	v = c->value;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct sdr_fi_cntr *c = cntr_of(fc);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	sdr_fi_progress(c->dom);
	v = c->errors;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static int cntr_change(struct fid_cntr *fc, uint64_t v, bool err, bool set)
{
	struct sdr_fi_cntr *c = cntr_of(fc);
	uint64_t *p = err ? &c->errors : &c->value;

	pthread_mutex_lock(&c->dom->lock);
	*p = set ? v : *p + v;
	pthread_mutex_unlock(&c->dom->lock);
	return 0;
}

static int cntr_add(struct fid_cntr *fc, uint64_t v)
{
	return cntr_change(fc, v, false, false);
}

static int cntr_set(struct fid_cntr *fc, uint64_t v)
{
	return cntr_change(fc, v, false, true);
}

static int cntr_adderr(struct fid_cntr *fc, uint64_t v)
{
	return cntr_change(fc, v, true, false);
}

static int cntr_seterr(struct fid_cntr *fc, uint64_t v)
{
	return cntr_change(fc, v, true, true);
}

/*
 * Until the value reaches @threshold: 0; -FI_EAVAIL once an error was
 * counted meanwhile; -FI_ETIMEDOUT after @timeout ms (< 0: none).
 */
static int cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct sdr_fi_cntr *c = cntr_of(fc);
	int64_t end = sdr_fi_deadline(timeout);
	uint64_t errors;
	int ret;

	if (c->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	pthread_mutex_lock(&c->dom->lock);
	errors = c->errors;
	pthread_mutex_unlock(&c->dom->lock);
	for (;;) {
		ret = -FI_EAGAIN;
		pthread_mutex_lock(&c->dom->lock);
		sdr_fi_progress(c->dom);
		if (c->value >= threshold)
			ret = 0;
		else if (c->errors != errors)
			ret = -FI_EAVAIL;
		pthread_mutex_unlock(&c->dom->lock);
		if (ret != -FI_EAGAIN)
			return ret;
		ret = sdr_fi_wait_fd(c->dom, end);
		if (ret)
			return ret;
	}
}

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

static int cntr_close(struct fid *fid)
{
	struct sdr_fi_cntr *c = container_of(fid, struct sdr_fi_cntr, cntr.fid);
	struct sdr_fi_domain *dom = c->dom;

	pthread_mutex_lock(&dom->lock);
	if (c->refs) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(c);
	return 0;
}

/* FI_GETWAIT: the device's file, for epoll (FI_WAIT_FD). */
static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct sdr_fi_cntr *c = container_of(fid, struct sdr_fi_cntr, cntr.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (c->wait_obj != FI_WAIT_FD)
		return -FI_ENODATA;
	*(int *)arg = sdr_ctx_fd(c->dom->ctx);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = sdr_fi_no_bind,
	.control = cntr_control,
	.ops_open = sdr_fi_no_ops_open,
};

int sdr_fi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		     struct fid_cntr **out, void *context)
{
	struct sdr_fi_domain *dom = container_of(domain, struct sdr_fi_domain,
						 domain);
	enum fi_wait_obj wait = attr ? attr->wait_obj : FI_WAIT_UNSPEC;
	struct sdr_fi_cntr *c;

	if (attr && attr->flags)
		return -FI_EBADFLAGS;
	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (wait != FI_WAIT_NONE && wait != FI_WAIT_UNSPEC &&
	    wait != FI_WAIT_FD)
		return -FI_ENOSYS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = dom;
	c->wait_obj = wait == FI_WAIT_UNSPEC ? FI_WAIT_FD : wait;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &c->cntr;
	return 0;
}
