use std::time::Duration;

use wirebridge_convert::{Loss, LossKind, LossReport, ReplySummary, TokenUsage};
use wirebridge_tower::observer::{Direction, Transport};
use wirebridge_tower::Exchange;

use super::Metrics;

fn exchange(model: &str, status: u16, outcome: Option<&str>) -> Exchange {
    let mut losses = LossReport::default();
    losses.push(Loss {
        kind: LossKind::HostedTool,
        path: "tools[0]".into(),
        reason: "web_search cannot run here".into(),
    });
    Exchange {
        direction: Direction::ResponsesToChat,
        transport: Transport::Http,
        path: "/v1/responses".into(),
        model: model.into(),
        stream: true,
        status,
        reply: ReplySummary {
            outcome: outcome.map(Into::into),
            usage: Some(TokenUsage {
                input: 12,
                output: 30,
                cached: 0,
                reasoning: 7,
            }),
            tool_calls: Vec::new(),
        },
        time_to_first_byte: Some(Duration::from_millis(3)),
        total_time: Duration::from_millis(40),
        translation_time: Duration::from_micros(20),
        losses,
        trace_id: None,
        via: None,
        replica: None,
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn an_exchange_moves_its_counters_and_histograms() {
    let metrics = Metrics::new(4);
    metrics.exchange(&exchange("qwen3", 200, Some("completed")));
    metrics.exchange(&exchange("qwen3", 200, Some("completed")));
    let text = metrics.render();
    let lines = lines(&text);
    for expected in [
        "wirebridge_exchanges_total{endpoint=\"responses\",transport=\"http\",direction=\"responses_to_chat\",model=\"qwen3\",stream=\"true\",status=\"200\",outcome=\"completed\"} 2",
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"qwen3\",kind=\"input\"} 24",
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"qwen3\",kind=\"output\"} 60",
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"qwen3\",kind=\"reasoning\"} 14",
        "wirebridge_losses_total{direction=\"responses_to_chat\",kind=\"hosted_tool\"} 2",
        "wirebridge_exchange_duration_seconds_count{direction=\"responses_to_chat\",stream=\"true\"} 2",
        // 40 ms lies in the 50 ms bucket, not the 25 ms one.
        "wirebridge_exchange_duration_seconds_bucket{le=\"0.025\",direction=\"responses_to_chat\",stream=\"true\"} 0",
        "wirebridge_exchange_duration_seconds_bucket{le=\"0.05\",direction=\"responses_to_chat\",stream=\"true\"} 2",
        "wirebridge_exchange_time_to_first_byte_seconds_bucket{le=\"0.0025\",direction=\"responses_to_chat\",stream=\"true\"} 0",
        "wirebridge_exchange_time_to_first_byte_seconds_bucket{le=\"0.005\",direction=\"responses_to_chat\",stream=\"true\"} 2",
        "wirebridge_exchange_translation_seconds_bucket{le=\"0.00001\",direction=\"responses_to_chat\",stream=\"true\"} 0",
        "wirebridge_exchange_translation_seconds_bucket{le=\"0.000025\",direction=\"responses_to_chat\",stream=\"true\"} 2",
        "# EOF",
    ] {
        assert!(lines.contains(&expected), "missing {expected}\n{text}");
    }
    // No cached tokens were reported: no series for them.
    assert!(!text.contains("cached_input"), "{text}");
}

#[test]
fn a_composed_translation_counts_its_tokens_once_from_the_outer_exchange() {
    let metrics = Metrics::new(4);
    let mut outer = exchange("claude", 200, Some("end_turn"));
    outer.direction = Direction::MessagesToResponses;
    outer.path = "/v1/messages".into();
    let mut inner = exchange("claude", 200, Some("completed"));
    inner.via = Some(Direction::MessagesToResponses);
    metrics.exchange(&outer);
    metrics.exchange(&inner);
    let text = metrics.render();
    let lines = lines(&text);
    for expected in [
        "wirebridge_exchanges_total{endpoint=\"messages\",transport=\"http\",direction=\"messages_to_responses\",model=\"claude\",stream=\"true\",status=\"200\",outcome=\"end_turn\"} 1",
        "wirebridge_exchanges_total{endpoint=\"responses\",transport=\"http\",direction=\"responses_to_chat\",model=\"claude\",stream=\"true\",status=\"200\",outcome=\"completed\"} 1",
        "wirebridge_tokens_total{direction=\"messages_to_responses\",model=\"claude\",kind=\"input\"} 12",
    ] {
        assert!(lines.contains(&expected), "missing {expected}\n{text}");
    }
    assert!(
        !text.contains("wirebridge_tokens_total{direction=\"responses_to_chat\""),
        "{text}"
    );
}

#[test]
fn refused_requests_and_unknown_outcomes_stay_in_bounds() {
    let metrics = Metrics::new(1);
    metrics.exchange(&exchange("first", 200, Some("completed")));
    metrics.exchange(&exchange("second", 400, Some("missing_required_parameter")));
    metrics.exchange(&exchange("", 200, Some("made_up_by_an_upstream")));
    metrics.exchange(&exchange("first", 502, None));
    let text = metrics.render();
    for expected in [
        "model=\"other\",stream=\"true\",status=\"400\",outcome=\"error\"} 1",
        "model=\"none\",stream=\"true\",status=\"200\",outcome=\"other\"} 1",
        "model=\"first\",stream=\"true\",status=\"502\",outcome=\"error\"} 1",
    ] {
        assert!(text.contains(expected), "missing {expected}\n{text}");
    }
    assert!(!text.contains("model=\"second\""), "{text}");
    assert!(!text.contains("missing_required_parameter"), "{text}");
}

#[test]
fn kept_series_stay_with_their_model_direction_and_kind_of_reply() {
    // The token counters and timing histograms are looked up once and
    // kept: each model, direction and kind of reply keeps its own.
    let metrics = Metrics::new(2);
    let mut body = exchange("b", 200, Some("completed"));
    body.stream = false;
    let mut other_way = exchange("a", 200, Some("stop"));
    other_way.direction = Direction::ChatToResponses;
    for e in [
        exchange("a", 200, Some("completed")),
        exchange("a", 200, Some("completed")),
        body,
        other_way,
        exchange("past_the_cap", 200, Some("completed")),
    ] {
        metrics.exchange(&e);
    }
    let text = metrics.render();
    let lines = lines(&text);
    for expected in [
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"a\",kind=\"input\"} 24",
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"b\",kind=\"input\"} 12",
        "wirebridge_tokens_total{direction=\"chat_to_responses\",model=\"a\",kind=\"output\"} 30",
        "wirebridge_tokens_total{direction=\"responses_to_chat\",model=\"other\",kind=\"reasoning\"} 7",
        "wirebridge_exchange_duration_seconds_count{direction=\"responses_to_chat\",stream=\"true\"} 3",
        "wirebridge_exchange_duration_seconds_count{direction=\"responses_to_chat\",stream=\"false\"} 1",
        "wirebridge_exchange_duration_seconds_count{direction=\"chat_to_responses\",stream=\"true\"} 1",
        "wirebridge_exchange_translation_seconds_count{direction=\"responses_to_chat\",stream=\"false\"} 1",
        "wirebridge_exchange_time_to_first_byte_seconds_count{direction=\"chat_to_responses\",stream=\"true\"} 1",
    ] {
        assert!(lines.contains(&expected), "missing {expected}\n{text}");
    }
}

#[test]
fn gauges_count_what_is_open() {
    let metrics = Metrics::new(1);
    let streams = metrics.open_streams();
    let first = streams.open();
    let second = streams.open();
    assert_eq!(streams.get(), 2);
    drop(first);
    assert!(metrics
        .render()
        .lines()
        .any(|l| l == "wirebridge_open_streams 1"));
    drop(second);
    assert_eq!(streams.get(), 0);
}

#[test]
fn store_operations_and_upstream_errors_are_counted() {
    let metrics = Metrics::new(1);
    metrics.store_operation("chain", "ok", Duration::from_micros(300));
    metrics.store_operation("chain", "unavailable", Duration::from_secs(2));
    metrics.upstream_error("timeout");
    metrics.forwarded(404);
    let text = metrics.render();
    for expected in [
        "wirebridge_store_operations_total{operation=\"chain\",result=\"ok\"} 1",
        "wirebridge_store_operations_total{operation=\"chain\",result=\"unavailable\"} 1",
        "wirebridge_store_operation_duration_seconds_bucket{le=\"0.0005\",operation=\"chain\"} 1",
        "wirebridge_store_operation_duration_seconds_bucket{le=\"2.5\",operation=\"chain\"} 2",
        "wirebridge_upstream_errors_total{kind=\"timeout\"} 1",
        "wirebridge_forwarded_requests_total{status=\"404\"} 1",
    ] {
        assert!(
            text.lines().any(|l| l == expected),
            "missing {expected}\n{text}"
        );
    }
}

#[test]
fn budgets_reached_are_counted_each_from_zero() {
    let metrics = Metrics::new(1);
    let text = metrics.render();
    for budget in wirebridge_tower::Budget::ALL {
        let zero = format!(
            "wirebridge_budget_refusals_total{{kind=\"{}\"}} 0",
            budget.as_str()
        );
        assert!(text.lines().any(|l| l == zero), "missing {zero}\n{text}");
    }
    metrics.budget(wirebridge_tower::Budget::WebSocketQueue);
    metrics.budget(wirebridge_tower::Budget::WebSocketQueue);
    metrics.budget(wirebridge_tower::Budget::RequestBody);
    let text = metrics.render();
    for expected in [
        "wirebridge_budget_refusals_total{kind=\"websocket_queue\"} 2",
        "wirebridge_budget_refusals_total{kind=\"request_body\"} 1",
        "wirebridge_budget_refusals_total{kind=\"upstream_reply\"} 0",
    ] {
        assert!(
            text.lines().any(|l| l == expected),
            "missing {expected}\n{text}"
        );
    }
}

#[test]
fn an_answer_counts_its_prompt_tokens_to_the_replica_that_gave_it() {
    let metrics = Metrics::new(4).with_replicas(2);
    let mut answered = exchange("m", 200, Some("completed"));
    answered.replica = Some(1);
    if let Some(usage) = answered.reply.usage.as_mut() {
        usage.cached = 10;
    }
    metrics.exchange(&answered);
    // The inner leg of a composed exchange reports the same tokens: not
    // counted twice.
    answered.via = Some(Direction::MessagesToResponses);
    metrics.exchange(&answered);
    let text = metrics.render();
    let lines = lines(&text);
    assert!(
        lines.contains(&r#"wirebridge_replica_prompt_tokens_total{replica="1"} 12"#),
        "{text}"
    );
    assert!(
        lines.contains(&r#"wirebridge_replica_cached_prompt_tokens_total{replica="1"} 10"#),
        "{text}"
    );
    assert!(
        lines.contains(&r#"wirebridge_replica_prompt_tokens_total{replica="0"} 0"#),
        "{text}"
    );
}
