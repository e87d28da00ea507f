// SPDX-License-Identifier: Apache-2.0
/*
 * ndx XDP program: classifies NDN frames (UDP/IPv4, UDP/IPv6 on configured ports, Ethernet
 * 0x8624) into AF_XDP sockets and picks the shard exactly like ndx_core::dispatch::Dispatch
 * (PIT token, keyed SipHash-1-3 of the name in Prefix/Content/Batch mode, or of the source for
 * fragments). Everything else is XDP_PASS, untouched. See README.md in this directory.
 *
 * Verification strategy: the NDN part of the frame is copied with bpf_xdp_load_bytes into a
 * per-CPU scratch window (works for linear and multi-buffer frames alike) and parsed there.
 * Every loop lives in its own global (non-inlined) function, verified once, so the verifier's
 * work stays small and independent of the packet's shape.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MAX_QUEUES 64
#define MAX_SHARDS 64
#define MAX_TABLE 65536
#define MAX_PORTS 8

/* Scratch window: at most WIN bytes of the NDN payload at a time. */
#define WIN 2048
#define WOFF 32                  /* the window starts at b[WOFF]; b[0..18) holds the source */
#define BSIZE (WOFF + WIN + 64)  /* slack for 8-byte reads and the Batch suffix */
#define CHUNK 512                /* first load: up to this many bytes */
#define MAX_LP_FIELDS 64
#define MAX_COMPONENTS 128

/* TLV-TYPEs. */
#define T_INTEREST 5
#define T_DATA 6
#define T_NAME 7
#define T_SEGMENT 50
#define T_LP_PACKET 100
#define T_FRAGMENT 80
#define T_FRAG_COUNT 83
#define T_PIT_TOKEN 98
#define T_NACK 800

#define ETH_P_NDN 0x8624
#define ETH_P_8021Q_ 0x8100

enum { MODE_PREFIX = 1, MODE_CONTENT = 2, MODE_BATCH = 3 };
enum { KIND_MALFORMED = 0, KIND_INTEREST = 1, KIND_DATA = 2, KIND_NACK = 3, KIND_FRAGMENT = 4,
       KIND_LP_OTHER = 5 };
enum { HOW_TOKEN = 1, HOW_NAME = 2, HOW_SOURCE = 3 };
enum { ENCAP_UDP4 = 1, ENCAP_UDP6 = 2, ENCAP_ETHER = 3 };
#define META_MAGIC 0x4e44

/* Counters (index into ndx_stats); the Rust side lists the same names in the same order. */
enum {
	C_PASS_NOT_NDN,      /* not NDN: passed to the stack untouched */
	C_PASS_IP_FRAGMENT,  /* IPv4 fragment: passed */
	C_UDP4,              /* NDN over UDP/IPv4 */
	C_UDP6,              /* NDN over UDP/IPv6 */
	C_ETHER,             /* NDN over Ethernet */
	C_INTEREST,
	C_DATA,
	C_NACK,
	C_FRAGMENT,
	C_LP_OTHER,          /* LpPacket without a Fragment (IDLE, acks only) */
	C_MALFORMED,         /* unparseable: sent by source, user space drops it */
	C_NAME_TOO_LONG,     /* name > WIN bytes or > MAX_COMPONENTS: sent by source */
	C_BY_TOKEN,
	C_BY_NAME,
	C_BY_SOURCE,
	C_REDIRECTED,        /* bpf_redirect_map succeeded */
	C_REDIRECT_FAILED,   /* empty XSKMAP entry (or queue >= MAX_QUEUES): XDP_PASS */
	C_META_FAILED,       /* bpf_xdp_adjust_meta failed: redirected without metadata */
	C_RAW,               /* redirect_all: sent to entry q*MAX_SHARDS+0 */
	C_UNCLASSIFIED,      /* classify off (one shard): NDN sent to shard 0 unparsed */
	C_COUNT
};

struct ndx_config {
	__u64 k0;
	__u64 k1;
	__u64 param;          /* k for Prefix(k), b for Batch(b) */
	__u32 mode;           /* MODE_* */
	__u32 shards;
	__u32 table_len;      /* power of two */
	__u16 udp_ports[MAX_PORTS]; /* host byte order, 0 = unused */
	__u8 ethernet;
	__u8 redirect_all;
	__u8 classify;       /* 0: NDN frames go to shard 0 unparsed, without metadata */
	__u8 pad;
};

