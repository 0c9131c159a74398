//! Printing each exchange's steps as they finish: the tool calls the model
//! made, then its final answer. Runs a two-turn tool loop against the
//! built-in demo upstream, in process, and exits.
//!
//! ```sh
//! cargo run --example observer_steps
//! ```

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use tower::{Layer, ServiceExt};
use wirebridge::tower::{Exchange, RequestBody, ResponsesToChatLayer};
use wirebridge_demo::{Api, DemoConfig, DemoServer};

fn print_steps(exchange: &Exchange) {
    for call in &exchange.reply.tool_calls {
        println!(
            "  tool call  {}({} bytes of arguments) id={}",
            call.name, call.argument_bytes, call.call_id
        );
    }
    let usage = exchange.reply.usage.unwrap_or_default();
    println!(
        "  finished   {} in {:.1} ms ({:.0} µs translating), {} tokens in, {} out",
        exchange.reply.outcome.as_deref().unwrap_or("?"),
        exchange.total_time.as_secs_f64() * 1e3,
        exchange.translation_time.as_secs_f64() * 1e6,
        usage.input,
        usage.output,
    );
}

#[tokio::main]
async fn main() {
    let demo = DemoServer::start(DemoConfig::new().api(Api::Chat)).await;
    let base = demo.url();
    let client = Client::builder(TokioExecutor::new()).build_http::<RequestBody<Full<Bytes>>>();
    let upstream = tower::service_fn(move |mut request: Request<RequestBody<Full<Bytes>>>| {
        let uri = format!("{base}{}", request.uri().path())
            .parse()
            .expect("a valid URL");
        *request.uri_mut() = uri;
        client.request(request)
    });
    let service = ResponsesToChatLayer::new()
        .observer(print_steps)
        .layer(upstream);

    let tools = json!([{"type": "function", "name": "get_weather", "strict": false,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    let mut input = vec![json!({"role": "user", "content": "call get_weather with city=Paris"})];
    for turn in 1..=2 {
        println!("turn {turn}");
        let body = json!({"model": "demo", "input": input, "tools": tools, "stream": true});
        let request = Request::post("/v1/responses")
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        let response = service
            .clone()
            .oneshot(request)
            .await
            .expect("the demo answers");
        let stream = response
            .into_body()
            .collect()
            .await
            .expect("a complete stream")
            .to_bytes();
        // The completed response is the stream's last event.
        let last = String::from_utf8_lossy(&stream)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .next_back()
            .unwrap_or("{}")
            .to_owned();
        let output =
            serde_json::from_str::<Value>(&last).unwrap_or_default()["response"]["output"].clone();
        for item in output.as_array().into_iter().flatten() {
            input.push(item.clone());
            if item["type"] == "function_call" {
                input.push(json!({"type": "function_call_output", "call_id": item["call_id"], "output": "18°C and sunny"}));
            }
            if item["type"] == "message" {
                println!(
                    "  answer     {}",
                    item["content"][0]["text"].as_str().unwrap_or_default()
                );
            }
        }
    }
}
