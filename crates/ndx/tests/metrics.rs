//! The Prometheus endpoint end to end, as root: a router with `[metrics]` forwards a fetch
//! between a consumer and a producer in the namespace topology; `/metrics` is scraped (with
//! curl, inside the router's namespace) during and after the fetch, parsed, and checked
//! against `ndx status --json`: every counter of the status is there, per shard, and the
//! reads are ordered (scrape during ≤ status after ≤ scrape after, counters being monotonic
//! and each read at most one publication old). A second router asking for the same port is
//! refused with a clear message. Without root the test prints `skipping: <reason>`; with
//! `NDX_REQUIRE_ROOT_TESTS=1` (CI) it fails instead.

mod support;
mod topo;

use std::process::Command;

use ndx_router::counters::{COUNTERS, FACE_LOADS, HOST_COUNTERS, Kind};
use ndx_router::metrics::parse::{Exposition, parse};
use serde_json::Value;
use support::{Proc, skip, tool_missing, wait_for};
use topo::{Family, Line, NDX, ok, total};

const LISTEN: &str = "127.0.0.1:9363";

/// Whether curl is missing (a skip here, a failure under `NDX_REQUIRE_ROOT_TESTS=1`).
fn curl_missing() -> bool {
    Command::new("curl").arg("--version").output().is_err()
        && tool_missing::<()>("curl is missing").is_none()
}

/// `curl -i` of `path` on the metrics port, inside the router's namespace: (status code,
/// head, body).
fn curl(line: &Line, path: &str) -> (u16, String, String) {
    let out = line
        .r
        .cmd("curl")
        .args(["-sS", "-i", "--max-time", "10"])
        .arg(format!("http://{LISTEN}{path}"))
        .output()
        .expect("curl runs");
    ok(&out, "curl");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status code in {head:?}"));
    (code, head.to_string(), body.to_string())
}

