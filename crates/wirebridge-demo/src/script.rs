//! Deciding what to answer: a [`Prompt`] becomes a [`Plan`] (reasoning,
//! text or tool calls, split into the fragments that will be streamed, after
//! `max_tokens` truncation; usage; scripted failures). Both API renderers
//! draw the same plan.

use crate::calls::requested_calls;
use crate::ids::Ids;
use crate::prompt::{count_tokens, Prompt, Turn};
use crate::triggers::{self, Triggers};

/// Characters per streamed fragment of tool-call arguments.
const ARGUMENT_FRAGMENT_CHARS: usize = 5;

/// How a stream that should fail fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// An in-band error after a few chunks.
    Midstream,
    /// The connection is dropped after a few chunks.
    Cut,
}

/// Why the answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Complete text.
    Stop,
    /// Complete tool calls.
    ToolCalls,
    /// Cut by the output token limit.
    Length,
}

impl Finish {
    /// The Chat `finish_reason`.
    pub(crate) fn chat_reason(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
        }
    }
}

/// One tool call to emit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedCall {
    /// Chat `tool_calls[].id` = Responses `call_id`.
    pub call_id: String,
    /// Responses item id (`fc_…`).
    pub item_id: String,
    /// Function name.
    pub name: String,
    /// Argument fragments, in order.
    pub fragments: Vec<String>,
    /// False when the token limit cut the arguments.
    pub complete: bool,
}

impl PlannedCall {
    /// The arguments emitted (all fragments).
    pub(crate) fn arguments(&self) -> String {
        self.fragments.concat()
    }
}

/// Token counts (see the crate docs for how they are counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    /// Words in the request.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Reasoning tokens.
    pub reasoning: u64,
}

impl Usage {
    /// Input plus output.
    pub(crate) fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Reasoning fragments (empty when reasoning was not requested).
    pub reasoning: Vec<String>,
    /// Text fragments (empty when the answer is tool calls).
    pub text: Vec<String>,
    /// False when the token limit cut the text.
    pub text_complete: bool,
    /// Tool calls.
    pub calls: Vec<PlannedCall>,
    /// Why the answer ends.
    pub finish: Finish,
    /// Token counts of what is emitted.
    pub usage: Usage,
    /// The `demo:` triggers of the last user message.
    pub triggers: Triggers,
}

impl Plan {
    /// The scripted mid-stream fault, if any (`demo:fail-midstream` wins over `demo:cut`).
    pub(crate) fn fault(&self) -> Option<Fault> {
        if self.triggers.fail_midstream {
            Some(Fault::Midstream)
        } else if self.triggers.cut {
            Some(Fault::Cut)
        } else {
            None
        }
    }
}

/// Everything a renderer needs to draw an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reply<'a> {
    /// The request.
    pub prompt: &'a Prompt,
    /// The answer.
    pub plan: &'a Plan,
    /// Its ids.
    pub ids: &'a Ids,
    /// Its timestamp (Unix seconds).
    pub created: u64,
}

/// Decide the answer to `prompt`.
pub(crate) fn plan(prompt: &Prompt, ids: &Ids) -> Plan {
    let triggers = triggers::parse(&prompt.last_user_text);
    let mut requested = match &prompt.turn {
        Turn::User(text) => requested_calls(text, &prompt.tools),
        Turn::ToolOutputs(_) => Vec::new(),
    };
    if !prompt.parallel_tool_calls {
        requested.truncate(1);
    }
    let (reasoning_text, reply) = match &prompt.turn {
        Turn::ToolOutputs(outputs) => (
            "A tool result arrived. I will report what it returned.".to_string(),
            tool_reply(outputs),
        ),
        Turn::User(_) if !requested.is_empty() => {
            let names: Vec<&str> = requested.iter().map(|c| c.name.as_str()).collect();
            (
                format!(
                    "The user asks for {}. I will call it with the arguments they gave.",
                    names.join(" and ")
                ),
                String::new(),
            )
        }
        Turn::User(text) => (
            format!(
                "The user wrote {} words. I will repeat them back.",
                count_tokens(text)
            ),
            format!("You said: \"{text}\". This is the wirebridge demo upstream."),
        ),
    };

    let mut budget = prompt.max_output_tokens.unwrap_or(u64::MAX);
    let mut take = |mut fragments: Vec<String>| -> (Vec<String>, bool) {
        let n = usize::try_from(budget)
            .unwrap_or(usize::MAX)
            .min(fragments.len());
        let complete = n == fragments.len();
        fragments.truncate(n);
        budget -= n as u64;
        (fragments, complete)
    };

    let all_reasoning = if prompt.reasoning {
        words(&reasoning_text)
    } else {
        Vec::new()
    };
    let (reasoning, mut complete) = take(all_reasoning);
    let reasoning_tokens = reasoning.len() as u64;
    let (text, text_complete) = take(words(&reply));
    complete &= text_complete;

    let mut calls = Vec::new();
    let mut call_tokens = 0;
    for (i, call) in requested.into_iter().enumerate() {
        let (header, _) = take(vec![String::new()]);
        if header.is_empty() {
            complete = false;
            break;
        }
        let (fragments, args_complete) =
            take(split_chars(&call.arguments, ARGUMENT_FRAGMENT_CHARS));
        call_tokens += 1 + fragments.len() as u64;
        complete &= args_complete;
        calls.push(PlannedCall {
            call_id: ids.call(i),
            item_id: ids.function_item(i),
            name: call.name,
            fragments,
            complete: args_complete,
        });
    }

    let finish = if !complete {
        Finish::Length
    } else if calls.is_empty() {
        Finish::Stop
    } else {
        Finish::ToolCalls
    };
    let output = reasoning_tokens + text.len() as u64 + call_tokens;
    Plan {
        reasoning,
        text,
        text_complete,
        calls,
        finish,
        usage: Usage {
            input: prompt.input_tokens,
            output,
            reasoning: reasoning_tokens,
        },
        triggers,
    }
}

