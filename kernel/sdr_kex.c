// SPDX-License-Identifier: GPL-2.0
/*
 * Key exchange (Documentation/protocol.rst, "Key exchange").  No key is
 * ever sent: each flow makes an X25519 key pair at create and gives the
 * peer its public half with the endpoint (its share); at connect both
 * ends compute the X25519 secret and derive one key per direction with
 * HKDF-SHA256 (RFC 5869) over it, salted with the job secret when the
 * flow names one, the info naming both shares and the direction.  A flow
 * that names a job secret also signs its share with it (HMAC-SHA256,
 * first 16 bytes) and takes only a share signed with the same secret, so
 * a host without the secret can neither connect nor tag a packet.
 *
 * A share is the endpoint, the paths, the auth, the flags and the public
 * key; what is signed and hashed into the transcript is its SHA-256,
 * over a fixed little-endian encoding, so both ends hash the same bytes
 * whatever struct versions carried them.
 *
 * Everything here is process context (create, connect) and synchronous:
 * the library's SHA-256 and X25519, nothing allocated.
 */
#include <linux/key.h>
#include <linux/string.h>
#include <keys/user-type.h>
#include <crypto/algapi.h>
#include <crypto/curve25519.h>
#include <crypto/sha2.h>

#include "sdr.h"
#include "sdr_flow.h"

/* The job secret's bounds: at least a 128-bit key, at most a page. */
#define SDR_PSK_MIN	16
#define SDR_PSK_MAX	4096

/* Each use of a hash is labelled: the label's bytes, no NUL. */
#define SDR_L_PSK	"sdr psk v1"
#define SDR_L_SHARE	"sdr share v1"
#define SDR_L_MAC	"sdr share mac v1"
#define SDR_L_TH	"sdr transcript v1"
#define SDR_L_KEY	"sdr key v1"

struct sdr_hmac {
	struct sha256_state	inner;
	struct sha256_state	outer;
};

/* HMAC-SHA256 (RFC 2104) over the library's SHA-256. */
static void sdr_hmac_init(struct sdr_hmac *h, const u8 *key, unsigned int len)
{
	u8 k[SHA256_BLOCK_SIZE] = {};
	u8 pad[SHA256_BLOCK_SIZE];
	unsigned int i;

	if (len > SHA256_BLOCK_SIZE)
		sha256(key, len, k);
	else
		memcpy(k, key, len);
	for (i = 0; i < SHA256_BLOCK_SIZE; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&h->inner);
	sha256_update(&h->inner, pad, sizeof(pad));
	for (i = 0; i < SHA256_BLOCK_SIZE; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&h->outer);
	sha256_update(&h->outer, pad, sizeof(pad));
	memzero_explicit(k, sizeof(k));
	memzero_explicit(pad, sizeof(pad));
}

static void sdr_hmac_update(struct sdr_hmac *h, const void *data,
			    unsigned int len)
{
	sha256_update(&h->inner, data, len);
}

static void sdr_hmac_label(struct sdr_hmac *h, const char *label)
{
	sdr_hmac_update(h, label, strlen(label));
}

static void sdr_sha_label(struct sha256_state *s, const char *label)
{
	sha256_update(s, (const u8 *)label, strlen(label));
}

static void sdr_hmac_final(struct sdr_hmac *h, u8 out[SHA256_DIGEST_SIZE])
{
	u8 d[SHA256_DIGEST_SIZE];

	sha256_final(&h->inner, d);
	sha256_update(&h->outer, d, sizeof(d));
	sha256_final(&h->outer, out);
	memzero_explicit(d, sizeof(d));
	memzero_explicit(h, sizeof(*h));
}

/*
 * The job secret NAME: the user key "sdr:NAME" in the calling process's
 * keyrings, its payload reduced to a 32-byte key in @out.
 *
 * Return: 0; -EINVAL for a name that is not a printable, NUL-terminated
 * string without spaces or a payload outside 16..4096 bytes; -ENOKEY,
 * -EKEYREVOKED, -EKEYEXPIRED or -EACCES from the keyring.
 */
