// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * ndx lb: the cluster front end of seed 002 (Cluster-based Scalable Router, figure 4) as one
 * XDP program. Stateless on the per-packet path except for a small soft state that keeps the
 * fragments of one NDNLPv2 packet together. IPv4 UDP, untagged Ethernet. See README.md.
 *
 *   Interest to <VIP>:<port>            NAME HASH -> weighted table -> router i: DNAT to
 *                                       (addr_i, port_i), forwarded in XDP
 *   any NDN packet to <VIP>:<port_i>    PORT MAP -> router i: DNAT to addr_i
 *   from (addr_i, port_i) elsewhere     SNAT: source address = the front end's address on
 *                                       the egress interface; Interests (and link-only
 *                                       LpPackets) keep port_i (the implicit id), Data and
 *                                       Nacks leave from <port>
 *   anything else                       XDP_PASS, untouched
 *
 * Forwarding: bpf_fib_lookup in the kernel's FIB and neighbour tables, MACs rewritten, TTL
 * decremented, XDP_TX or bpf_redirect. An unresolved neighbour: the rewritten packet goes to
 * the kernel, which forwards it and resolves the neighbour (counted `to_kernel`).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* Data fragments need only their LpPacket header: copy little of them into the scratch. */
#define CHUNK 128
#include "ndn.h"

#define LB_MAX_ROUTERS 64
#define LB_MAX_TABLE 65536
#define LB_NO_ROUTER 0xffffffffu
#define LB_MAX_VIPS 64
#define LB_MAX_IFACES 256


#define AF_INET_ 2


enum { K_MALFORMED = 0, K_INTEREST = 1, K_DATA = 2, K_NACK = 3, K_FRAGMENT = 4, K_LP_OTHER = 5 };
enum { DIR_HASH = 1, DIR_PORT = 2, DIR_OUT = 3 };

/* Global counters (index into lb_stats); the Rust side lists the same names in this order. */
enum {
	C_PASS,            /* not cluster traffic: passed to the kernel untouched */
	C_INTERESTS_IN,    /* Interests to the well-known port, dispatched by name */
	C_PORT_MAPPED,     /* NDN packets to a router's port (PORT MAP) */
	C_FROM_ROUTERS,    /* NDN packets from a router (SNAT) */
	C_FRAGMENTS,       /* non-first NDNLPv2 fragments, all directions */
	C_BY_SOURCE,       /* Interest name too long for the program: dispatched by source */
	C_MALFORMED,       /* not a well-formed NDN packet: dropped */
	C_NOT_INTEREST,    /* Data, Nack or link-only packet to the well-known port: dropped */
	C_IP_FRAGMENT,     /* IPv4 fragment of cluster traffic: dropped (use NDNLPv2) */
	C_FRAG_MISS_IN,    /* fragment to the well-known port whose first was not seen: dropped */
	C_FRAG_INTEREST_OUT, /* fragmented Interests from routers (all fragments keep its port) */
	C_NO_ROUTER,       /* Interest while no router takes Interests: dropped */
	C_TTL,             /* TTL <= 1: dropped */
	C_NO_IFADDR,       /* egress interface without a front-end address: dropped */
	C_NO_ROUTE,        /* FIB lookup failed: dropped */
	C_FWD_DISABLED,    /* forwarding disabled on the ingress interface: dropped */
	C_TO_KERNEL,       /* neighbour unresolved: rewritten packet passed to the kernel */
	C_TX,              /* XDP_TX (egress = ingress) */
	C_REDIRECTED,      /* bpf_redirect to the egress interface */
	C_ROUTER_OTHER,    /* UDP from a router's address, not from its port: dropped (no leak) */
	C_SPOOFED,         /* a router's address and port on another interface: dropped */
	C_COUNT
};

