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

#include "ndn.h"

#define MAX_QUEUES 64
#define MAX_SHARDS 64
#define MAX_TABLE 65536
#define MAX_PORTS 8

#define ETH_P_NDN 0x8624
#define ETH_P_8021Q_ 0x8100

enum { KIND_MALFORMED = 0, KIND_INTEREST = 1, KIND_DATA = 2, KIND_NACK = 3, KIND_FRAGMENT = 4,
       KIND_LP_OTHER = 5 };
enum { HOW_TOKEN = 1, HOW_NAME = 2, HOW_SOURCE = 3 };
enum { ENCAP_UDP4 = 1, ENCAP_UDP6 = 2, ENCAP_ETHER = 3 };
#define META_MAGIC 0x4e44

/*
 * Counters (index into ndx_stats); the Rust side lists the first C_UNCLASSIFIED + 1 names in
 * the same order (XdpCounters) and folds the per-frame ones after them (C_U_*, C_K) into
 * those: an NDN frame costs one increment. C_UDP4 to C_BY_SOURCE (but C_NAME_TOO_LONG),
 * C_REDIRECTED, C_REDIRECT_FAILED and C_UNCLASSIFIED are no longer incremented here; they
 * keep their index so the names keep their place.
 */
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
	/* classify off (one shard): NDN sent to shard 0 unparsed, one increment per frame, by
	 * encapsulation and redirect outcome; user space folds them into udp4/udp6/ether,
	 * unclassified, redirected and redirect-failed (XdpCounters::from_raw). */
	C_U_UDP4_OK,
	C_U_UDP4_FAILED,
	C_U_UDP6_OK,
	C_U_UDP6_FAILED,
	C_U_ETHER_OK,
	C_U_ETHER_FAILED,
	/* classify on: one increment per frame at C_K + ((encap * 6 + kind) * 3 + how) * 2 +
	 * failed (encap 0-2 for UDP/IPv4, UDP/IPv6, Ethernet; kind 0-5 as KIND_*; how 0-2 for
	 * token, name, source); user space folds them into the encapsulation, kind, how and
	 * redirect counters. */
	C_K,
	C_COUNT = C_K + 3 * 6 * 3 * 2
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



static __always_inline struct ndx_config *get_config(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ndx_config, &zero);
}

static __always_inline struct ndn_hash_cfg *hash_cfg(void)
{
	return (struct ndn_hash_cfg *)get_config();
}

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&ndx_stats, &idx);
	if (c)
		*c += 1;
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
 * read_tl without a call when the bytes it reads are already in the window (the usual case:
 * the first load covers every header); otherwise read_tl itself, which loads them. The same
 * result either way.
 */
static __always_inline __u64 tl_at(struct xdp_md *ctx, struct scratch *s, __u32 off, __u32 end)
{
	if (off < end && end <= s->plen) {
		__u32 avail = end - off;
		__u32 need = avail < 10 ? avail : 10;
		if (off >= s->wbase && off + need <= s->wbase + s->wlen) {
			__u64 o = (__u64)off - s->wbase;
			barrier_var(o);
			if (o < WIN)
				return decode_tl(s->b + WOFF + o, avail);
		}
	}
	return read_tl(ctx, off, end);
}

/*
 * parse_lp's walk without a call for the usual LpPacket (at most LP_FAST fields before the
 * Fragment, each among PitToken, Sequence, Nack and fields that need no reading, headers in
 * the window): fills what parse_lp fills for ndx (flags, Fragment, PitToken). 1 when done, 0
 * to take parse_lp (FragIndex, FragCount, more fields, anything malformed), which starts
 * over.
 */