int sdr_kex_psk(const char *name, size_t size, u8 out[SDR_KEY_LEN])
{
	const struct user_key_payload *up;
	char desc[4 + SDR_SECRET_NAME_LEN];
	struct sdr_hmac h;
	struct key *key;
	size_t i, len = strnlen(name, size);
	int ret = 0;

	if (!len || len == size)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return -EINVAL;
	snprintf(desc, sizeof(desc), "sdr:%s", name);
	key = request_key(&key_type_user, desc, NULL);
	if (IS_ERR(key))
		return PTR_ERR(key);
	down_read(&key->sem);
	up = user_key_payload_locked(key);
	if (!up)
		ret = -EKEYREVOKED;
	else if (up->datalen < SDR_PSK_MIN || up->datalen > SDR_PSK_MAX)
		ret = -EINVAL;
	if (!ret) {
		sdr_hmac_init(&h, (const u8 *)SDR_L_PSK, strlen(SDR_L_PSK));
		sdr_hmac_update(&h, up->data, up->datalen);
		sdr_hmac_final(&h, out);
	}
	up_read(&key->sem);
	key_put(key);
	return ret;
}

static void sdr_sha_le32(struct sha256_state *s, u32 v)
{
	__le32 le = cpu_to_le32(v);

	sha256_update(s, (const u8 *)&le, sizeof(le));
}

/*
 * The hash of a share: endpoint @ep (the bytes its flow made), its @n
 * path QPNs @qpn (host order, the first the endpoint's), @alg, @flags
 * and public key @pub.
 */
void sdr_kex_share_hash(const struct sdr_endpoint *ep, u32 n, const u32 *qpn,
			u32 alg, u32 flags, const u8 *pub,
			u8 out[SDR_KEY_LEN])
{
	struct sha256_state s;
	u32 i;

	sha256_init(&s);
	sdr_sha_label(&s, SDR_L_SHARE);
	sha256_update(&s, (const u8 *)ep, sizeof(*ep));
	sdr_sha_le32(&s, n);
	for (i = 0; i < n; i++)
		sdr_sha_le32(&s, qpn[i]);
	sdr_sha_le32(&s, alg);
	sdr_sha_le32(&s, flags);
	sha256_update(&s, pub, SDR_KEY_LEN);
	sha256_final(&s, out);
}

/* The signature of a share of hash @hash under job secret key @psk. */
void sdr_kex_mac(const u8 psk[SDR_KEY_LEN], const u8 hash[SDR_KEY_LEN],
		 u8 mac[SDR_KEX_MAC_LEN])
{
	u8 full[SHA256_DIGEST_SIZE];
	struct sdr_hmac h;

	sdr_hmac_init(&h, psk, SDR_KEY_LEN);
	sdr_hmac_label(&h, SDR_L_MAC);
	sdr_hmac_update(&h, hash, SDR_KEY_LEN);
	sdr_hmac_final(&h, full);
	memcpy(mac, full, SDR_KEX_MAC_LEN);
	memzero_explicit(full, sizeof(full));
}

/* HKDF-Expand's first block: HMAC(prk, label || th || pub || 0x01). */
static void sdr_kex_expand(const u8 prk[SDR_KEY_LEN], const u8 th[SDR_KEY_LEN],
			   const u8 *pub, u8 out[SDR_KEY_LEN])
{
	static const u8 one = 1;
	struct sdr_hmac h;

	sdr_hmac_init(&h, prk, SDR_KEY_LEN);
	sdr_hmac_label(&h, SDR_L_KEY);
	sdr_hmac_update(&h, th, SDR_KEY_LEN);
	sdr_hmac_update(&h, pub, SDR_KEY_LEN);
	sdr_hmac_update(&h, &one, 1);
	sdr_hmac_final(&h, out);
}

