// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libsdr-fi: the provider's entry point, fi_getinfo(), the fabric and the
 * domain (sdr_fi.h says what the objects are).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdr_fi.h"

/* ---- the nosys ops every object without them points to ---- */

int sdr_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int sdr_fi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int sdr_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* ---- devices ---- */

/*
 * The IPv4 address of an sdr device's RoCE port: its first IPv4-mapped
 * GID (rxe and RoCE NICs list the netdev's addresses there).
 */
int sdr_fi_dev_ip(const char *dev, struct in_addr *ip)
{
	char path[256], line[64];
	unsigned int w[8];
	int i;

	for (i = 0; i < 256; i++) {
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gids/%d", dev, i);
		f = fopen(path, "r");
		if (!f)
			return -ENOENT;
		if (!fgets(line, sizeof(line), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		if (sscanf(line, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1],
			   &w[2], &w[3], &w[4], &w[5], &w[6], &w[7]) != 8)
			continue;
		if (w[0] || w[1] || w[2] || w[3] || w[4] || w[5] != 0xffff ||
		    !(w[6] | w[7]))
			continue;
		ip->s_addr = htonl((uint32_t)w[6] << 16 | w[7]);
		return 0;
	}
	return -ENOENT;
}

/* ---- fi_getinfo ---- */

/* @node and/or @service (either may be NULL) as an IPv4 address */
static int addr_parse(const char *node, const char *service,
		      struct sockaddr_in *sin)
{
	struct addrinfo hints = {
		.ai_family = AF_INET,
		.ai_flags = node ? 0 : AI_PASSIVE,
	}, *res;

	if (getaddrinfo(node, service, &hints, &res))
		return -FI_EINVAL;
	memcpy(sin, res->ai_addr, sizeof(*sin));
	freeaddrinfo(res);
	return 0;
}

/* libfabric's flag (include/ofi.h) on a utility provider's getinfo */
#define SDR_FI_CORE_PROV_ONLY	(1ULL << 59)

/* The largest message of an endpoint of @type. */
static uint64_t max_msg_of(enum fi_ep_type type)
{
	return type == FI_EP_DGRAM ? SDR_FI_DGRAM_MAX_MSG : SDR_FI_MAX_MSG;
}

/* What hints ask that this provider's endpoints of @type do not do. */
static bool hints_refused(const struct fi_info *h, enum fi_ep_type type)
{
	if (!h)
		return false;
	if (h->caps & ~(uint64_t)SDR_FI_CAPS)
		return true;
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC &&
	    h->ep_attr->type != type)
		return true;
	if (h->ep_attr && h->ep_attr->max_msg_size > max_msg_of(type))
		return true;
	if (h->addr_format != FI_FORMAT_UNSPEC &&
	    h->addr_format != FI_SOCKADDR_IN && h->addr_format != FI_SOCKADDR)
		return true;
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, SDR_FI_NAME))
		return true;
	if (h->domain_attr &&
	    h->domain_attr->data_progress == FI_PROGRESS_AUTO)
		return true;
	if (h->domain_attr && h->domain_attr->av_type != FI_AV_UNSPEC &&
	    h->domain_attr->av_type != FI_AV_TABLE &&
	    h->domain_attr->av_type != FI_AV_MAP)
		return true;
	if (h->domain_attr &&
	    (h->domain_attr->caps & ~(uint64_t)SDR_FI_DOMAIN_CAPS ||
	     h->domain_attr->cq_data_size > sizeof(uint64_t) ||
	     h->domain_attr->max_ep_tx_ctx > 1 ||
	     h->domain_attr->max_ep_rx_ctx > 1))
		return true;
	if (h->ep_attr && (h->ep_attr->tx_ctx_cnt > 1 ||
			   h->ep_attr->rx_ctx_cnt > 1))
		return true;	/* shared or scalable contexts */
	if (h->tx_attr && (h->tx_attr->iov_limit > 1 ||
			   h->tx_attr->inject_size > SDR_FI_INJECT ||
			   h->tx_attr->size > SDR_FI_TX_SIZE ||
			   h->tx_attr->caps & ~(uint64_t)SDR_FI_CAPS ||
			   h->tx_attr->msg_order & ~(uint64_t)SDR_FI_ORDER ||
			   h->tx_attr->comp_order & ~(uint64_t)FI_ORDER_NONE))
		return true;
	if (h->rx_attr && (h->rx_attr->iov_limit > 1 ||
			   h->rx_attr->size > SDR_FI_RX_SIZE ||
			   h->rx_attr->caps & ~(uint64_t)SDR_FI_CAPS ||
			   h->rx_attr->msg_order & ~(uint64_t)SDR_FI_ORDER ||
			   h->rx_attr->comp_order & ~(uint64_t)FI_ORDER_NONE))
		return true;
	return false;
}

