#!/bin/bash
# Validates the peer scripts (app_producer.py, fetch.py, mgmt.py, churn.py) and pynfdc against
# ndnd's forwarder: starts `ndnd fw` (ndnd_fw.sh) in a throwaway network namespace with its
# unix socket in a temporary directory, runs every check, prints one line per check
#   PASS|FAIL <what> | <command> | rc=<exit code> | <first stdout line>
# and removes everything it created (namespace, processes, directory), also on SIGINT/SIGTERM.
# Needs root (ip netns). Exit code: 0 when every check passed, 1 otherwise.
# env: PY (python-ndn's python, default /opt/ndx-interop/venv/bin/python), NDND (ndnd binary),
#      KEEP=1 keeps the temporary directory (ndnd.log, outputs) for inspection.
set -u
PY=${PY:-/opt/ndx-interop/venv/bin/python}
PYNFDC=${PYNFDC:-$(dirname "$PY")/pynfdc}
export NDND=${NDND:-/opt/ndx-interop/go/ndnd}
here=$(cd "$(dirname "$0")" && pwd)
ns=ndxpeers$$
dir=$(mktemp -d /tmp/ndx-peers.XXXXXX)
pids=()
pass=0
fail=0

cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# check WHAT REGEX CMD...: run CMD, PASS when its whole stdout matches the extended REGEX
# as "rc=<exit code> <line 1> <line 2> ... " (each line followed by one space).
check() {
    local what=$1 regex=$2
    shift 2
    local out rc
    out=$("$@" 2>>"$dir/stderr.log")
    rc=$?
    local flat
    flat="rc=$rc $(printf '%s' "$out" | tr '\n' ' ')"
    [ -n "$out" ] && flat="$flat "  # every output line ends with one space
    if printf '%s' "$flat" | grep -Eq -- "$regex"; then
        pass=$((pass + 1)); echo "PASS $what | ${*#$here/} | ${flat:0:200}"
    else
        fail=$((fail + 1)); echo "FAIL $what | ${*#$here/} | ${flat:0:400} (wanted /$regex/)"
    fi
    LAST=$out
}

# start_producer NAME ARGS...: app_producer.py in the background, wait for its first line
start_producer() {
    local tag=$1
    shift
    "$PY" "$here/app_producer.py" "$@" >"$dir/$tag.out" 2>"$dir/$tag.err" &
    pids+=($!)
    for _ in $(seq 50); do
        [ -s "$dir/$tag.out" ] && break
        sleep 0.1
    done
    echo "     producer $tag: $(head -1 "$dir/$tag.out")"
}

ip netns add "$ns" || exit 1
ip -n "$ns" link set lo up
ip netns exec "$ns" "$here/ndnd_fw.sh" "$dir" 6363 >"$dir/ndnd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$dir/nfd.sock" ] && break; sleep 0.1; done
export NDN_CLIENT_TRANSPORT=unix://$dir/nfd.sock
M="$PY $here/mgmt.py"
F="$PY $here/fetch.py"

echo "== producer + fetch over the unix socket"
head -c 1000000 /dev/urandom >"$dir/in.bin"
sum=$(sha256sum "$dir/in.bin" | cut -d' ' -f1)
start_producer p2 /app/py --file "$dir/in.bin" --trace
# first, while ndnd's CS is empty: later a CanBePrefix Interest can get any cached segment
check "discovery Interest, one" "^rc=0 data /app/py/v=[0-9]+/seg=0 8000 \$" \
    $F --one /app/py --can-be-prefix --must-be-fresh
check "fetch from --api v2 producer" "^rc=0 ok 1000000 $sum \$" $F /app/py -o "$dir/out2.bin"
check "bytes equal (v2)" "^rc=0 " cmp "$dir/in.bin" "$dir/out2.bin"
check "v2 producer got PitTokens, echoed them" "^rc=0 1 \$" sh -c \
    "grep -c '^reply /app/py/v=[0-9]*/seg=1 token=[0-9a-f]\{12\}\$' $dir/p2.out"
