//! The host thread's bounds, end to end as root (`crates/ndx-router/README.md`, "Bounds"): app connections
//! past `[app] max_connections` are refused, and an app that does not read loses its own
//! packets past `[app] queue_bytes` while the router keeps serving the others. Without root
//! (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1` (CI) they
//! fail instead.

mod support;
mod topo;

use support::{Proc, skip, wait_for};
use topo::{Family, Line, ok};

fn host(router: &topo::Router, k: &str) -> u64 {
    let s = router.status();
    s["host"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("no host counter {k} in {}", s["host"]))
}

#[test]
fn app_connections_past_max_connections_are_refused() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let sock = line.app_socket();
    let router = line.start_udp_router(&format!(
        "[app]\nsocket = \"{}\"\nmax_connections = 3\n",
        sock.display()
    ));
    // Six connections held open for 30 s (killed on drop).
    let script = format!(
        "import socket, time\nh = []\nfor _ in range(6):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('{}')\n    h.append(s)\nprint('connected', flush=True)\ntime.sleep(30)\n",
        sock.display()
    );
    let mut cmd = line.r.cmd("python3");
    cmd.args(["-c", &script]);
    let holder = Proc::spawn(cmd, "python3 holder");
    assert!(
        wait_for(10, || host(&router, "app_refused") >= 3),
        "{}",
        router.status()["host"]
    );
    let s = router.status();
    assert_eq!(s["host"]["app_faces"], 3, "{}", s["host"]);
    drop(holder);
    // Their places come back: the connections closed, a new one is accepted.
    assert!(wait_for(10, || router.status()["host"]["app_faces"] == 0));
    let out = line.r.run(&[
        "python3",
        "-c",
        &format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{}')\nprint('ok')",
            sock.display()
        ),
    ]);
    ok(&out, "a connection after the others closed");
    assert!(wait_for(10, || host(&router, "app_accepted") >= 4));
}

#[test]
fn an_app_that_does_not_read_loses_only_its_own_packets() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let sock = line.app_socket();
    let router = line.start_udp_router(&format!(
        "[app]\nsocket = \"{}\"\nqueue_bytes = 65536\n",
        sock.display()
    ));
    let (file, want) = line.content("obj", 300_000, 11);
    let _put = line.put("/t/obj", &file, &[]);
    // An app asks 4000 times for /t/obj (CanBePrefix, each with its own Nonce: CS hits after
    // the first) and never reads its socket.
    let script = format!(
        r#"
import socket, struct, time
def tlv(t, v): return bytes([t, len(v)]) + v if len(v) < 253 else bytes([t, 253]) + struct.pack(">H", len(v)) + v
s = socket.socket(socket.AF_UNIX)
s.connect('{}')
name = tlv(7, tlv(8, b"t") + tlv(8, b"obj"))
for i in range(4000):
    s.sendall(tlv(5, name + tlv(0x21, b"") + tlv(10, struct.pack(">I", i + 1)) + tlv(12, struct.pack(">H", 4000))))
print("sent", flush=True)
time.sleep(30)
"#,
        sock.display()
    );
    let mut cmd = line.r.cmd("python3");
    cmd.args(["-c", &script]);
    let app = Proc::spawn(cmd, "python3 slow app");
    assert!(
        wait_for(20, || host(&router, "app_queue_dropped") > 0),
        "{}",
        router.status()["host"]
    );
    // The router serves the network consumer meanwhile.
    let out = line.scratch.path("got");
    let got = line.get("/t/obj", &out, &[]);
    ok(&got, "ndx get while an app does not read");
    assert_eq!(std::fs::read(&out).unwrap(), want);
    drop(app);
}
