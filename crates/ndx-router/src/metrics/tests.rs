use super::*;
use crate::stats::{Counter, EXCHANGED_BURST, HOST_COUNTERS, L2_READ_LATENCY, RX_BURST};
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

fn sample() -> Sample {
    let mut a = Snapshot::default();
    a.add(Counter::RxFrames, 10);
    a.add(Counter::RxBytes, 1500);
    a.set(Counter::PitEntries, 3);
    let mut b = Snapshot::default();
    b.add(Counter::RxFrames, 5);
    b.set(Counter::L2Degraded, 1);
    let mut histograms = Histograms::default();
    for n in [1, 2, 3, 64, 64, 1000] {
        histograms.rx_burst.observe(RX_BURST.shift, n);
    }
    for n in [32, 12] {
        histograms.exchanged_burst.observe(EXCHANGED_BURST.shift, n);
    }
    histograms
        .l2_read_latency
        .observe(L2_READ_LATENCY.shift, 50_000);
    Sample {
        shards: vec![a, b],
        histograms,
        pit_share: vec![100, 200],
        faces: vec![FaceSample {
            id: 7,
            name: "up \"link\"".into(),
            remote: "udp://10.0.0.2:6363".into(),
            load: FaceLoad {
                interests: 4,
                pit_entries: 2,
                ..Default::default()
            },
        }],
        on_demand: (1, 2),
        host: HostCounters {
            app_rx: 9,
            app_faces: 2,
            ..Default::default()
        },
        xdp: vec![(
            "veth0".into(),
            XdpCounters {
                redirected: 12,
                ..Default::default()
            },
        )],
        interfaces: vec![InterfaceSample {
            name: "veth0".into(),
            up: true,
            link_down: 1,
            link_up: 1,
        }],
        uptime: 1.5,
    }
}

#[test]
fn every_counter_is_defined_once_with_a_valid_name_and_help() {
    let mut seen = HashSet::new();
    for d in COUNTERS
        .iter()
        .chain(HOST_COUNTERS)
        .chain(FACE_LOADS.iter().map(|f| &f.def))
    {
        assert!(parse::valid_name(d.name), "{}", d.name);
        assert!(!d.help().is_empty(), "{} has help", d.name);
        assert_eq!(
            d.unit == Unit::Bytes,
            d.name.ends_with("_bytes"),
            "{}: the bytes unit and the name agree",
            d.name
        );
        assert!(!d.name.ends_with("_total"), "{}", d.name);
        // Face loads are exposed under face_*: they may share a shard counter's name.
        if !FACE_LOADS.iter().any(|f| std::ptr::eq(&f.def, d)) {
            assert!(seen.insert(d.name), "{} defined twice", d.name);
        }
    }
    assert_eq!(COUNTERS.len(), Counter::TxErrors as usize + 1);
    assert_eq!(Counter::TxErrors.name(), "tx_errors");
    assert_eq!(Counter::RxFrames.def().kind, Kind::Counter);
    assert_eq!(Counter::PitEntries.def().kind, Kind::Gauge);
    assert_eq!(Counter::CsEntries.def().kind, Kind::Gauge);
}