/* Per-router counters: lb_rstats[slot * R_COUNT + R_*]. */
enum {
	R_INTERESTS_TO,    /* Interests dispatched to the router (hash or port map) */
	R_DATA_TO,         /* Data returned to the router (port map) */
	R_NACKS_TO,        /* Nacks returned to the router */
	R_OTHER_TO,        /* non-first fragments and link-only packets to the router */
	R_BYTES_TO,        /* IP bytes of everything above */
	R_INTERESTS_FROM,  /* Interests the router sent out */
	R_DATA_FROM,       /* Data the router sent out */
	R_NACKS_FROM,      /* Nacks the router sent out */
	R_OTHER_FROM,
	R_BYTES_FROM,
	R_COUNT
};

#define LB_INLINE_VIPS 8

struct lb_config {
	__u64 k0; /* struct ndn_hash_cfg */
	__u64 k1;
	__u64 param;
	__u32 mode;
	__u32 table_len; /* power of two, <= LB_MAX_TABLE */
	__u16 port;      /* the well-known port, host order */
	__u16 pad;
	__u32 n_vips;    /* well-known addresses; the first LB_INLINE_VIPS are also in vips */
	__be32 vips[LB_INLINE_VIPS];
};

struct lb_router {
	__be32 addr;
	__be16 port;
	__u8 in_use;
	__u8 pad;
	__u32 ifindex; /* the interface the router is reached on (0: any) */
};

struct frag_key {
	__be32 saddr;
	__be16 sport;
	__u16 pad;
	__u64 base; /* Sequence - FragIndex: the first fragment's Sequence */
};

struct frag_val {
	__u32 slot; /* inbound: the router chosen for fragment 0 */
	__u32 kind; /* outbound: fragment 0's kind */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lb_config);
} lb_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_TABLE);
	__type(key, __u32);
	__type(value, __u32);
} lb_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_ROUTERS);
	__type(key, __u32);
	__type(value, struct lb_router);
} lb_routers SEC(".maps");

/* PORT MAP: port (host order) -> router slot + 1 (0: none). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} lb_ports SEC(".maps");

/* The front end's well-known addresses. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_MAX_VIPS);
	__type(key, __be32);
	__type(value, __u32);
} lb_vips SEC(".maps");

/* ifindex -> the front end's address on it (the SNAT source). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_MAX_IFACES);
	__type(key, __u32);
	__type(value, __be32);
} lb_ifaddrs SEC(".maps");

/* Soft state of fragmented packets, max_entries set by the loader: Interests to the
 * well-known port (anyone can send them) and fragmented Interests from routers apart, so that
 * one cannot evict the other. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct frag_key);
	__type(value, struct frag_val);
} lb_frags SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct frag_key);
	__type(value, struct frag_val);
} lb_frags_out SEC(".maps");

/* Every router's address (-> 1): UDP from one of them that is not from its port is dropped
 * rather than forwarded by the kernel with an internal source address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LB_MAX_ROUTERS);
	__type(key, __be32);
	__type(value, __u32);
} lb_router_addrs SEC(".maps");

/* Next hops by destination address: bpf_fib_lookup's answer, reused for NH_TTL_NS (per CPU:
 * no torn entries). Towards a router, the slot's entry (also checked against its address). */
struct nexthop {
	__u64 stamp;   /* bpf_ktime_get_coarse_ns() when looked up */
	__u32 ifindex; /* egress */
	__be32 saddr;  /* the front end's address on the egress interface (0: none) */
	__u8 smac[6];
	__u8 dmac[6];
};

#define NH_TTL_NS 1000000000ULL
/* How long after a router's last fragmented Interest its fragments are looked up. */
#define FRAG_INTEREST_NS 10000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, __be32);
	__type(value, struct nexthop);
} lb_nexthops SEC(".maps");

struct slot_nexthop {
	struct nexthop nh;
	__be32 addr; /* the router's address it was looked up for */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_MAX_ROUTERS);
	__type(key, __u32);
	__type(value, struct slot_nexthop);
} lb_slot_nexthops SEC(".maps");

