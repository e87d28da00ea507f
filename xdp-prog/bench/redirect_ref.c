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

#define AF_INET_ 2
/* Ethernet + IPv4 without options + UDP: every byte lb.c or the references may rewrite. */
#define TMPL_LEN 42

struct ref_cfg {
	__u32 ifindex;   /* ref_redirect: egress (0: XDP_TX) */
	__be32 fib_dst;  /* ref_fib: lookup destination (0: the packet's daddr) */
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
};

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

static __always_inline __u16 csum_fold(__u32 c)
{
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)c;
}

/* RFC 1624 eq. 3, as lb.c. */
static __always_inline __u16 csum_replace2(__u16 check, __u16 old, __u16 new)
{
	__u32 c = (__u16)~check;
	c += (__u16)~old;
	c += new;
	return ~csum_fold(c);
}

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
