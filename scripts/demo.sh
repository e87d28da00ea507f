#!/usr/bin/env bash
# The end-to-end demo (`cargo xtask demo` runs this after building; needs root).
#
#   consumer ns ──veth── router ns (ndx on AF_XDP) ──veth── producer ns
#   10.77.1.1       10.77.1.2 | 10.77.2.2                 10.77.2.1
#
# It serves a random multi-megabyte file from the producer with `ndx put`, fetches it through
# ndx twice with `ndx get` (the second time from ndx's content store), verifies the bytes,
# prints throughput and ndx's counters, and removes everything it created, also when
# interrupted.
#
# DEMO_L2=1 shows the hierarchical content store instead: an L1 of 512 Data per shard (a
# quarter of the file) over an L2 of files in the work directory (io_uring); the first fetch
# fills L1 and spills the rest into L2 in batches, the second is answered from L1 + L2 (the
# `l2_*` counters show the batch reads, prefetches and parked Interests).
set -euo pipefail
. "$(dirname "$0")/topology.sh"
NDX=${NDX:?path to the ndx binary}
SIZE_MB=${DEMO_SIZE_MB:-16}
SHARDS=${DEMO_SHARDS:-2}
L2=${DEMO_L2:-}
TAG=$$
C=ndxdemo-c-$TAG R=ndxdemo-r-$TAG P=ndxdemo-p-$TAG
WORK=$(mktemp -d /tmp/ndx-demo.XXXXXX)
PIDS=()

cleanup() {
  set +e
  ndx_teardown $C $R $P
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s ==\n' "$*"; }

step "topology: consumer - ndx - producer (network namespaces, veth pairs with $SHARDS queues)"
ndx_topology $C $R $P $TAG "$SHARDS"
echo "consumer 10.77.1.1 <-> 10.77.1.2 ndx 10.77.2.2 <-> 10.77.2.1 producer"

head -c $((SIZE_MB * 1024 * 1024)) /dev/urandom > "$WORK/file"
cat > "$WORK/ndx.toml" <<CFG
[router]
shards = $SHARDS
# The demo shares this machine's cores with its consumer and producer: yield when idle.
idle = "yield"
control_socket = "$WORK/ndx.sock"
[app]
# Its own app socket: NFD's path may belong to a forwarder already running here.
socket = "$WORK/nfd.sock"
$(ndx_line_config "/demo")
CFG
if [ -n "$L2" ]; then
  cat >> "$WORK/ndx.toml" <<CFG
[cs]
capacity = 512
[cs.l2]
enabled = true
dirs = ["$WORK/l2"]
size = "256MiB"
batch = 16
CFG
fi

step "producer: ndx put /demo/file ($SIZE_MB MiB)"
ip netns exec $P "$NDX" put /demo/file -i "$WORK/file" -b 0.0.0.0:6363 > "$WORK/put.log" 2>&1 &
PIDS+=($!)

step "router: ndx run ($SHARDS shards, AF_XDP on c0 and p0)"
ip netns exec $R "$NDX" run -c "$WORK/ndx.toml" > "$WORK/ndx.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$WORK/ndx.sock" ] && break; sleep 0.1; done
[ -S "$WORK/ndx.sock" ] || { cat "$WORK/ndx.log"; echo "ndx did not start"; exit 1; }
cat "$WORK/ndx.log"

for round in 1 2; do
  from=' (from the CS)'; [ -n "$L2" ] && from=' (from the CS: L1 + L2)'
  step "consumer: ndx get /demo/file, round $round$([ $round = 2 ] && echo "$from")"
  ip netns exec $C "$NDX" get /demo/file -t 10.77.1.2:6363 -o "$WORK/got$round" --no-progress --max-cwnd ${DEMO_MAX_CWND:-32}
  cmp "$WORK/file" "$WORK/got$round" && echo "bytes verified: identical to the served file"
done

step "ndx status"
"$NDX" status -s "$WORK/ndx.sock"

step "stopping ndx (SIGINT)"
kill -INT "${PIDS[1]}"; wait "${PIDS[1]}" || true
tail -n 5 "$WORK/ndx.log"
echo
echo "demo complete; removing the namespaces"