/* When each router last sent a fragmented Interest (ns): only then can one of its non-first
 * fragments be an Interest's, so only then is lb_frags consulted. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LB_MAX_ROUTERS);
	__type(key, __u32);
	__type(value, __u64);
} lb_frag_interest_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lb_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LB_MAX_ROUTERS * R_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lb_rstats SEC(".maps");

static __always_inline struct lb_config *get_config(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&lb_config, &zero);
}

static __always_inline struct ndn_hash_cfg *hash_cfg(void)
{
	return (struct ndn_hash_cfg *)get_config();
}

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&lb_stats, &idx);
	if (c)
		*c += 1;
}

static __always_inline void rcount(__u32 slot, __u32 idx, __u64 n)
{
	__u32 i = slot * R_COUNT + idx;
	__u64 *c = bpf_map_lookup_elem(&lb_rstats, &i);
	if (c)
		*c += n;
}

#define FW 127 /* window index mask for the fast path: CHUNK bytes from payload offset 0 */

/* A byte of the window (payload offset i < s->wlen, checked by the caller). */
#define WB(s, i) ((__u32)(s)->b[WOFF + ((i) & FW)])

/* A TLV-LENGTH of 1 or 3 bytes at window offset i: the length, with its size in *h; ~0 when
 * it is longer or outside the window. */
static __always_inline __u32 fast_len(struct scratch *s, __u32 i, __u32 *h)
{
	if (i + 3 > s->wlen)
		return ~0U;
	__u32 b0 = WB(s, i);
	if (b0 < 253) {
		*h = 1;
		return b0;
	}
	if (b0 != 253)
		return ~0U;
	*h = 3;
	return (WB(s, i + 1) << 8) | WB(s, i + 2);
}

/*
 * The fast path of lb_classify, with no global call: the packet as NFD, ndnd and ndx write it
 * (bare, or an LpPacket whose header fields are among Sequence, FragIndex, FragCount and
 * PitToken, each with a 1-byte type and length), its Name's header within the first CHUNK
 * bytes. Fills what lb_classify's slow path fills and the Name's position (*noff, *nlen) for
 * an Interest or Data. 1 when done, 0 to take the slow path (which decides everything else,
 * malformed included).
 */
static __always_inline int fast_classify(struct scratch *s, __u32 *noff, __u32 *nlen)
{
	if (s->wbase != 0 || s->wlen < 4 || s->wlen > FW + 1)
		return 0;
	__u32 off = 0, end = s->plen, h, len;
	__u32 flags = 0, fi = 0, fc = 1, has_seq = 0;
	__u64 seq = 0;
	if (WB(s, 0) == T_LP_PACKET) {
		len = fast_len(s, 1, &h);
		if (len == ~0U || 1 + h + len != s->plen)
			return 0;
		off = 1 + h;
		int found = 0;
#pragma unroll
		for (int i = 0; i < 5; i++) {
			if (found || off + 2 > s->wlen)
				break;
			__u32 t = WB(s, off);
			if (t == T_FRAGMENT) {
				len = fast_len(s, off + 1, &h);
				if (len == ~0U || off + 1 + h + len != end)
					return 0;
				off += 1 + h;
				found = 1;
				break;
			}
			__u32 l = WB(s, off + 1), v = off + 2;
			if (l >= 253 || v + l > s->wlen)
				return 0;
			if (t == T_SEQUENCE && l == 8) {
				for (int j = 0; j < 8; j++)
					seq = (seq << 8) | WB(s, v + j);
				has_seq = 1;
				s->seq_off = v;
				s->seq_len = 8;
			} else if (t == T_FRAG_INDEX && l == 1) {
				fi = WB(s, v);
			} else if (t == T_FRAG_COUNT && l == 1) {
				fc = WB(s, v);
			} else if (t == T_PIT_TOKEN) {
				s->tok_off = v;
				s->tok_len = l;
			} else {
				return 0;
			}
			off = v + l;
		}
		if (!found || fc == 0 || fi >= fc || (fc > 1 && !has_seq))
			return 0;
		flags = LP_FOUND_FRAGMENT | (fc > 1 ? LP_FRAGMENTED : 0) |
			(has_seq ? LP_HAS_SEQUENCE : 0);
		s->seq = seq;
		s->frag_index = fi;
		s->frag_count = fc;
		s->flags = flags;
		if (fi > 0) {
			s->kind = K_FRAGMENT;
			return 1;
		}
	}
	/* The network packet: Interest or Data, then its Name's header. */
	__u32 t = off < s->wlen ? WB(s, off) : 0;
	if (t != T_INTEREST && t != T_DATA)
		return 0;
	len = fast_len(s, off + 1, &h);
	if (len == ~0U)
		return 0;
	__u32 val = off + 1 + h;
	/* Whole (bare or unfragmented): its TLV ends the payload; fragment 0: it may not. */
	if (fc == 1 && val + len != end)
		return 0;
	if (val + 1 >= s->wlen || WB(s, val) != T_NAME)
		return 0;
	__u32 nl = fast_len(s, val + 1, &h);
	if (nl == ~0U || val + 1 + h + nl > end)
		return 0;
	*noff = val + 1 + h;
	*nlen = nl;
	s->kind = t == T_INTEREST ? K_INTEREST : K_DATA;
	return 1;
}

