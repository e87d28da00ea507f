//! Fairness under Interest flooding, end to end as root: a host floods the router with
//! unique-name Interests (plain UDP from python3) while a consumer fetches through it; the
//! consumer's fetch completes, and `ndx status` counts the flooder's refusals on its own face.
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) they fail instead.

mod support;
mod topo;

use std::process::Command;

use serde_json::Value;
use support::{Proc, skip, wait_for};
use topo::{Family, Line, ok, total};

/// A python3 program sending `count` unique-name Interests `/PREFIX/<i>` (InterestLifetime
/// 4 s; 0: until killed, at most 60 s) to `dst`:6363 from `src` as fast as it can, cycling its
/// source port over `ports` consecutive ports from 40000.
fn flooder(src: &str, dst: &str, prefix: &str, count: u32, ports: u32) -> String {
    format!(
        r#"
import socket, struct, time
def tlv(t, v): return bytes([t, len(v)]) + v
socks = []
for p in range({ports}):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("{src}", 40000 + p))
    s.setblocking(False)
    socks.append(s)
sent = 0
i = 0
end = time.time() + 60
while ({count} == 0 or i < {count}) and time.time() < end:
    i += 1
    name = tlv(7, tlv(8, b"{prefix}") + tlv(8, struct.pack(">I", i)))
    pkt = tlv(5, name + tlv(10, struct.pack(">I", i * 2654435761 % 2**32)) + tlv(12, struct.pack(">H", 4000)))
    try:
        socks[i % {ports}].sendto(pkt, ("{dst}", 6363))
        sent += 1
    except BlockingIOError:
        pass
print(sent)
"#
    )
}

fn faces_from(status: &Value, ip: &str) -> Vec<Value> {
    status["faces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| {
            f["remote"]
                .as_str()
                .is_some_and(|r| r.starts_with(&format!("udp://{ip}:")))
        })
        .cloned()
        .collect()
}

fn n(f: &Value, k: &str) -> u64 {
    f[k].as_u64().unwrap_or_else(|| panic!("no {k} in {f}"))
}

/// A second address on the consumer host, for the flooder: its faces are told apart from the
/// consumer's by address.
const FLOODER_IP: &str = "10.0.1.3";

fn line_with_flooder() -> Line {
    let line = Line::new(Family::V4, 1, 1500);
    line.c.run(&[
        "ip",
        "addr",
        "add",
        &format!("{FLOODER_IP}/24"),
        "dev",
        "eth0",
    ]);
    line
}