struct ndx_xdp_meta {
	__u64 hash;
	__u8 shard;
	__u8 kind;
	__u8 how;
	__u8 encap;
	__u16 ndn_off;
	__u16 magic;
};

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
	__u32 ends[MAX_COMPONENTS]; /* payload offset of the end of each component */
	__u8 shard;
	__u8 kind;
	__u8 how;
	__u8 pad;
	__u32 pad2;
	__u64 hash;
	__u8 b[BSIZE];
};

#define LP_FOUND_FRAGMENT 1
#define LP_FRAGMENTED 2
#define LP_NACK 4

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ndx_config);
} ndx_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_TABLE);
	__type(key, __u32);
	__type(value, __u8);
} ndx_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES * MAX_SHARDS);
	__type(key, __u32);
	__type(value, __u32);
} ndx_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} ndx_stats SEC(".maps");

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

static __always_inline struct ndx_config *get_config(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ndx_config, &zero);
}

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&ndx_stats, &idx);
	if (c)
		*c += 1;
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
	struct ndx_config *cfg = get_config();
	if (!s || !cfg)
		return -1;
	if (nlen > WIN)
		return 1;
	if (nlen && ensure(ctx, s, noff, nlen))
		return -1;
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

/*
 * Walks the LpPacket header fields in payload [off, end): records FragCount > 1, PitToken,
 * Nack and the Fragment in scratch. 0 ok, -1 malformed.
 */
__attribute__((noinline)) int parse_lp(struct xdp_md *ctx, __u32 off, __u32 end)
{
	struct scratch *s = get_scratch();
	if (!s)
		return -1;
	__u32 flags = 0;
	for (__u32 i = 0; i < MAX_LP_FIELDS; i++) {
		if (off >= end)
			break;
		__u64 tl = read_tl(ctx, off, end);
		if (!tl)
			return -1;
		__u32 typ = TL_TYPE(tl), len = TL_LEN(tl);
		__u32 vo = off + TL_HDR(tl);
		if (typ == T_FRAGMENT) {
			s->frag_off = vo;
			s->frag_end = vo + len;
			flags |= LP_FOUND_FRAGMENT;
			break;
		}
		if (typ == T_FRAG_COUNT) {
			__u64 fc = read_nni(ctx, vo, len);
			if (fc == ~0ULL || fc == 0)
				return -1;
			if (fc > 1)
				flags |= LP_FRAGMENTED;
		} else if (typ == T_PIT_TOKEN) {
			s->tok_off = vo;
			s->tok_len = len;
		} else if (typ == T_NACK) {
			flags |= LP_NACK;
		}
		off = vo + len;
	}
	s->flags = flags;
	return 0;
}

static __always_inline int table_shard(struct ndx_config *cfg, __u64 hash)
{
	__u32 idx = (__u32)hash & (cfg->table_len - 1);
	__u8 *e = bpf_map_lookup_elem(&ndx_table, &idx);
	return e ? *e : 0;
}

static __always_inline void by_source(struct scratch *s, struct ndx_config *cfg)
{
	s->hash = sip_buf(cfg->k0, cfg->k1, 0, s->srclen);
	s->shard = table_shard(cfg, s->hash);
	s->how = HOW_SOURCE;
}

/*
 * Classifies the NDN payload described in scratch (plen, ndn_off, source) and fills
 * s->kind, s->how, s->hash, s->shard. Returns 0 (always succeeds; malformed is a kind).
 */