/* What lb_classify fills, to its "malformed, not fragmented" starting point. */
static __always_inline void reset_classification(struct scratch *s)
{
	s->kind = K_MALFORMED;
	s->flags = 0;
	s->seq = 0;
	s->seq_len = 0;
	s->frag_index = 0;
	s->frag_count = 1;
	s->tok_len = 0;
}

/*
 * Classifies the NDN payload described in scratch: s->kind (K_*), and for an Interest with
 * `want_hash` the name hash in s->hash (s->how = 1 by name, 3 by source when the name is
 * too long for the window). Always returns 0.
 */
__attribute__((noinline)) int lb_classify(struct xdp_md *ctx, __u32 want_hash)
{
	struct scratch *s = get_scratch();
	struct lb_config *cfg = get_config();
	if (!s || !cfg)
		return 0;
	reset_classification(s);
	s->how = 0;
	__u32 noff = 0, nlen = 0;
	if (s->plen == 0 || ensure(ctx, s, 0, 1))
		return 0;
	if (fast_classify(s, &noff, &nlen)) {
		if (s->kind == K_FRAGMENT)
			return 0;
		goto named;
	}
	/* The slow path starts from what the fast path may have half filled. */
	reset_classification(s);
	__u64 tl = read_tl(ctx, 0, s->plen);
	if (!tl)
		return 0;
	__u32 typ = TL_TYPE(tl);
	__u32 pkt_off = 0, pkt_end = TL_HDR(tl) + TL_LEN(tl);
	if (typ == T_LP_PACKET) {
		if (parse_lp(ctx, TL_HDR(tl), pkt_end))
			return 0;
		/* NDNLPv2: FragIndex < FragCount, and a fragmented packet has a Sequence. */
		if (s->frag_index >= s->frag_count ||
		    (s->frag_count > 1 && !(s->flags & LP_HAS_SEQUENCE)))
			return 0;
		if (s->frag_index > 0) {
			s->kind = K_FRAGMENT;
			return 0;
		}
		if (!(s->flags & LP_FOUND_FRAGMENT)) {
			s->kind = s->frag_count > 1 ? K_MALFORMED : K_LP_OTHER;
			return 0;
		}
		pkt_off = s->frag_off;
		pkt_end = s->frag_end;
		if (s->frag_count > 1) {
			/* Fragment 0 holds the start of the packet only: its TLV-LENGTH may exceed
			 * the fragment, so read the header alone. */
			__u32 avail = pkt_end > pkt_off ? pkt_end - pkt_off : 0;
			__u32 need = avail < 10 ? avail : 10;
			if (!need || ensure(ctx, s, pkt_off, need))
				return 0;
			__u64 o = (__u64)pkt_off - s->wbase;
			barrier_var(o);
			if (o >= WIN)
				return 0;
			tl = decode_tl(s->b + WOFF + o, 0xffffffffULL);
		} else {
			tl = read_tl(ctx, pkt_off, pkt_end);
		}
		if (!tl)
			return 0;
		typ = TL_TYPE(tl);
	}
	__u32 nack = s->flags & LP_NACK;
	__u32 kind;
	if (typ == T_INTEREST)
		kind = nack ? K_NACK : K_INTEREST;
	else if (typ == T_DATA && !nack)
		kind = K_DATA;
	else
		return 0;
	__u32 val = pkt_off + TL_HDR(tl);
	__u32 val_end = val + TL_LEN(tl);
	if (val_end > pkt_end || val_end < val)
		val_end = pkt_end;
	__u64 ntl = read_tl(ctx, val, val_end);
	if (!ntl && s->frag_count > 1 && kind == K_INTEREST && val < val_end) {
		/* Fragment 0 of an Interest whose Name runs past it: it cannot be hashed by name;
		 * it goes by source, with all its fragments. */
		__u32 avail = val_end - val;
		if (ensure(ctx, s, val, avail < 10 ? avail : 10))
			return 0;
		__u64 o = (__u64)val - s->wbase;
		barrier_var(o);
		if (o >= WIN)
			return 0;
		ntl = decode_tl(s->b + WOFF + o, 0xffffffffULL);
		if (!ntl || TL_TYPE(ntl) != T_NAME)
			return 0;
		s->kind = kind;
		if (want_hash) {
			s->hash = sip_buf(cfg->k0, cfg->k1, 0, s->srclen);
			s->how = 3;
		}
		return 0;
	}
	if (!ntl || TL_TYPE(ntl) != T_NAME)
		return 0;
	s->kind = kind;
	noff = val + TL_HDR(ntl);
	nlen = TL_LEN(ntl);
named:
	if (!want_hash || s->kind != K_INTEREST)
		return 0;
	int rc = name_hash(ctx, noff, nlen);
	if (rc < 0) {
		s->kind = K_MALFORMED;
		return 0;
	}
	if (rc > 0) {
		s->hash = sip_buf(cfg->k0, cfg->k1, 0, s->srclen);
		s->how = 3;
		return 0;
	}
	s->how = 1;
	return 0;
}


