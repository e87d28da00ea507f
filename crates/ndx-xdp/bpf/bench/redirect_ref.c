// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * Bench-only XDP programs for crates/ndx-xdp/examples/lb_bench.rs, compiled by the bench at
 * run time (never part of the router's build). Not for production.
 *
 *   ref_redirect   the reference: "a plain redirect". Parses Ethernet + IPv4 + UDP with the
 *                  same bounds checks as lb.c, rewrites both MACs, decrements the TTL with an
 *                  incremental checksum fix and bpf_redirect()s to the ifindex in ref_cfg
 *                  (0: XDP_TX). No NDN parsing, no FIB lookup.
 *   ref_fib        the same plus bpf_fib_lookup (destination ref_cfg.fib_dst, or the packet's
 *                  own when 0), MACs and egress from the lookup: lb.c minus the NDN work and
 *                  the NAT.
 *   ref_ndn        a same-run ceiling for the front end's job: the least any NDN load balancer
 *                  must do per packet, with none of lb.c's generality. A bare Interest with
 *                  1-byte TLV lengths (fixed offsets, direct packet access): keyed SipHash-1-3
 *                  of its Name (up to 64 bytes), a cell of a 4096-cell array map, DNAT to the
 *                  router in ref_cfg (address, port, incremental checksums); anything else
 *                  (an LpPacket) only DNAT. TTL, MACs from ref_cfg, bpf_redirect. No
 *                  counters, no next-hop lookup, no fragments, no validation.
 *   ref_ndn_acct   ref_ndn plus what the issue requires of the front end besides the hash and
 *                  the NAT, each in its cheapest form: a router entry (array), a next hop
 *                  cached per CPU and checked against a coarse clock, one global and two
 *                  per-router counters (per-CPU arrays). The same-run ceiling for lb.c.
 *   bench_sink     XDP_DROP on the peers of the egress veths; first writes the frame's first
 *                  TMPL_LEN bytes back from bench_tmpl and counts the frame. Live-frames
 *                  BPF_PROG_TEST_RUN recycles its pages without re-copying the frame, so
 *                  without the restore the next run would see the rewritten headers.
 *   bench_restore  the same restore, then a tail call into bench_next[0]: lets the non-live
 *                  BPF_PROG_TEST_RUN (one buffer, never reset between repeats) time every
 *                  repeat on the original frame.
 *   bench_nop      XDP_DROP: the tail-call target that measures bench_restore alone.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "../util.h"

#define AF_INET_ 2
/* Ethernet + IPv4 without options + UDP: every byte lb.c or the references may rewrite. */
#define TMPL_LEN 42

struct ref_cfg {
	__u32 ifindex;   /* ref_redirect: egress (0: XDP_TX) */
	__be32 fib_dst;  /* ref_fib: lookup destination (0: the packet's daddr) */
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
	__be32 nat_addr; /* ref_ndn: the router's address and port */
	__be16 nat_port;
	__u16 pad;
	__u32 pad2;
	__u64 k0;        /* ref_ndn: SipHash key */
	__u64 k1;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} ref_cells SEC(".maps");

struct tmpl {
	__u32 on;
	__u8 b[TMPL_LEN];
	__u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ref_cfg);
} ref_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tmpl);
} bench_tmpl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} bench_sunk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_next SEC(".maps");