static struct fi_info *info_for(const char *dev, const struct in_addr *ip,
				in_port_t port, const struct fi_info *h,
				const struct sockaddr_in *dest,
				enum fi_ep_type type)
{
	struct fi_info *fi = fi_allocinfo();
	struct sockaddr_in *src;
	uint64_t caps = SDR_FI_CAPS;

	if (!fi)
		return NULL;
	if (h && h->caps) {
		caps = h->caps & SDR_FI_CAPS;
		if (!(caps & (FI_SEND | FI_RECV)))
			caps |= FI_SEND | FI_RECV;
	}
	src = calloc(1, sizeof(*src));
	if (!src)
		goto fail;
	src->sin_family = AF_INET;
	src->sin_addr = *ip;
	src->sin_port = port;	/* 0: the endpoint picks one */
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_SOCKADDR_IN;
	fi->src_addr = src;
	fi->src_addrlen = sizeof(*src);
	if (dest) {
		fi->dest_addr = malloc(sizeof(*dest));
		if (!fi->dest_addr)
			goto fail;
		memcpy(fi->dest_addr, dest, sizeof(*dest));
		fi->dest_addrlen = sizeof(*dest);
	}

	/* each context's caps: the primary ones and what modifies them there */
	fi->tx_attr->caps = caps & SDR_FI_TX_CAPS;
	/* the default operation flags asked for that sends take */
	fi->tx_attr->op_flags = h && h->tx_attr ?
		h->tx_attr->op_flags & SDR_FI_TX_OP_FLAGS : 0;
	fi->tx_attr->msg_order = SDR_FI_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = SDR_FI_INJECT;
	fi->tx_attr->size = SDR_FI_TX_SIZE;
	fi->tx_attr->iov_limit = 1;
	fi->rx_attr->caps = caps & SDR_FI_RX_CAPS;
	fi->rx_attr->op_flags = h && h->rx_attr ?
		h->rx_attr->op_flags & FI_COMPLETION : 0;
	fi->rx_attr->msg_order = SDR_FI_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->size = SDR_FI_RX_SIZE;
	fi->rx_attr->iov_limit = 1;

	fi->ep_attr->type = type;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = max_msg_of(type);
	fi->ep_attr->mem_tag_format = ~(uint64_t)0;	/* all 64 bits match */
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(dev);
	fi->domain_attr->threading = FI_THREAD_SAFE;
	/*
	 * The listener's thread takes connections whether the application
	 * calls in or not (AUTO); one that asks for MANUAL gets that, the
	 * weaker promise, kept as well.
	 */
	fi->domain_attr->control_progress =
		h && h->domain_attr &&
		h->domain_attr->control_progress == FI_PROGRESS_MANUAL ?
		FI_PROGRESS_MANUAL : FI_PROGRESS_AUTO;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	/*
	 * An fi_addr_t is an index into the AV with either type: the one
	 * asked for, or any (FI_AV_UNSPEC), as the application opens it.
	 */
	fi->domain_attr->av_type = h && h->domain_attr ?
		h->domain_attr->av_type : FI_AV_UNSPEC;
	fi->domain_attr->mr_mode = 0;
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	fi->domain_attr->cq_cnt = 64;
	fi->domain_attr->cntr_cnt = 64;
	fi->domain_attr->ep_cnt = 64;
	fi->domain_attr->tx_ctx_cnt = 64;
	fi->domain_attr->rx_ctx_cnt = 64;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->caps = SDR_FI_DOMAIN_CAPS;