static __always_inline __u32 rstat_kind_to(__u32 kind)
{
	return kind == K_INTEREST ? R_INTERESTS_TO
	       : kind == K_DATA   ? R_DATA_TO
	       : kind == K_NACK   ? R_NACKS_TO
				  : R_OTHER_TO;
}

static __always_inline __u32 rstat_kind_from(__u32 kind)
{
	return kind == K_INTEREST ? R_INTERESTS_FROM
	       : kind == K_DATA   ? R_DATA_FROM
	       : kind == K_NACK   ? R_NACKS_FROM
				  : R_OTHER_FROM;
}

static __always_inline int lb_main(struct xdp_md *ctx)
{
	struct lb_config *cfg = get_config();
	struct scratch *s = get_scratch();
	if (!cfg || !s)
		return XDP_PASS;
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		goto pass;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		goto pass;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		goto pass;
	if (ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		goto pass;
	__u32 l4 = sizeof(*eth) + ip->ihl * 4;
	struct udphdr *udp = data + l4;
	if ((void *)(udp + 1) > data_end)
		goto pass;

	__be32 saddr = ip->saddr, daddr = ip->daddr;
	__u32 dport = bpf_ntohs(udp->dest), sport = bpf_ntohs(udp->source);
	__u32 dir = 0, slot = 0;
	int vip = 0;
	for (int i = 0; i < LB_INLINE_VIPS; i++)
		if (i < cfg->n_vips && cfg->vips[i] == daddr)
			vip = 1;
	if (!vip && cfg->n_vips > LB_INLINE_VIPS)
		vip = bpf_map_lookup_elem(&lb_vips, &daddr) != 0;
	__u32 *pm;
	if (vip && dport == cfg->port) {
		dir = DIR_HASH;
	} else if (vip && (pm = bpf_map_lookup_elem(&lb_ports, &dport)) && *pm) {
		dir = DIR_PORT;
		slot = *pm - 1;
	} else if ((pm = bpf_map_lookup_elem(&lb_ports, &sport)) && *pm) {
		slot = *pm - 1;
		struct lb_router *r = bpf_map_lookup_elem(&lb_routers, &slot);
		if (!r || !r->in_use || r->addr != saddr)
			goto other;
		if (r->ifindex && r->ifindex != ctx->ingress_ifindex) {
			count(C_SPOOFED);
			return XDP_DROP;
		}
		dir = DIR_OUT;
	} else {
		goto other;
	}
	if (slot >= LB_MAX_ROUTERS)
		goto pass;
	if (ip->frag_off & bpf_htons(0x3fff)) {
		count(C_IP_FRAGMENT);
		return XDP_DROP;
	}

	/* The NDN payload. */
	__u32 ndn_off = l4 + sizeof(*udp);
	__u32 frame_len = bpf_xdp_get_buff_len(ctx);
	__u32 ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || frame_len < ndn_off) {
		count(C_MALFORMED);
		return XDP_DROP;
	}
	__u32 plen = frame_len - ndn_off;
	if (ulen - sizeof(*udp) < plen)
		plen = ulen - sizeof(*udp);
	__builtin_memcpy(s->b, &saddr, 4);
	__builtin_memcpy(s->b + 4, &udp->source, 2);
	s->srclen = 6;
	s->ndn_off = ndn_off;
	s->plen = plen;
	s->wbase = 0;
	s->wlen = 0;
	lb_classify(ctx, dir == DIR_HASH);
	__u32 kind = s->kind, how = s->how, findex = s->frag_index, fcount = s->frag_count;
	/* Frame offset of a router's LpPacket Sequence (0: none or not from a router). */
	__u32 seq_at = dir == DIR_OUT && (s->flags & LP_HAS_SEQUENCE) && s->seq_len == 8
			       ? ndn_off + s->seq_off
			       : 0;
	__u64 hash = s->hash;
	struct frag_key fk = { .saddr = saddr, .sport = bpf_htons(sport), .pad = 0,
			       .base = s->seq - findex };
	if (kind == K_MALFORMED) {
		count(C_MALFORMED);
		return XDP_DROP;
	}
	if (kind == K_FRAGMENT)
		count(C_FRAGMENTS);

	__be32 new_daddr = daddr, new_saddr = saddr;
	__be16 new_dport = bpf_htons(dport), new_sport = bpf_htons(sport);
	if (dir == DIR_HASH) {
		if (kind == K_FRAGMENT) {
			struct frag_val *fv = bpf_map_lookup_elem(&lb_frags, &fk);
			if (!fv) {
				count(C_FRAG_MISS_IN);
				return XDP_DROP;
			}
			slot = fv->slot;
			if (findex + 1 == fcount)
				bpf_map_delete_elem(&lb_frags, &fk);
		} else if (kind != K_INTEREST) {
			count(C_NOT_INTEREST);
			return XDP_DROP;
		} else {
			count(C_INTERESTS_IN);
			if (how == 3)
				count(C_BY_SOURCE);
			__u32 cell = (__u32)hash & (cfg->table_len - 1);
			__u32 *t = bpf_map_lookup_elem(&lb_table, &cell);
			if (!t || *t >= LB_MAX_ROUTERS) {
				count(C_NO_ROUTER);
				return XDP_DROP;
			}
			slot = *t;
			if (fcount > 1) {
				struct frag_val v = { .slot = slot, .kind = kind };
				bpf_map_update_elem(&lb_frags, &fk, &v, BPF_ANY);
			}
		}
	} else if (dir == DIR_PORT) {
		count(C_PORT_MAPPED);
	} else {
		count(C_FROM_ROUTERS);
		/* Only fragmented Interests (rare) are remembered: any other fragment is a
		 * Data's, and leaves from the well-known port like its fragment 0. */
		__u32 k = kind;
		if (kind == K_FRAGMENT) {
			k = K_DATA;
			__u64 *fia = bpf_map_lookup_elem(&lb_frag_interest_at, &slot);
			if (fia && *fia && bpf_ktime_get_coarse_ns() - *fia < FRAG_INTEREST_NS) {
				struct frag_val *fv = bpf_map_lookup_elem(&lb_frags_out, &fk);
				if (fv) {
					k = fv->kind;
					if (findex + 1 == fcount)
						bpf_map_delete_elem(&lb_frags_out, &fk);
				}
			}
		} else if (fcount > 1 && kind == K_INTEREST) {
			count(C_FRAG_INTEREST_OUT);
			struct frag_val v = { .slot = slot, .kind = kind };
			bpf_map_update_elem(&lb_frags_out, &fk, &v, BPF_ANY);
			__u64 *fia = bpf_map_lookup_elem(&lb_frag_interest_at, &slot);
			if (fia)
				*fia = bpf_ktime_get_coarse_ns();
		}
		if (k == K_DATA || k == K_NACK)
			new_sport = bpf_htons(cfg->port);
	}
	if (slot >= LB_MAX_ROUTERS) {
		count(C_NO_ROUTER);
		return XDP_DROP;
	}
	if (dir != DIR_OUT) {
		struct lb_router *r = bpf_map_lookup_elem(&lb_routers, &slot);
		if (!r || !r->in_use) {
			count(C_NO_ROUTER);
			return XDP_DROP;
		}
		new_daddr = r->addr;
		new_dport = r->port;
	}

	/* Packet pointers again: the verifier forgets them across the global calls. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	udp = data + l4;
	if ((void *)(udp + 1) > data_end)
		return XDP_DROP;

	/* The next hop: cached, else bpf_fib_lookup (and cached when resolved). */
	__u64 now = bpf_ktime_get_coarse_ns();
	struct slot_nexthop *sn = 0;
	struct nexthop *cached;
	if (dir == DIR_OUT) {
		cached = bpf_map_lookup_elem(&lb_nexthops, &new_daddr);
	} else {
		sn = bpf_map_lookup_elem(&lb_slot_nexthops, &slot);
		cached = sn && sn->addr == new_daddr ? &sn->nh : 0;
	}
	struct nexthop nh = {};
	int to_kernel = 0;
	if (cached && cached->stamp && now - cached->stamp <= NH_TTL_NS) {
		nh = *cached;
	} else {
		struct bpf_fib_lookup fib = {};
		fib.family = AF_INET_;
		fib.tos = ip->tos;
		fib.l4_protocol = IPPROTO_UDP;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = saddr;
		fib.ipv4_dst = new_daddr;
		fib.ifindex = ctx->ingress_ifindex;
		long rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) {
			count(rc == BPF_FIB_LKUP_RET_FWD_DISABLED ? C_FWD_DISABLED : C_NO_ROUTE);
			return XDP_DROP;
		}
		__u32 oif = fib.ifindex;
		__be32 *a = bpf_map_lookup_elem(&lb_ifaddrs, &oif);
		nh.stamp = now;
		nh.ifindex = oif;
		nh.saddr = a ? *a : 0;
		__builtin_memcpy(nh.smac, fib.smac, ETH_ALEN);
		__builtin_memcpy(nh.dmac, fib.dmac, ETH_ALEN);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS) {
			to_kernel = 1;
		} else if (sn) {
			sn->nh = nh;
			sn->addr = new_daddr;
		} else {
			bpf_map_update_elem(&lb_nexthops, &new_daddr, &nh, BPF_ANY);
		}
	}
	if (dir == DIR_OUT) {
		if (!nh.saddr) {
			count(C_NO_IFADDR);
			return XDP_DROP;
		}
		new_saddr = nh.saddr;
	}
	if (!to_kernel && ip->ttl <= 1) {
		count(C_TTL);
		return XDP_DROP;
	}

	/* Per-router accounting, on the packet's IP length. */
	__u64 bytes = bpf_ntohs(ip->tot_len);
	if (dir == DIR_OUT) {
		rcount(slot, rstat_kind_from(kind), 1);
		rcount(slot, R_BYTES_FROM, bytes);
	} else {
		rcount(slot, rstat_kind_to(kind), 1);
		rcount(slot, R_BYTES_TO, bytes);
	}

	/* NAT, with incremental checksums (a UDP checksum of 0 means none and stays 0). */
	/* Whether the sender computed a UDP checksum decides, not any intermediate value (an
	 * update may pass through 0). */
	__u16 ipc = ip->check, uc = udp->check;
	int has_uc = uc != 0;
	if (new_daddr != daddr) {
		ipc = csum_replace4(ipc, daddr, new_daddr);
		if (has_uc)
			uc = csum_replace4(uc, daddr, new_daddr);
		ip->daddr = new_daddr;
	}
	if (new_saddr != saddr) {
		ipc = csum_replace4(ipc, saddr, new_saddr);
		if (has_uc)
			uc = csum_replace4(uc, saddr, new_saddr);
		ip->saddr = new_saddr;
	}
	if (new_dport != udp->dest) {
		if (has_uc)
			uc = csum_replace2(uc, udp->dest, new_dport);
		udp->dest = new_dport;
	}
	if (new_sport != udp->source) {
		if (has_uc)
			uc = csum_replace2(uc, udp->source, new_sport);
		udp->source = new_sport;
	}
	/* From a router: slot + 1 added to the top byte of its 8-byte LpPacket Sequence (so
	 * to the whole number, modulo 2^64: Sequence - FragIndex stays the packet's). Every
	 * router's fragments reach a downstream from one address and port (the well-known ones),
	 * where they share one reassembler; routers number fragments on their own (ndnd from 0
	 * per face), so without this two routers' packets could share a reassembly key. */
	if (seq_at && seq_at < 256) {
		__u64 at = seq_at;
		barrier_var(at);
		at &= 0xff;
		__u8 *q = (void *)(long)ctx->data + at;
		if ((void *)(q + 1) <= (void *)(long)ctx->data_end) {
			__u16 oldb = *q, newb = (oldb + slot + 1) & 0xff;
			*q = newb;
			if (has_uc) {
				/* Its 16-bit word in the checksum: high byte at an even offset from the
				 * UDP header, low byte at an odd one. */
				int high = ((seq_at - l4) & 1) == 0;
				uc = csum_replace2(uc, bpf_htons(high ? oldb << 8 : oldb),
						   bpf_htons(high ? newb << 8 : newb));
			}
		}
	}
	if (has_uc && !uc)
		uc = 0xffff;
	udp->check = uc;

	if (to_kernel) {
		/* The kernel forwards it (and decrements the TTL) while resolving the neighbour. */
		ip->check = ipc;
		count(C_TO_KERNEL);
		return XDP_PASS;
	}
	__u16 old_tw = *(__u16 *)&ip->ttl;
	ip->ttl -= 1;
	ipc = csum_replace2(ipc, old_tw, *(__u16 *)&ip->ttl);
	ip->check = ipc;
	__builtin_memcpy(eth->h_dest, nh.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, nh.smac, ETH_ALEN);
	__u32 oif = nh.ifindex;
	if (oif == ctx->ingress_ifindex) {
		count(C_TX);
		return XDP_TX;
	}
	count(C_REDIRECTED);
	return bpf_redirect(oif, 0);

other:
	/* UDP from a router's address but not from its port (another program, a router
	 * already freed, an IP fragment): the kernel would forward it with the internal
	 * address. */
	if (bpf_map_lookup_elem(&lb_router_addrs, &saddr)) {
		count(C_ROUTER_OTHER);
		return XDP_DROP;
	}
pass:
	count(C_PASS);
	return XDP_PASS;
}

SEC("xdp")
int ndx_lb(struct xdp_md *ctx)
{
	return lb_main(ctx);
}

/* Same code for multi-buffer frames (MTU 9000). */
SEC("xdp.frags")
int ndx_lb_frags(struct xdp_md *ctx)
{
	return lb_main(ctx);
}

/* bpf_fib_lookup is GPL-only: this program is loaded under its GPL-2.0 option. */
char _license[] SEC("license") = "GPL";
