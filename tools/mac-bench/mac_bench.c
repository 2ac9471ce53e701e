// SPDX-License-Identifier: GPL-2.0
/*
 * mac_bench: how fast the kernel's MACs tag a 4 KiB packet, to choose
 * sdr's packet authentication by measured cost (Documentation/protocol.rst,
 * "Authentication").  Loading it runs each candidate, keyed, for half a
 * second on one CPU over the same buffer, prints MB/s to the kernel log,
 * and fails the load with -EAGAIN (as tcrypt does): it stays nowhere.
 * tools/bench-mac builds it and loads it in the test VM.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <crypto/aead.h>
#include <crypto/chacha.h>
#include <crypto/hash.h>
#include <crypto/poly1305.h>

#define MB_LEN		4096
#define MB_NS		500000000ULL

static u8 *mb_buf;
static u8 mb_key[32];

static void mb_report(const char *name, const char *driver, u64 n, u64 ns)
{
	pr_info("mac_bench: %-28s %-40s %6llu MB/s\n", name, driver,
		ns ? n * MB_LEN * 1000 / ns : 0);
}

/*
 * A keyed hash; @nonce: the transform takes its nonce or one-time key as
 * the data's first @nonce bytes (vmac64, poly1305).
 */
static void mb_shash(const char *name, unsigned int klen, unsigned int nonce)
{
	struct crypto_shash *tfm = crypto_alloc_shash(name, 0, 0);
	u64 t0, n = 0;
	u8 out[64];
	int err = 0;

	if (IS_ERR(tfm)) {
		pr_info("mac_bench: %s: not available (%ld)\n", name,
			PTR_ERR(tfm));
		return;
	}
	if (klen)
		err = crypto_shash_setkey(tfm, mb_key, klen);
	t0 = ktime_get_ns();
	while (!err && ktime_get_ns() - t0 < MB_NS) {
		SHASH_DESC_ON_STACK(desc, tfm);

		desc->tfm = tfm;
		err = crypto_shash_init(desc);
		if (!err && nonce)
			err = crypto_shash_update(desc, mb_key, nonce);
		if (!err)
			err = crypto_shash_update(desc, mb_buf, MB_LEN);
		if (!err)
			err = crypto_shash_final(desc, out);
		n++;
	}
	if (err)
		pr_info("mac_bench: %s: error %d\n", name, err);
	else
		mb_report(name, crypto_shash_driver_name(tfm), n,
			  ktime_get_ns() - t0);
	crypto_free_shash(tfm);
}

/* An AEAD as a MAC: the packet as associated data, nothing encrypted. */
static void mb_aead(const char *name, unsigned int klen)
{
	struct crypto_aead *tfm = crypto_alloc_aead(name, 0, CRYPTO_ALG_ASYNC);
	struct aead_request *req;
	struct scatterlist sg[2];
	u8 iv[16] = {}, tag[16];
	u64 t0, n = 0;
	int err;

	if (IS_ERR(tfm)) {
		pr_info("mac_bench: %s: not available (%ld)\n", name,
			PTR_ERR(tfm));
		return;
	}
	err = crypto_aead_setkey(tfm, mb_key, klen);
	if (!err)
		err = crypto_aead_setauthsize(tfm, 16);
	req = err ? NULL : aead_request_alloc(tfm, GFP_KERNEL);
	if (!req)
		goto out;
	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], mb_buf, MB_LEN);
	sg_set_buf(&sg[1], tag, sizeof(tag));
	t0 = ktime_get_ns();
	while (!err && ktime_get_ns() - t0 < MB_NS) {
		aead_request_set_callback(req, 0, NULL, NULL);
		aead_request_set_ad(req, MB_LEN);
		aead_request_set_crypt(req, sg, sg, 0, iv);
		err = crypto_aead_encrypt(req);
		n++;
	}
	if (!err)
		mb_report(name, crypto_aead_driver_name(tfm), n,
			  ktime_get_ns() - t0);
	aead_request_free(req);
out:
	if (err || !req)
		pr_info("mac_bench: %s: error %d\n", name, err ?: -ENOMEM);
	crypto_free_aead(tfm);
}

/*
 * sdr's AEAD (sdr_auth.c) calls the ChaCha20 and Poly1305 library, not
 * the crypto API: the library's dispatch (SIMD where the CPU has it)
 * against its generic C, each half alone and the whole seal of one packet
 * as sdr_auth_sign() does it (block 0 for the one-time key, encrypt,
 * tag), and a plain copy of the packet for scale.
 */
