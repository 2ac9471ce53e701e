// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr-fi: completion queues and address vectors.  A CQ is a FIFO of
 * completions and one of error completions, filled by the domain's
 * progress (sdr_fi_progress()), which every read runs first.  An AV maps
 * fi_addr_t (an index, for FI_AV_TABLE and FI_AV_MAP alike) to the IPv4
 * socket address of a peer endpoint.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdr_fi.h"

/* ---- completion queues ---- */

int sdr_fi_cq_push(struct sdr_fi_cq *cq, const struct fi_cq_tagged_entry *e,
		   fi_addr_t src)
{
	if (cq->count == cq->cap) {
		uint32_t cap = cq->cap * 2, i;
		struct sdr_fi_comp *r = malloc(cap * sizeof(*r));

		if (!r)
			return -FI_ENOMEM;
		for (i = 0; i < cq->count; i++)
			r[i] = cq->ring[(cq->head + i) % cq->cap];
		free(cq->ring);
		cq->ring = r;
		cq->cap = cap;
		cq->head = 0;
	}
	cq->ring[(cq->head + cq->count) % cq->cap].e = *e;
	cq->ring[(cq->head + cq->count++) % cq->cap].src = src;
	return 0;
}

int sdr_fi_cq_push_err(struct sdr_fi_cq *cq, const struct fi_cq_err_entry *e)
{
	if (cq->err_count == cq->err_cap) {
		uint32_t cap = cq->err_cap * 2, i;
		struct fi_cq_err_entry *r = malloc(cap * sizeof(*r));

		if (!r)
			return -FI_ENOMEM;
		for (i = 0; i < cq->err_count; i++)
			r[i] = cq->err[(cq->err_head + i) % cq->err_cap];
		free(cq->err);
		cq->err = r;
		cq->err_cap = cap;
		cq->err_head = 0;
	}
	cq->err[(cq->err_head + cq->err_count++) % cq->err_cap] = *e;
	return 0;
}

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

/* Up to @count completions into @buf, their senders into @src (or NULL). */
static ssize_t cq_take(struct fid_cq *fcq, void *buf, size_t count,
		       fi_addr_t *src)
{
	struct sdr_fi_cq *cq = container_of(fcq, struct sdr_fi_cq, cq);
	size_t sz = entry_size(cq->format), n = 0;
	ssize_t ret;

	pthread_mutex_lock(&cq->dom->lock);
	sdr_fi_progress(cq->dom);
	/* an error completion first: the application reads it with readerr */
	if (cq->err_count) {
		ret = -FI_EAVAIL;
		goto out;
	}
	while (n < count && cq->count) {
		const struct sdr_fi_comp *c = &cq->ring[cq->head];

		memcpy((char *)buf + n * sz, &c->e, sz);
		if (src)
			src[n] = c->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	ret = n ? (ssize_t)n : -FI_EAGAIN;
out:
	pthread_mutex_unlock(&cq->dom->lock);
	return ret;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_take(fcq, buf, count, NULL);
}

/* FI_SOURCE: a receive's sender as the endpoint's AV knows it, else
 * FI_ADDR_NOTAVAIL (and for sends) */
static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count,
			   fi_addr_t *src_addr)
{
	return cq_take(fcq, buf, count, src_addr);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct sdr_fi_cq *cq = container_of(fcq, struct sdr_fi_cq, cq);
	ssize_t ret = -FI_EAGAIN;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&cq->dom->lock);
	if (cq->err_count) {
		struct fi_cq_err_entry *e = &cq->err[cq->err_head];
		size_t keep = buf->err_data_size;
		void *keep_data = buf->err_data;

		/* API 1.5 on: err_data is the caller's when it gave a size */
		*buf = *e;
		buf->err_data = keep ? keep_data : NULL;
		buf->err_data_size = 0;
		cq->err_head = (cq->err_head + 1) % cq->err_cap;
		cq->err_count--;
		ret = 1;
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return ret;
}

/* CLOCK_MONOTONIC in ms: the wait calls' deadlines. */
int64_t sdr_fi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The deadline of a wait of @timeout ms (< 0: none, INT64_MAX). */
int64_t sdr_fi_deadline(int timeout)
{
	return timeout < 0 ? INT64_MAX : sdr_fi_now_ms() + timeout;
}

/*
 * Sleep in poll(2) on domain @dom's device file (readable while the
 * context's completion ring holds an entry) for at most a second, and
 * not past @end: 0 to look again, -FI_ETIMEDOUT once @end has passed,
 * -errno if poll fails.
 */