	fi->fabric_attr->name = strdup(SDR_FI_NAME);
	fi->fabric_attr->prov_version = SDR_FI_VERSION;
	fi->fabric_attr->api_version = SDR_FI_API;
	if (!fi->domain_attr->name || !fi->fabric_attr->name)
		goto fail;
	return fi;
fail:
	fi_freeinfo(fi);
	return NULL;
}

static int sdr_fi_getinfo(uint32_t version, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints, struct fi_info **info)
{
	struct sockaddr_in dest, want_src = { 0 };
	const struct sockaddr_in *destp = NULL;
	static const enum fi_ep_type types[] = { FI_EP_RDM, FI_EP_DGRAM };
	struct fi_info *head = NULL, **tail = &head;
	const char *want_dev = NULL;
	bool offer[2], any = false;
	struct dirent *de;
	unsigned int t;
	DIR *d;

	(void)version;
	*info = NULL;
	for (t = 0; t < 2; t++)
		any |= offer[t] = !hints_refused(hints, types[t]);
	/*
	 * A utility provider asking for core providers to layer over
	 * (libfabric's OFI_CORE_PROV_ONLY) gets no datagram endpoint: ofi_rxd
	 * would make an RDM endpoint of sdr's datagrams, listed ahead of
	 * sdr's own, and redo in software what SR and EC do in the kernel.
	 */
	if (flags & SDR_FI_CORE_PROV_ONLY) {
		any = offer[0];
		offer[1] = false;
	}
	if (!any)
		return -FI_ENODATA;
	if (hints && hints->domain_attr && hints->domain_attr->name)
		want_dev = hints->domain_attr->name;
	else
		want_dev = getenv("FI_SDR_DEVICE");
	/*
	 * With FI_SOURCE, or a service without a node, they name the local
	 * address an endpoint gets (its device, and the port it listens on);
	 * else the peer's.
	 */
	if ((node || service) && ((flags & FI_SOURCE) || !node)) {
		if (addr_parse(node, service, &want_src))
			return -FI_ENODATA;
	} else if (node) {
		if (addr_parse(node, service, &dest))
			return -FI_ENODATA;
		destp = &dest;
	}
	if (hints && hints->dest_addr) {
		if (hints->dest_addrlen < sizeof(dest) ||
		    ((struct sockaddr *)hints->dest_addr)->sa_family != AF_INET)
			return -FI_ENODATA;
		memcpy(&dest, hints->dest_addr, sizeof(dest));
		destp = &dest;
	}
	if (hints && hints->src_addr) {
		if (hints->src_addrlen < sizeof(want_src) ||
		    ((struct sockaddr *)hints->src_addr)->sa_family != AF_INET)
			return -FI_ENODATA;
		memcpy(&want_src, hints->src_addr, sizeof(want_src));
	}

	d = opendir("/sys/class/sdr");
	if (!d)
		return -FI_ENODATA;
	while ((de = readdir(d))) {
		struct in_addr ip;
		struct fi_info *fi;

		if (de->d_name[0] == '.')
			continue;
		if (want_dev && strcmp(want_dev, de->d_name))
			continue;
		if (sdr_fi_dev_ip(de->d_name, &ip))
			continue;
		if (want_src.sin_addr.s_addr &&
		    want_src.sin_addr.s_addr != ip.s_addr)
			continue;
		for (t = 0; t < 2; t++) {
			if (!offer[t])
				continue;
			fi = info_for(de->d_name, &ip, want_src.sin_port, hints,
				     destp, types[t]);
			if (!fi) {
				closedir(d);
				fi_freeinfo(head);
				return -FI_ENOMEM;
			}
			*tail = fi;
			tail = &fi->next;
		}
	}
	closedir(d);
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}