enum mb_lib_op {
	MB_CHACHA, MB_CHACHA_GENERIC, MB_POLY, MB_POLY_GENERIC, MB_SEAL,
	MB_SEAL_GENERIC, MB_MEMCPY,
};

static void mb_lib_seal(u8 *out, bool generic)
{
	u32 st[CHACHA_STATE_WORDS], key[CHACHA_KEY_SIZE / sizeof(u32)];
	u8 iv[CHACHA_IV_SIZE] = {}, block0[CHACHA_BLOCK_SIZE] = {}, tag[16];
	struct poly1305_desc_ctx poly;

	memcpy(key, mb_key, sizeof(key));
	chacha_init(st, key, iv);
	if (generic) {
		chacha_crypt_generic(st, block0, block0, sizeof(block0), 20);
		poly1305_init_generic(&poly, block0);
		chacha_crypt_generic(st, out, mb_buf, MB_LEN, 20);
		poly1305_update_generic(&poly, out, 64);
		poly1305_update_generic(&poly, out, MB_LEN);
		poly1305_final_generic(&poly, tag);
	} else {
		chacha20_crypt(st, block0, block0, sizeof(block0));
		poly1305_init(&poly, block0);
		chacha20_crypt(st, out, mb_buf, MB_LEN);
		poly1305_update(&poly, out, 64);
		poly1305_update(&poly, out, MB_LEN);
		poly1305_final(&poly, tag);
	}
}

static void mb_lib(const char *name, enum mb_lib_op op)
{
	u32 st[CHACHA_STATE_WORDS], key[CHACHA_KEY_SIZE / sizeof(u32)];
	u8 iv[CHACHA_IV_SIZE] = {}, tag[16];
	struct poly1305_desc_ctx poly;
	u8 *out = kmalloc(MB_LEN, GFP_KERNEL);
	u64 t0, n = 0;

	if (!out)
		return;
	memcpy(key, mb_key, sizeof(key));
	t0 = ktime_get_ns();
	while (ktime_get_ns() - t0 < MB_NS) {
		switch (op) {
		case MB_CHACHA:
			chacha_init(st, key, iv);
			chacha20_crypt(st, out, mb_buf, MB_LEN);
			break;
		case MB_CHACHA_GENERIC:
			chacha_init(st, key, iv);
			chacha_crypt_generic(st, out, mb_buf, MB_LEN, 20);
			break;
		case MB_POLY:
			poly1305_init(&poly, mb_key);
			poly1305_update(&poly, mb_buf, MB_LEN);
			poly1305_final(&poly, tag);
			break;
		case MB_POLY_GENERIC:
			poly1305_init_generic(&poly, mb_key);
			poly1305_update_generic(&poly, mb_buf, MB_LEN);
			poly1305_final_generic(&poly, tag);
			break;
		case MB_SEAL:
		case MB_SEAL_GENERIC:
			mb_lib_seal(out, op == MB_SEAL_GENERIC);
			break;
		case MB_MEMCPY:
			memcpy(out, mb_buf, MB_LEN);
			barrier();
			break;
		}
		n++;
	}
	mb_report(name, "library", n, ktime_get_ns() - t0);
	kfree(out);
}

static int __init mb_init(void)
{
	mb_buf = kmalloc(MB_LEN, GFP_KERNEL);
	if (!mb_buf)
		return -ENOMEM;
	memset(mb_buf, 0x5a, MB_LEN);
	memset(mb_key, 7, sizeof(mb_key));
	mb_shash("vmac64(aes)", 16, 16);
	mb_shash("poly1305", 0, 32);
	mb_shash("blake2b-256", 32, 0);
	mb_shash("hmac(sha256)", 32, 0);
	mb_shash("cmac(aes)", 16, 0);
	mb_shash("xcbc(aes)", 16, 0);
	mb_aead("gcm(aes)", 16);
	mb_aead("rfc7539(chacha20,poly1305)", 32);
	mb_lib("chacha20 (lib)", MB_CHACHA);
	mb_lib("chacha20 (lib, generic)", MB_CHACHA_GENERIC);
	mb_lib("poly1305 (lib)", MB_POLY);
	mb_lib("poly1305 (lib, generic)", MB_POLY_GENERIC);
	mb_lib("sdr aead seal (lib)", MB_SEAL);
	mb_lib("sdr aead seal (lib, generic)", MB_SEAL_GENERIC);
	mb_lib("memcpy", MB_MEMCPY);
	kfree(mb_buf);
	return -EAGAIN;		/* measured: nothing to keep loaded */
}
module_init(mb_init);

MODULE_DESCRIPTION("sdr: the cost of the kernel's MACs per 4 KiB packet");
MODULE_LICENSE("GPL");
