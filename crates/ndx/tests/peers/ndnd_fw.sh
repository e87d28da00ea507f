#!/bin/sh
# Start ndnd's forwarder (the YaNFD `ndnd fw`) with a minimal config whose unix socket lives in
# DIR, for validating the peer scripts (see README.md). Renders ndnd_fw.yml.in into DIR/fw.yml
# and execs ndnd in the foreground, so the caller's pid is ndnd's (SIGTERM/SIGINT stop it).
# usage: ndnd_fw.sh DIR [UDP_PORT]   (env: NDND=path to ndnd, default
#        /opt/ndx-interop/go/ndnd; NDND_LOG_LEVEL=INFO|DEBUG|TRACE|WARN, default INFO)
# The socket is DIR/nfd.sock: point the scripts at it with
#   NDN_CLIENT_TRANSPORT=unix://DIR/nfd.sock
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [UDP_PORT]" >&2; exit 2; }
dir=$(cd "$1" && pwd)
port=${2:-6363}
here=$(dirname "$0")
sed -e "s|@SOCKET_PATH@|$dir/nfd.sock|" -e "s|@UDP_PORT@|$port|" \
    -e "s|@LOG_LEVEL@|${NDND_LOG_LEVEL:-INFO}|" "$here/ndnd_fw.yml.in" > "$dir/fw.yml"
exec "${NDND:-/opt/ndx-interop/go/ndnd}" fw run "$dir/fw.yml"