/* Ethernet + IPv4 + UDP with lb.c's checks; NULL when the frame is not that. */
static __always_inline struct iphdr *parse(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return 0;
	if (ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return 0;
	struct udphdr *udp = data + sizeof(*eth) + ip->ihl * 4;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return ip;
}

static __always_inline int dec_ttl(struct iphdr *ip)
{
	if (ip->ttl <= 1)
		return -1;
	__u16 old = *(__u16 *)&ip->ttl;
	ip->ttl -= 1;
	ip->check = csum_replace2(ip->check, old, *(__u16 *)&ip->ttl);
	return 0;
}

SEC("xdp")
int ref_redirect(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct ref_cfg *cfg = bpf_map_lookup_elem(&ref_cfg, &zero);
	if (!cfg)
		return XDP_PASS;
	struct iphdr *ip = parse(ctx);
	if (!ip)
		return XDP_PASS;
	if (dec_ttl(ip))
		return XDP_DROP;
	struct ethhdr *eth = (void *)(long)ctx->data;
	__builtin_memcpy(eth->h_dest, cfg->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, cfg->smac, ETH_ALEN);
	if (!cfg->ifindex)
		return XDP_TX;
	return bpf_redirect(cfg->ifindex, 0);
}

SEC("xdp")
int ref_fib(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct ref_cfg *cfg = bpf_map_lookup_elem(&ref_cfg, &zero);
	if (!cfg)
		return XDP_PASS;
	struct iphdr *ip = parse(ctx);
	if (!ip)
		return XDP_PASS;
	struct bpf_fib_lookup fib = {};
	fib.family = AF_INET_;
	fib.tos = ip->tos;
	fib.l4_protocol = IPPROTO_UDP;
	fib.tot_len = bpf_ntohs(ip->tot_len);
	fib.ipv4_src = ip->saddr;
	fib.ipv4_dst = cfg->fib_dst ? cfg->fib_dst : ip->daddr;
	fib.ifindex = ctx->ingress_ifindex;
	long rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_PASS;
	/* Packet pointers again after the helper call. */
	ip = parse(ctx);
	if (!ip)
		return XDP_PASS;
	if (dec_ttl(ip))
		return XDP_DROP;
	struct ethhdr *eth = (void *)(long)ctx->data;
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	if (fib.ifindex == ctx->ingress_ifindex)
		return XDP_TX;
	return bpf_redirect(fib.ifindex, 0);
}



struct acct_nh {
	__u64 stamp;
	__u32 ifindex;
	__be32 addr;
	__u8 smac[ETH_ALEN];
	__u8 dmac[ETH_ALEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct acct_nh);
} ref_nh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64 * 10);
	__type(key, __u32);
	__type(value, __u64);
} ref_stats SEC(".maps");

struct ref_router {
	__be32 addr;
	__be16 port;
	__u8 in_use;
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct ref_router);
} ref_routers SEC(".maps");

static __always_inline void ref_count(__u32 i, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&ref_stats, &i);
	if (c)
		*c += n;
}