#[test]
fn the_exposition_parses_and_has_every_counter_once() {
    let text = render(sample());
    let e = parse::parse(&text).unwrap_or_else(|err| panic!("{err}\n{text}"));
    let mut names = HashSet::new();
    for f in &e.families {
        assert!(names.insert(f.name.clone()), "{} twice", f.name);
        assert!(f.name.starts_with("ndx_"), "{}", f.name);
    }
    for d in COUNTERS.iter().chain(HOST_COUNTERS) {
        let fam = format!("ndx_{}", d.name);
        let f = e.family(&fam).unwrap_or_else(|| panic!("{fam} missing"));
        let want = match d.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        assert_eq!(f.kind, want, "{fam}");
        assert_eq!(f.help, d.help(), "{fam}");
    }
    for d in FACE_LOADS {
        assert!(e.family(&format!("ndx_face_{}", d.def.name)).is_some());
    }
    // Per shard, with the shard label; bytes in their unit.
    assert_eq!(
        e.value("ndx_rx_frames_total", &[("shard", "0")]),
        Some(10.0)
    );
    assert_eq!(e.value("ndx_rx_frames_total", &[("shard", "1")]), Some(5.0));
    assert_eq!(e.sum("ndx_rx_frames_total"), 15.0);
    assert_eq!(
        e.value("ndx_rx_bytes_total", &[("shard", "0")]),
        Some(1500.0)
    );
    assert!(text.contains("# UNIT ndx_rx_bytes bytes\n"), "{text}");
    assert_eq!(e.value("ndx_pit_entries", &[("shard", "0")]), Some(3.0));
    assert_eq!(e.value("ndx_l2_degraded", &[("shard", "1")]), Some(1.0));
    assert_eq!(e.value("ndx_pit_share", &[("shard", "1")]), Some(200.0));
    // Faces: labels escaped and read back.
    let face = [
        ("face", "7"),
        ("name", "up \"link\""),
        ("remote", "udp://10.0.0.2:6363"),
    ];
    assert_eq!(e.value("ndx_face_interests_in_total", &face), Some(4.0));
    assert_eq!(e.value("ndx_face_pit_entries", &face), Some(2.0));
    // Host, XDP, interfaces, on-demand, uptime, build.
    assert_eq!(e.value("ndx_app_rx_total", &[]), Some(9.0));
    assert_eq!(e.value("ndx_app_faces", &[]), Some(2.0));
    assert_eq!(
        e.value(
            "ndx_xdp_frames_total",
            &[("interface", "veth0"), ("counter", "redirected")]
        ),
        Some(12.0)
    );
    assert_eq!(
        e.value("ndx_interface_up", &[("interface", "veth0")]),
        Some(1.0)
    );
    assert_eq!(e.value("ndx_interface_link_down_total", &[]), Some(1.0));
    assert_eq!(e.value("ndx_on_demand_faces", &[]), Some(1.0));
    assert_eq!(e.value("ndx_on_demand_refused_total", &[]), Some(2.0));
    assert_eq!(e.value("ndx_uptime_seconds", &[]), Some(1.5));
    assert_eq!(
        e.value("ndx_build_info", &[("version", env!("CARGO_PKG_VERSION"))]),
        Some(1.0)
    );
    // Histograms: cumulative buckets ending in +Inf = count.
    assert_eq!(
        e.family("ndx_exchanged_burst_frames").unwrap().kind,
        "histogram"
    );
    assert_eq!(e.value("ndx_exchanged_burst_frames_count", &[]), Some(2.0));
    assert_eq!(e.value("ndx_exchanged_burst_frames_sum", &[]), Some(44.0));
    assert_eq!(
        e.value("ndx_exchanged_burst_frames_bucket", &[("le", "16.0")]),
        Some(1.0)
    );
    assert_eq!(e.family("ndx_rx_burst_frames").unwrap().kind, "histogram");
    assert_eq!(e.value("ndx_rx_burst_frames_count", &[]), Some(6.0));
    assert_eq!(e.value("ndx_rx_burst_frames_sum", &[]), Some(1134.0));
    assert_eq!(
        e.value("ndx_rx_burst_frames_bucket", &[("le", "1.0")]),
        Some(1.0)
    );
    assert_eq!(
        e.value("ndx_rx_burst_frames_bucket", &[("le", "4.0")]),
        Some(3.0)
    );
    assert_eq!(
        e.value("ndx_rx_burst_frames_bucket", &[("le", "64.0")]),
        Some(5.0)
    );
    assert_eq!(
        e.value("ndx_rx_burst_frames_bucket", &[("le", "+Inf")]),
        Some(6.0)
    );
    let mut last = 0.0;
    for p in e
        .points
        .iter()
        .filter(|p| p.name == "ndx_rx_burst_frames_bucket")
    {
        assert!(p.value >= last, "cumulative: {text}");
        last = p.value;
    }
    assert_eq!(e.value("ndx_l2_read_latency_seconds_count", &[]), Some(1.0));
    let sum = e.value("ndx_l2_read_latency_seconds_sum", &[]).unwrap();
    assert!((sum - 50e-6).abs() < 1e-12, "{sum}");
    // 50 µs lands in the 65.536 µs bucket, not the 32.768 µs one.
    assert_eq!(
        e.value(
            "ndx_l2_read_latency_seconds_bucket",
            &[("le", "0.000065536")]
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        e.value(
            "ndx_l2_read_latency_seconds_bucket",
            &[("le", "0.000032768")]
        ),
        Some(0.0),
        "{text}"
    );
}

#[test]
fn histogram_buckets_are_powers_of_two() {
    let mut h = crate::stats::Histogram::default();
    for v in [0, 1, 2, 3, 4, 5, 8, 9, u64::MAX] {
        h.observe(0, v);
    }
    // ≤1: 0, 1; ≤2: 2; ≤4: 3, 4; ≤8: 5, 8; ≤16: 9; +Inf: MAX.
    assert_eq!(&h.buckets[..5], &[2, 1, 2, 2, 1]);
    assert_eq!(h.buckets[BUCKETS_LAST], 1);
    assert_eq!(h.count(), 9);
    let mut l = crate::stats::Histogram::default();
    l.observe(12, 4096);
    l.observe(12, 4097);
    assert_eq!(&l.buckets[..2], &[1, 1]);
    let bounds: Vec<f64> = RX_BURST.bounds().collect();
    assert_eq!(bounds.len(), BUCKETS_LAST);
    assert_eq!(bounds[..4], [1.0, 2.0, 4.0, 8.0]);
}

const BUCKETS_LAST: usize = crate::stats::BUCKETS - 1;

#[test]
fn the_parser_refuses_what_is_not_openmetrics() {
    assert!(
        parse::parse("# HELP a x\n# TYPE a counter\na_total 1\n").is_err(),
        "no EOF"
    );
    assert!(
        parse::parse("# HELP a x\n# TYPE a counter\na 1\n# EOF\n").is_err(),
        "no _total"
    );
    assert!(parse::parse("a 1\n# EOF\n").is_err(), "no family");
    assert!(parse::parse("# HELP a x\n# TYPE a gauge\na{b=\"c} 1\n# EOF\n").is_err());
    assert!(parse::parse("# HELP 1a x\n# EOF\n").is_err());
    let e = parse::parse("# HELP a x\n# TYPE a gauge\na{b=\"c\\\"d\"} 2.5\n# EOF\n").unwrap();
    assert_eq!(e.value("a", &[("b", "c\"d")]), Some(2.5));
}

/// A stand-in for the control loop: answers sample requests until told to stop.
fn answering(server: Arc<MetricsServer>) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            server.answer(sample);
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    (stop, h)
}

