//! The control protocol: newline-delimited JSON over a Unix stream socket, one request per
//! line, one answer per line, as many as the client likes on one connection.
//!
//! | request | answer |
//! |---|---|
//! | `{"op":"status"}` | `{"ok":true,"status":{...}}` ([`Status`]) |
//! | `{"op":"add","router":{"name":"ir4","address":"10.3.4.2","port":6374,"weight":1}}` | `{"ok":true}` |
//! | `{"op":"remove","name":"ir2"}` | `{"ok":true}` |
//! | `{"op":"weight","name":"ir1","weight":2}` | `{"ok":true}` |
//!
//! Any refusal is `{"ok":false,"error":"..."}`; a line that is not a request is answered
//! `{"ok":false,"error":"bad request: ..."}` and the connection stays usable. A server may
//! answer a change with its new status too (`{"ok":true,"status":{...}}`).

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::cluster::{Cluster, RouterSpec, RouterView};
use crate::config::{HashMode, LbConfig, XdpMode};

/// A request to the front end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The configuration summary, the routers and the counters.
    Status,
    /// Add a router (scale-out).
    Add {
        /// The router.
        router: RouterSpec,
    },
    /// Remove a router (scale-in: it drains, then is freed).
    Remove {
        /// Its name.
        name: String,
    },
    /// Change a router's weight.
    Weight {
        /// Its name.
        name: String,
        /// The new weight, 0..=1000.
        weight: u32,
    },
}

/// An answer: success (with the status, for `status`) or a refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "RawResponse", try_from = "RawResponse")]
pub enum Response {
    /// Done; `status` is set for a `status` request (and may be for others).
    Ok {
        /// The front end's status.
        status: Option<Box<Status>>,
    },
    /// Refused, and why.
    Error(String),
}

impl Response {
    /// Success without a status.
    pub fn ok() -> Self {
        Response::Ok { status: None }
    }

    /// Success with a status.
    pub fn status(status: Status) -> Self {
        Response::Ok {
            status: Some(Box::new(status)),
        }
    }

    /// A refusal.
    pub fn error(why: impl std::fmt::Display) -> Self {
        Response::Error(why.to_string())
    }

    /// The line sent for this answer (JSON, without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"ok":false,"error":"cannot encode the answer: {e}"}}"#)
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct RawResponse {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<Box<Status>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl From<Response> for RawResponse {
    fn from(r: Response) -> Self {
        match r {
            Response::Ok { status } => RawResponse {
                ok: true,
                status,
                error: None,
            },
            Response::Error(e) => RawResponse {
                ok: false,
                status: None,
                error: Some(e),
            },
        }
    }
}

impl TryFrom<RawResponse> for Response {
    type Error = String;

    fn try_from(r: RawResponse) -> Result<Self, String> {
        if r.ok {
            Ok(Response::Ok { status: r.status })
        } else {
            Ok(Response::Error(
                r.error.unwrap_or_else(|| "refused without a reason".into()),
            ))
        }
    }
}

/// What `status` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The configuration in effect.
    pub config: ConfigSummary,
    /// Every router (active and draining), by slot, with its counters when known.
    pub routers: Vec<RouterStatus>,
    /// The XDP program's global counters, in the order it gives them.
    pub counters: Vec<(String, u64)>,
}

impl Status {
    /// The status of `cluster` under `config` as of `now`, without counters (the runner
    /// fills [`RouterStatus::counters`] and [`Status::counters`] from the XDP program, and
    /// the resolved addresses and attach modes into [`Status::config`]).
    pub fn new(config: &LbConfig, cluster: &Cluster, now: std::time::Instant) -> Self {
        Status {
            config: ConfigSummary::from(config),
            routers: cluster
                .routers(now)
                .map(|router| RouterStatus {
                    router,
                    counters: None,
                })
                .collect(),
            counters: Vec::new(),
        }
    }
}

/// The configuration as `status` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigSummary {
    /// What is hashed (`name`, `prefix:K`, `batch:B`).
    pub hash: HashMode,
    /// Hash-space cells.
    pub table: u32,
    /// The well-known port.
    pub port: u16,
    /// The well-known addresses (as resolved when the configuration leaves them empty).
    pub addresses: Vec<Ipv4Addr>,
    /// The scale-in drain time, in ms.
    pub drain_ms: u64,
    /// The interfaces and how the program is attached to each.
    pub interfaces: Vec<InterfaceStatus>,
}