#define LP_FAST 4
static __always_inline int fast_lp(struct scratch *s, __u32 off, __u32 end)
{
	s->flags = 0;
#pragma unroll
	for (int i = 0; i < LP_FAST; i++) {
		if (off >= end)
			return 1;
		__u32 avail = end - off;
		__u32 need = avail < 10 ? avail : 10;
		if (off < s->wbase || off + need > s->wbase + s->wlen)
			return 0;
		__u64 o = (__u64)off - s->wbase;
		barrier_var(o);
		if (o >= WIN)
			return 0;
		__u64 tl = decode_tl(s->b + WOFF + o, avail);
		if (!tl)
			return 0;
		__u32 typ = TL_TYPE(tl), len = TL_LEN(tl);
		__u32 vo = off + TL_HDR(tl);
		if (typ == T_FRAGMENT) {
			s->frag_off = vo;
			s->frag_end = vo + len;
			s->flags |= LP_FOUND_FRAGMENT;
			return 1;
		}
		if (typ == T_PIT_TOKEN) {
			s->tok_off = vo;
			s->tok_len = len;
		} else if (typ == T_SEQUENCE) {
			/* parse_lp's test: a NonNegativeInteger's length (ndx needs no value). */
			if (len != 1 && len != 2 && len != 4 && len != 8)
				return 0;
			s->flags |= LP_HAS_SEQUENCE;
		} else if (typ == T_NACK) {
			s->flags |= LP_NACK;
		} else if (typ == T_FRAG_INDEX || typ == T_FRAG_COUNT) {
			return 0;
		}
		off = vo + len;
	}
	return off >= end;
}

