//! What `--proxy --store` sends: Responses requests from a one-line
//! question to 500 KB, kept and not kept, and kept with the store turned
//! off.

use std::path::Path;

use bytes::Bytes;
use serde_json::json;
use wirebridge_bench::cases;

use super::requests::{responses_to_chat, responses_with, to_bytes, Case, Direction, Route, Via};

/// The concurrencies of the store cases.
pub(super) const STORE_CONCURRENCIES: [usize; 2] = [1, 8];

/// The one-line question of the `small` case (as
/// `scripts/store_instructions.py` sends it): a request whose cost is the
/// exchange's and the store's, not the translation's.
pub(super) fn small_request() -> Bytes {
    to_bytes(&json!({"model": "wirebridge-demo", "input": "Say hello in one short sentence."}))
}

/// The routes of `--store`: Responses requests (`small`, a one-line
/// question; `request_3k`, the Codex turn; `request_50k` and
/// `request_500k`, the Codex conversation grown to those sizes), at the
/// [`STORE_CONCURRENCIES`], sent with a credential: the upstream request
/// through the minimal hyper proxy (`minimal`) and through the proxy
/// (`passthrough`); the client's request through the proxy as `store:
/// false` (`translated`); as `store: true` through a second proxy started
/// with `--store none`, which keeps nothing (`store_none`); and as `store:
/// true` through the proxy with its default memory store (`stored`: the
/// turn and the response are kept), so that `stored / store_none` is what
/// the default store costs, within a round.
pub(super) fn store_cases(shared: &Path) -> Result<Vec<Case>, String> {
    let direction = Direction::ResponsesToChat;
    let sizes = [
        ("small", small_request().to_vec()),
        ("request_3k", cases::codex_turn(shared)?),
        ("request_50k", cases::codex_conversation(shared, 49_000)?),
        ("request_500k", cases::codex_conversation(shared, 500_000)?),
    ];
    let mut out = Vec::new();
    for (kind, body) in sizes {
        let unstored = responses_with(&body, &[("stream", false.into()), ("store", false.into())])?;
        let stored = responses_with(&body, &[("stream", false.into()), ("store", true.into())])?;
        let upstream = responses_to_chat(&unstored)?;
        let route = |name, via, path, body: &Bytes| Route {
            name,
            via,
            path,
            body: body.clone(),
            credential: true,
            headers: &[],
        };
        let (client_path, upstream_path) = (direction.client_path(), direction.upstream_path());
        for concurrency in STORE_CONCURRENCIES {
            out.push(Case {
                name: format!("{}/{kind}/c{concurrency}", direction.as_str()),
                direction,
                streaming: false,
                concurrency,
                request_bytes: stored.len(),
                routes: vec![
                    route("minimal", Via::Minimal, upstream_path, &upstream),
                    route("passthrough", Via::Proxy, upstream_path, &upstream),
                    route("translated", Via::Proxy, client_path, &unstored),
                    route("store_none", Via::StoreNone, client_path, &stored),
                    route("stored", Via::Proxy, client_path, &stored),
                ],
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_store_cases_time_the_default_store_against_store_none() {
        let shared = cases::shared_dir().expect("the shared fixtures");
        let cases = store_cases(&shared).expect("the cases build");
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        for kind in ["small", "request_3k", "request_50k", "request_500k"] {
            for c in ["c1", "c8"] {
                let name = format!("responses_to_chat/{kind}/{c}");
                assert!(
                    names.contains(&name.as_str()),
                    "{name} missing from {names:?}"
                );
            }
        }
        assert_eq!(cases.len(), 8);
        for case in &cases {
            let of = |name: &str| case.routes.iter().find(|r| r.name == name).unwrap();
            let (none, stored) = (of("store_none"), of("stored"));
            assert_eq!(none.via, Via::StoreNone);
            assert_eq!(stored.via, Via::Proxy);
            // The same request both ways: only the proxy differs.
            assert_eq!(none.body, stored.body);
            assert_eq!(none.path, "/v1/responses");
            let body: Value = serde_json::from_slice(&stored.body).unwrap();
            assert_eq!(body["store"], true);
            let unstored: Value = serde_json::from_slice(&of("translated").body).unwrap();
            assert_eq!(unstored["store"], false);
            assert!(case.routes.iter().all(|r| r.credential));
            // Listed before `stored`, so that `stored / store_none` is
            // among the comparisons.
            let at = |name| case.routes.iter().position(|r| r.name == name);
            assert!(at("store_none") < at("stored"));
        }
        let small = cases.iter().find(|c| c.name.contains("/small/")).unwrap();
        assert!(small.request_bytes < 120, "{}", small.request_bytes);
    }
}