impl From<&LbConfig> for ConfigSummary {
    fn from(c: &LbConfig) -> Self {
        ConfigSummary {
            hash: c.hash,
            table: c.table,
            port: c.port,
            addresses: c.addresses.clone(),
            drain_ms: u64::try_from(c.drain.as_millis()).unwrap_or(u64::MAX),
            interfaces: c
                .interfaces
                .iter()
                .map(|name| InterfaceStatus {
                    name: name.clone(),
                    mode: c.xdp_mode,
                })
                .collect(),
        }
    }
}

/// An interface the program is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceStatus {
    /// The interface's name.
    pub name: String,
    /// How the program is attached (`driver` or `skb` once attached; the configured mode
    /// before).
    pub mode: XdpMode,
}

/// A router and its counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterStatus {
    /// The router (its fields appear at the top level of the JSON object).
    #[serde(flatten)]
    pub router: RouterView,
    /// Its counters in the XDP program (`null` when not known).
    pub counters: Option<RouterCounters>,
}

/// What the XDP program counted for one router slot (since the slot was last set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterCounters {
    /// Interests from outside hashed (DNATed) to the router.
    pub interests_dispatched: u64,
    /// Data from outside PORT-MAPPED back to the router.
    pub data_returned: u64,
    /// Nacks from outside PORT-MAPPED back to the router.
    pub nacks_returned: u64,
    /// Interests the router sent out (SNATed).
    pub interests_out: u64,
    /// Data the router sent out (SNATed).
    pub data_out: u64,
    /// Nacks the router sent out (SNATed).
    pub nacks_out: u64,
    /// Bytes sent to the router.
    pub bytes_to_router: u64,
    /// Bytes received from the router.
    pub bytes_from_router: u64,
}

