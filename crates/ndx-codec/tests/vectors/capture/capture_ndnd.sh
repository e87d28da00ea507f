#!/usr/bin/env bash
# Capture ndnd (v1.5.3) traffic on a veth link between two network namespaces.
#
#   ns ndxa: ndnd fw  + consumers (ndnd cat, pyndn_consumer.py) on its unix socket
#   ns ndxb: ndnd fw  + producer  (ndnd put) on its unix socket
#   ndxa0 <-veth-> ndxb0, UDP port 6363; tcpdump runs on ndxa0 inside ndxa.
#
# usage: capture_ndnd.sh v4|v6 OUT.pcap
# env: NDND (ndnd binary), PY (python with python-ndn), WORK (scratch dir)
set -euo pipefail
FAM=${1:?v4|v6}; PCAP=${2:?output pcap}
HERE=$(cd "$(dirname "$0")" && pwd)
NDND=${NDND:-/opt/ndx-interop/go/ndnd}
PY=${PY:-/opt/ndx-interop/venv/bin/python}
WORK=${WORK:-/tmp/ndx-capture}/$FAM
A=ndxa; B=ndxb
rm -rf "$WORK"; mkdir -p "$WORK"
PIDS=()

cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  ip netns del $A 2>/dev/null || true
  ip netns del $B 2>/dev/null || true
}
trap cleanup EXIT
ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true

ip netns add $A; ip netns add $B
ip link add ndxa0 netns $A type veth peer name ndxb0 netns $B
for ns in $A $B; do ip -n $ns link set lo up; done
if [ "$FAM" = v4 ]; then
  ip -n $A addr add 10.77.0.1/24 dev ndxa0; ip -n $B addr add 10.77.0.2/24 dev ndxb0
  FA=udp://10.77.0.1:6363; FB=udp://10.77.0.2:6363
else
  ip -n $A addr add fd77::1/64 dev ndxa0 nodad; ip -n $B addr add fd77::2/64 dev ndxb0 nodad
  FA="udp://[fd77::1]:6363"; FB="udp://[fd77::2]:6363"
fi
ip -n $A link set ndxa0 up; ip -n $B link set ndxb0 up
# real UDP checksums in the capture (veth otherwise leaves them partial)
ip netns exec $A ethtool -K ndxa0 tx off >/dev/null; ip netns exec $B ethtool -K ndxb0 tx off >/dev/null

for ns in $A $B; do
  cat > "$WORK/$ns.yml" <<YML
core:
  log_level: INFO
faces:
  udp:
    enabled_unicast: true
    enabled_multicast: false
    port_unicast: 6363
    default_mtu: 1420
  tcp:
    enabled: false
  unix:
    enabled: true
    socket_path: $WORK/$ns.sock
  websocket:
    enabled: false
tables:
  content_store:
    capacity: 1024
YML
  ip netns exec $ns "$NDND" fw run "$WORK/$ns.yml" > "$WORK/$ns.log" 2>&1 &
  PIDS+=($!)
done
for i in $(seq 50); do [ -S "$WORK/$A.sock" ] && [ -S "$WORK/$B.sock" ] && break; sleep 0.1; done

ip netns exec $A tcpdump -i ndxa0 -s 0 -U -w "$PCAP" udp port 6363 > "$WORK/tcpdump.log" 2>&1 &
TCPDUMP=$!; PIDS+=($TCPDUMP)
sleep 1

inA() { ip netns exec $A env NDN_CLIENT_TRANSPORT=unix://$WORK/$A.sock "$@"; }
inB() { ip netns exec $B env NDN_CLIENT_TRANSPORT=unix://$WORK/$B.sock "$@"; }
inA "$NDND" fw route-add prefix=/ndx face="$FB" persistency=permanent > "$WORK/routeA.log" 2>&1
# a permanent face back so B does not drop the first packets while creating an on-demand face
inB "$NDND" fw route-add prefix=/ndx-back face="$FA" persistency=permanent > "$WORK/routeB.log" 2>&1

# ~5 segments of deterministic content (ndnd put segments at ~8000 bytes)
"$PY" -c "import sys; sys.stdout.buffer.write(bytes((i*31+7)&0xff for i in range(38000)))" > "$WORK/obj.bin"
inB "$NDND" put /ndx/obj < "$WORK/obj.bin" > "$WORK/put.log" 2>&1 &
PIDS+=($!)
sleep 2

inA timeout 20 "$NDND" cat /ndx/obj > "$WORK/got.bin" 2> "$WORK/cat.log" || true
cmp "$WORK/obj.bin" "$WORK/got.bin" && echo "[$FAM] ndnd cat: object fetched OK" || echo "[$FAM] ndnd cat: MISMATCH (see $WORK/cat.log)"
inA timeout 30 "$PY" "$HERE/pyndn_consumer.py" "$WORK/$A.sock" /ndx/obj > "$WORK/consumer.log" 2>&1 || true
cat "$WORK/consumer.log"
sleep 1
kill $TCPDUMP; sleep 0.5
echo "[$FAM] wrote $PCAP ($(stat -c %s "$PCAP") bytes)"
