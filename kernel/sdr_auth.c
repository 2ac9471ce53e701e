// SPDX-License-Identifier: GPL-2.0
/*
 * Packet authentication.  A flow that authenticates tags each packet it
 * sends with VMAC-64 (the crypto API's vmac64(aes), a Wegman-Carter MAC:
 * a universal hash of the packet plus a pad AES makes from the nonce)
 * keyed by its peer's receive key, the packet number its nonce; the peer
 * verifies with the same key, its own, and takes each number once
 * (engine/sdr_replay.c).  Each direction of a flow has its own key and
 * its own numbers, and a flow connects once, so a (key, nonce) pair never
 * tags two packets.  Documentation/protocol.rst, "Authentication", says
 * why VMAC: it was the cheapest MAC the kernel offers, measured.
 *
 * Transforms are allocated and keyed in process context (create,
 * connect); sign and verify run in any context, each on its own
 * descriptor on the stack, and never sleep.
 */
#include <linux/capability.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>

#include "sdr.h"

#define SDR_AUTH_TFM	"vmac64(aes)"

static unsigned int sdr_auth_default = SDR_AUTH_VMAC64;
bool sdr_auth_required;

static const char * const sdr_auth_names[SDR_AUTH_NR] = SDR_AUTH_NAMES;

const char *sdr_auth_name(u32 alg)
{
	return alg < SDR_AUTH_NR ? sdr_auth_names[alg] : "unknown";
}

static int sdr_auth_param_set(const char *val, const struct kernel_param *kp)
{
	u32 alg;

	for (alg = SDR_AUTH_OFF; alg < SDR_AUTH_NR; alg++)
		if (sysfs_streq(val, sdr_auth_names[alg])) {
			WRITE_ONCE(sdr_auth_default, alg);
			return 0;
		}
	return -EINVAL;
}

static int sdr_auth_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  sdr_auth_name(READ_ONCE(sdr_auth_default)));
}

static const struct kernel_param_ops sdr_auth_param_ops = {
	.set	= sdr_auth_param_set,
	.get	= sdr_auth_param_get,
};
module_param_cb(auth, &sdr_auth_param_ops, NULL, 0644);
MODULE_PARM_DESC(auth, "Packet authentication of flows created with SDR_AUTH_DEFAULT: vmac64 or off [default vmac64]");
module_param_named(auth_required, sdr_auth_required, bool, 0644);
MODULE_PARM_DESC(auth_required, "Only CAP_NET_ADMIN may create flows without authentication (else EPERM) [default N]");
MODULE_SOFTDEP("pre: vmac");

int sdr_auth_param_alg(void)
{
	return READ_ONCE(sdr_auth_default);
}

static struct crypto_shash *sdr_auth_tfm(const u8 *key)
{
	struct crypto_shash *tfm = crypto_alloc_shash(SDR_AUTH_TFM, 0, 0);
	int ret;

	if (IS_ERR(tfm))
		return tfm;
	if (key) {
		ret = crypto_shash_setkey(tfm, key, SDR_AUTH_KEY_LEN);
		if (ret) {
			crypto_free_shash(tfm);
			return ERR_PTR(ret);
		}
	}
	return tfm;
}

/* Process context, before the flow is visible to the receive path. */
int sdr_auth_init(struct sdr_auth *a, u32 alg)
{
	a->alg = alg;
	atomic64_set(&a->tx_pn, 0);
	sdr_replay_init(&a->replay);
	if (alg == SDR_AUTH_OFF)
		return 0;
	/* a zero key is how a connect says "none": never make one */
	do {
		get_random_bytes(a->rx_key, sizeof(a->rx_key));
	} while (!memchr_inv(a->rx_key, 0, sizeof(a->rx_key)));
	a->rx_tfm = sdr_auth_tfm(a->rx_key);
	if (IS_ERR(a->rx_tfm))
		goto err;
	a->tx_tfm = sdr_auth_tfm(NULL);
	if (IS_ERR(a->tx_tfm))
		goto err;
	return 0;
err:
	pr_warn_ratelimited("sdr: cannot use %s for authentication: %ld\n",
			    SDR_AUTH_TFM, PTR_ERR(IS_ERR(a->rx_tfm) ?
						  a->rx_tfm : a->tx_tfm));
	return IS_ERR(a->rx_tfm) ? PTR_ERR(a->rx_tfm) : PTR_ERR(a->tx_tfm);
}

