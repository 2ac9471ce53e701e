/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The peer's half of sdr's key exchange and packet tags, written with
 * OpenSSL (libcrypto) from Documentation/protocol.rst ("Key exchange",
 * "Authentication") alone, so a test that connects a kernel flow to it
 * holds the kernel's X25519, HMAC, HKDF and ChaCha20-Poly1305 to another
 * implementation's.  VMAC-64 is not in OpenSSL: its tags come from the
 * kernel's vmac64(aes) through AF_ALG.  Link with -lcrypto.
 */
#ifndef SDR_TEST_KEX_H
#define SDR_TEST_KEX_H

/* the 1.1.1 calls (HMAC_CTX, SHA256_*) without 3.0's deprecation notes */
#define OPENSSL_API_COMPAT	0x10101000L

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>

#include "sdr_uapi.h"

/* Put @len bytes as user key "sdr:NAME" in the process keyring: 0 or -1. */
static inline int kex_add_secret(const char *name, const void *secret,
				 size_t len)
{
	char desc[64];

	snprintf(desc, sizeof(desc), "sdr:%s", name);
	return syscall(SYS_add_key, "user", desc, secret, len,
		       KEY_SPEC_PROCESS_KEYRING) < 0 ? -1 : 0;
}

#define KEX_LEN		32

struct kex_peer {
	uint8_t priv[KEX_LEN];
	uint8_t pub[KEX_LEN];
	uint8_t psk[KEX_LEN];	/* the job secret's key */
	int has_psk;
	uint8_t tx[KEX_LEN];	/* our packets' key (the flow's rx) */
	uint8_t rx[KEX_LEN];	/* the flow's packets' key */
};

static inline void kex_hmac(const uint8_t *key, size_t klen,
			    const uint8_t *const *parts, const size_t *lens,
			    int n, uint8_t out[KEX_LEN])
{
	HMAC_CTX *h = HMAC_CTX_new();
	unsigned int olen = KEX_LEN;
	int i;

	HMAC_Init_ex(h, key, (int)klen, EVP_sha256(), NULL);
	for (i = 0; i < n; i++)
		HMAC_Update(h, parts[i], lens[i]);
	HMAC_Final(h, out, &olen);
	HMAC_CTX_free(h);
}

#define KEX_STR(s)	(const uint8_t *)(s), sizeof(s) - 1

/* A fresh X25519 key pair, and the job secret @secret (NULL: none). */
static inline int kex_peer_init(struct kex_peer *k, const void *secret,
				size_t len)
{
	EVP_PKEY *key = NULL;
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, NULL);
	size_t n = KEX_LEN;
	int ret = -1;

	memset(k, 0, sizeof(*k));
	if (!pc || EVP_PKEY_keygen_init(pc) <= 0 ||
	    EVP_PKEY_keygen(pc, &key) <= 0)
		goto out;
	if (EVP_PKEY_get_raw_private_key(key, k->priv, &n) <= 0)
		goto out;
	n = KEX_LEN;
	if (EVP_PKEY_get_raw_public_key(key, k->pub, &n) <= 0)
		goto out;
	if (secret) {
		const uint8_t *p[1] = { secret };
		size_t l[1] = { len };

		kex_hmac((const uint8_t *)"sdr psk v1", 10, p, l, 1, k->psk);
		k->has_psk = 1;
	}
	ret = 0;
out:
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(pc);
	return ret;
}

static inline void kex_le32(SHA256_CTX *s, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	SHA256_Update(s, b, 4);
}