__attribute__((noinline)) int classify(struct xdp_md *ctx)
{
	struct scratch *s = get_scratch();
	struct ndx_config *cfg = get_config();
	if (!s || !cfg)
		return -1;
	s->tok_len = 0;
	s->flags = 0;
	s->kind = KIND_MALFORMED;
	__u64 tl = read_tl(ctx, 0, s->plen);
	if (!tl)
		goto source;
	__u32 typ = TL_TYPE(tl);
	__u32 pkt_off = 0, pkt_end = TL_HDR(tl) + TL_LEN(tl);
	if (typ == T_LP_PACKET) {
		if (parse_lp(ctx, TL_HDR(tl), pkt_end))
			goto source;
		if (s->flags & LP_FRAGMENTED) {
			s->kind = KIND_FRAGMENT;
			goto source;
		}
		if (!(s->flags & LP_FOUND_FRAGMENT)) {
			s->kind = KIND_LP_OTHER;
			goto source;
		}
		pkt_off = s->frag_off;
		pkt_end = s->frag_end;
		tl = read_tl(ctx, pkt_off, pkt_end);
		if (!tl)
			goto source;
		typ = TL_TYPE(tl);
	}
	__u32 nack = s->flags & LP_NACK;
	if (typ == T_INTEREST)
		s->kind = nack ? KIND_NACK : KIND_INTEREST;
	else if (typ == T_DATA && !nack)
		s->kind = KIND_DATA;
	else
		goto source;
	__u32 val = pkt_off + TL_HDR(tl);
	__u32 val_end = val + TL_LEN(tl);
	__u64 ntl = read_tl(ctx, val, val_end);
	if (!ntl || TL_TYPE(ntl) != T_NAME) {
		s->kind = KIND_MALFORMED;
		goto source;
	}
	if (s->kind != KIND_INTEREST && s->tok_len == 6) {
		__u64 b0 = read_nni(ctx, s->tok_off, 1);
		if (b0 < cfg->shards) {
			s->hash = 0;
			s->shard = b0;
			s->how = HOW_TOKEN;
			return 0;
		}
	}
	int rc = name_hash(ctx, val + TL_HDR(ntl), TL_LEN(ntl));
	if (rc == 0) {
		s->shard = table_shard(cfg, s->hash);
		s->how = HOW_NAME;
		return 0;
	}
	if (rc < 0)
		s->kind = KIND_MALFORMED;
	else
		count(C_NAME_TOO_LONG);
source:
	by_source(s, cfg);
	return 0;
}

/* 1 when `port` (host order) is one of the configured NDN ports. A global function: its
 * branches are verified once instead of multiplying the caller's states. */
__attribute__((noinline)) int port_match(__u32 port)
{
	struct ndx_config *cfg = get_config();
	if (!cfg || port == 0)
		return 0;
	for (int i = 0; i < MAX_PORTS; i++)
		if (cfg->udp_ports[i] == port)
			return 1;
	return 0;
}