impl RouterCounters {
    /// The counters with their names, in field order.
    pub fn named(&self) -> [(&'static str, u64); 8] {
        [
            ("interests_dispatched", self.interests_dispatched),
            ("data_returned", self.data_returned),
            ("nacks_returned", self.nacks_returned),
            ("interests_out", self.interests_out),
            ("data_out", self.data_out),
            ("nacks_out", self.nacks_out),
            ("bytes_to_router", self.bytes_to_router),
            ("bytes_from_router", self.bytes_from_router),
        ]
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cluster::RouterState;
    use std::time::Duration;

    pub(crate) fn sample_status() -> Status {
        let cfg = LbConfig::from_toml(
            "[lb]\ninterfaces = [\"eth0\"]\naddresses = [\"192.0.2.1\"]\ndrain_ms = 5000\n\
             [[router]]\nname = \"ir1\"\naddress = \"10.3.1.2\"\nport = 6371\n\
             [[router]]\nname = \"ir2\"\naddress = \"10.3.2.2\"\nport = 6372\nweight = 3\n",
        )
        .unwrap();
        let now = std::time::Instant::now();
        let mut cluster = Cluster::from_config(&cfg, now).unwrap();
        cluster.remove("ir1", now).unwrap();
        let mut s = Status::new(&cfg, &cluster, now + Duration::from_millis(1500));
        s.routers[1].counters = Some(RouterCounters {
            interests_dispatched: 7,
            bytes_to_router: 700,
            ..RouterCounters::default()
        });
        s.counters = vec![("rx".into(), 10), ("drop_no_router".into(), 2)];
        s
    }

    #[test]
    fn requests_have_the_documented_shape() {
        let cases = [
            (r#"{"op":"status"}"#, Request::Status),
            (
                r#"{"op":"remove","name":"ir2"}"#,
                Request::Remove { name: "ir2".into() },
            ),
            (
                r#"{"op":"weight","name":"ir1","weight":2}"#,
                Request::Weight {
                    name: "ir1".into(),
                    weight: 2,
                },
            ),
            (
                r#"{"op":"add","router":{"name":"ir4","address":"10.3.4.2","port":6374,"weight":1}}"#,
                Request::Add {
                    router: RouterSpec {
                        name: "ir4".into(),
                        address: Ipv4Addr::new(10, 3, 4, 2),
                        port: 6374,
                        weight: 1,
                    },
                },
            ),
        ];
        for (text, req) in cases {
            assert_eq!(
                serde_json::from_str::<Request>(text).unwrap(),
                req,
                "{text}"
            );
            assert_eq!(serde_json::to_string(&req).unwrap(), text);
        }
        let r: Request = serde_json::from_str(
            r#"{"op":"add","router":{"name":"a","address":"10.0.0.1","port":1}}"#,
        )
        .unwrap();
        assert!(
            matches!(r, Request::Add { router } if router.weight == 1),
            "weight defaults to 1"
        );
    }

    #[test]
    fn bad_requests_are_refused_with_a_reason() {
        let e = |t: &str| serde_json::from_str::<Request>(t).unwrap_err().to_string();
        assert!(e(r#"{"op":"fly"}"#).contains("unknown variant `fly`"));
        assert!(e(r#"{"op":"remove"}"#).contains("missing field `name`"));
        assert!(e(r#"{"op":"remove","name":"a","x":1}"#).contains("unknown field `x`"));
        assert!(
            e(r#"{"op":"add","router":{"name":"a","address":"fe80::1","port":1}}"#)
                .contains("IPv6 is not supported yet")
        );
    }

    #[test]
    fn responses_have_the_documented_shape() {
        assert_eq!(Response::ok().to_line(), r#"{"ok":true}"#);
        assert_eq!(
            Response::error("no router named \"x\"").to_line(),
            r#"{"ok":false,"error":"no router named \"x\""}"#
        );
        let back: Response = serde_json::from_str(r#"{"ok":false,"error":"nope"}"#).unwrap();
        assert_eq!(back, Response::error("nope"));
        let back: Response = serde_json::from_str(r#"{"ok":true}"#).unwrap();
        assert_eq!(back, Response::ok());
    }

    #[test]
    fn status_round_trips_and_reads_well_in_json() {
        let s = sample_status();
        assert_eq!(s.routers.len(), 2);
        assert_eq!(
            s.routers[0].router.state,
            RouterState::Draining {
                remaining: Duration::from_millis(3500)
            }
        );
        let line = Response::status(s.clone()).to_line();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["ok"], true);
        assert_eq!(v["status"]["config"]["hash"], "name");
        assert_eq!(v["status"]["config"]["addresses"][0], "192.0.2.1");
        assert_eq!(v["status"]["config"]["interfaces"][0]["mode"], "auto");
        let ir1 = &v["status"]["routers"][0];
        assert_eq!(ir1["name"], "ir1");
        assert_eq!(ir1["address"], "10.3.1.2");
        assert_eq!(ir1["state"]["draining"]["remaining_ms"], 3500);
        assert_eq!(ir1["cells"], 0);
        assert_eq!(ir1["counters"], serde_json::Value::Null);
        let ir2 = &v["status"]["routers"][1];
        assert_eq!(ir2["state"], "active");
        assert_eq!(ir2["cells"], 4096);
        assert_eq!(ir2["share"], 1.0);
        assert_eq!(ir2["counters"]["interests_dispatched"], 7);
        assert_eq!(v["status"]["counters"][1][0], "drop_no_router");
        let back: Response = serde_json::from_str(&line).unwrap();
        assert_eq!(back, Response::status(s));
    }
}