check "rib shows the app's route" '^rc=0 .*"name": "/app/py", "routes": \[\{"cost": 0, "face_id": [0-9]+, "flags": 1, "origin": 0\}\]' $M rib
start_producer p1 /app/py1 --file "$dir/in.bin" --api v1 --trace
check "fetch from --api v1 producer" "^rc=0 ok 1000000 $sum \$" $F /app/py1 -o "$dir/out1.bin"
check "bytes equal (v1)" "^rc=0 " cmp "$dir/in.bin" "$dir/out1.bin"
check "v1 producer got PitTokens, replied bare Data" "^rc=0 1 \$" sh -c \
    "grep -c '^reply /app/py1/v=[0-9]*/seg=1 token=-\$' $dir/p1.out"

echo "== long names"
start_producer long /app/long --size 3000 --segment-size 1000 --answer-any
check "3000-byte name" "^rc=0 data /app/long/a+ 8 \$" $F --one /app/long --pad-to 3000
check "8000-byte name" "^rc=0 data /app/long/a+ 8 \$" $F --one /app/long --pad-to 8000
check "8800-byte name: ndnd drops it (MaxNDNPacketSize 8800)" "^rc=4 timeout \$" \
    $F --one /app/long --pad-to 8800 --lifetime 1000

echo "== fetch over UDP (python-ndn sends bare packets; keep Data under the 1420 MTU)"
check "udp fetch" "^rc=0 ok 3000 " ip netns exec "$ns" env \
    NDN_CLIENT_TRANSPORT=udp://127.0.0.1:6363 $F /app/long --lifetime 1000
check "udp 1300-byte name" "^rc=0 data /app/long/x/a+ 8 \$" ip netns exec "$ns" env \
    NDN_CLIENT_TRANSPORT=udp://127.0.0.1:6363 $F --one /app/long/x --pad-to 1300

echo "== no route"
check "no route: ndnd sends no Nack" "^rc=4 timeout \$" $F /nothing/here --lifetime 500 --retries 1
check "no route, one Interest" "^rc=4 timeout \$" $F --one /nothing/here --lifetime 500

echo "== producer disconnects (--exit-after)"
start_producer gone /app/gone --size 20000 --exit-after 2
check "fetch stalls after 2 Data" "^rc=4 timeout \$" $F /app/gone --lifetime 500 --retries 1
check "producer said served 2, disconnected" "^rc=0 .*served 2 disconnected \$" cat "$dir/gone.out"
check "its route is gone" "^rc=1 \$" sh -c "$M rib | grep -q /app/gone"

echo "== management datasets"
check "faces" '^rc=0 \{"face_id": 1, .*"local_uri": "null://".*"uri": "internal://"' $M faces
check "faces --meta" "^rc=0 dataset /localhost/nfd/faces/list/v=[0-9]+ 1 [0-9]+ " $M --meta faces
check "fib" '^rc=0 .*\{"name": "/localhost/nfd", "next_hop_records": \[\{"cost": 0, "face_id": 2\}\]\}' $M fib
check "strategies" '^rc=0 \{"name": "/", "strategy": "/localhost/nfd/strategy/best-route/v=1"\} $' $M strategies
check "status" '^rc=0 \{"current_timestamp": [0-9]+, .*"nfd_version": "[^"]*", "start_timestamp": [0-9]+\} $' $M status
check "cs" '^rc=0 \{"capacity": 1024, "flags": 3, "n_cs_entries": [0-9]+, "n_hits": [0-9]+, "n_misses": [0-9]+\} $' $M cs