/*
 * The keys of a connect: from our X25519 @secret and public key @pub,
 * the peer's @peer_pub, both shares' hashes and the job secret key @psk
 * (NULL: none), the key our packets are tagged with (@tx) and the peer's
 * (@rx).  The transcript orders the shares by public key, so both ends
 * hash the same; each direction's key names its sender's public key.
 *
 * Return: 0, or -EPROTO when the peer's public key is of low order (the
 * X25519 secret would be 0: a share no honest peer makes).
 */
int sdr_kex_derive(const u8 *secret, const u8 *pub, const u8 *peer_pub,
		   const u8 *hash, const u8 *peer_hash, const u8 *psk,
		   u8 tx[SDR_KEY_LEN], u8 rx[SDR_KEY_LEN])
{
	static const u8 zero_salt[SDR_KEY_LEN];
	u8 dh[CURVE25519_KEY_SIZE], prk[SDR_KEY_LEN], th[SDR_KEY_LEN];
	bool first = memcmp(pub, peer_pub, SDR_KEY_LEN) < 0;
	struct sha256_state s;
	struct sdr_hmac h;

	if (!curve25519(dh, secret, peer_pub))
		return -EPROTO;
	sha256_init(&s);
	sdr_sha_label(&s, SDR_L_TH);
	sha256_update(&s, first ? hash : peer_hash, SDR_KEY_LEN);
	sha256_update(&s, first ? peer_hash : hash, SDR_KEY_LEN);
	sha256_final(&s, th);
	/* HKDF-Extract: the job secret is the salt */
	sdr_hmac_init(&h, psk ? psk : zero_salt, SDR_KEY_LEN);
	sdr_hmac_update(&h, dh, sizeof(dh));
	sdr_hmac_final(&h, prk);
	sdr_kex_expand(prk, th, pub, tx);
	sdr_kex_expand(prk, th, peer_pub, rx);
	memzero_explicit(dh, sizeof(dh));
	memzero_explicit(prk, sizeof(prk));
	return 0;
}

/*
 * A fresh X25519 key pair.
 *
 * Return: 0, or -EIO if the library refuses the secret it made.
 */
int sdr_kex_keypair(u8 secret[SDR_KEY_LEN], u8 pub[SDR_KEY_LEN])
{
	curve25519_generate_secret(secret);
	return curve25519_generate_public(pub, secret) ? 0 : -EIO;
}

/*
 * SDR_IOC_KEX_CHECK: whether the share @arg gives is signed with the job
 * secret it names, as a connect would find it.
 *
 * Return: 0; -EKEYREJECTED if not; -EINVAL for no name, a bad one or
 * bad paths; the keyring's error.
 */
int sdr_kex_check(struct sdr_kex_check *arg)
{
	const struct sdr_ep_kex *kex = &arg->peer_kex;
	u32 alg = sdr_ep_get(kex->alg), flags = sdr_ep_get(kex->flags);
	u8 psk[SDR_KEY_LEN], hash[SDR_KEY_LEN], mac[SDR_KEX_MAC_LEN];
	struct sdr_ep_paths pp;
	int ret;

	if (!arg->secret[0])
		return -EINVAL;
	ret = sdr_flow_peer_paths(&arg->peer, &arg->peer_paths, &pp);
	if (ret)
		return ret;
	ret = sdr_kex_psk(arg->secret, sizeof(arg->secret), psk);
	if (ret)
		return ret;
	if (flags != SDR_KEX_F_PSK || alg == SDR_AUTH_OFF ||
	    alg >= SDR_AUTH_NR) {
		ret = -EKEYREJECTED;
		goto out;
	}
	sdr_kex_share_hash(&arg->peer, pp.n, pp.qpn, alg, flags, kex->pub,
			   hash);
	sdr_kex_mac(psk, hash, mac);
	if (crypto_memneq(mac, kex->mac, sizeof(mac)))
		ret = -EKEYREJECTED;
out:
	memzero_explicit(psk, sizeof(psk));
	return ret;
}
