//! Interoperability with python-ndn 0.5.2 over UDP, without a forwarder: `ndx get` fetches
//! from a python-ndn producer, and a python-ndn consumer fetches from `ndx put`.
//!
//! python-ndn neither fragments nor reassembles, so segments stay under the MTU here.
//! The interpreter is `$NDX_PYTHON`, else `/opt/ndx-interop/venv/bin/python`; when it (or
//! its `ndn` package) is missing the tests print `skipping: <reason>`, and fail instead when
//! `NDX_REQUIRE_ROOT_TESTS=1`.

mod common;

use std::ffi::OsStr;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;

use common::ndnd_fw::Kill;
use common::{Running, consumer_ok_line, content, first_line, pyndn, python_or_skip};
use ndx_app::{Consumer, GetOptions, Producer, PutOptions};

fn temp_file(tag: &str, data: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("ndx-app-{tag}-{}", std::process::id()));
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn ndx_get_fetches_from_python_ndn_producer() {
    let Some(py) = python_or_skip() else { return };
    let data = content(300_000, 11);
    let file = temp_file("pyprod", &data);
    // python-ndn's UDP face is a connected socket to its "forwarder" address, and an ICMP
    // port-unreachable closes it: the consumer's socket must exist before python starts.
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("udp://{}", sock.local_addr().unwrap());
    let args = [
        OsStr::new("/ndx/interop/pyprod"),
        file.as_os_str(),
        OsStr::new("1000"),
    ];
    let mut child = Kill(
        pyndn(&py, "pyndn_producer.py", &url, &args)
            .spawn()
            .unwrap(),
    );
    let ready = first_line(&mut child.0, 30, "python-ndn producer did not start");
    let mut words = ready.split_whitespace();
    assert_eq!(words.next(), Some("ready"), "{ready}");
    let peer: SocketAddr = words.next().unwrap().parse().unwrap();
    let versioned = words.next().unwrap().to_owned();
    let mut g = GetOptions::new("/ndx/interop/pyprod".parse().unwrap(), peer);
    g.no_progress = true;
    let mut out = Vec::new();
    let report = Consumer::with_socket(sock, &g)
        .unwrap()
        .fetch(&mut out)
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(out == data, "object fetched from python-ndn differs");
    assert_eq!(report.name, versioned);
    assert_eq!(report.segments, 300);
    eprintln!("{report}");
}

fn python_consumer_fetches_from_ndx_put(bind: &str) {
    let Some(py) = python_or_skip() else { return };
    let data = content(200_000, 12);
    let mut opts = PutOptions::new(
        "/ndx/interop/ndxprod".parse().unwrap(),
        bind.parse().unwrap(),
    );
    opts.segment_size = 1000;
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    let url = format!("udp://{}", producer.addr);
    let out = std::env::temp_dir().join(format!(
        "ndx-app-pycons-{}-{}",
        std::process::id(),
        producer.addr.port()
    ));
    let args = [OsStr::new("/ndx/interop/ndxprod"), out.as_os_str()];
    let mut child = Kill(
        pyndn(&py, "pyndn_consumer.py", &url, &args)
            .spawn()
            .unwrap(),
    );
    let result = first_line(&mut child.0, 120, "python-ndn consumer printed nothing");
    let fetched = std::fs::read(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert_eq!(result, consumer_ok_line(&data));
    assert!(fetched == data);
    let p = producer.finish();
    assert!(p.data_sent >= 200, "{p:?}");
}

#[test]
fn python_ndn_consumer_fetches_from_ndx_put_v4() {
    python_consumer_fetches_from_ndx_put("127.0.0.1:0");
}

#[test]
fn python_ndn_consumer_fetches_from_ndx_put_v6() {
    python_consumer_fetches_from_ndx_put("[::1]:0");
}
