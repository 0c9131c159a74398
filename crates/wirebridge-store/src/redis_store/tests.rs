use super::*;

#[test]
fn ttl_seconds_round_up_and_are_bounded() {
    assert_eq!(ttl_seconds(Duration::ZERO), 1);
    assert_eq!(ttl_seconds(Duration::from_millis(1)), 1);
    assert_eq!(ttl_seconds(Duration::from_millis(1500)), 2);
    assert_eq!(ttl_seconds(Duration::from_secs(60)), 60);
    assert_eq!(ttl_seconds(Duration::MAX), RedisStore::MAX_TTL.as_secs());
}

/// An unavailable store keeps the error that made it so, for logs, and
/// says to clients what it said before.
#[test]
fn unavailable_keeps_its_cause() {
    use std::error::Error as _;
    let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
    let e = store_error(RedisError::from(refused));
    assert!(matches!(e, StoreError::Unavailable { .. }), "{e:?}");
    let cause = e.source().expect("a cause");
    let redis = cause.downcast_ref::<RedisError>().expect("the Redis error");
    assert_eq!(
        e.to_string(),
        format!("the response store is unavailable: Redis: {redis}")
    );

    let settings = RedisConfigError::Url("no host".into());
    let e = StoreError::from(settings.clone());
    let cause = e
        .source()
        .and_then(|c| c.downcast_ref::<RedisConfigError>());
    assert_eq!(cause, Some(&settings));
    assert_eq!(
        e.to_string(),
        "the response store is unavailable: invalid Redis URL: no host"
    );
}

#[tokio::test]
async fn a_timeout_keeps_its_cause() {
    use std::error::Error as _;
    let elapsed = tokio::time::timeout(Duration::ZERO, std::future::pending::<()>())
        .await
        .unwrap_err();
    let e = unanswered(Duration::from_secs(2), elapsed);
    assert_eq!(
        e.to_string(),
        "the response store is unavailable: Redis did not answer within 2s"
    );
    let cause = e.source().expect("a cause");
    assert!(cause.is::<tokio::time::error::Elapsed>(), "{cause:?}");
}