static __always_inline int ndx_main(struct xdp_md *ctx)
{
	struct ndx_config *cfg = get_config();
	struct scratch *s = get_scratch();
	if (!cfg || !s)
		return XDP_PASS;
	if (cfg->redirect_all) {
		count(C_RAW);
		__u32 q = ctx->rx_queue_index;
		if (q >= MAX_QUEUES)
			return XDP_PASS;
		return bpf_redirect_map(&ndx_xsks, q * MAX_SHARDS, XDP_PASS);
	}
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		goto not_ndn;
	__u16 proto = eth->h_proto;
	__u32 l3 = sizeof(*eth);
	if (proto == bpf_htons(ETH_P_8021Q_)) {
		__u16 *inner = data + 16;
		if ((void *)(inner + 1) > data_end)
			goto not_ndn;
		proto = *inner;
		l3 += 4;
	}
	__u32 ndn_off, plen, encap;
	__u32 frame_len = bpf_xdp_get_buff_len(ctx);
	if (proto == bpf_htons(ETH_P_NDN)) {
		if (!cfg->ethernet)
			goto not_ndn;
		const __u8 *d = eth->h_dest;
		int group = d[0] == 0x01 && d[1] == 0x00 && d[2] == 0x5e && d[3] == 0x00 &&
			    d[4] == 0x17 && d[5] == 0xaa;
		if ((d[0] & 1) && !group)
			goto not_ndn;
		__builtin_memcpy(s->b, eth->h_source, 6);
		s->srclen = 6;
		ndn_off = l3;
		if (frame_len < ndn_off)
			goto not_ndn;
		plen = frame_len - ndn_off;
		encap = ENCAP_ETHER;
	} else if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data + l3;
		if ((void *)(ip + 1) > data_end)
			goto not_ndn;
		if (ip->protocol != IPPROTO_UDP || ip->ihl < 5)
			goto not_ndn;
		if (ip->frag_off & bpf_htons(0x3fff)) {
			count(C_PASS_IP_FRAGMENT);
			return XDP_PASS;
		}
		__u32 l4 = l3 + ip->ihl * 4;
		struct udphdr *udp = data + l4;
		if ((void *)(udp + 1) > data_end)
			goto not_ndn;
		if (!port_match(bpf_ntohs(udp->dest)))
			goto not_ndn;
		__builtin_memcpy(s->b, &ip->saddr, 4);
		__builtin_memcpy(s->b + 4, &udp->source, 2);
		s->srclen = 6;
		ndn_off = l4 + sizeof(*udp);
		__u32 ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp) || frame_len < ndn_off)
			goto not_ndn;
		plen = frame_len - ndn_off;
		if (ulen - sizeof(*udp) < plen)
			plen = ulen - sizeof(*udp);
		encap = ENCAP_UDP4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + l3;
		if ((void *)(ip6 + 1) > data_end)
			goto not_ndn;
		if (ip6->nexthdr != IPPROTO_UDP)
			goto not_ndn;
		__u32 l4 = l3 + sizeof(*ip6);
		struct udphdr *udp = data + l4;
		if ((void *)(udp + 1) > data_end)
			goto not_ndn;
		if (!port_match(bpf_ntohs(udp->dest)))
			goto not_ndn;
		__builtin_memcpy(s->b, &ip6->saddr, 16);
		__builtin_memcpy(s->b + 16, &udp->source, 2);
		s->srclen = 18;
		ndn_off = l4 + sizeof(*udp);
		__u32 ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp) || frame_len < ndn_off)
			goto not_ndn;
		plen = frame_len - ndn_off;
		if (ulen - sizeof(*udp) < plen)
			plen = ulen - sizeof(*udp);
		encap = ENCAP_UDP6;
	} else {
		goto not_ndn;
	}
	count(encap == ENCAP_UDP4 ? C_UDP4 : encap == ENCAP_UDP6 ? C_UDP6 : C_ETHER);
	if (!cfg->classify) {
		/* One shard: nothing to choose, and user space reads no metadata. */
		count(C_UNCLASSIFIED);
		__u32 q0 = ctx->rx_queue_index;
		if (q0 >= MAX_QUEUES) {
			count(C_REDIRECT_FAILED);
			return XDP_PASS;
		}
		long rc0 = bpf_redirect_map(&ndx_xsks, q0 * MAX_SHARDS, XDP_PASS);
		count(rc0 == XDP_REDIRECT ? C_REDIRECTED : C_REDIRECT_FAILED);
		return rc0;
	}
	s->ndn_off = ndn_off;
	s->plen = plen;
	s->wbase = 0;
	s->wlen = 0;
	classify(ctx);
	/* Re-read after the global call: the verifier forgets what it knew. */
	__u8 kind = s->kind, how = s->how, shard = s->shard;
	__u64 hash = s->hash;
	switch (kind) {
	case KIND_INTEREST: count(C_INTEREST); break;
	case KIND_DATA: count(C_DATA); break;
	case KIND_NACK: count(C_NACK); break;
	case KIND_FRAGMENT: count(C_FRAGMENT); break;
	case KIND_LP_OTHER: count(C_LP_OTHER); break;
	default: count(C_MALFORMED); break;
	}
	count(how == HOW_TOKEN ? C_BY_TOKEN : how == HOW_NAME ? C_BY_NAME : C_BY_SOURCE);

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct ndx_xdp_meta))) {
		count(C_META_FAILED);
	} else {
		struct ndx_xdp_meta *m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) > (void *)(long)ctx->data) {
			count(C_META_FAILED);
		} else {
			m->hash = hash;
			m->shard = shard;
			m->kind = kind;
			m->how = how;
			m->encap = encap;
			m->ndn_off = ndn_off;
			m->magic = META_MAGIC;
		}
	}
	__u32 q = ctx->rx_queue_index;
	if (q >= MAX_QUEUES || shard >= MAX_SHARDS) {
		count(C_REDIRECT_FAILED);
		return XDP_PASS;
	}
	long rc = bpf_redirect_map(&ndx_xsks, q * MAX_SHARDS + shard, XDP_PASS);
	count(rc == XDP_REDIRECT ? C_REDIRECTED : C_REDIRECT_FAILED);
	return rc;

not_ndn:
	count(C_PASS_NOT_NDN);
	return XDP_PASS;
}

SEC("xdp")
int ndx_xdp(struct xdp_md *ctx)
{
	return ndx_main(ctx);
}

/* Same code for multi-buffer frames (MTU 9000): bpf_xdp_load_bytes reads across buffers. */
SEC("xdp.frags")
int ndx_xdp_frags(struct xdp_md *ctx)
{
	return ndx_main(ctx);
}

char _license[] SEC("license") = "Apache-2.0";