/// `GET /metrics`, checked (200, OpenMetrics content type) and parsed.
fn scrape(line: &Line) -> Exposition {
    let (code, head, body) = curl(line, "/metrics");
    assert_eq!(code, 200, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    parse(&body).unwrap_or_else(|e| panic!("/metrics does not parse: {e}\n{body}"))
}

/// A table counter's sample name.
fn sample_name(name: &str, kind: Kind) -> String {
    match kind {
        Kind::Counter => format!("ndx_{name}_total"),
        Kind::Gauge => format!("ndx_{name}"),
    }
}

fn shard_value(e: &Exposition, name: &str, kind: Kind, shard: usize) -> u64 {
    let s = shard.to_string();
    e.value(&sample_name(name, kind), &[("shard", &s)])
        .unwrap_or_else(|| panic!("no {name} for shard {shard}")) as u64
}

/// Every counter of the status (per shard, host, per face, XDP) is in both scrapes, and
/// `before ≤ status ≤ after` for those that only go up.
fn check_ordered(before: &Exposition, status: &Value, after: &Exposition) {
    let shards = status["shards"].as_array().expect("shards");
    for (i, shard) in shards.iter().enumerate() {
        for d in COUNTERS {
            let s = shard[d.name]
                .as_u64()
                .unwrap_or_else(|| panic!("status has no {}", d.name));
            let (b, a) = (
                shard_value(before, d.name, d.kind, i),
                shard_value(after, d.name, d.kind, i),
            );
            if d.kind == Kind::Counter {
                assert!(
                    b <= s && s <= a,
                    "{} on shard {i}: scrape {b}, then status {s}, then scrape {a}",
                    d.name
                );
            }
        }
    }
    for d in HOST_COUNTERS {
        let s = status["host"][d.name].as_u64().expect("host counter");
        let name = sample_name(d.name, d.kind);
        let (b, a) = (
            before.value(&name, &[]).expect("host counter") as u64,
            after.value(&name, &[]).expect("host counter") as u64,
        );
        if d.kind == Kind::Counter {
            assert!(b <= s && s <= a, "{}: {b} {s} {a}", d.name);
        }
    }
    for f in status["faces"].as_array().expect("faces") {
        let id = f["id"].to_string();
        for d in FACE_LOADS {
            let name = sample_name(&format!("face_{}", d.def.name), d.def.kind);
            let labels = [("face", id.as_str())];
            let a = after
                .value(&name, &labels)
                .unwrap_or_else(|| panic!("no {name} for face {id}")) as u64;
            let s = f[d.def.name].as_u64().expect("face load");
            if d.def.kind == Kind::Counter {
                assert!(
                    s <= a,
                    "face {id} {}: status {s}, then scrape {a}",
                    d.def.name
                );
            }
        }
    }
    for (k, v) in status["xdp"].as_object().expect("xdp") {
        let s = v.as_u64().expect("XDP counter");
        let a: f64 = after
            .points
            .iter()
            .filter(|p| {
                p.name == "ndx_xdp_frames_total"
                    && p.labels.iter().any(|(l, c)| l == "counter" && c == k)
            })
            .map(|p| p.value)
            .sum();
        assert!(s <= a as u64, "XDP {k}: status {s}, then scrape {a}");
    }
}

#[test]
fn metrics_follow_a_fetch_and_agree_with_the_status() {
    if skip() || curl_missing() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let config = line.config(
        1,
        &format!("udp://{}", line.producer_endpoint()),
        &format!("[metrics]\nlisten = \"{LISTEN}\"\n"),
    );
    let router = line.start_router(&config);
    assert!(
        router
            .log()
            .contains(&format!("metrics on http://{LISTEN}/metrics")),
        "{}",
        router.log()
    );
    let idle = scrape(&line);
    assert_eq!(idle.sum("ndx_data_out_total"), 0.0);
    assert!(
        idle.points
            .iter()
            .any(|p| p.name == "ndx_build_info" && p.value == 1.0)
    );
    // Anything but GET /metrics is not found.
    assert_eq!(curl(&line, "/").0, 404);
    assert_eq!(curl(&line, "/metrics/x").0, 404);

    let (file, want) = line.content("obj", 4 << 20, 3);
    let _put = line.put("/t/obj", &file, &[]);
    let out = line.scratch.path("got");
    let mut get = Proc::spawn(line.get_cmd("/t/obj", &out, &[]), "ndx get");
    // During the fetch: the counters move.
    let mut during = idle.clone();
    let moving = wait_for(30, || {
        during = scrape(&line);
        during.sum("ndx_data_out_total") > 0.0
    });
    assert!(moving, "no Data forwarded while fetching");
    let status = get
        .child
        .take()
        .expect("running")
        .wait_with_output()
        .unwrap();
    ok(&status, "ndx get");
    assert_eq!(std::fs::read(&out).unwrap(), want, "bytes fetched");

    // After: the status, then a scrape, both after the fetch.
    let s = router.status();
    let after = scrape(&line);
    check_ordered(&during, &s, &after);
    check_ordered(&idle, &s, &after);
    assert!(after.sum("ndx_data_out_total") >= during.sum("ndx_data_out_total"));
    assert!(after.sum("ndx_rx_frames_total") >= total(&s, "rx_frames") as f64);
    assert!(after.sum("ndx_rx_bytes_total") > 0.0);
    assert!(after.sum("ndx_interests_in_total") > 0.0);
    // The consumer's face counted its Interests, under its id and remote.
    let consumer = s["faces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["remote"]
                .as_str()
                .is_some_and(|r| r.starts_with(&format!("udp://{}:", line.ip(1, 1))))
        })
        .unwrap_or_else(|| panic!("no consumer face: {}", s["faces"]))
        .clone();
    let id = consumer["id"].to_string();
    let remote = consumer["remote"].as_str().unwrap();
    let interests = after
        .value(
            "ndx_face_interests_in_total",
            &[("face", &id), ("remote", remote)],
        )
        .expect("the consumer face's Interests");
    assert!(interests > 0.0, "{remote}");
    // The receive bursts were observed; the XDP program and the interfaces are there.
    let bursts = after.value("ndx_rx_burst_frames_count", &[]).unwrap();
    assert!(bursts > 0.0, "RX bursts observed");
    assert_eq!(
        after.value("ndx_rx_burst_frames_bucket", &[("le", "+Inf")]),
        Some(bursts)
    );
    assert!(
        after.value("ndx_rx_burst_frames_sum", &[]).unwrap() <= after.sum("ndx_rx_frames_total")
    );
    assert!(after.sum("ndx_xdp_frames_total") > 0.0);
    assert_eq!(
        after.value("ndx_interface_up", &[("interface", "c0")]),
        Some(1.0)
    );
    assert!(
        after.value("ndx_uptime_seconds", &[]).unwrap()
            > idle.value("ndx_uptime_seconds", &[]).unwrap()
    );

    // A second router asking for the same port is refused before it attaches anything.
    let cfg2 = line.scratch.path("second.toml");
    std::fs::write(
        &cfg2,
        config
            .replace("ndx.sock", "second.sock")
            .replace("nfd.sock", "second-nfd.sock"),
    )
    .unwrap();
    let second = line
        .r
        .cmd(NDX)
        .arg("run")
        .arg("-c")
        .arg(&cfg2)
        .output()
        .expect("ndx runs");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "cannot listen for metrics on {LISTEN} ([metrics] listen)"
        )),
        "{err}"
    );
    // The first router still answers.
    assert_eq!(curl(&line, "/metrics").0, 200);
}