static __always_inline int ndn_lb(struct xdp_md *ctx, int acct)
{
	__u32 zero = 0;
	struct ref_cfg *cfg = bpf_map_lookup_elem(&ref_cfg, &zero);
	if (!cfg)
		return XDP_PASS;
	struct iphdr *ip = parse(ctx);
	if (!ip || ip->ihl != 5)
		return XDP_PASS;
	void *data_end = (void *)(long)ctx->data_end;
	struct udphdr *udp = (void *)(ip + 1);
	__u8 *p = (void *)(udp + 1);
	if ((void *)(p + 4) > data_end)
		return XDP_PASS;
	__u32 s = 0;
	if (p[0] == 5) {
		/* Interest, 1-byte length, then Name, 1-byte length. */
		if (p[2] != 7)
			return XDP_PASS;
		__u32 nlen = p[3];
		if (nlen > 64)
			return XDP_PASS;
		__u8 *n = p + 4;
		__u64 v0 = cfg->k0 ^ 0x736f6d6570736575ULL, v1 = cfg->k1 ^ 0x646f72616e646f6dULL;
		__u64 v2 = cfg->k0 ^ 0x6c7967656e657261ULL, v3 = cfg->k1 ^ 0x7465646279746573ULL;
		__u32 nw = nlen >> 3;
		for (__u32 i = 0; i < 8; i++) {
			if (i >= nw)
				break;
			__u8 *w = n + i * 8;
			barrier_var(w);
			if ((void *)(w + 8) > data_end)
				return XDP_PASS;
			__u64 m = *(__u64 *)w;
			v3 ^= m;
			SIPROUND;
			v0 ^= m;
		}
		__u64 last = ((__u64)nlen & 0xff) << 56;
		/* The tail: the 8 bytes ending with the Name, shifted (names of 8 bytes or more). */
		__u32 tn = nlen & 7;
		if (tn) {
			if (nlen < 8)
				return XDP_PASS;
			__u8 *w = n + nlen - 8;
			if ((void *)(w + 8) > data_end)
				return XDP_PASS;
			last |= *(__u64 *)w >> (64 - 8 * tn);
		}
		v3 ^= last;
		SIPROUND;
		v0 ^= last;
		v2 ^= 0xff;
		SIPROUND;
		SIPROUND;
		SIPROUND;
		__u32 cell = (__u32)(v0 ^ v1 ^ v2 ^ v3) & 4095;
		__u32 *slot = bpf_map_lookup_elem(&ref_cells, &cell);
		if (!slot)
			return XDP_PASS;
		s = *slot;
		ip = parse(ctx);
		if (!ip || ip->ihl != 5)
			return XDP_PASS;
		udp = (void *)(ip + 1);
		data_end = (void *)(long)ctx->data_end;
		if ((void *)(udp + 1) > data_end)
			return XDP_PASS;
	}
	__u8 dmac[ETH_ALEN], smac[ETH_ALEN];
	__builtin_memcpy(dmac, cfg->dmac, ETH_ALEN);
	__builtin_memcpy(smac, cfg->smac, ETH_ALEN);
	__u32 oif = cfg->ifindex;
	if (acct) {
		if (s >= 64)
			return XDP_PASS;
		struct ref_router *r = bpf_map_lookup_elem(&ref_routers, &s);
		if (!r)
			return XDP_PASS;
		struct acct_nh *nh = bpf_map_lookup_elem(&ref_nh, &s);
		if (!nh)
			return XDP_PASS;
		__u64 now = bpf_ktime_get_coarse_ns();
		if (nh->addr != r->addr || now - nh->stamp > 1000000000ULL) {
			/* Filled from ref_cfg here; lb.c would call bpf_fib_lookup once a second. */
			nh->stamp = now;
			nh->addr = r->addr;
			nh->ifindex = cfg->ifindex;
			__builtin_memcpy(nh->dmac, cfg->dmac, ETH_ALEN);
			__builtin_memcpy(nh->smac, cfg->smac, ETH_ALEN);
		}
		__builtin_memcpy(dmac, nh->dmac, ETH_ALEN);
		__builtin_memcpy(smac, nh->smac, ETH_ALEN);
		oif = nh->ifindex;
		ref_count(0, 1);
		ref_count(s * 10 + 1, 1);
		ref_count(s * 10 + 2, bpf_ntohs(ip->tot_len));
	}
	__be32 old = ip->daddr;
	ip->daddr = cfg->nat_addr;
	ip->check = csum_replace4(ip->check, old, cfg->nat_addr);
	__u16 uc = udp->check;
	if (uc) {
		uc = csum_replace4(uc, old, cfg->nat_addr);
		uc = csum_replace2(uc, udp->dest, cfg->nat_port);
		udp->check = uc ? uc : 0xffff;
	}
	udp->dest = cfg->nat_port;
	if (dec_ttl(ip))
		return XDP_DROP;
	struct ethhdr *eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, smac, ETH_ALEN);
	if (!oif)
		return XDP_TX;
	return bpf_redirect(oif, 0);
}

SEC("xdp")
int ref_ndn(struct xdp_md *ctx)
{
	return ndn_lb(ctx, 0);
}

SEC("xdp")
int ref_ndn_acct(struct xdp_md *ctx)
{
	return ndn_lb(ctx, 1);
}

static __always_inline void restore(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct tmpl *t = bpf_map_lookup_elem(&bench_tmpl, &zero);
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	if (!t || !t->on || data + TMPL_LEN > data_end)
		return;
	__builtin_memcpy(data, t->b, TMPL_LEN);
}

SEC("xdp")
int bench_sink(struct xdp_md *ctx)
{
	__u32 zero = 0;
	restore(ctx);
	__u64 *n = bpf_map_lookup_elem(&bench_sunk, &zero);
	if (n)
		*n += 1;
	return XDP_DROP;
}

SEC("xdp")
int bench_restore(struct xdp_md *ctx)
{
	restore(ctx);
	bpf_tail_call(ctx, &bench_next, 0);
	return XDP_ABORTED;
}

SEC("xdp")
int bench_nop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* bpf_fib_lookup is GPL-only. */
char _license[] SEC("license") = "GPL";