/* The hash of a share: endpoint, paths, alg, flags, public key. */
static inline void kex_share_hash(const struct sdr_endpoint *ep,
				  const struct sdr_ep_paths *pp,
				  const struct sdr_ep_kex *kex,
				  uint8_t out[KEX_LEN])
{
	SHA256_CTX s;
	uint32_t i, n = pp->n ? pp->n : 1;

	SHA256_Init(&s);
	SHA256_Update(&s, KEX_STR("sdr share v1"));
	SHA256_Update(&s, ep, sizeof(*ep));
	kex_le32(&s, n);
	kex_le32(&s, ep->qpn);
	for (i = 1; i < n; i++)
		kex_le32(&s, pp->qpn[i]);
	kex_le32(&s, kex->alg);
	kex_le32(&s, kex->flags);
	SHA256_Update(&s, kex->pub, KEX_LEN);
	SHA256_Final(out, &s);
}

/* Our share for endpoint @ep and paths @pp, signed when we have a secret. */
static inline void kex_peer_share(const struct kex_peer *k, uint32_t alg,
				  const struct sdr_endpoint *ep,
				  const struct sdr_ep_paths *pp,
				  struct sdr_ep_kex *kex)
{
	uint8_t h[KEX_LEN], mac[KEX_LEN];
	const uint8_t *p[2] = { (const uint8_t *)"sdr share mac v1", h };
	size_t l[2] = { 16, KEX_LEN };

	memset(kex, 0, sizeof(*kex));
	kex->alg = alg;
	kex->flags = k->has_psk ? SDR_KEX_F_PSK : 0;
	memcpy(kex->pub, k->pub, KEX_LEN);
	if (!k->has_psk)
		return;
	kex_share_hash(ep, pp, kex, h);
	kex_hmac(k->psk, KEX_LEN, p, l, 2, mac);
	memcpy(kex->mac, mac, SDR_KEX_MAC_LEN);
}

/*
 * The keys, from the flow's share (@fep, @fpp, @fkex) and ours: 0, or -1
 * if X25519 fails.
 */
static inline int kex_peer_keys(struct kex_peer *k,
				const struct sdr_endpoint *fep,
				const struct sdr_ep_paths *fpp,
				const struct sdr_ep_kex *fkex,
				const struct sdr_endpoint *ep,
				const struct sdr_ep_paths *pp,
				const struct sdr_ep_kex *kex)
{
	static const uint8_t zero[KEX_LEN];
	uint8_t dh[KEX_LEN], fh[KEX_LEN], mh[KEX_LEN], th[KEX_LEN];
	uint8_t prk[KEX_LEN];
	EVP_PKEY *me, *them;
	EVP_PKEY_CTX *dc;
	size_t n = KEX_LEN;
	int first, ret = -1;
	SHA256_CTX s;

	me = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, k->priv,
					  KEX_LEN);
	them = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, fkex->pub,
					   KEX_LEN);
	dc = me ? EVP_PKEY_CTX_new(me, NULL) : NULL;
	if (!dc || !them || EVP_PKEY_derive_init(dc) <= 0 ||
	    EVP_PKEY_derive_set_peer(dc, them) <= 0 ||
	    EVP_PKEY_derive(dc, dh, &n) <= 0)
		goto out;
	kex_share_hash(fep, fpp, fkex, fh);
	kex_share_hash(ep, pp, kex, mh);
	first = memcmp(k->pub, fkex->pub, KEX_LEN) < 0;
	SHA256_Init(&s);
	SHA256_Update(&s, KEX_STR("sdr transcript v1"));
	SHA256_Update(&s, first ? mh : fh, KEX_LEN);
	SHA256_Update(&s, first ? fh : mh, KEX_LEN);
	SHA256_Final(th, &s);
	{
		const uint8_t *p[1] = { dh };
		size_t l[1] = { KEX_LEN };

		kex_hmac(k->has_psk ? k->psk : zero, KEX_LEN, p, l, 1, prk);
	}
	{
		static const uint8_t one = 1;
		const uint8_t *p[4] = { (const uint8_t *)"sdr key v1", th,
					k->pub, &one };
		size_t l[4] = { 10, KEX_LEN, KEX_LEN, 1 };

		kex_hmac(prk, KEX_LEN, p, l, 4, k->tx);
		p[2] = fkex->pub;
		kex_hmac(prk, KEX_LEN, p, l, 4, k->rx);
	}
	ret = 0;
