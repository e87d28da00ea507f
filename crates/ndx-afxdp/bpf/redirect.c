// SPDX-License-Identifier: Apache-2.0
/*
 * Minimal XDP program for ndx-afxdp tests and the raw reflector baseline.
 *
 * Every frame (multi-buffer too: "xdp.frags") is redirected to the XSKMAP
 * entry rx_queue_index * 64 + shard, where shard = (per-CPU counter) % n_shards
 * (round robin; n_shards = 1 sends all to entry q * 64). An empty entry makes
 * bpf_redirect_map return XDP_PASS (its flags argument), so the kernel stack
 * still sees the frame. With write_meta set, 16 bytes of metadata laid out like
 * ndx's `struct ndx_xdp_meta` (magic 0x4e44, shard filled, hash = sequence
 * number) are put in front of the frame. Not the router's program.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_SHARDS 64

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64 * MAX_SHARDS);
	__type(key, __u32);
	__type(value, __u32);
} ndx_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rr SEC(".maps");

const volatile __u32 n_shards = 1;
const volatile __u8 write_meta = 0;

struct meta {
	__u64 hash;
	__u8 shard;
	__u8 kind;
	__u8 how;
	__u8 encap;
	__u16 ndn_off;
	__u16 magic;
};

SEC("xdp.frags")
int ndx_redirect(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&rr, &zero);
	__u64 seq = 0;
	__u32 shard = 0;

	if (c) {
		seq = *c;
		*c = seq + 1;
	}
	if (n_shards > 1)
		shard = (__u32)(seq % n_shards);
	if (write_meta && bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct meta)) == 0) {
		struct meta *m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) <= (void *)(long)ctx->data) {
			m->hash = seq;
			m->shard = (__u8)shard;
			m->kind = 0;
			m->how = 3;
			m->encap = 0;
			m->ndn_off = 0;
			m->magic = 0x4e44;
		}
	}
	return (int)bpf_redirect_map(&ndx_xsks, ctx->rx_queue_index * MAX_SHARDS + shard, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
