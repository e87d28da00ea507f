// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * ndn.h: the NDN parsing shared by ndx's XDP programs (ndx.c, the router's classifier, and
 * lb.c, the cluster front end). Defines the per-CPU scratch window and its map, the TLV
 * reader, NonNegativeInteger reader, SipHash-1-3 (ndx_core::hash::HashKey) and the name hash
 * of ndx_core::Dispatch (Prefix/Content/Batch) plus MODE_NAME (the whole name, the cluster's
 * NAME HASH).
 *
 * The including program defines, after this header, `hash_cfg()`: a pointer to its hash
 * parameters, whose layout starts like `struct ndn_hash_cfg`.
 */
#ifndef NDX_NDN_H
#define NDX_NDN_H

#include "util.h"

/* Scratch window: at most WIN bytes of the NDN payload at a time. */
#define WIN 2048
#define WOFF 32                  /* the window starts at b[WOFF]; b[0..18) holds the source */
#define BSIZE (WOFF + WIN + 64)  /* slack for 8-byte reads and the Batch suffix */
#ifndef CHUNK
#define CHUNK 512                /* first load: up to this many bytes (a program may choose) */
#endif
#define MAX_COMPONENTS 128

/* TLV-TYPEs. */
#define T_INTEREST 5
#define T_DATA 6
#define T_NAME 7
#define T_SEGMENT 50
#define T_LP_PACKET 100
#define T_FRAGMENT 80
#define T_SEQUENCE 81
#define T_FRAG_INDEX 82
#define T_FRAG_COUNT 83
#define T_PIT_TOKEN 98
#define T_NACK 800

enum { MODE_PREFIX = 1, MODE_CONTENT = 2, MODE_BATCH = 3, MODE_NAME = 4 };

/* The first fields of each program's configuration. */
struct ndn_hash_cfg {
	__u64 k0;
	__u64 k1;
	__u64 param; /* k for Prefix(k), b for Batch(b) */
	__u32 mode;  /* MODE_* */
};

static __always_inline struct ndn_hash_cfg *hash_cfg(void);

struct scratch {
	__u32 wbase;    /* payload offset of b[WOFF] */
	__u32 wlen;     /* valid bytes in the window */
	__u32 plen;     /* NDN payload length */
	__u32 ndn_off;  /* frame offset of the payload */
	__u32 srclen;   /* source bytes in b[0..srclen) */
	__u32 frag_off; /* LpPacket Fragment value (payload offsets) */
	__u32 frag_end;
	__u32 tok_off;  /* PitToken value */
	__u32 tok_len;
	__u32 flags;    /* LP_* */
	__u32 n_comps, last_off, last_typ, last_hdr, last_len, pad3; /* walk_name */
	__u64 seq;        /* LpPacket Sequence (lb.c) */
	__u32 seq_off;    /* payload offset of the Sequence's value (lb.c) */
	__u32 seq_len;    /* its length (lb.c) */
	__u32 frag_index; /* FragIndex (lb.c) */
	__u32 frag_count; /* FragCount, 1 when absent (lb.c) */
	__u32 ends[MAX_COMPONENTS]; /* payload offset of the end of each component */
	__u8 shard;
	__u8 kind;
	__u8 how;
	__u8 pad;
	__u32 pad2;
	__u64 hash;
	__u8 b[BSIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} ndx_scratch SEC(".maps");

static __always_inline struct scratch *get_scratch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ndx_scratch, &zero);
}

/* Makes payload bytes [off, off+need) available in the window. 0 on success. */
static __always_inline int ensure(struct xdp_md *ctx, struct scratch *s, __u32 off, __u32 need)
{
	if (off >= s->wbase && off + need <= s->wbase + s->wlen)
		return 0;
	if (need > WIN || off > s->plen || need > s->plen - off)
		return -1;
	/* 64-bit arithmetic: clang 14 would otherwise check a zero-extended copy and pass the
	 * unchecked register to the helper. */
	__u64 n = need > CHUNK ? need : CHUNK;
	__u64 rest = (__u64)s->plen - off;
	if (n > rest)
		n = rest;
	barrier_var(n);
	if (n == 0 || n > WIN)
		return -1;
	if (bpf_xdp_load_bytes(ctx, s->ndn_off + off, s->b + WOFF, n))
		return -1;
	s->wbase = off;
	s->wlen = n;
	return 0;
}

