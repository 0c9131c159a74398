//! Tests of the strict Responses grammar checker: real OpenAI recordings pass
//! it, known non-OpenAI / trimmed recordings and targeted corruptions fail it.

#[path = "../common/mod.rs"]
mod common;

mod builders;
mod failures;
mod items;
mod mutations;
mod recordings;