out:
	EVP_PKEY_CTX_free(dc);
	EVP_PKEY_free(me);
	EVP_PKEY_free(them);
	return ret;
}

/*
 * Tag (and with AEAD, encrypt in place) the packet at @pkt: header, then
 * @pay_len payload bytes, its number already in the header.  VMAC-64
 * through AF_ALG, ChaCha20-Poly1305 (RFC 8439) through OpenSSL: 0 or -1.
 */
static inline int kex_seal(uint32_t alg, const uint8_t *key, uint64_t pn,
			   uint8_t *pkt, uint32_t hdr_len, uint32_t tag_off,
			   uint32_t pay_len)
{
	uint8_t *tag = pkt + tag_off, *pay = pkt + hdr_len;
	int ret = -1, i, n;

	memset(tag, 0, hdr_len - tag_off);
	if (alg == SDR_AUTH_VMAC64) {
		struct sockaddr_alg sa = { .salg_family = AF_ALG,
					   .salg_type = "hash",
					   .salg_name = "vmac64(aes)" };
		uint8_t nonce[16] = { 0 };
		int tfm, op = -1;

		for (i = 0; i < 8; i++)
			nonce[8 + i] = (uint8_t)(pn >> (56 - 8 * i));
		tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
		if (tfm < 0)
			return -1;
		if (!bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) &&
		    !setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key,
				SDR_AUTH_KEY_LEN))
			op = accept(tfm, NULL, 0);
		if (op >= 0 &&
		    send(op, nonce, sizeof(nonce), MSG_MORE) == sizeof(nonce) &&
		    send(op, pkt, tag_off, MSG_MORE) == (ssize_t)tag_off &&
		    send(op, pay, pay_len, 0) == (ssize_t)pay_len &&
		    read(op, tag, 8) == 8)
			ret = 0;
		if (op >= 0)
			close(op);
		close(tfm);
		return ret;
	}
	{
		EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
		uint8_t iv[12] = { 0 };

		for (i = 0; i < 8; i++)
			iv[4 + i] = (uint8_t)(pn >> (8 * i));
		if (c && EVP_EncryptInit_ex(c, EVP_chacha20_poly1305(), NULL,
					    key, iv) > 0 &&
		    EVP_EncryptUpdate(c, NULL, &n, pkt, (int)tag_off) > 0 &&
		    (!pay_len || EVP_EncryptUpdate(c, pay, &n, pay,
						   (int)pay_len) > 0) &&
		    EVP_EncryptFinal_ex(c, pay + pay_len, &n) > 0 &&
		    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0)
			ret = 0;
		EVP_CIPHER_CTX_free(c);
	}
	return ret;
}

/*
 * Open a packet the flow sent us with AEAD: verify its tag, decrypt in
 * place.  0, or -1 if the tag is wrong.
 */
static inline int kex_open(const uint8_t *key, uint64_t pn, uint8_t *pkt,
			   uint32_t hdr_len, uint32_t tag_off, uint32_t pay_len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t iv[12] = { 0 }, tag[16], *pay = pkt + hdr_len;
	int ret = -1, i, n;

	memcpy(tag, pkt + tag_off, 16);
	for (i = 0; i < 8; i++)
		iv[4 + i] = (uint8_t)(pn >> (8 * i));
	if (c && EVP_DecryptInit_ex(c, EVP_chacha20_poly1305(), NULL, key,
				    iv) > 0 &&
	    EVP_DecryptUpdate(c, NULL, &n, pkt, (int)tag_off) > 0 &&
	    (!pay_len || EVP_DecryptUpdate(c, pay, &n, pay,
					   (int)pay_len) > 0) &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0 &&
	    EVP_DecryptFinal_ex(c, pay + pay_len, &n) > 0)
		ret = 0;
	EVP_CIPHER_CTX_free(c);
	return ret;
}

#endif /* SDR_TEST_KEX_H */