/* ---- the domain ---- */

static int mr_close(struct fid *fid)
{
	free(container_of(fid, struct fid_mr, fid));
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = sdr_fi_no_bind,
	.control = sdr_fi_no_control,
	.ops_open = sdr_fi_no_ops_open,
};

/*
 * Memory registration: the provider copies every message once between the
 * application's buffer and the flow's slot, so it needs no registration
 * (mr_mode 0); fi_mr_reg() hands out a handle that describes nothing,
 * key 0, for applications that register anyway.
 */
static int mr_reg(struct fid *fid, const void *buf, size_t len,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **out, void *context)
{
	struct fid_mr *mr;

	(void)fid; (void)offset; (void)requested_key;
	if (!buf && len)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (access & ~(uint64_t)(FI_SEND | FI_RECV))
		return -FI_EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->fid.fclass = FI_CLASS_MR;
	mr->fid.context = context;
	mr->fid.ops = &mr_fi_ops;
	*out = mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1)
		return -FI_EINVAL;
	return mr_reg(fid, iov->iov_base, iov->iov_len, access, offset,
		      requested_key, flags, mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		      uint64_t flags, struct fid_mr **mr)
{
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
		       attr->offset, attr->requested_key, flags, mr,
		       attr->context);
}

static struct fi_ops_mr dom_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

static int dom_close(struct fid *fid)
{
	struct sdr_fi_domain *dom = container_of(fid, struct sdr_fi_domain,
						 domain.fid);

	if (dom->refs)
		return -FI_EBUSY;
	sdr_close(dom->ctx);
	free(dom->conn_tab);
	pthread_mutex_destroy(&dom->lock);
	free(dom);
	return 0;
}

static struct fi_ops dom_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = dom_close,
	.bind = sdr_fi_no_bind,
	.control = sdr_fi_no_control,
	.ops_open = sdr_fi_no_ops_open,
};

static int no_scalable_ep(struct fid_domain *d, struct fi_info *i,
			  struct fid_ep **e, void *c)
{
	(void)d; (void)i; (void)e; (void)c;
	return -FI_ENOSYS;
}

static int no_poll_open(struct fid_domain *d, struct fi_poll_attr *a,
			struct fid_poll **p)
{
	(void)d; (void)a; (void)p;
	return -FI_ENOSYS;
}

static int no_stx_ctx(struct fid_domain *d, struct fi_tx_attr *a,
		      struct fid_stx **s, void *c)
{
	(void)d; (void)a; (void)s; (void)c;
	return -FI_ENOSYS;
}

static int no_srx_ctx(struct fid_domain *d, struct fi_rx_attr *a,
		      struct fid_ep **e, void *c)
{
	(void)d; (void)a; (void)e; (void)c;
	return -FI_ENOSYS;
}

static int no_query_atomic(struct fid_domain *d, enum fi_datatype t,
			   enum fi_op o, struct fi_atomic_attr *a, uint64_t f)
{
	(void)d; (void)t; (void)o; (void)a; (void)f;
	return -FI_ENOSYS;
}

static int no_query_collective(struct fid_domain *d, enum fi_collective_op o,
			       struct fi_collective_attr *a, uint64_t f)
{
	(void)d; (void)o; (void)a; (void)f;
	return -FI_ENOSYS;
}

static int dom_endpoint2(struct fid_domain *d, struct fi_info *info,
			 struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return sdr_fi_endpoint(d, info, ep, context);
}

static struct fi_ops_domain dom_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = sdr_fi_av_open,
	.cq_open = sdr_fi_cq_open,
	.endpoint = sdr_fi_endpoint,
	.scalable_ep = no_scalable_ep,
	.cntr_open = sdr_fi_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = dom_endpoint2,
};