/// The L2 read latency histogram follows real io_uring reads: an L1 of 64 Data evicts a
/// 512-segment object into the L2 in batches of 8; fetched again with the producer gone, it is
/// read back, and every read completion is in the histogram (its count is at least the reads
/// that succeeded, in the same scrape: both are published together).
#[test]
fn l2_reads_fill_the_latency_histogram() {
    if skip() || curl_missing() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, want) = line.content("obj", 512 * 1000, 21);
    let extra = format!(
        "[metrics]\nlisten = \"{LISTEN}\"\n\
         [cs]\ncapacity = 64\nslot_size = 2048\n\
         [cs.l2]\nenabled = true\ndirs = [\"{}\"]\nsize = \"16MiB\"\nbatch = 8\n",
        line.scratch.path("l2").display()
    );
    let router =
        line.start_router(&line.config(1, &format!("udp://{}", line.producer_endpoint()), &extra));
    let producer = line.put(
        "/t/l2",
        &file,
        &["-f", "600000", "--version", "3", "--segment-size", "1000"],
    );
    for (i, what) in ["from the producer", "from the L2"].iter().enumerate() {
        let out = line.scratch.path(&format!("got{i}"));
        let got = line.get("/t/l2/v=3", &out, &[]);
        ok(&got, &format!("ndx get {what}"));
        assert_eq!(std::fs::read(&out).unwrap(), want, "bytes fetched {what}");
        if i == 0 {
            router.settle(|s| total(s, "l2_writes_ok") >= (512 - 64) / 8);
        }
    }
    drop(producer);
    let s = router.settle(|s| total(s, "l2_reads_ok") > 0);
    assert!(total(&s, "l2_reads_ok") > 0, "{}", s["counters"]);
    let e = scrape(&line);
    let count = e
        .value("ndx_l2_read_latency_seconds_count", &[])
        .expect("the histogram");
    let reads = e.sum("ndx_l2_reads_ok_total");
    assert!(reads >= total(&s, "l2_reads_ok") as f64);
    assert!(
        count >= reads && count > 0.0,
        "{count} observed, {reads} reads"
    );
    assert_eq!(
        e.value("ndx_l2_read_latency_seconds_bucket", &[("le", "+Inf")]),
        Some(count)
    );
    assert!(e.value("ndx_l2_read_latency_seconds_sum", &[]).unwrap() >= 0.0);
    assert!(e.sum("ndx_l2_read_bytes_total") > 0.0);
}
