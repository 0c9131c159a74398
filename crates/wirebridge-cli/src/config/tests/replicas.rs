//! Several upstream URLs, the replicas of one backend: from the flag
//! repeated, a comma-separated variable, an array in the file; and the
//! settings of the choice among them.

use std::time::Duration;

use super::load;
use crate::config::{ReplicaSettings, Upstream};

/// The URIs of the replicas configured.
fn replicas(upstream: &Upstream) -> Vec<String> {
    let Upstream::Replicas(urls) = upstream else {
        panic!("replicas: {upstream:?}");
    };
    urls.iter().map(|url| url.uri.to_string()).collect()
}

const TWO: [&str; 2] = ["http://a:8000/v1", "https://b:9000/api/v1"];

#[test]
fn replicas_from_each_source() {
    let flags = load(None, &["--upstream", TWO[0], "--upstream", TWO[1]], &[]).unwrap();
    assert_eq!(replicas(&flags.upstream), TWO);
    let env = load(
        None,
        &[],
        &[(
            "WIREBRIDGE_UPSTREAM",
            "http://a:8000/v1, https://b:9000/api/v1",
        )],
    )
    .unwrap();
    assert_eq!(replicas(&env.upstream), TWO);
    let file = load(
        Some("upstream = [\"http://a:8000/v1\", \"https://b:9000/api/v1\"]\n"),
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(replicas(&file.upstream), TWO);
    // One URL, in any of them, is one upstream as before.
    let one = load(Some("upstream = [\"http://a:8000/v1\"]\n"), &[], &[]).unwrap();
    assert!(
        matches!(one.upstream, Upstream::Url(_)),
        "{:?}",
        one.upstream
    );
    let one = load(None, &["--upstream", "http://a:8000/v1"], &[]).unwrap();
    assert!(matches!(one.upstream, Upstream::Url(_)));
}

#[test]
fn each_replica_keeps_its_credentials_out_of_sight() {
    let c = load(
        None,
        &[
            "--upstream",
            "http://alice:hunter2@a:8000/v1",
            "--upstream",
            "http://b:8000/v1",
        ],
        &[],
    )
    .unwrap();
    let Upstream::Replicas(urls) = &c.upstream else {
        panic!("replicas");
    };
    assert_eq!(urls[0].uri.to_string(), "http://a:8000/v1");
    assert_eq!(
        urls[0].credentials.as_ref().unwrap().basic_pair(),
        b"alice:hunter2"
    );
    assert!(urls[1].credentials.is_none());
    assert!(!format!("{c:?}").contains("hunter2"));
}

#[test]
fn a_list_that_cannot_be_used_is_refused_by_name() {
    let err = |flags: &[&str], env: &[(&str, &str)], file: Option<&str>| {
        load(file, flags, env).unwrap_err().to_string()
    };
    let e = err(&["--upstream", "demo", "--upstream", TWO[0]], &[], None);
    assert!(
        e.contains("'upstream' (--upstream)") && e.contains("demo"),
        "{e}"
    );
    let e = err(
        &[],
        &[("WIREBRIDGE_UPSTREAM", "http://a:1/v1,http://a:1/v1")],
        None,
    );
    assert!(
        e.contains("listed twice") && e.contains("WIREBRIDGE_UPSTREAM"),
        "{e}"
    );
    let e = err(
        &[],
        &[("WIREBRIDGE_UPSTREAM", "http://a:1/v1,,http://b:1/v1")],
        None,
    );
    assert!(e.contains("empty URL"), "{e}");
    let e = err(&[], &[], Some("upstream = [\"http://a:1/v1\", 3]\n"));
    assert!(e.contains("upstream") && e.contains("line 1"), "{e}");
    let e = err(&[], &[], Some("upstream = []\n"));
    assert!(e.contains("no URL"), "{e}");
    // A bad URL in the list is named without its password.
    let e = err(
        &["--upstream", TWO[0], "--upstream", "ftp://bob:hunter2@c/v1"],
        &[],
        None,
    );
    assert!(e.contains("***@c/v1") && !e.contains("hunter2"), "{e}");
}

#[test]
fn the_choice_s_settings_and_their_defaults() {
    let c = load(None, &[], &[]).unwrap();
    assert_eq!(
        c.replicas,
        ReplicaSettings {
            load_factor: 1.25,
            move_slack: 2,
            eject_after: 3,
            backoff: Duration::from_secs(10),
            resolve_every: None,
            probe_every: None,
        }
    );
    // The defaults the router keeps too.
    assert_eq!(
        c.replicas.load_factor,
        wirebridge_tower::DEFAULT_LOAD_FACTOR
    );
    assert_eq!(c.replicas.move_slack, wirebridge_tower::DEFAULT_MOVE_SLACK);
    assert_eq!(
        c.replicas.eject_after,
        wirebridge_tower::DEFAULT_EJECT_AFTER
    );
    assert_eq!(c.replicas.backoff, wirebridge_tower::DEFAULT_BACKOFF);

    let file = "replica_load_factor = 2\nreplica_eject_after = 5\nreplica_backoff = \"30s\"\n";
    let c = load(
        Some(file),
        &["--replica-load-factor", "1.5", "--replica-move-slack", "0"],
        &[],
    )
    .unwrap();
    assert_eq!(
        c.replicas,
        ReplicaSettings {
            load_factor: 1.5,
            move_slack: 0,
            eject_after: 5,
            backoff: Duration::from_secs(30),
            resolve_every: None,
            probe_every: None,
        }
    );
    for (flag, value) in [
        ("--replica-load-factor", "0.9"),
        ("--replica-load-factor", "many"),
        ("--replica-eject-after", "0"),
        ("--replica-move-slack", "some"),
    ] {
        let e = load(None, &[flag, value], &[]).unwrap_err().to_string();
        assert!(e.contains(&flag[2..].replace('-', "_")), "{e}");
    }
}

#[test]
fn an_upstream_name_resolved_again_on_an_interval() {
    let url = ["--upstream", "http://vllm.default.svc:8000/v1"];
    let c = load(None, &url, &[]).unwrap();
    assert_eq!(c.replicas.resolve_every, None);
    let every = [&url[..], &["--upstream-resolve-every", "15s"]].concat();
    let c = load(None, &every, &[]).unwrap();
    assert_eq!(c.replicas.resolve_every, Some(Duration::from_secs(15)));
    // Each URL of a list is resolved too.
    let file = "upstream = [\"http://a.svc:8000/v1\", \"http://b.svc:8000/v1\"]\nupstream_resolve_every = \"1m\"\n";
    let c = load(Some(file), &[], &[]).unwrap();
    assert_eq!(c.replicas.resolve_every, Some(Duration::from_secs(60)));
    for args in [
        vec!["--upstream-resolve-every", "10s"],
        [&url[..], &["--upstream-resolve-every", "0s"]].concat(),
    ] {
        let e = load(None, &args, &[]).unwrap_err().to_string();
        assert!(e.contains("upstream_resolve_every"), "{e}");
    }
}

#[test]
fn a_profile_s_session_header_is_a_header_of_its_own() {
    let profile = |header: &str| {
        format!("profile = \"router\"\n[profiles.router]\nsession_header = \"{header}\"\n")
    };
    let c = load(Some(&profile("x-session-affinity")), &[], &[]).unwrap();
    assert_eq!(
        c.profile.session_header.as_deref(),
        Some("x-session-affinity")
    );
    for header in ["authorization", "X-Api-Key", "cookie", "not a header"] {
        let e = load(Some(&profile(header)), &[], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("profile") && e.contains("session_header"), "{e}");
    }
}

#[test]
fn replicas_probed_on_an_interval() {
    let two = ["--upstream", "http://a:8000/v1,http://b:8000/v1"];
    let c = load(None, &two, &[]).unwrap();
    assert_eq!(c.replicas.probe_every, None);
    let probed = [&two[..], &["--replica-probe-every", "5s"]].concat();
    let c = load(None, &probed, &[]).unwrap();
    assert_eq!(c.replicas.probe_every, Some(Duration::from_secs(5)));
    // A name resolved again is a set of replicas too.
    let resolved = [
        "--upstream",
        "http://vllm.svc:8000/v1",
        "--upstream-resolve-every",
        "10s",
        "--replica-probe-every",
        "5s",
    ];
    assert!(load(None, &resolved, &[]).is_ok());
    for args in [
        vec![
            "--upstream",
            "http://a:8000/v1",
            "--replica-probe-every",
            "5s",
        ],
        [&two[..], &["--replica-probe-every", "0s"]].concat(),
    ] {
        let e = load(None, &args, &[]).unwrap_err().to_string();
        assert!(e.contains("replica_probe_every"), "{e}");
    }
}
