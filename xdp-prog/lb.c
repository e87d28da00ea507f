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
	C_FRAG_MISS_OUT,   /* fragment from a router whose first was not seen: sent as Data */
	C_NO_ROUTER,       /* Interest while no router takes Interests: dropped */
	C_TTL,             /* TTL <= 1: dropped */
	C_NO_IFADDR,       /* egress interface without a front-end address: dropped */
	C_NO_ROUTE,        /* FIB lookup failed: dropped */
	C_FWD_DISABLED,    /* forwarding disabled on the ingress interface: dropped */
	C_TO_KERNEL,       /* neighbour unresolved: rewritten packet passed to the kernel */
	C_TX,              /* XDP_TX (egress = ingress) */
	C_REDIRECTED,      /* bpf_redirect to the egress interface */
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

struct lb_config {
	__u64 k0; /* struct ndn_hash_cfg */
	__u64 k1;
	__u64 param;
	__u32 mode;
	__u32 table_len; /* power of two, <= LB_MAX_TABLE */
	__u16 port;      /* the well-known port, host order */
	__u16 pad;
	__u32 pad2;
};

struct lb_router {
	__be32 addr;
	__be16 port;
	__u8 in_use;
	__u8 pad;
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

/* Soft state of fragmented packets; max_entries set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct frag_key);
	__type(value, struct frag_val);
} lb_frags SEC(".maps");

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
	s->kind = K_MALFORMED;
	s->flags = 0;
	s->seq = 0;
	s->frag_index = 0;
	s->frag_count = 1;
	s->tok_len = 0;
	s->how = 0;
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
	if (!ntl || TL_TYPE(ntl) != T_NAME)
		return 0;
	s->kind = kind;
	if (!want_hash || kind != K_INTEREST)
		return 0;
	int rc = name_hash(ctx, val + TL_HDR(ntl), TL_LEN(ntl));
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
	__u32 *vip = bpf_map_lookup_elem(&lb_vips, &daddr);
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
			goto pass;
		dir = DIR_OUT;
	} else {
		goto pass;
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
		__u32 k = kind;
		if (kind == K_FRAGMENT) {
			struct frag_val *fv = bpf_map_lookup_elem(&lb_frags, &fk);
			if (fv) {
				k = fv->kind;
				if (findex + 1 == fcount)
					bpf_map_delete_elem(&lb_frags, &fk);
			} else {
				count(C_FRAG_MISS_OUT);
				k = K_DATA;
			}
		} else if (fcount > 1) {
			struct frag_val v = { .slot = slot, .kind = kind };
			bpf_map_update_elem(&lb_frags, &fk, &v, BPF_ANY);
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
	if (dir == DIR_OUT) {
		__u32 oif = fib.ifindex;
		__be32 *a = bpf_map_lookup_elem(&lb_ifaddrs, &oif);
		if (!a) {
			count(C_NO_IFADDR);
			return XDP_DROP;
		}
		new_saddr = *a;
	}
	if (rc == BPF_FIB_LKUP_RET_SUCCESS && ip->ttl <= 1) {
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
	__u16 ipc = ip->check, uc = udp->check;
	if (new_daddr != daddr) {
		ipc = csum_replace4(ipc, daddr, new_daddr);
		if (uc)
			uc = csum_replace4(uc, daddr, new_daddr);
		ip->daddr = new_daddr;
	}
	if (new_saddr != saddr) {
		ipc = csum_replace4(ipc, saddr, new_saddr);
		if (uc)
			uc = csum_replace4(uc, saddr, new_saddr);
		ip->saddr = new_saddr;
	}
	if (new_dport != udp->dest) {
		if (uc)
			uc = csum_replace2(uc, udp->dest, new_dport);
		udp->dest = new_dport;
	}
	if (new_sport != udp->source) {
		if (uc)
			uc = csum_replace2(uc, udp->source, new_sport);
		udp->source = new_sport;
	}
	if (udp->check && !uc)
		uc = 0xffff;
	udp->check = uc;

	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH) {
		/* The kernel forwards it (and decrements the TTL) while resolving the neighbour. */
		ip->check = ipc;
		count(C_TO_KERNEL);
		return XDP_PASS;
	}
	__u16 old_tw = *(__u16 *)&ip->ttl;
	ip->ttl -= 1;
	ipc = csum_replace2(ipc, old_tw, *(__u16 *)&ip->ttl);
	ip->check = ipc;
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	if (fib.ifindex == ctx->ingress_ifindex) {
		count(C_TX);
		return XDP_TX;
	}
	count(C_REDIRECTED);
	return bpf_redirect(fib.ifindex, 0);

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
