#!/bin/sh
# Measures the raw AF_XDP reflector on a veth pair in two throwaway namespaces.
# Usage (root): scripts/reflector-veth.sh [seconds] [frame size] [--sink]
# Needs the release examples: cargo build --release -p ndx-afxdp --examples
set -eu
secs=${1:-5}
size=${2:-64}
mode=${3:-}
bin=${CARGO_TARGET_DIR:-target}/release/examples
a=ndxb-$$-a
b=ndxb-$$-b
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
ip netns add "$a"
ip netns add "$b"
ip link add a0 netns "$a" numrxqueues 2 numtxqueues 2 address 02:00:00:00:00:01 type veth \
    peer name b0 netns "$b" numrxqueues 2 numtxqueues 2 address 02:00:00:00:00:02
ip -n "$a" link set a0 up
ip -n "$b" link set b0 up
ip netns exec "$b" "$bin/reflector" b0 0 "$((secs + 2))" $mode &
refl=$!
sleep 1
ip netns exec "$a" "$bin/flood" a0 0 "$secs" 02:00:00:00:00:02 10.99.0.1:5000 10.99.0.2:6363 "$size"
wait "$refl"
