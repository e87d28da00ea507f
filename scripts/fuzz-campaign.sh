#!/usr/bin/env bash
# The fuzz campaign of issue 34: runs every cargo-fuzz target of ndx-codec for a budget of
# executions, one process at a time at nice 19, minimises each target's corpus with
# `cargo fuzz cmin`, and prints one Markdown table row per target (executions, exec/s,
# libFuzzer's final cov/ft, corpus files and bytes after cmin). Results and the libFuzzer
# logs go to target/fuzz-campaign/.
#
#   scripts/fuzz-campaign.sh                  # the default plan below: 1.04 * 10^8 in total
#   scripts/fuzz-campaign.sh 1000000          # 10^6 executions per target
#   scripts/fuzz-campaign.sh 1000000 packet   # one target
#
# Needs nightly and cargo-fuzz (crates/ndx-codec/fuzz/README.md). Built without a sanitizer
# (`-s none`): ndx-codec forbids `unsafe`, so AddressSanitizer has nothing to find that a
# panic would not show, and it costs 3-4x the executions. A crash does not stop the
# campaign: the target's row says CRASH and the input is in fuzz/artifacts/<target>/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/fuzz-campaign"
mkdir -p "$out"
cd "$root/crates/ndx-codec"

# Executions per target: the faster targets get more (rates measured on the 2-core VM).
declare -A plan=(
	[packet]=15000000 [interest]=15000000 [data]=15000000 [lp_packet]=15000000
	[name_tlv]=12000000 [tree]=14000000 [reassembler]=12000000 [name_uri]=6000000
)
order=(packet interest data lp_packet name_tlv tree reassembler name_uri)

per_target=${1:-}
shift || true
if [ $# -gt 0 ]; then order=("$@"); fi
# Optional wall-clock cap per target (seconds), e.g. FUZZ_MAX_TIME=1800.
max_time=${FUZZ_MAX_TIME:-0}

fuzz=(nice -n 19 cargo +nightly fuzz)
"${fuzz[@]}" build -s none -O >"$out/build.log" 2>&1 || {
	cat "$out/build.log"
	exit 1
}

summary="$out/summary.md"
{
	echo "| target | executions | exec/s | cov | ft | corpus files | corpus bytes | result |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
} >"$summary"
cat "$summary"

total=0
for t in "${order[@]}"; do
	runs=${per_target:-${plan[$t]}}
	log="$out/$t.log"
	result=ok
	args=(-runs="$runs" -print_final_stats=1)
	if [ "$max_time" -gt 0 ]; then args+=(-max_total_time="$max_time"); fi
	if ! "${fuzz[@]}" run -s none -O "$t" -- "${args[@]}" >"$log" 2>&1; then
		result=CRASH
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	# Inputs of these targets grow long (libFuzzer raises max_len as it goes) and a long one
	# rarely adds an edge: minimise them at 2048 bytes, keeping the corpus well under 2 MB.
	cmin_args=()
	case $t in name_tlv | name_uri | tree | reassembler) cmin_args=(-- -max_len=2048) ;; esac
	"${fuzz[@]}" cmin -s none -O "$t" "${cmin_args[@]}" >"$out/$t.cmin.log" 2>&1 ||
		result="$result (cmin failed)"
	files=$(find "fuzz/corpus/$t" -type f | wc -l)
	bytes=$(find "fuzz/corpus/$t" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
	total=$((total + ${execs:-0}))
	row="| \`$t\` | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $files | $bytes | $result |"
	echo "$row" | tee -a "$summary"
done
echo "total executions: $total" | tee -a "$summary"
