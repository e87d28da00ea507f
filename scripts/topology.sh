# Sourced by demo.sh and the bench-*.sh scripts: the throwaway line topology
#
#   ns $C eth0 10.77.1.1 ──veth── c0 10.77.1.2  ns $R  p0 10.77.2.2 ──veth── eth0 10.77.2.1 ns $P
#
# ndx_topology C R P TAG QUEUES: creates the three namespaces and both veth pairs (QUEUES
# queues each way), addresses them and brings everything up; `ethtool -K tx off` on every end
# because kernel senders leave partial UDP checksums on veth (ENVIRONMENT.md). The caller
# deletes the namespaces (which removes the veths) in its cleanup trap.
ndx_topology() {
  local c=$1 r=$2 p=$3 tag=$4 q=$5
  for ns in "$c" "$r" "$p"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
  ip link add "dc$tag" numrxqueues "$q" numtxqueues "$q" type veth peer name "dr$tag" numrxqueues "$q" numtxqueues "$q"
  ip link add "dp$tag" numrxqueues "$q" numtxqueues "$q" type veth peer name "ds$tag" numrxqueues "$q" numtxqueues "$q"
  ip link set "dc$tag" netns "$c" name eth0
  ip link set "dr$tag" netns "$r" name c0
  ip link set "ds$tag" netns "$r" name p0
  ip link set "dp$tag" netns "$p" name eth0
  ip -n "$c" addr add 10.77.1.1/24 dev eth0
  ip -n "$r" addr add 10.77.1.2/24 dev c0
  ip -n "$r" addr add 10.77.2.2/24 dev p0
  ip -n "$p" addr add 10.77.2.1/24 dev eth0
  local pair
  for pair in "$c eth0" "$r c0" "$r p0" "$p eth0"; do
    set -- $pair
    ip -n "$1" link set "$2" up
    ip netns exec "$1" ethtool -K "$2" tx off >/dev/null 2>&1 || true
  done
}

# ndx_teardown C R P: stops every pid in PIDS (SIGINT, then SIGKILL) and deletes the three
# namespaces. Callers run it from their EXIT trap, then remove their own work directory.
ndx_teardown() {
  local p ns
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
  sleep 0.3
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  for ns in "$@"; do ip netns del "$ns" 2>/dev/null; done
  return 0
}

# ndx_line_config PREFIX: the part of an ndx configuration every script on this line shares:
# c0 and p0 attached, a UDP face to the producer and a route for PREFIX through it.
ndx_line_config() {
  cat <<CFG
[[interface]]
name = "c0"
[[interface]]
name = "p0"
[[face]]
name = "producer"
remote = "udp://10.77.2.1:6363"
[[route]]
prefix = "$1"
face = "producer"
CFG
}