#[test]
fn a_flooding_face_gets_its_pit_share_and_the_consumer_still_fetches() {
    if skip() {
        return;
    }
    let line = line_with_flooder();
    // A dark upstream: routable, nobody answers (no listener on the producer's port 7777).
    let router = line.start_router(&line.config(
        1,
        &format!("udp://{}", line.producer_endpoint()),
        &format!(
            "[tables]\npit_capacity = 1024\n[fairness]\nnack_rate = 200\nnack_burst = 20\n\
             [[face]]\nname = \"dark\"\nremote = \"udp://{}:7777\"\n\
             [[route]]\nprefix = \"/dark\"\nface = \"dark\"\n",
            line.ip(2, 1)
        ),
    ));
    let (file, want) = line.content("obj", 1 << 20, 7);
    let _put = line.put("/t/obj", &file, &[]);

    // The flood first: it holds its whole share before the consumer starts.
    let script = flooder(FLOODER_IP, &line.ip(1, 2), "dark", 0, 1);
    let mut cmd = line.c.cmd("python3");
    cmd.args(["-c", &script]);
    let flood = Proc::spawn(cmd, "python3 flooder");
    assert!(
        wait_for(20, || {
            faces_from(&router.status(), FLOODER_IP)
                .first()
                .is_some_and(|f| n(f, "drop_pit_quota") > 0)
        }),
        "the flooder never reached its PIT share: {}",
        router.status()["faces"]
    );
    // The consumer fetches 1 MiB while the flood goes on (or its entries are still pending).
    let out = line.scratch.path("got");
    let got = line.get("/t/obj", &out, &[]);
    ok(&got, "ndx get during the flood");
    assert_eq!(std::fs::read(&out).unwrap(), want, "bytes fetched");
    drop(flood);

    // Per-face loads are published every 100 ms, the totals every 10 ms: once the flood has
    // stopped they agree.
    let s = router.settle(|s| {
        faces_from(s, FLOODER_IP).first().is_some_and(|f| {
            n(f, "drop_pit_quota") == total(s, "drop_pit_quota")
                && n(f, "nacks_limited") == total(s, "nacks_limited")
        })
    });
    let fl = faces_from(&s, FLOODER_IP);
    assert_eq!(fl.len(), 1, "one face for the flooder: {fl:?}");
    let f = &fl[0];
    let share = s["pit_share"][0].as_u64().unwrap();
    assert!(n(f, "pit_entries") <= 1024 / 2, "{f}");
    assert!(share < 1024, "{s}");
    assert!(
        n(f, "drop_pit_quota") > 0 && n(f, "nacks_limited") > 0,
        "{f}"
    );
    assert_eq!(n(f, "drops"), n(f, "drop_pit_quota"), "{f}");
    assert_eq!(total(&s, "drop_pit_quota"), n(f, "drop_pit_quota"));
    assert_eq!(total(&s, "nacks_limited"), n(f, "nacks_limited"));
    // The consumer's face lost nothing to the flood.
    for c in faces_from(&s, &line.ip(1, 1)) {
        assert_eq!(n(&c, "drop_pit_quota"), 0, "{c}");
    }
    // The human view shows the same per-face numbers.
    let text = Command::new(topo::NDX)
        .args(["status", "-s"])
        .arg(&router.sock)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("pit quota") && text.contains(FLOODER_IP),
        "{text}"
    );
    // The flood's entries expire (4 s lifetimes): the PIT drains.
    assert!(
        wait_for(10, || total(&router.status(), "pit_entries") == 0),
        "PIT did not drain"
    );
}

#[test]
fn on_demand_faces_are_bounded_per_address_and_expire_when_idle() {
    if skip() {
        return;
    }
    let line = line_with_flooder();
    let router = line.start_udp_router(
        "[udp]\non_demand_per_address = 4\non_demand_max = 64\non_demand_idle_ms = 2000\n",
    );
    let (file, want) = line.content("obj", 200_000, 3);
    let _put = line.put("/t/obj", &file, &[]);
    // One Interest from each of 40 source ports of one address.
    let script = flooder(FLOODER_IP, &line.ip(1, 2), "x", 40, 40);
    let out = line.c.run(&["python3", "-c", &script]);
    ok(&out, "python3 sender");
    let s = router.settle(|s| s["on_demand"]["refused"].as_u64() >= Some(36));
    assert_eq!(faces_from(&s, FLOODER_IP).len(), 4, "{}", s["faces"]);
    assert!(
        s["on_demand"]["refused"].as_u64() >= Some(36),
        "{}",
        s["on_demand"]
    );
    assert!(total(&s, "faces_refused") >= 36, "{}", s["counters"]);
    // Another address still gets its face and fetches.
    let got_path = line.scratch.path("got");
    let got = line.get("/t/obj", &got_path, &[]);
    ok(&got, "ndx get from another address");
    assert_eq!(std::fs::read(&got_path).unwrap(), want);
    // Idle for 2 s: the flooder's faces go, and their places come back.
    assert!(
        wait_for(15, || faces_from(&router.status(), FLOODER_IP).is_empty()),
        "idle on-demand faces were not removed: {}",
        router.status()["faces"]
    );
    let out = line.c.run(&["python3", "-c", &script]);
    ok(&out, "python3 sender, again");
    let s = router.settle(|s| faces_from(s, FLOODER_IP).len() == 4);
    assert_eq!(faces_from(&s, FLOODER_IP).len(), 4, "{}", s["faces"]);
    assert!(
        router.log().contains("no on-demand face for"),
        "the refusal is logged: {}",
        router.log()
    );
}