int sdr_fi_wait_fd(struct sdr_fi_domain *dom, int64_t end)
{
	struct pollfd pfd = { .fd = sdr_ctx_fd(dom->ctx), .events = POLLIN };
	int64_t left = end == INT64_MAX ? 1000 : end - sdr_fi_now_ms();

	if (left <= 0)
		return -FI_ETIMEDOUT;
	if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/*
 * Wait for completions: what cq_take() finds, else sleep on the device's
 * file and take again, until @timeout ms (< 0: forever) have passed.
 */
static ssize_t cq_swait(struct fid_cq *fcq, void *buf, size_t count,
			fi_addr_t *src, int timeout)
{
	struct sdr_fi_cq *cq = container_of(fcq, struct sdr_fi_cq, cq);
	int64_t end = sdr_fi_deadline(timeout);
	ssize_t ret;

	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	for (;;) {
		ret = cq_take(fcq, buf, count, src);
		if (ret != -FI_EAGAIN)
			return ret;
		ret = sdr_fi_wait_fd(cq->dom, end);
		if (ret)
			return ret == -FI_ETIMEDOUT ? -FI_EAGAIN : ret;
	}
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count,
			const void *cond, int timeout)
{
	(void)cond;
	return cq_swait(fcq, buf, count, NULL, timeout);
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count,
			    fi_addr_t *src_addr, const void *cond, int timeout)
{
	(void)cond;
	return cq_swait(fcq, buf, count, src_addr, timeout);
}

/* fi_trywait(): 0 when nothing is ready, so blocking on the fd is safe. */
int sdr_fi_cq_trywait(struct fid *fid)
{
	struct sdr_fi_cq *cq = container_of(fid, struct sdr_fi_cq, cq.fid);
	int ret;

	pthread_mutex_lock(&cq->dom->lock);
	sdr_fi_progress(cq->dom);
	ret = cq->count || cq->err_count ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&cq->dom->lock);
	return ret;
}

static int cq_signal(struct fid_cq *cq)
{
	(void)cq;
	return -FI_ENOSYS;
}

static const char *cq_strerror(struct fid_cq *cq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *s = sdr_status_str((uint32_t)prov_errno);

	(void)cq; (void)err_data;
	if (buf && len) {
		snprintf(buf, len, "sdr: %s", s);
		return buf;
	}
	return s;
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int cq_close(struct fid *fid)
{
	struct sdr_fi_cq *cq = container_of(fid, struct sdr_fi_cq, cq.fid);
	struct sdr_fi_domain *dom = cq->dom;

	pthread_mutex_lock(&dom->lock);
	if (cq->refs) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(cq->ring);
	free(cq->err);
	free(cq);
	return 0;
}

/* FI_GETWAIT: the device's file, for epoll (FI_WAIT_FD). */
static int cq_control(struct fid *fid, int command, void *arg)
{
	struct sdr_fi_cq *cq = container_of(fid, struct sdr_fi_cq, cq.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (cq->wait_obj != FI_WAIT_FD)
		return -FI_ENODATA;
	*(int *)arg = sdr_ctx_fd(cq->dom->ctx);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = sdr_fi_no_bind,
	.control = cq_control,
	.ops_open = sdr_fi_no_ops_open,
};

int sdr_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		   struct fid_cq **out, void *context)
{
	struct sdr_fi_domain *dom = container_of(domain, struct sdr_fi_domain,
						 domain);
	struct sdr_fi_cq *cq;

	if (!attr)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->dom = dom;
	cq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD :
		       attr->wait_obj;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->cap = attr->size ? (uint32_t)attr->size : SDR_FI_CQ_SIZE;
	cq->err_cap = 16;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	cq->err = calloc(cq->err_cap, sizeof(*cq->err));
	if (!cq->ring || !cq->err) {
		free(cq->ring);
		free(cq->err);
		free(cq);
		return -FI_ENOMEM;
	}
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &cq->cq;
	return 0;
}

/* ---- address vectors ---- */

int sdr_fi_av_get(struct sdr_fi_av *av, fi_addr_t a, struct sockaddr_in *out)
{
	if (a >= av->n || !av->valid[a])
		return -FI_EINVAL;
	*out = av->addr[a];
	return 0;
}

/* The fi_addr of @sin in @av (FI_SOURCE), or FI_ADDR_NOTAVAIL. */
fi_addr_t sdr_fi_av_find(const struct sdr_fi_av *av,
			 const struct sockaddr_in *sin)
{
	size_t i;

	for (i = 0; av && i < av->n; i++)
		if (av->valid[i] && sdr_fi_same_addr(&av->addr[i], sin))
			return i;
	return FI_ADDR_NOTAVAIL;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct sdr_fi_av *av = container_of(fav, struct sdr_fi_av, av);
	const struct sockaddr_in *sin = addr;
	size_t i;
	int n = 0;

	(void)context;
	if (flags & ~(uint64_t)FI_MORE)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&av->dom->lock);
	if (av->n + count > av->cap) {
		size_t cap = (av->n + count) * 2;
		struct sockaddr_in *a = realloc(av->addr, cap * sizeof(*a));
		bool *v;

		if (!a) {
			pthread_mutex_unlock(&av->dom->lock);
			return -FI_ENOMEM;
		}
		av->addr = a;
		v = realloc(av->valid, cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&av->dom->lock);
			return -FI_ENOMEM;
		}
		av->valid = v;
		av->cap = cap;
	}
	for (i = 0; i < count; i++) {
		bool ok = sin[i].sin_family == AF_INET && sin[i].sin_port &&
			  sin[i].sin_addr.s_addr;

		if (ok) {
			av->addr[av->n] = sin[i];
			av->valid[av->n] = true;
			av->gen++;
			if (fi_addr)
				fi_addr[i] = av->n;
			av->n++;
			n++;
		} else if (fi_addr) {
			fi_addr[i] = FI_ADDR_NOTAVAIL;
		}
	}
	pthread_mutex_unlock(&av->dom->lock);
	return n;
}

