//! The oracle the tests and the fuzz target hold the reader to: whatever it
//! reads, serde reads the same, and the content it keeps parsed is what
//! serde parses from the text it kept beside it.

use serde_json::value::RawValue;

use crate::messages::lenient::{unmodeled_fields, Block, Content, CreateMessage};

/// Whether [`CreateMessage::read`] read `body`; when it did, panics unless
/// serde reads it the same, and unless a body it notes nothing unmodeled
/// in has no field [`unmodeled_fields`] names.
pub fn read_as_serde(body: &[u8]) -> bool {
    let Some((read, noted)) = CreateMessage::read_noting_unmodeled(body) else {
        return false;
    };
    if !noted {
        let found = unmodeled_fields(body);
        assert!(
            found.is_empty(),
            "the reader noted nothing unmodeled, but the walk finds {found:?}: {}",
            String::from_utf8_lossy(body)
        );
    }
    let text = String::from_utf8_lossy(body);
    let parsed: CreateMessage<'_> = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("the reader read what serde refuses ({e}): {text}"));
    assert_eq!(settle(read), format!("{parsed:?}"), "{text}");
    true
}

/// The request as text to compare with serde's, its parsed content checked
/// against serde's parse of the raw text and then set aside.
fn settle(mut request: CreateMessage<'_>) -> String {
    settle_content(request.system, request.parsed_system.take());
    for message in request.messages.iter_mut().flatten() {
        settle_content(message.content, message.parsed_content.take());
    }
    format!("{request:?}")
}

/// Checks kept content against what serde parses from its raw text: the
/// same, block for block, once the blocks' own kept content is checked.
fn settle_content(raw: Option<&RawValue>, parsed: Option<Content<'_>>) {
    // Nothing kept: no content, or content left for serde to parse (and
    // perhaps to refuse), as the translator then does.
    let Some(mut parsed) = parsed else {
        return;
    };
    let raw = raw.expect("parsed content keeps its text");
    let expected = Content::from_raw(raw)
        .unwrap_or_else(|e| panic!("serde refuses kept content ({e}): {}", raw.get()))
        .expect("kept content is not null");
    if let Content::Blocks(blocks) = &mut parsed {
        blocks.iter_mut().for_each(settle_block);
    }
    assert_eq!(format!("{parsed:?}"), format!("{expected:?}"));
}

fn settle_block(block: &mut Block<'_>) {
    settle_content(block.content, block.parsed_content.take());
}