static int fab_domain(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **out, void *context)
{
	struct sdr_fi_domain *dom;
	const char *dev;
	int ret;

	(void)fabric;
	if (!info || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	dev = info->domain_attr->name;
	if (strlen(dev) >= sizeof(dom->dev))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	strcpy(dom->dev, dev);
	ret = sdr_fi_dev_ip(dev, &dom->ip);
	if (ret) {
		free(dom);
		return -FI_ENODEV;
	}
	dom->ctx = sdr_open(dev, NULL);
	if (!dom->ctx) {
		ret = -errno;
		free(dom);
		return ret;
	}
	pthread_mutex_init(&dom->lock, NULL);
	dom->domain.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain.fid.context = context;
	dom->domain.fid.ops = &dom_fi_ops;
	dom->domain.ops = &dom_ops;
	dom->domain.mr = &dom_mr_ops;
	*out = &dom->domain;
	return 0;
}

static int fab_domain2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return fab_domain(fabric, info, dom, context);
}

static int no_passive_ep(struct fid_fabric *f, struct fi_info *i,
			 struct fid_pep **p, void *c)
{
	(void)f; (void)i; (void)p; (void)c;
	return -FI_ENOSYS;
}

/*
 * Event queues.  sdr's RDM endpoints and synchronous address vectors raise
 * no events of their own, so an EQ holds what the application writes to
 * it (fi_eq_write()) and hands it back in order; sread waits on a
 * condition variable (wait objects none, unspec and mutex_cond).
 */
struct eq_event {
	struct eq_event *next;
	uint32_t event;
	size_t len;
	unsigned char buf[];
};

struct sdr_fi_eq {
	struct fid_eq eq;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct eq_event *head, **tail;
};

