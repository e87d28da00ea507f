#!/usr/bin/env bash
# Regenerate crates/ndx-codec/tests/vectors/{captured,bad}.jsonl and the ndx dissect
# sample captures.  Needs root (network namespaces, tcpdump).  See README.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VDIR=$(cd "$HERE/.." && pwd)
TESTDATA=$(cd "$HERE/../../../.." && pwd)/ndx/testdata
OPT=${OPT:-/opt/ndx-interop}
export PY=$OPT/venv/bin/python NDND=$OPT/go/ndnd NPM_DIR=$OPT/npm
WORK=${WORK:-/tmp/ndx-vectors}; export WORK
mkdir -p "$WORK" "$TESTDATA"

if [ "${1:-}" = "--install" ]; then
  command -v tcpdump >/dev/null && command -v ethtool >/dev/null || { apt-get update && apt-get install -y tcpdump ethtool; }
  [ -x "$PY" ] || { python3 -m venv "$OPT/venv" && "$OPT/venv/bin/pip" install python-ndn==0.5.2; }
  if [ ! -x "$NDND" ]; then
    mkdir -p "$OPT/go" && cd "$OPT/go"
    printf 'module w\n\ngo 1.23\n\nrequire github.com/named-data/ndnd v1.5.3\n' > go.mod
    printf '//go:build tools\n\npackage w\n\nimport _ "github.com/named-data/ndnd/cmd/ndnd"\n' > tools.go
    go mod tidy && go build -o ndnd github.com/named-data/ndnd/cmd/ndnd
  fi
  if [ ! -d "$NPM_DIR/node_modules/@ndn/lp" ]; then
    mkdir -p "$NPM_DIR" && cd "$NPM_DIR" && { [ -f package.json ] || npm init -y >/dev/null; }
    npm install --no-audit --no-fund @ndn/{packet,tlv,lp,naming-convention2,util}@0.0.20250307
  fi
  cd "$HERE"
fi

cd "$HERE"
"$PY" gen_pyndn.py "$WORK/pyndn.jsonl"
cp gen_ndnts.mjs "$NPM_DIR/" && node "$NPM_DIR/gen_ndnts.mjs" gen "$WORK/ndnts.jsonl"
./capture_ndnd.sh v4 "$WORK/ndnd-v4.pcap"
./capture_ndnd.sh v6 "$WORK/ndnd-v6.pcap"
"$PY" assemble.py "$WORK" "$VDIR"
cp "$WORK/ndnd-v4.pcap" "$TESTDATA/sample.pcap"
"$PY" pcaptool.py topcapng "$WORK/ndnd-v6.pcap" "$TESTDATA/sample-v6.pcapng"
ls -l "$VDIR"/captured.jsonl "$VDIR"/bad.jsonl "$TESTDATA"/sample.pcap "$TESTDATA"/sample-v6.pcapng