/*
 * Decodes the TLV-TYPE and TLV-LENGTH at `p` (at least 9 readable bytes; `avail` of them
 * belong to the enclosing element). Returns (header size << 48) | (type << 32) | length, or 0
 * when malformed (type 0 or above 65535, 8-byte length, truncated, or longer than `avail`).
 *
 * Branch-free except for the rejections: a loop calling it keeps a single continuing
 * verifier state per iteration (a branchy decoder multiplies them).
 */
static __always_inline __u64 decode_tl(const __u8 *p, __u64 avail)
{
	__u64 b0 = p[0];
	if ((b0 + 2) >> 8) /* 254, 255: a type above 65535 */
		return 0;
	__u64 t3 = (b0 + 3) >> 8; /* 253: 2-byte type follows */
	__u64 mt = 0 - t3;
	__u64 typ = (b0 & ~mt) | ((((__u64)p[1] << 8) | p[2]) & mt);
	__u64 i = 1 + (t3 << 1);
	const __u8 *q = p + i;
	__u64 l0 = q[0];
	if (l0 == 255) /* 8-byte length: never within a frame */
		return 0;
	__u64 l5 = (l0 + 2) >> 8;        /* 254: 4-byte length */
	__u64 l3 = ((l0 + 3) >> 8) & ~l5; /* 253: 2-byte length */
	__u64 m3 = 0 - l3, m5 = 0 - l5;
	__u64 v16 = ((__u64)q[1] << 8) | q[2];
	__u64 v32 = ((__u64)q[1] << 24) | ((__u64)q[2] << 16) | ((__u64)q[3] << 8) | q[4];
	__u64 len = (l0 & ~(m3 | m5)) | (v16 & m3) | (v32 & m5);
	__u64 hdr = i + 1 + (l3 << 1) + (l5 << 2);
	if (typ == 0 || hdr > avail || len > avail - hdr)
		return 0;
	return (hdr << 48) | (typ << 32) | len;
}

/*
 * Reads the TLV-TYPE and TLV-LENGTH at payload offset `off` (loading the window if needed);
 * the whole TLV must end by `end`. Same result as decode_tl.
 */
__attribute__((noinline)) __u64 read_tl(struct xdp_md *ctx, __u32 off, __u32 end)
{
	struct scratch *s = get_scratch();
	if (!s)
		return 0;
	if (off >= end || end > s->plen)
		return 0;
	__u32 avail = end - off;
	__u32 need = avail < 10 ? avail : 10;
	if (ensure(ctx, s, off, need))
		return 0;
	__u64 o = (__u64)off - s->wbase;
	barrier_var(o);
	if (o >= WIN)
		return 0;
	return decode_tl(s->b + WOFF + o, avail);
}

#define TL_HDR(tl) ((__u32)((tl) >> 48))
#define TL_TYPE(tl) ((__u32)(((tl) >> 32) & 0xffff))
#define TL_LEN(tl) ((__u32)(tl))

/* A NonNegativeInteger of 1, 2, 4 or 8 bytes at payload offset `off`; ~0 when malformed. */
__attribute__((noinline)) __u64 read_nni(struct xdp_md *ctx, __u32 off, __u32 len)
{
	struct scratch *s = get_scratch();
	if (!s)
		return ~0ULL;
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return ~0ULL;
	if (ensure(ctx, s, off, len))
		return ~0ULL;
	__u64 o = (__u64)off - s->wbase;
	barrier_var(o);
	if (o >= WIN)
		return ~0ULL;
	__u64 v = 0;
	for (__u32 i = 0; i < 8; i++) {
		if (i >= len)
			break;
		v = (v << 8) | s->b[WOFF + o + i];
	}
	return v;
}


#define SIP_LIMIT (BSIZE - 16)