void sdr_auth_fill_ep(const struct sdr_auth *a, struct sdr_ep_auth *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->alg = sdr_ep_put(a->alg);
	if (a->alg != SDR_AUTH_OFF)
		memcpy(ep->key, a->rx_key, sizeof(ep->key));
}

/*
 * The peer's part (SDR_IOC_FLOW_CONNECT): its alg must be ours; with a
 * MAC, its key keys what we send.  An all-zero struct (an older caller's)
 * means OFF.
 */
int sdr_auth_connect(struct sdr_auth *a, const struct sdr_ep_auth *peer)
{
	u32 alg = sdr_ep_get(peer->alg);
	bool has_key = memchr_inv(peer->key, 0, sizeof(peer->key));

	if (alg == SDR_AUTH_DEFAULT && !has_key && !peer->__reserved)
		alg = SDR_AUTH_OFF;
	if (alg != a->alg || peer->__reserved)
		return -EPROTO;
	if (alg == SDR_AUTH_OFF)
		return has_key ? -EPROTO : 0;
	if (!has_key)
		return -EPROTO;
	return crypto_shash_setkey(a->tx_tfm, peer->key, sizeof(peer->key));
}

void sdr_auth_free(struct sdr_auth *a)
{
	if (!IS_ERR_OR_NULL(a->rx_tfm))
		crypto_free_shash(a->rx_tfm);
	if (!IS_ERR_OR_NULL(a->tx_tfm))
		crypto_free_shash(a->tx_tfm);
	a->rx_tfm = NULL;
	a->tx_tfm = NULL;
	memzero_explicit(a->rx_key, sizeof(a->rx_key));
}

/* The tag of header @hdr (its first SDR_WIRE_TAG_OFF bytes) and payload. */
static int sdr_auth_mac(struct crypto_shash *tfm, u64 pn, const u8 *hdr,
			const void *payload, u32 len, u8 *tag)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	/* VMAC's nonce: 16 bytes, the first bit 0 */
	__be64 nonce[2] = { 0, cpu_to_be64(pn) };
	int ret;

	desc->tfm = tfm;
	ret = crypto_shash_init(desc);
	if (!ret)
		ret = crypto_shash_update(desc, (const u8 *)nonce,
					  sizeof(nonce));
	if (!ret)
		ret = crypto_shash_update(desc, hdr, SDR_WIRE_TAG_OFF);
	if (!ret && len)
		ret = crypto_shash_update(desc, payload, len);
	if (!ret)
		ret = crypto_shash_final(desc, tag);
	shash_desc_zero(desc);
	return ret;
}

static_assert(SDR_WIRE_TAG_LEN == 8, "vmac64 makes 8 bytes");

/*
 * Number and tag the encoded packet at @hdr (payload @len bytes at
 * @payload) for the peer.  Any context; the flow connected.
 */
int sdr_auth_sign(struct sdr_auth *a, u8 *hdr, const void *payload, u32 len)
{
	__be64 be_pn;
	u64 pn;

	if (a->alg == SDR_AUTH_OFF)
		return 0;
	pn = atomic64_inc_return(&a->tx_pn);
	be_pn = cpu_to_be64(pn);
	memcpy(hdr + SDR_WIRE_PN_OFF, &be_pn, sizeof(be_pn));
	return sdr_auth_mac(a->tx_tfm, pn, hdr, payload, len,
			    hdr + SDR_WIRE_TAG_OFF);
}

/* Whether the tag of the decoded packet @pkt at @hdr is right. */
bool sdr_auth_verify(const struct sdr_auth *a, const u8 *hdr,
		     const struct sdr_pkt *pkt)
{
	u8 tag[SDR_WIRE_TAG_LEN];

	if (!pkt->pn || sdr_auth_mac(a->rx_tfm, pkt->pn, hdr,
				     sdr_wire_payload(hdr), pkt->payload_len,
				     tag))
		return false;
	return !crypto_memneq(tag, hdr + SDR_WIRE_TAG_OFF, sizeof(tag));
}
