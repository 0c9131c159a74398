//! The hand-written `Response` against serde's, for every field and
//! variant.

use serde_json::value::RawValue;

use super::super::{
    ConversationRef, IncompleteDetails, IncompleteReason, InputTokensDetails, InputTransformation,
    OutputTokensDetails, Response, ResponseEcho, ResponseError, ResponseStatus, Usage,
    WithheldReason,
};

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

/// Strings that need escaping, in the places the writer escapes itself.
const AWKWARD: &str = "a \"quoted\" \\ name\n\u{1}\u{7f} é 😀";

/// Every optional value of the echo set, strings that need escaping where
/// the writer escapes.
fn full_echo() -> ResponseEcho {
    ResponseEcho {
        background: true,
        frequency_penalty: -0.300_000_000_000_000_04,
        instructions: Some(raw(r#""Answer in French.\nBe brief.""#)),
        max_output_tokens: Some(u64::MAX),
        max_tool_calls: Some(3),
        parallel_tool_calls: false,
        presence_penalty: f64::NAN,
        previous_response_id: Some(AWKWARD.into()),
        prompt_cache_key: Some(AWKWARD.into()),
        prompt_cache_diagnostics: Some(raw(
            r#"{"type":"cache_miss","reason":"tools_changed","cache_missed_tokens":3}"#,
        )),
        conversation: Some(ConversationRef { id: AWKWARD.into() }),
        reasoning: Some(raw(r#"{"effort":"high","summary":"auto"}"#)),
        safety_identifier: Some(AWKWARD.into()),
        service_tier: AWKWARD.into(),
        store: false,
        temperature: 0.0,
        text: raw(r#"{"format":{"type":"json_object"},"verbosity":"low"}"#),
        tool_choice: raw(r#"{"type":"function","name":"f"}"#),
        tools: raw(r#"[{"type":"function","name":"f","parameters":{}}]"#),
        top_logprobs: u32::MAX,
        top_p: 1e-300,
        truncation: raw(r#""auto""#),
        user: Some(AWKWARD.into()),
        metadata: raw(r#"{"k":"v"}"#),
        input_transformations: vec![
            InputTransformation::removed_reasoning(AWKWARD, WithheldReason::OrganizationMismatch),
            InputTransformation::removed_reasoning("rs_2", WithheldReason::ModelMismatch),
            InputTransformation::removed_reasoning("rs_3", WithheldReason::TurnBoundary),
        ],
    }
}

fn assert_same(response: &Response<'_>) {
    let mut hand = Vec::new();
    response.write_json(&mut hand);
    let serde = serde_json::to_vec(response).unwrap();
    assert_eq!(
        String::from_utf8(hand).unwrap(),
        String::from_utf8(serde).unwrap()
    );
}

#[test]
fn every_variant_of_every_field_is_written_as_serde_writes_it() {
    let usage = Usage {
        input_tokens: 1,
        input_tokens_details: InputTokensDetails {
            cached_tokens: 2,
            cache_write_tokens: 3,
        },
        output_tokens: u64::MAX,
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: 0,
        },
        total_tokens: 5,
    };
    let output = [
        raw(r#"{"type":"message","id":"msg_1","content":[]}"#),
        raw(r#"{"type":"reasoning","id":"rs_1","summary":[]}"#),
    ];
    let echoes = [ResponseEcho::default(), full_echo()];
    let statuses = [
        ResponseStatus::Queued,
        ResponseStatus::InProgress,
        ResponseStatus::Completed,
        ResponseStatus::Incomplete,
        ResponseStatus::Failed,
        ResponseStatus::Cancelled,
    ];
    let errors = [
        None,
        Some(ResponseError {
            code: "server_error",
            message: AWKWARD,
        }),
    ];
    let incompletes = [
        None,
        Some(IncompleteDetails {
            reason: IncompleteReason::MaxOutputTokens,
        }),
        Some(IncompleteDetails {
            reason: IncompleteReason::ContentFilter,
        }),
    ];
    let mut written = 0;
    for echo in &echoes {
        for status in statuses {
            for error in errors {
                for incomplete_details in incompletes {
                    for (usage, output) in [(None, &output[..0]), (Some(&usage), &output[..])] {
                        for completed_at in [None, Some(1_700_000_000)] {
                            assert_same(&Response {
                                id: AWKWARD,
                                object: "response",
                                created_at: 1_700_000_000,
                                status,
                                completed_at,
                                error,
                                incomplete_details,
                                model: AWKWARD,
                                output,
                                usage,
                                echo,
                            });
                            written += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(written, 2 * 6 * 2 * 3 * 2 * 2);
}

#[test]
fn each_optional_echo_field_alone_is_written_as_serde_writes_it() {
    // From the default echo, one field set at a time: its separators and
    // its place among the others are tested on their own.
    let full = full_echo();
    let setters: [fn(&mut ResponseEcho, &ResponseEcho); 8] = [
        |echo, full| echo.instructions = full.instructions.clone(),
        |echo, full| echo.max_output_tokens = full.max_output_tokens,
        |echo, full| echo.previous_response_id = full.previous_response_id.clone(),
        |echo, full| echo.conversation = full.conversation.clone(),
        |echo, full| echo.reasoning = full.reasoning.clone(),
        |echo, full| echo.user = full.user.clone(),
        |echo, full| echo.input_transformations = full.input_transformations.clone(),
        |echo, full| echo.safety_identifier = full.safety_identifier.clone(),
    ];
    for set in setters {
        let mut echo = ResponseEcho::default();
        set(&mut echo, &full);
        assert_same(&Response {
            id: "resp_1",
            object: "response",
            created_at: 0,
            status: ResponseStatus::Completed,
            completed_at: None,
            error: None,
            incomplete_details: None,
            model: "m",
            output: &[],
            usage: None,
            echo: &echo,
        });
    }
}