static int av_insertsvc(struct fid_av *av, const char *node,
			const char *service, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char *end;
	long port;

	if (!node || !service)
		return -FI_EINVAL;
	port = strtol(service, &end, 10);
	if (*end || port <= 0 || port > 65535 ||
	    inet_pton(AF_INET, node, &sin.sin_addr) != 1)
		return -FI_EINVAL;
	sin.sin_port = htons((uint16_t)port);
	return av_insert(av, &sin, 1, fi_addr, flags, context);
}

static int av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			const char *service, size_t svccnt,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av; (void)node; (void)nodecnt; (void)service; (void)svccnt;
	(void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count,
		     uint64_t flags)
{
	struct sdr_fi_av *av = container_of(fav, struct sdr_fi_av, av);
	int ret = 0;
	size_t i;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&av->dom->lock);
	for (i = 0; i < count; i++) {
		if (fi_addr[i] >= av->n || !av->valid[fi_addr[i]]) {
			ret = -FI_EINVAL;
		} else {
			av->valid[fi_addr[i]] = false;
			av->gen++;
		}
	}
	pthread_mutex_unlock(&av->dom->lock);
	return ret;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr,
		     size_t *addrlen)
{
	struct sdr_fi_av *av = container_of(fav, struct sdr_fi_av, av);
	struct sockaddr_in sin;
	size_t len = *addrlen;
	int ret;

	pthread_mutex_lock(&av->dom->lock);
	ret = sdr_fi_av_get(av, fi_addr, &sin);
	pthread_mutex_unlock(&av->dom->lock);
	if (ret)
		return ret;
	*addrlen = sizeof(sin);
	memcpy(addr, &sin, len < sizeof(sin) ? len : sizeof(sin));
	return 0;
}

static const char *av_straddr(struct fid_av *av, const void *addr, char *buf,
			      size_t *len)
{
	const struct sockaddr_in *sin = addr;
	char ip[INET_ADDRSTRLEN] = "?";
	int n;

	(void)av;
	inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
	n = snprintf(buf, *len, "fi_sockaddr_in://%s:%u", ip,
		     ntohs(sin->sin_port));
	*len = (size_t)n + 1;
	return buf;
}

static int av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		  struct fid_av_set **set, void *context)
{
	(void)av; (void)attr; (void)set; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set,
};

static int av_close(struct fid *fid)
{
	struct sdr_fi_av *av = container_of(fid, struct sdr_fi_av, av.fid);
	struct sdr_fi_domain *dom = av->dom;

	pthread_mutex_lock(&dom->lock);
	if (av->refs) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(av->addr);
	free(av->valid);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = sdr_fi_no_bind,
	.control = sdr_fi_no_control,
	.ops_open = sdr_fi_no_ops_open,
};

int sdr_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		   struct fid_av **out, void *context)
{
	struct sdr_fi_domain *dom = container_of(domain, struct sdr_fi_domain,
						 domain);
	struct sdr_fi_av *av;

	if (!attr)
		return -FI_EINVAL;
	if (attr->flags || attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE &&
	    attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->dom = dom;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &av->av;
	return 0;
}
