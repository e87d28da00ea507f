//! The Unix-socket face against a fake forwarder (no external tools): registration answered
//! with a refusal, a malformed response, a Nack, and a broken byte stream. The real forwarder
//! (ndnd) is exercised by `interop_ndnd.rs`.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::thread::JoinHandle;

use ndx_app::{AppError, Consumer, Endpoint, GetOptions, Producer, PutOptions};
use ndx_codec::{Interest, LpHeaders, NackReason};
use ndx_nfd::{ControlResponse, command_response_data, parse_request};

/// A socket in a private directory, and a thread that accepts one connection and runs `f`.
struct Fake {
    dir: PathBuf,
    sock: PathBuf,
    handle: Option<JoinHandle<()>>,
}

impl Fake {
    fn start(tag: &str, f: impl FnOnce(UnixStream) + Send + 'static) -> Self {
        let dir = std::env::temp_dir().join(format!("ndx-app-fake-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("fw.sock");
        let l = UnixListener::bind(&sock).unwrap();
        let handle = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            f(s);
        });
        Self {
            dir,
            sock,
            handle: Some(handle),
        }
    }

    fn put_opts(&self, prefix: &str) -> PutOptions {
        let mut o = PutOptions::new(prefix.parse().unwrap(), "127.0.0.1:0".parse().unwrap());
        o.forwarder = Some(self.sock.clone());
        o
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads one TLV packet (one-byte type; one- or three-byte length: enough for commands).
fn read_packet(s: &mut UnixStream) -> Vec<u8> {
    let mut head = vec![0u8; 2];
    s.read_exact(&mut head).unwrap();
    let len = if head[1] == 253 {
        let mut l = [0u8; 2];
        s.read_exact(&mut l).unwrap();
        head.extend_from_slice(&l);
        usize::from(u16::from_be_bytes(l))
    } else {
        usize::from(head[1])
    };
    let mut body = vec![0; len];
    s.read_exact(&mut body).unwrap();
    head.extend_from_slice(&body);
    head
}

/// Answers the first command with `resp`, after checking it is a signed rib/register.
fn answer(resp: ControlResponse) -> impl FnOnce(UnixStream) + Send + 'static {
    move |mut s| {
        let wire = read_packet(&mut s);
        let i = Interest::decode(&wire).unwrap();
        assert!(ndx_nfd::command_signature_ok(&i));
        let r = parse_request(&i.name()).unwrap();
        assert_eq!((r.module.as_str(), r.verb.as_str()), ("rib", "register"));
        let p = r.params.unwrap();
        assert_eq!((p.origin, p.cost), (Some(0), Some(0)));
        s.write_all(&command_response_data(&i.name(), &resp))
            .unwrap();
        // Wait for the client to hang up.
        let _ = s.read(&mut [0; 1]);
    }
}

#[test]
fn refused_registration_is_an_error_naming_the_status() {
    let fake = Fake::start(
        "refused",
        answer(ControlResponse::new(403, "authorization rejected")),
    );
    let err = Producer::put(&fake.put_opts("/ndx/refused"), b"x").unwrap_err();
    match &err {
        AppError::Registration { prefix, code, text } => {
            assert_eq!((prefix.as_str(), *code), ("/ndx/refused", 403));
            assert_eq!(text, "authorization rejected");
        }
        e => panic!("unexpected {e}"),
    }
    assert!(err.to_string().contains("403"), "{err}");
}

#[test]
fn accepted_registration_reports_ready() {
    let fake = Fake::start(
        "accepted",
        answer(ControlResponse::ok(ndx_nfd::ControlParameters::default())),
    );
    let p = Producer::put(&fake.put_opts("/ndx/ok"), b"x").unwrap();
    assert_eq!(p.endpoint(), &Endpoint::Unix(fake.sock.clone()));
    assert!(p.local_addr().is_err());
    drop(p);
}

#[test]
fn malformed_response_is_an_error() {
    let fake = Fake::start("malformed", |mut s| {
        let wire = read_packet(&mut s);
        let i = Interest::decode(&wire).unwrap();
        let mut d = ndx_codec::DataRepr::new(i.name().to_buf(), b"not a response".to_vec());
        d.freshness_ms = Some(1000);
        s.write_all(&d.to_vec().unwrap()).unwrap();
        let _ = s.read(&mut [0; 1]);
    });
    let err = Producer::put(&fake.put_opts("/ndx/malformed"), b"x").unwrap_err();
    assert!(matches!(err, AppError::BadResponse { .. }), "{err}");
}

#[test]
fn nacked_command_is_an_error() {
    let fake = Fake::start("nack", |mut s| {
        let wire = read_packet(&mut s);
        let h = LpHeaders {
            nack: Some(NackReason::NoRoute),
            ..LpHeaders::default()
        };
        let mut out = vec![0; h.encoded_len(Some(wire.len()))];
        let n = h.encode(Some(&wire), &mut out).unwrap();
        s.write_all(&out[..n]).unwrap();
        let _ = s.read(&mut [0; 1]);
    });
    let err = Producer::put(&fake.put_opts("/ndx/nack"), b"x").unwrap_err();
    assert!(
        matches!(
            err,
            AppError::Nack {
                reason: NackReason::NoRoute,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn broken_stream_ends_a_fetch() {
    let fake = Fake::start("broken", |mut s| {
        let _ = read_packet(&mut s);
        // A Name TLV where a packet should start.
        s.write_all(&[7, 3, 8, 1, b'a']).unwrap();
        let _ = s.read(&mut [0; 1]);
    });
    let mut g = GetOptions::new(
        "/ndx/broken".parse().unwrap(),
        Endpoint::Unix(fake.sock.clone()),
    );
    g.no_progress = true;
    let err = Consumer::new(&g)
        .unwrap()
        .fetch(&mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, AppError::Framing(_)), "{err}");
}

#[test]
fn forwarder_hanging_up_ends_a_fetch() {
    let fake = Fake::start("hangup", |mut s| {
        let _ = read_packet(&mut s);
    });
    let mut g = GetOptions::new(
        "/ndx/hangup".parse().unwrap(),
        Endpoint::Unix(fake.sock.clone()),
    );
    g.no_progress = true;
    let err = Consumer::new(&g)
        .unwrap()
        .fetch(&mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, AppError::Closed { .. }), "{err}");
}

#[test]
fn no_forwarder_is_a_clear_error() {
    let opts = {
        let mut o = PutOptions::new("/ndx/none".parse().unwrap(), "127.0.0.1:0".parse().unwrap());
        o.forwarder = Some("/nonexistent/ndx-test.sock".into());
        o
    };
    let err = Producer::put(&opts, b"x").unwrap_err();
    assert!(matches!(err, AppError::Connect { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("unix:///nonexistent/ndx-test.sock"),
        "{err}"
    );
}
