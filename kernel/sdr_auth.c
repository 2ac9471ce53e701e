// SPDX-License-Identifier: GPL-2.0
/*
 * Packet authentication.  A flow that authenticates numbers each packet
 * it sends (its nonce and the peer's replay-window index) and tags it
 * with the key of its direction, which the key exchange (sdr_kex.c)
 * gave both ends at connect; the peer verifies with the same key and
 * takes each number once (engine/sdr_replay.c).  Two ways to tag:
 *
 *  - VMAC-64 (the crypto API's vmac64(aes), a Wegman-Carter MAC: a
 *    universal hash of the packet plus a pad AES makes from the nonce),
 *    8 bytes: the cheapest MAC the kernel offers, measured
 *    (Documentation/protocol.rst, "Authentication");
 *  - AEAD, ChaCha20-Poly1305 as RFC 8439 section 2.8 builds it, from the
 *    kernel's ChaCha20 and Poly1305 library (SIMD where the CPU has it,
 *    synchronous in any context): the payload encrypted, header and
 *    payload authenticated, a 16-byte tag.  The tag sits in the header
 *    rather than after the payload, so the library's one-buffer AEAD
 *    call is not used; the construction is the RFC's, and t_wire checks
 *    it against OpenSSL's.
 *
 * Each direction has its own key and its own numbers, and a flow
 * connects once, so a (key, nonce) pair never tags two packets; a flow
 * stops sending before its numbers could wrap (SDR_AUTH_PN_MAX).
 *
 * Keys are set at connect, in process context, before ready is
 * published; the receive path reads ready first (acquire) and uses no
 * key before it.  Sign and verify run in any context, never sleep and
 * change no shared state but the packet number.
 */
#include <linux/capability.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <crypto/algapi.h>
#include <crypto/chacha.h>
#include <crypto/hash.h>
#include <crypto/poly1305.h>

#include "sdr.h"

#define SDR_AUTH_TFM	"vmac64(aes)"
#define SDR_VMAC_TAG_LEN	8

/* The last packet number a flow sends: far from the 64-bit wrap. */
#define SDR_AUTH_PN_MAX	(1ULL << 62)

static unsigned int sdr_auth_default = SDR_AUTH_VMAC64;
bool sdr_auth_required;

static const char * const sdr_auth_names[SDR_AUTH_NR] = SDR_AUTH_NAMES;
static const char * const sdr_kex_names[] = SDR_KEX_NAMES;

const char *sdr_auth_name(u32 alg)
{
	return alg < SDR_AUTH_NR ? sdr_auth_names[alg] : "unknown";
}

const char *sdr_kex_name(u32 kex)
{
	return kex < ARRAY_SIZE(sdr_kex_names) ? sdr_kex_names[kex] :
						 "unknown";
}