/*
 * Classifies the NDN payload described in scratch (plen, ndn_off, source) and fills
 * s->kind, s->how, s->hash, s->shard. Returns 0 (always succeeds; malformed is a kind).
 * The headers are read from the first window load without further calls when they are in
 * it (tl_at, fast_lp); the result is the same as with read_tl and parse_lp alone.
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
	__u32 plen = s->plen;
	/* The first window load (what read_tl(ctx, 0, plen) would do); a failure leaves the
	 * window empty and tl_at falls back to read_tl, which fails the same way. */
	if (plen)
		ensure(ctx, s, 0, plen < 10 ? plen : 10);
	__u64 tl = tl_at(ctx, s, 0, plen);
	if (!tl)
		goto source;
	__u32 typ = TL_TYPE(tl);
	__u32 pkt_off = 0, pkt_end = TL_HDR(tl) + TL_LEN(tl);
	if (typ == T_LP_PACKET) {
		if (!fast_lp(s, TL_HDR(tl), pkt_end)) {
			s->tok_len = 0;
			s->flags = 0;
			if (parse_lp(ctx, TL_HDR(tl), pkt_end))
				goto source;
		}
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
		tl = tl_at(ctx, s, pkt_off, pkt_end);
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
	__u64 ntl = tl_at(ctx, s, val, val_end);
	if (!ntl || TL_TYPE(ntl) != T_NAME) {
		s->kind = KIND_MALFORMED;
		goto source;
	}
	if (s->kind != KIND_INTEREST && s->tok_len == 6) {
		/* read_nni(ctx, tok_off, 1) without the call when the byte is in the window. */
		__u64 o = (__u64)s->tok_off - s->wbase;
		barrier_var(o);
		__u64 b0;
		if (o < s->wlen && o < WIN)
			b0 = s->b[WOFF + o];
		else
			b0 = read_nni(ctx, s->tok_off, 1);
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

/* 1 when `port` (host order) is one of the configured NDN ports after the first (the
 * caller compares the first inline: the common one-port case makes no call). A global
 * function: its branches are verified once instead of multiplying the caller's states. */
__attribute__((noinline)) int port_match(__u32 port)
{
	struct ndx_config *cfg = get_config();
	if (!cfg || port == 0)
		return 0;
	for (int i = 1; i < MAX_PORTS; i++)
		if (cfg->udp_ports[i] == port)
			return 1;
	return 0;
}

/* `port` (network order) is an NDN port: the first configured port inline, the others (only
 * when there are others) in port_match. */
static __always_inline int ndn_port(struct ndx_config *cfg, __u16 port)
{
	__u32 p = bpf_ntohs(port);
	if (p == cfg->udp_ports[0] && p != 0)
		return 1;
	return cfg->udp_ports[1] != 0 && port_match(p);
}

static __always_inline int ndx_main(struct xdp_md *ctx)
{
	struct ndx_config *cfg = get_config();
	if (!cfg)
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
	/* Where the source is (copied to scratch only when classifying) and how long the NDN
	 * payload may be (the UDP length's; Ethernet: no limit but the frame's). */
	const __u8 *src;
	const __u16 *sport;
	__u32 ndn_off, encap, pmax;
	if (proto == bpf_htons(ETH_P_NDN)) {
		if (!cfg->ethernet)
			goto not_ndn;
		const __u8 *d = eth->h_dest;
		int group = d[0] == 0x01 && d[1] == 0x00 && d[2] == 0x5e && d[3] == 0x00 &&
			    d[4] == 0x17 && d[5] == 0xaa;
		if ((d[0] & 1) && !group)
			goto not_ndn;
		encap = ENCAP_ETHER;
		if (!cfg->classify)
			goto one_shard;
		src = eth->h_source;
		sport = 0;
		ndn_off = l3;
		pmax = 0xffffffff;
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
		if (!ndn_port(cfg, udp->dest))
			goto not_ndn;
		__u32 ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp))
			goto not_ndn;
		pmax = ulen - sizeof(*udp);
		encap = ENCAP_UDP4;
		if (!cfg->classify)
			goto one_shard;
		src = (const __u8 *)&ip->saddr;
		sport = &udp->source;
		ndn_off = l4 + sizeof(*udp);
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
		if (!ndn_port(cfg, udp->dest))
			goto not_ndn;
		__u32 ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp))
			goto not_ndn;
		pmax = ulen - sizeof(*udp);
		encap = ENCAP_UDP6;
		if (!cfg->classify)
			goto one_shard;
		src = (const __u8 *)&ip6->saddr;
		sport = &udp->source;
		ndn_off = l4 + sizeof(*udp);
	} else {
		goto not_ndn;
	}
	struct scratch *s = get_scratch();
	if (!s)
		return XDP_PASS;
	if (encap == ENCAP_ETHER) {
		__builtin_memcpy(s->b, src, 6);
		s->srclen = 6;
	} else if (encap == ENCAP_UDP4) {
		__builtin_memcpy(s->b, src, 4);
		__builtin_memcpy(s->b + 4, sport, 2);
		s->srclen = 6;
	} else {
		__builtin_memcpy(s->b, src, 16);
		__builtin_memcpy(s->b + 16, sport, 2);
		s->srclen = 18;
	}
	/* The payload: to the end of the frame (all buffers), at most the UDP length. The
	 * headers are in the first buffer, so the frame is at least ndn_off long. */
	__u32 plen = bpf_xdp_get_buff_len(ctx) - ndn_off;
	if (pmax < plen)
		plen = pmax;
	s->ndn_off = ndn_off;
	s->plen = plen;
	s->wbase = 0;
	s->wlen = 0;
	classify(ctx);
	/* Re-read after the global call: the verifier forgets what it knew. */
	__u8 kind = s->kind, how = s->how, shard = s->shard;
	__u64 hash = s->hash;
	/* One counter for encapsulation, kind, how and outcome (see C_K). */
	__u32 kx = kind <= KIND_LP_OTHER ? kind : KIND_MALFORMED;
	__u32 hx = how == HOW_TOKEN ? 0 : how == HOW_NAME ? 1 : 2;
	__u32 c = C_K + (((encap - ENCAP_UDP4) * 6 + kx) * 3 + hx) * 2;

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
		count(c + 1);
		return XDP_PASS;
	}
	long rc = bpf_redirect_map(&ndx_xsks, q * MAX_SHARDS + shard, XDP_PASS);
	count(rc == XDP_REDIRECT ? c : c + 1);
	return rc;

one_shard:
	/* classify off (one shard): nothing to choose, and user space reads no metadata. One
	 * counter per frame: encapsulation x outcome (C_U_* are in that order). Taken straight
	 * from the encapsulation checks, so nothing of the classifying path is prepared. */
	{
		__u32 c = C_U_UDP4_OK + (encap - ENCAP_UDP4) * 2;
		__u32 q0 = ctx->rx_queue_index;
		long rc0 = XDP_PASS;
		if (q0 < MAX_QUEUES)
			rc0 = bpf_redirect_map(&ndx_xsks, q0 * MAX_SHARDS, XDP_PASS);
		count(rc0 == XDP_REDIRECT ? c : c + 1);
		return rc0;
	}

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