/* SipHash-1-3 (ndx_core::hash::HashKey::hash) of scratch bytes b[off..off+len). */
__attribute__((noinline)) __u64 sip_buf(__u64 k0, __u64 k1, __u32 off, __u32 len)
{
	struct scratch *s = get_scratch();
	if (!s)
		return 0;
	if (off > SIP_LIMIT || len > SIP_LIMIT - off)
		return 0;
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = k1 ^ 0x7465646279746573ULL;
	__u32 nw = len >> 3;
	for (__u32 i = 0; i < SIP_LIMIT / 8; i++) {
		if (i >= nw)
			break;
		__u64 o = (__u64)off + ((__u64)i << 3);
		barrier_var(o);
		if (o > BSIZE - 8)
			break;
		__u64 m = *(__u64 *)(s->b + o);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	__u64 last = ((__u64)len & 0xff) << 56;
	__u64 t = (__u64)off + ((__u64)nw << 3);
	__u32 tail = len & 7;
	for (__u32 j = 0; j < 7; j++) {
		if (j >= tail)
			break;
		__u64 o = t + j;
		barrier_var(o);
		if (o >= BSIZE)
			break;
		last |= (__u64)s->b[o] << (8 * j);
	}
	v3 ^= last;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * Walks the components of the Name whose TLV-VALUE is payload [noff, noff+nlen) and records
 * in scratch: the count, the end of each component, and the last component's position,
 * type and length. The name must be in the window (name_hash ensured it). Kept apart from the hashing so the verifier can prune the
 * loop's states (nothing here feeds a pointer). 0 ok, 1 too many components, -1 malformed.
 */
__attribute__((noinline)) int walk_name(__u32 noff, __u32 nlen)
{
	struct scratch *s = get_scratch();
	if (!s)
		return -1;
	s->n_comps = 0;
	if (nlen == 0)
		return 0;
	__u64 base = (__u64)noff - s->wbase; /* where the name starts in the window */
	if (nlen > WIN || base > WIN || base + nlen > s->wlen)
		return -1;
	__u64 x = 0, n = 0; /* offset in the name */
	for (__u32 i = 0; i < MAX_COMPONENTS; i++) {
		if (x >= nlen)
			break;
		__u64 o = WOFF + base + x;
		barrier_var(o);
		if (o > WOFF + WIN)
			return -1;
		__u64 tl = decode_tl(s->b + o, nlen - x);
		if (!tl)
			return -1;
		s->last_off = noff + x;
		s->last_typ = TL_TYPE(tl);
		s->last_hdr = TL_HDR(tl);
		s->last_len = TL_LEN(tl);
		x += TL_HDR(tl) + TL_LEN(tl);
		s->ends[i & (MAX_COMPONENTS - 1)] = noff + x;
		n = i + 1;
	}
	if (x < nlen)
		return 1;
	s->n_comps = n;
	return 0;
}

/*
 * Dispatch hash of the Name whose TLV-VALUE is payload [noff, noff+nlen); stored in s->hash.
 * 0 ok, 1 too long for the window or too many components, -1 malformed.
 */
__attribute__((noinline)) int name_hash(struct xdp_md *ctx, __u32 noff, __u32 nlen)
{
	struct scratch *s = get_scratch();
	struct ndn_hash_cfg *cfg = hash_cfg();
	if (!s || !cfg)
		return -1;
	if (nlen > WIN)
		return 1;
	if (nlen && ensure(ctx, s, noff, nlen))
		return -1;
	if (cfg->mode == MODE_NAME) {
		/* The whole name's bytes: no component boundaries needed. */
		__u64 b = (__u64)noff - s->wbase;
		barrier_var(b);
		if (nlen == 0)
			b = 0;
		if (b > WIN)
			return -1;
		s->hash = sip_buf(cfg->k0, cfg->k1, WOFF + b, nlen);
		return 0;
	}
	s->last_off = noff;
	s->last_typ = 0;
	s->last_hdr = 0;
	s->last_len = 0;
	int rc = walk_name(noff, nlen);
	if (rc)
		return rc;
	__u32 n = s->n_comps, last_off = s->last_off;
	__u32 last_typ = s->last_typ, last_hdr = s->last_hdr, last_len = s->last_len;
	/* The whole name is in the window (ensure above; read_tl never moves it). */
	__u64 base = (__u64)noff - s->wbase;
	barrier_var(base);
	if (nlen == 0)
		base = 0;
	if (base > WIN)
		return -1;
	base += WOFF;
	__u32 hlen;
	if (cfg->mode == MODE_PREFIX) {
		__u64 k = cfg->param < n ? cfg->param : n;
		hlen = k ? s->ends[(k - 1) & (MAX_COMPONENTS - 1)] - noff : 0;
		s->hash = sip_buf(cfg->k0, cfg->k1, base, hlen);
		return 0;
	}
	int seg = n > 0 && last_typ == T_SEGMENT &&
		  (last_len == 1 || last_len == 2 || last_len == 4 || last_len == 8);
	hlen = seg ? last_off - noff : nlen;
	if (cfg->mode != MODE_BATCH) {
		s->hash = sip_buf(cfg->k0, cfg->k1, base, hlen);
		return 0;
	}
	__u64 segno = 0;
	if (seg) {
		/* The segment's value, in the window: base is where the name starts. */
		__u64 vo = base + ((__u64)last_off + last_hdr - noff);
		barrier_var(vo);
		if (vo > WOFF + WIN)
			return -1;
		for (__u32 j = 0; j < 8; j++) {
			if (j >= last_len)
				break;
			segno = (segno << 8) | s->b[vo + j];
		}
	}
	__u64 b = cfg->param ? cfg->param : 1;
	__u64 batch = segno / b;
	/* Content bytes followed by the batch number, little-endian, contiguous in scratch. */
	__u64 at = base + hlen;
	barrier_var(at);
	if (at > WOFF + WIN)
		return -1;
	*(__u64 *)(s->b + at) = batch;
	s->wlen = 0; /* the window no longer mirrors the frame */
	s->hash = sip_buf(cfg->k0, cfg->k1, base, hlen + 8);
	return 0;
}

#define LP_FOUND_FRAGMENT 1
#define LP_FRAGMENTED 2    /* FragCount > 1 */
#define LP_NACK 4
#define LP_HAS_SEQUENCE 8

/* State of the LpPacket header walk, shared with its bpf_loop callback. */
struct lp_walk {
	struct xdp_md *ctx;
	__u32 off;   /* next field */
	__u32 end;   /* end of the LpPacket's value */
	__u32 flags; /* LP_* */
	__s32 rc;    /* -1: malformed */
};

/* One LpPacket header field (bpf_loop callback): 0 next field, 1 stop. */
static long lp_field(__u32 i, void *data)
{
	struct lp_walk *w = data;
	struct scratch *s = get_scratch();
	if (!s) {
		w->rc = -1;
		return 1;
	}
	__u32 off = w->off;
	if (off >= w->end)
		return 1;
	__u64 tl = read_tl(w->ctx, off, w->end);
	if (!tl)
		goto bad;
	__u32 typ = TL_TYPE(tl), len = TL_LEN(tl);
	__u32 vo = off + TL_HDR(tl);
	if (typ == T_FRAGMENT) {
		s->frag_off = vo;
		s->frag_end = vo + len;
		w->flags |= LP_FOUND_FRAGMENT;
		return 1;
	}
	if (typ == T_FRAG_COUNT) {
		__u64 fc = read_nni(w->ctx, vo, len);
		if (fc == ~0ULL || fc == 0 || fc > 0xffffffffULL)
			goto bad;
		s->frag_count = fc;
		if (fc > 1)
			w->flags |= LP_FRAGMENTED;
	} else if (typ == T_SEQUENCE) {
		__u64 v = read_nni(w->ctx, vo, len);
		if (v == ~0ULL && len != 8)
			goto bad;
		s->seq = v;
		s->seq_off = vo;
		s->seq_len = len;
		w->flags |= LP_HAS_SEQUENCE;
	} else if (typ == T_FRAG_INDEX) {
		__u64 v = read_nni(w->ctx, vo, len);
		if (v == ~0ULL || v > 0xffffffffULL)
			goto bad;
		s->frag_index = v;
	} else if (typ == T_PIT_TOKEN) {
		s->tok_off = vo;
		s->tok_len = len;
	} else if (typ == T_NACK) {
		w->flags |= LP_NACK;
	}
	w->off = vo + len;
	return 0;
bad:
	w->rc = -1;
	return 1;
}

/*
 * Walks the LpPacket header fields in payload [off, end): records in scratch the Fragment's
 * position, the PitToken, Sequence, FragIndex and FragCount (1 when absent), and the flags
 * LP_*. The caller resets tok_len, seq, frag_index and frag_count. 0 ok, -1 malformed.
 *
 * The fields are walked by bpf_loop, whose callback is verified once: a header may hold any
 * number of fields (NDNLPv2 piggybacks as many Acks as fit), and a fixed loop bound would
 * leave the Fragment after it unseen (the frame then went by source, as an IDLE packet).
 * Every field takes at least 2 bytes, so LP_MAX_STEPS covers any payload up to 16 KiB.
 */
#define LP_MAX_STEPS 8192
__attribute__((noinline)) int parse_lp(struct xdp_md *ctx, __u32 off, __u32 end)
{
	struct scratch *s = get_scratch();
	if (!s)
		return -1;
	struct lp_walk w = { .ctx = ctx, .off = off, .end = end, .flags = 0, .rc = 0 };
	bpf_loop(LP_MAX_STEPS, lp_field, &w, 0);
	if (w.rc || (w.off < w.end && !(w.flags & LP_FOUND_FRAGMENT)))
		return -1;
	s->flags = w.flags;
	return 0;
}

#endif /* NDX_NDN_H */