/* What the flow's keys rest on (fixed at create): SDR_KEX_*. */
u32 sdr_auth_kex(const struct sdr_auth *a)
{
	if (a->alg == SDR_AUTH_OFF)
		return SDR_KEX_NONE;
	return a->has_psk ? SDR_KEX_PSK : SDR_KEX_EPHEMERAL;
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
MODULE_PARM_DESC(auth, "Packet authentication of flows created with SDR_AUTH_DEFAULT: vmac64, aead or off [default vmac64]");
module_param_named(auth_required, sdr_auth_required, bool, 0644);
MODULE_PARM_DESC(auth_required, "Only CAP_NET_ADMIN may create flows without authentication (else EPERM) [default N]");
MODULE_SOFTDEP("pre: vmac");

int sdr_auth_param_alg(void)
{
	return READ_ONCE(sdr_auth_default);
}

/*
 * Process context, before the flow is visible to the receive path: the
 * flow's X25519 key pair, the job secret @secret (a name, "" for none:
 * @size bytes of the caller's struct) and, for VMAC, its transforms.
 */
int sdr_auth_init(struct sdr_auth *a, u32 alg, const char *secret,
		  size_t size)
{
	bool named = size && secret[0];
	int ret;

	a->alg = alg;
	atomic64_set(&a->tx_pn, 0);
	sdr_replay_init(&a->replay);
	if (alg == SDR_AUTH_OFF)
		return named ? -EINVAL : 0;
	if (named) {
		ret = sdr_kex_psk(secret, size, a->psk);
		if (ret)
			return ret;
		a->has_psk = true;
	}
	ret = sdr_kex_keypair(a->kex_secret, a->kex_pub);
	if (ret || alg != SDR_AUTH_VMAC64)
		return ret;
	a->rx_tfm = crypto_alloc_shash(SDR_AUTH_TFM, 0, 0);
	if (!IS_ERR(a->rx_tfm))
		a->tx_tfm = crypto_alloc_shash(SDR_AUTH_TFM, 0, 0);
	if (IS_ERR(a->rx_tfm) || IS_ERR(a->tx_tfm)) {
		ret = PTR_ERR(IS_ERR(a->rx_tfm) ? a->rx_tfm : a->tx_tfm);
		pr_warn_ratelimited("sdr: cannot use %s for authentication: %d\n",
				    SDR_AUTH_TFM, ret);
		return ret;
	}
	return 0;
}

void sdr_auth_fill_ep(const struct sdr_auth *a, struct sdr_ep_auth *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->alg = sdr_ep_put(a->alg);
}

/*
 * The flow's share for the peer (@kex), over its endpoint @ep and paths
 * @pp as create gave them to the caller; kept hashed for connect.
 */
void sdr_auth_fill_kex(struct sdr_auth *a, const struct sdr_endpoint *ep,
		       const struct sdr_ep_paths *pp, struct sdr_ep_kex *kex)
{
	u32 qpn[SDR_PATHS_MAX], i, n = sdr_ep_get(pp->n);

	memset(kex, 0, sizeof(*kex));
	kex->alg = sdr_ep_put(a->alg);
	if (a->alg == SDR_AUTH_OFF)
		return;
	for (i = 0; i < n; i++)
		qpn[i] = sdr_ep_get(pp->qpn[i]);
	if (a->has_psk)
		kex->flags = sdr_ep_put(SDR_KEX_F_PSK);
	memcpy(kex->pub, a->kex_pub, sizeof(kex->pub));
	sdr_kex_share_hash(ep, n, qpn, a->alg, sdr_ep_get(kex->flags),
			   a->kex_pub, a->share_hash);
	if (a->has_psk)
		sdr_kex_mac(a->psk, a->share_hash, kex->mac);
}

/*
 * The peer's part (SDR_IOC_FLOW_CONNECT): its auth @peer (no key) and
 * share @kex, for the endpoint @ep and the paths @pp (normalized, host
 * order) it came with.  Nothing changes here: the keys go to @keys for
 * sdr_auth_commit().
 *
 * Return: 0; -EPROTO when the peer's auth is not ours, it sent a key,
 * or its share is malformed; -EKEYREJECTED when one end names a job
 * secret and the other does not, or the share is not signed with ours.
 */
int sdr_auth_accept(const struct sdr_auth *a, const struct sdr_ep_auth *peer,
		    const struct sdr_ep_kex *kex, const struct sdr_endpoint *ep,
		    const struct sdr_ep_paths *pp, struct sdr_auth_keys *keys)
{
	u32 alg = sdr_ep_get(peer->alg), flags = sdr_ep_get(kex->flags);
	u8 hash[SDR_KEY_LEN], mac[SDR_KEX_MAC_LEN];
	bool psk = flags & SDR_KEX_F_PSK;
	int ret = 0;

	if (alg == SDR_AUTH_DEFAULT && !peer->__reserved)
		alg = SDR_AUTH_OFF;	/* a version 2 caller's: all zero */
	if (alg != a->alg || peer->__reserved ||
	    memchr_inv(peer->key, 0, sizeof(peer->key)))
		return -EPROTO;
	if (alg == SDR_AUTH_OFF)
		return 0;
	if (sdr_ep_get(kex->alg) != alg || (flags & ~SDR_KEX_F_PSK) ||
	    (!psk && memchr_inv(kex->mac, 0, sizeof(kex->mac))))
		return -EPROTO;
	if (psk != a->has_psk)
		return -EKEYREJECTED;
	sdr_kex_share_hash(ep, pp->n, pp->qpn, alg, flags, kex->pub, hash);
	if (psk) {
		sdr_kex_mac(a->psk, hash, mac);
		if (crypto_memneq(mac, kex->mac, sizeof(mac)))
			ret = -EKEYREJECTED;
	}
	if (!ret)
		ret = sdr_kex_derive(a->kex_secret, a->kex_pub, kex->pub,
				     a->share_hash, hash,
				     psk ? a->psk : NULL, keys->tx, keys->rx);
	memzero_explicit(mac, sizeof(mac));
	return ret;
}

/*
 * Key the flow with what sdr_auth_accept() derived, forget the secrets
 * the keys came from and publish them (process context, once).
 *
 * Return: 0, or the transform's setkey error.
 */
int sdr_auth_commit(struct sdr_auth *a, struct sdr_auth_keys *keys)
{
	int ret = 0;

	if (a->alg == SDR_AUTH_OFF)
		return 0;
	if (a->alg == SDR_AUTH_VMAC64) {
		ret = crypto_shash_setkey(a->tx_tfm, keys->tx,
					  SDR_AUTH_KEY_LEN);
		if (!ret)
			ret = crypto_shash_setkey(a->rx_tfm, keys->rx,
						  SDR_AUTH_KEY_LEN);
	} else {
		memcpy(a->tx_key, keys->tx, sizeof(a->tx_key));
		memcpy(a->rx_key, keys->rx, sizeof(a->rx_key));
	}
	memzero_explicit(keys, sizeof(*keys));
	if (ret)
		return ret;
	memzero_explicit(a->kex_secret, sizeof(a->kex_secret));
	memzero_explicit(a->psk, sizeof(a->psk));
	/* the keys above before ready: sdr_auth_verify() reads it first */
	smp_store_release(&a->ready, true);
	return 0;
}

void sdr_auth_free(struct sdr_auth *a)
{
	if (!IS_ERR_OR_NULL(a->rx_tfm))
		crypto_free_shash(a->rx_tfm);
	if (!IS_ERR_OR_NULL(a->tx_tfm))
		crypto_free_shash(a->tx_tfm);
	a->rx_tfm = NULL;
	a->tx_tfm = NULL;
	memzero_explicit(a->kex_secret, sizeof(a->kex_secret));
	memzero_explicit(a->psk, sizeof(a->psk));
	memzero_explicit(a->tx_key, sizeof(a->tx_key));
	memzero_explicit(a->rx_key, sizeof(a->rx_key));
}

/* The VMAC-64 tag of header @hdr (its first SDR_WIRE_TAG_OFF bytes) and payload. */
static int sdr_vmac(struct crypto_shash *tfm, u64 pn, const u8 *hdr,
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

static_assert(SDR_WIRE_TAG_LEN == POLY1305_DIGEST_SIZE);
static_assert(SDR_KEY_LEN == CHACHA_KEY_SIZE);

/*
 * ChaCha20 for key @key and nonce 0^32 || LE64(@pn), block 0 made into
 * the Poly1305 key @poly; @st is left at block 1 (RFC 8439 2.6, 2.8).
 */
static void sdr_aead_start(u32 *st, struct poly1305_desc_ctx *poly,
			   const u8 *key, u64 pn)
{
	static const u8 zero[POLY1305_KEY_SIZE];
	u8 block0[POLY1305_KEY_SIZE];
	__le64 iv[2] = { 0, cpu_to_le64(pn) };
	u32 k[CHACHA_KEY_SIZE / sizeof(u32)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(k); i++) {
		__le32 w;

		memcpy(&w, key + 4 * i, sizeof(w));
		k[i] = le32_to_cpu(w);
	}
	chacha_init(st, k, (const u8 *)iv);
	chacha20_crypt(st, block0, zero, sizeof(block0));
	poly1305_init(poly, block0);
	memzero_explicit(k, sizeof(k));
	memzero_explicit(block0, sizeof(block0));
}

/* Poly1305 over the header before the tag and ciphertext @ct (RFC 8439 2.8). */
static void sdr_aead_tag(struct poly1305_desc_ctx *poly, const u8 *hdr,
			 const u8 *ct, u32 len, u8 *tag)
{
	static const u8 pad[16];
	__le64 lens[2] = { cpu_to_le64(SDR_WIRE_TAG_OFF), cpu_to_le64(len) };

	static_assert(SDR_WIRE_TAG_OFF % 16 == 0);
	poly1305_update(poly, hdr, SDR_WIRE_TAG_OFF);
	poly1305_update(poly, ct, len);
	if (len % 16)
		poly1305_update(poly, pad, 16 - len % 16);
	poly1305_update(poly, (const u8 *)lens, sizeof(lens));
	poly1305_final(poly, tag);
}

/*
 * Number and tag the encoded packet at @hdr (payload @len bytes at
 * @payload) for the peer.  With AEAD the ciphertext goes to @out (@len
 * bytes; it may be @payload), which is what is sent; else @out is
 * unused.  Any context; the flow connected.
 *
 * Return: 0; -EKEYEXPIRED once the flow's packet numbers ran out (it
 * must be connected anew); a transform's error.
 */
int sdr_auth_sign(struct sdr_auth *a, u8 *hdr, const void *payload, u32 len,
		  u8 *out)
{
	struct poly1305_desc_ctx poly;
	u32 st[CHACHA_STATE_WORDS];
	u8 *tag = hdr + SDR_WIRE_TAG_OFF;
	__be64 be_pn;
	u64 pn;

	if (a->alg == SDR_AUTH_OFF)
		return 0;
	pn = atomic64_inc_return(&a->tx_pn);
	if (pn > SDR_AUTH_PN_MAX)
		return -EKEYEXPIRED;
	be_pn = cpu_to_be64(pn);
	memcpy(hdr + SDR_WIRE_PN_OFF, &be_pn, sizeof(be_pn));
	memset(tag, 0, SDR_WIRE_TAG_LEN);
	if (a->alg == SDR_AUTH_VMAC64)
		return sdr_vmac(a->tx_tfm, pn, hdr, payload, len, tag);
	sdr_aead_start(st, &poly, a->tx_key, pn);
	chacha20_crypt(st, out, payload, len);
	sdr_aead_tag(&poly, hdr, out, len, tag);
	memzero_explicit(st, sizeof(st));
	return 0;
}

/*
 * Whether the flow connected and has its keys (any context): before
 * that its packets have no peer to come from.
 */
bool sdr_auth_ready(const struct sdr_auth *a)
{
	/* pairs with the release in sdr_auth_commit() */
	return smp_load_acquire(&a->ready);
}

/*
 * Whether the tag of the decoded packet @pkt at @hdr is right; with
 * AEAD, a right one's payload is decrypted in place.  Any context.
 */
bool sdr_auth_verify(const struct sdr_auth *a, u8 *hdr,
		     const struct sdr_pkt *pkt)
{
	u8 *payload = hdr + SDR_WIRE_HDR_LEN, *tag = hdr + SDR_WIRE_TAG_OFF;
	u8 want[SDR_WIRE_TAG_LEN] = {};
	struct poly1305_desc_ctx poly;
	u32 st[CHACHA_STATE_WORDS];
	bool ok;

	if (!sdr_auth_ready(a) || !pkt->pn)
		return false;
	if (a->alg == SDR_AUTH_VMAC64)
		return !sdr_vmac(a->rx_tfm, pkt->pn, hdr, payload,
				 pkt->payload_len, want) &&
		       !crypto_memneq(want, tag, sizeof(want));
	sdr_aead_start(st, &poly, a->rx_key, pkt->pn);
	sdr_aead_tag(&poly, hdr, payload, pkt->payload_len, want);
	ok = !crypto_memneq(want, tag, sizeof(want));
	if (ok)
		chacha20_crypt(st, payload, payload, pkt->payload_len);
	memzero_explicit(st, sizeof(st));
	return ok;
}