fn http(addr: SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8(out).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let code = head[9..12].parse().unwrap();
    let ctype = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Type: "))
        .unwrap_or("")
        .to_string();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(len, body.len(), "Content-Length is the body's");
    (code, ctype, body.to_string())
}

#[test]
fn the_endpoint_serves_metrics_and_refuses_the_rest() {
    let server = Arc::new(MetricsServer::start("127.0.0.1:0".parse().unwrap()).unwrap());
    let addr = server.local_addr();
    let (stop, h) = answering(server.clone());
    let (code, ctype, body) = http(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(code, 200, "{body}");
    assert_eq!(ctype, CONTENT_TYPE);
    let e = parse::parse(&body).unwrap();
    assert_eq!(e.sum("ndx_rx_frames_total"), 15.0);
    let (code, _, _) = http(addr, b"GET /metrics?x=1 HTTP/1.0\n\n");
    assert_eq!(code, 200);
    assert_eq!(http(addr, b"GET / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, b"GET /metricsx HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, b"POST /metrics HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, b"hello\r\n\r\n").0, 400);
    let mut big = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    big.resize(MAX_REQUEST + 100, b'a');
    assert_eq!(http(addr, &big).0, 431);
    // Concurrent scrapes all get the whole exposition.
    let scrapers: Vec<_> = (0..MAX_SCRAPES)
        .map(|_| std::thread::spawn(move || http(addr, b"GET /metrics HTTP/1.1\r\n\r\n")))
        .collect();
    for s in scrapers {
        let (code, _, body) = s.join().unwrap();
        if code == 200 {
            assert!(parse::parse(&body).is_ok());
        } else {
            assert_eq!(code, 503, "only the cap may refuse: {body}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    // Nobody answers: 503 after SAMPLE_TIMEOUT, not a hang.
    assert_eq!(http(addr, b"GET /metrics HTTP/1.1\r\n\r\n").0, 503);
    drop(server);
    assert!(TcpStream::connect(addr).is_err(), "closed with the server");
}

#[test]
fn a_taken_port_is_an_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let e = MetricsServer::start(taken.local_addr().unwrap()).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
}
