/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portability header for the sdr protocol engine.
 *
 * The engine files (sdr_wire, sdr_bitmap, sdr_rtt, sdr_sr) build unchanged
 * into sdr.ko and into the host unit tests, fuzzers and simulator.  They may
 * only use what this header provides.  Rules for engine code: no floating
 * point, no 64-bit '/' or '%' (use div_u64()/div_u64_rem()), no allocation
 * (callers provide memory, engines export _size() helpers), no locking.
 */
#ifndef SDR_COMPAT_H
#define SDR_COMPAT_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/minmax.h>
#include <linux/math64.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/compiler.h>
#include <asm/byteorder.h>

#define sdr_hweight_long(w)	hweight_long(w)
/* index of the lowest set bit; undefined for 0 */
#define sdr_ffs_long(w)		__ffs(w)

/*
 * SIMD for the EC codec: whether the CPU has AVX2 (and the kernel saves
 * its registers), and a section that may use it.  sdr_simd_begin() says
 * false where the FPU is not usable (it then did nothing); every true is
 * closed by sdr_simd_end() and holds no sleep.
 */
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#define SDR_HAVE_X86_SIMD	1
static inline bool sdr_cpu_avx2(void)
{
	return boot_cpu_has(X86_FEATURE_AVX) && boot_cpu_has(X86_FEATURE_AVX2) &&
	       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL);
}

static inline bool sdr_cpu_gfni(void)
{
	return sdr_cpu_avx2() && boot_cpu_has(X86_FEATURE_GFNI);
}

static inline bool sdr_simd_begin(void)
{
	if (!may_use_simd())
		return false;
	kernel_fpu_begin();
	return true;
}

static inline void sdr_simd_end(void)
{
	kernel_fpu_end();
}
#endif

#else /* !__KERNEL__: host build (unit tests, fuzzers, simulator) */

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <errno.h>
#include <limits.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#ifdef __linux__
/* The uapi's own, so host code may also include verbs.h or linux/ headers. */
#include <linux/types.h>
#else
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef uint16_t __le16;
typedef uint32_t __le32;
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define cpu_to_be16(x)	((__be16)__builtin_bswap16((u16)(x)))
#define cpu_to_be32(x)	((__be32)__builtin_bswap32((u32)(x)))
#define cpu_to_be64(x)	((__be64)__builtin_bswap64((u64)(x)))
#define be16_to_cpu(x)	((u16)__builtin_bswap16((__be16)(x)))
#define be32_to_cpu(x)	((u32)__builtin_bswap32((__be32)(x)))
#define be64_to_cpu(x)	((u64)__builtin_bswap64((__be64)(x)))
#else
#define cpu_to_be16(x)	((__be16)(x))
#define cpu_to_be32(x)	((__be32)(x))
#define cpu_to_be64(x)	((__be64)(x))
#define be16_to_cpu(x)	((u16)(x))
#define be32_to_cpu(x)	((u32)(x))
#define be64_to_cpu(x)	((u64)(x))
#endif

#ifndef BITS_PER_LONG
#define BITS_PER_LONG		(__SIZEOF_LONG__ * 8)
#endif
#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BITS_TO_LONGS(nr)	DIV_ROUND_UP(nr, BITS_PER_LONG)
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)


#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a > _b ? _a : _b; })
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define max_t(t, a, b)	max((t)(a), (t)(b))
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define min3(a, b, c)	min(min(a, b), c)
#define max3(a, b, c)	max(max(a, b), c)

#ifndef static_assert
#define static_assert(e, msg)	_Static_assert(e, msg)
#endif

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = (u32)(dividend % divisor);
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 mul_u64_u32_div(u64 a, u32 mul, u32 divisor)
{
	return (u64)(((__uint128_t)a * mul) / divisor);
}

static inline u64 mul_u64_u64_shr(u64 a, u64 mul, unsigned int shift)
{
	return (u64)(((__uint128_t)a * mul) >> shift);
}

#define sdr_hweight_long(w)	((unsigned int)__builtin_popcountl(w))
#define sdr_ffs_long(w)		((unsigned long)__builtin_ctzl(w))

/* __always_inline comes from glibc; noinline from kernel/engine/Makefile */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* SIMD for the EC codec: a process may use it anywhere */
#ifdef __x86_64__
#define SDR_HAVE_X86_SIMD	1
static inline bool sdr_cpu_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

static inline bool sdr_cpu_gfni(void)
{
	return sdr_cpu_avx2() && __builtin_cpu_supports("gfni");
}

static inline bool sdr_simd_begin(void)
{
	return true;
}

static inline void sdr_simd_end(void)
{
}
#endif

#endif /* __KERNEL__ */

/* Both builds: compile-time layout checks. */
#define SDR_ASSERT_SIZE(type, size) \
	static_assert(sizeof(type) == (size), #type " has the wrong size")
#define SDR_ASSERT_OFFSET(type, member, off) \
	static_assert(offsetof(type, member) == (off), \
		      #type "." #member " is at the wrong offset")

#endif /* SDR_COMPAT_H */
