// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * util.h: what ndx's XDP programs (and the bench's reference programs) compute alike:
 * incremental Internet checksums (RFC 1624, on 16-bit words as stored) and the SipHash
 * round of ndx_core::hash::HashKey.
 */
#ifndef NDX_UTIL_H
#define NDX_UTIL_H

#include <linux/types.h>

static __always_inline __u16 csum_fold(__u32 c)
{
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)c;
}

/* RFC 1624 eq. 3: HC' = ~(~HC + ~m + m'), 16-bit words as stored. */
static __always_inline __u16 csum_replace2(__u16 check, __u16 old, __u16 new)
{
	__u32 c = (__u16)~check;
	c += (__u16)~old;
	c += new;
	return ~csum_fold(c);
}

static __always_inline __u16 csum_replace4(__u16 check, __u32 old, __u32 new)
{
	__u32 c = (__u16)~check;
	c += (__u16)~(old & 0xffff);
	c += (__u16)~(old >> 16);
	c += new & 0xffff;
	c += new >> 16;
	return ~csum_fold(c);
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                              \
	do {                                                                                  \
		v0 += v1;                                                                     \
		v1 = ROTL(v1, 13);                                                            \
		v1 ^= v0;                                                                     \
		v0 = ROTL(v0, 32);                                                            \
		v2 += v3;                                                                     \
		v3 = ROTL(v3, 16);                                                            \
		v3 ^= v2;                                                                     \
		v0 += v3;                                                                     \
		v3 = ROTL(v3, 21);                                                            \
		v3 ^= v0;                                                                     \
		v2 += v1;                                                                     \
		v1 = ROTL(v1, 17);                                                            \
		v1 ^= v2;                                                                     \
		v2 = ROTL(v2, 32);                                                            \
	} while (0)

#endif /* NDX_UTIL_H */