echo "== management commands"
for fmt in v2 v1 unsigned; do
    check "$fmt register" '^rc=0 code 200 OK body \{"cost": 0, "face_id": [0-9]+, "flags": 1, "name": "/t/'$fmt'", "origin": 0\} $' \
        $M --format $fmt --body register /t/$fmt
    check "$fmt register, all options" '^rc=0 code 200 OK body \{"cost": 7, "expiration_period": 60000, "face_id": 1, "flags": 2, "name": "/t/'$fmt'/x", "origin": 255\} $' \
        $M --format $fmt --body register /t/$fmt/x --face-id 1 --origin 255 --cost 7 --flags 2 --expires 60000
    check "$fmt register, no such face" "^rc=0 code 410 Face does not exist \$" \
        $M --format $fmt register /t/$fmt/y --face-id 99999
    check "$fmt unregister" "^rc=0 code 200 OK \$" $M --format $fmt unregister /t/$fmt/x --face-id 1 --origin 255
    check "$fmt set-strategy" "^rc=0 code 200 OK \$" $M --format $fmt --expect 200 set-strategy /t/$fmt multicast
    check "$fmt unknown strategy" "^rc=0 code 404 Unknown strategy \$" \
        $M --format $fmt set-strategy /t/$fmt /localhost/nfd/strategy/nonexistent
    check "$fmt unset-strategy" "^rc=0 code 200 OK \$" $M --format $fmt unset-strategy /t/$fmt
    check "$fmt unset-strategy /" "^rc=0 code 400 ControlParameters is incorrect \(empty Name\) \$" \
        $M --format $fmt unset-strategy /
    for hex in ff 0700 680307010a ''; do
        check "$fmt malformed ControlParameters '$hex'" "^rc=0 code 400 ControlParameters is incorrect \$" \
            $M --format $fmt raw-command rib register "$hex"
    done
    check "$fmt ControlParameters without Name" "^rc=0 code 400 ControlParameters is incorrect \(missing Name\) \$" \
        $M --format $fmt raw-command rib register 6800
    check "$fmt no ControlParameters" "^rc=0 code 400 ControlParameters is incorrect \$" \
        $M --format $fmt raw-command rib register --no-params
    check "$fmt unknown module" "^rc=0 code 501 Unknown module \$" $M --format $fmt raw-command frob list ''
    check "$fmt unknown verb" "^rc=0 code 501 Unknown verb \$" $M --format $fmt unknown-verb
done
check "--expect mismatch exits 1" "^rc=1 code 501 Unknown verb \$" $M --expect 200 unknown-verb

echo "== churn"
n_before=$($M faces | wc -l)
check "1000 connections, 100 registering" "^rc=0 registered 100 0 done 1000 \$" \
    $PY "$here/churn.py" -n 1000 --register-every 10
sleep 1
check "face count back to $n_before" "^rc=0 $n_before \$" sh -c "$M faces | wc -l"
check "no /churn route left" "^rc=1 \$" sh -c "$M rib | grep -q /churn/"
check "1000 held at once (v1 commands)" "^rc=0 registered 10 0 done 1000 \$" \
    $PY "$here/churn.py" -n 1000 --batch 1000 --hold 500 --register-every 100 --format v1
sleep 1
check "face count back to $n_before again" "^rc=0 $n_before \$" sh -c "$M faces | wc -l"

echo "== pynfdc (python-ndn's nfdc)"
check "pynfdc status: dataset Interest is signed, ndnd ignores it" "^rc=255 Timeout" "$PYNFDC" status
check "pynfdc face (list): same" "^rc=255 Timeout" "$PYNFDC" face
check "pynfdc route (list): same" "^rc=255 Timeout" "$PYNFDC" route
check "pynfdc strategy (list): same" "^rc=255 Timeout" "$PYNFDC" strategy
check "pynfdc face 1 (faces/query)" "^rc=0 +Face ID.1 +Remote URI.null://" "$PYNFDC" face 1
check "pynfdc nr (rib/register)" "^rc=0 200 OK \$" "$PYNFDC" nr /pynfdc 1
check "pynfdc rr (rib/unregister)" "^rc=0 200 OK \$" "$PYNFDC" rr /pynfdc 1
check "pynfdc ss (strategy-choice/set)" "^rc=0 200 OK \$" "$PYNFDC" ss /pynfdc multicast
check "pynfdc rs (strategy-choice/unset)" "^rc=0 200 OK \$" "$PYNFDC" rs /pynfdc
check "pynfdc nf: response ControlParameters out of python-ndn's order" "^rc=1 " \
    "$PYNFDC" nf udp4://127.0.0.1:9999
check "pynfdc rf (faces/destroy), unknown id" "^rc=0 Removing face 99999 ...	200 OK" "$PYNFDC" rf 99999

echo "== clean exits"
check "fetch --timeout" "^rc=5 deadline \$" $F /nothing --timeout 1
"$PY" "$here/app_producer.py" /sig --size 10 >"$dir/sig.out" 2>>"$dir/stderr.log" &
sigpid=$!
sleep 1
kill -TERM $sigpid
wait $sigpid
sigrc=$?
check "producer on SIGTERM" "^rc=0 ready /sig/v=[0-9]+ 1 served 0 interrupted SIGTERM \$" \
    sh -c "cat $dir/sig.out; exit $sigrc"
check "connect error" "^rc=1 error connect ENOENT \$" env NDN_CLIENT_TRANSPORT=unix://$dir/none.sock $F /x

check "ndnd still running" "^rc=0 " kill -0 "${pids[0]}"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