/// The answer after tool results.
fn tool_reply(outputs: &[String]) -> String {
    match outputs {
        [one] => format!("The tool returned: {one}"),
        many => format!("The tools returned: {}", many.join("; ")),
    }
}

/// Split `text` into fragments of one word each, whitespace kept with the
/// word before it (leading whitespace with the first word), so that the
/// fragments concatenate back to `text`.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has_word = false;
    let mut prev_space = false;
    for c in text.chars() {
        let space = c.is_whitespace();
        if !space && prev_space && has_word {
            out.push(std::mem::take(&mut cur));
            has_word = false;
        }
        has_word |= !space;
        prev_space = space;
        cur.push(c);
    }
    if has_word {
        out.push(cur);
    }
    out
}

/// Split `text` into pieces of at most `n` characters.
fn split_chars(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn prompt(text: &str) -> Prompt {
        Prompt {
            model: "m".into(),
            stream: true,
            include_usage: false,
            max_output_tokens: None,
            reasoning: false,
            tools: vec!["get_weather".into(), "get_time".into()],
            parallel_tool_calls: true,
            turn: Turn::User(text.into()),
            last_user_text: text.into(),
            input_tokens: count_tokens(text),
            raw: Value::Null,
        }
    }

    fn ids() -> Ids {
        Ids::for_request("/", b"")
    }

    #[test]
    fn words_concatenate_back() {
        for t in ["a b  c", " lead", "trail ", "", "one", "x\n\ny"] {
            let w = words(t);
            if !t.trim().is_empty() {
                assert_eq!(w.concat(), t, "{t:?}");
            }
            assert_eq!(w.len() as u64, count_tokens(t), "{t:?}");
        }
        assert_eq!(words("a b"), vec!["a ", "b"]);
    }

    #[test]
    fn text_answer() {
        let p = plan(&prompt("hello world"), &ids());
        assert_eq!(
            p.text.concat(),
            "You said: \"hello world\". This is the wirebridge demo upstream."
        );
        assert_eq!(p.finish, Finish::Stop);
        assert_eq!(p.usage.output, p.text.len() as u64);
        assert_eq!(p.usage.input, 2);
    }

    #[test]
    fn parallel_calls_and_limit() {
        let text = "call get_weather with city=Paris and get_time with tz=UTC";
        let p = plan(&prompt(text), &ids());
        assert_eq!(p.calls.len(), 2);
        assert!(p.text.is_empty());
        assert_eq!(p.finish, Finish::ToolCalls);
        assert_eq!(p.calls[0].arguments(), r#"{"city":"Paris"}"#);
        assert!(p.calls[0].fragments.len() > 1);
        assert_ne!(p.calls[0].call_id, p.calls[1].call_id);

        let mut one = prompt(text);
        one.parallel_tool_calls = false;
        assert_eq!(plan(&one, &ids()).calls.len(), 1);

        let mut short = prompt(text);
        short.max_output_tokens = Some(3);
        let p = plan(&short, &ids());
        assert_eq!(p.finish, Finish::Length);
        assert_eq!(p.calls.len(), 1);
        assert!(!p.calls[0].complete);
        assert_eq!(p.usage.output, 3);
    }

    #[test]
    fn reasoning_then_truncated_text() {
        let mut pr = prompt("one two three");
        pr.reasoning = true;
        pr.max_output_tokens = Some(12);
        let p = plan(&pr, &ids());
        assert_eq!(p.reasoning.len(), 10);
        assert_eq!(p.text.len(), 2);
        assert!(!p.text_complete);
        assert_eq!(p.finish, Finish::Length);
        assert_eq!(p.usage.reasoning, 10);
        assert_eq!(p.usage.output, 12);
    }

    #[test]
    fn tool_results_are_reported() {
        let mut pr = prompt("call get_weather with city=Paris");
        pr.turn = Turn::ToolOutputs(vec!["sunny".into()]);
        let p = plan(&pr, &ids());
        assert!(p.calls.is_empty());
        assert_eq!(p.text.concat(), "The tool returned: sunny");
        pr.turn = Turn::ToolOutputs(vec!["a".into(), "b".into()]);
        assert_eq!(plan(&pr, &ids()).text.concat(), "The tools returned: a; b");
    }
}