static ssize_t eq_take(struct sdr_fi_eq *eq, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct eq_event *e = eq->head;

	if (!e)
		return -FI_EAGAIN;
	if (len < e->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = e->event;
	memcpy(buf, e->buf, e->len);
	if (!(flags & FI_PEEK)) {
		eq->head = e->next;
		if (!eq->head)
			eq->tail = &eq->head;
		len = e->len;
		free(e);
		return (ssize_t)len;
	}
	return (ssize_t)e->len;
}

static ssize_t eq_read(struct fid_eq *feq, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct sdr_fi_eq *eq = container_of(feq, struct sdr_fi_eq, eq);
	ssize_t ret;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	ret = eq_take(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	(void)eq; (void)buf;
	return flags ? -FI_EBADFLAGS : -FI_EAGAIN;	/* none are raised */
}

static ssize_t eq_write(struct fid_eq *feq, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct sdr_fi_eq *eq = container_of(feq, struct sdr_fi_eq, eq);
	struct eq_event *e;

	if (flags)
		return -FI_EBADFLAGS;
	if (!buf && len)
		return -FI_EINVAL;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -FI_ENOMEM;
	e->next = NULL;
	e->event = event;
	e->len = len;
	memcpy(e->buf, buf, len);
	pthread_mutex_lock(&eq->lock);
	*eq->tail = e;
	eq->tail = &e->next;
	pthread_cond_broadcast(&eq->cond);
	pthread_mutex_unlock(&eq->lock);
	return (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *feq, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct sdr_fi_eq *eq = container_of(feq, struct sdr_fi_eq, eq);
	struct timespec until;
	ssize_t ret;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	clock_gettime(CLOCK_REALTIME, &until);
	if (timeout > 0) {
		until.tv_sec += timeout / 1000;
		until.tv_nsec += (long)(timeout % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&eq->lock);
	while ((ret = eq_take(eq, event, buf, len, flags)) == -FI_EAGAIN &&
	       timeout) {
		if (timeout < 0)
			pthread_cond_wait(&eq->cond, &eq->lock);
		else if (pthread_cond_timedwait(&eq->cond, &eq->lock, &until))
			break;
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	(void)eq; (void)err_data;
	if (buf && len) {
		snprintf(buf, len, "sdr: error %d", prov_errno);
		return buf;
	}
	return "sdr: error";
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int eq_close(struct fid *fid)
{
	struct sdr_fi_eq *eq = container_of(fid, struct sdr_fi_eq, eq.fid);
	struct eq_event *e;

	while ((e = eq->head)) {
		eq->head = e->next;
		free(e);
	}
	pthread_cond_destroy(&eq->cond);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = sdr_fi_no_bind,
	.control = sdr_fi_no_control,
	.ops_open = sdr_fi_no_ops_open,
};

static int fab_eq_open(struct fid_fabric *f, struct fi_eq_attr *attr,
		       struct fid_eq **out, void *context)
{
	struct sdr_fi_eq *eq;

	(void)f;
	if (!attr)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)FI_WRITE)
		return -FI_EBADFLAGS;
	if (attr->wait_obj != FI_WAIT_NONE &&
	    attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_MUTEX_COND)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	pthread_mutex_init(&eq->lock, NULL);
	pthread_cond_init(&eq->cond, NULL);
	eq->tail = &eq->head;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	*out = &eq->eq;
	return 0;
}

static int no_wait_open(struct fid_fabric *f, struct fi_wait_attr *a,
			struct fid_wait **w)
{
	(void)f; (void)a; (void)w;
	return -FI_ENOSYS;
}

/* fi_trywait(): 0 when none of the CQs has a completion ready. */
static int fab_trywait(struct fid_fabric *f, struct fid **fids, int count)
{
	int i, ret;

	(void)f;
	for (i = 0; i < count; i++) {
		if (fids[i]->fclass != FI_CLASS_CQ)
			return -FI_EINVAL;
		ret = sdr_fi_cq_trywait(fids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static struct fi_ops_fabric fab_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = fab_domain,
	.passive_ep = no_passive_ep,
	.eq_open = fab_eq_open,
	.wait_open = no_wait_open,
	.trywait = fab_trywait,
	.domain2 = fab_domain2,
};

static int fab_close(struct fid *fid)
{
	free(container_of(fid, struct sdr_fi_fabric, fabric.fid));
	return 0;
}

static struct fi_ops fab_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fab_close,
	.bind = sdr_fi_no_bind,
	.control = sdr_fi_no_control,
	.ops_open = sdr_fi_no_ops_open,
};

int sdr_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **out,
		       void *context)
{
	struct sdr_fi_fabric *fab;

	if (attr && attr->name && strcmp(attr->name, SDR_FI_NAME))
		return -FI_ENODATA;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &fab_fi_ops;
	fab->fabric.ops = &fab_ops;
	fab->fabric.api_version = SDR_FI_API;
	*out = &fab->fabric;
	return 0;
}

static void sdr_fi_cleanup(void)
{
}

struct fi_provider sdr_fi_prov = {
	.version = SDR_FI_VERSION,
	.fi_version = SDR_FI_API,
	.name = SDR_FI_NAME,
	.getinfo = sdr_fi_getinfo,
	.fabric = sdr_fi_fabric_open,
	.cleanup = sdr_fi_cleanup,
};

FI_EXT_INI
{
	fi_param_define(&sdr_fi_prov, "policy", FI_PARAM_STRING,
			"reliability policy of the RDM endpoints' flows: sr (default), ec, adaptive or auto");
	fi_param_define(&sdr_fi_prov, "ec_k", FI_PARAM_INT,
			"EC data packets per submessage of the endpoints' flows (0: the module's ec_k)");
	fi_param_define(&sdr_fi_prov, "ec_m", FI_PARAM_INT,
			"EC parity packets per submessage of the endpoints' flows (0: the module's ec_m)");
	return &sdr_fi_prov;
}
