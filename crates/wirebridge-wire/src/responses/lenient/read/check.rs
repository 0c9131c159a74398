//! The oracle the tests and the fuzz target hold the reader to: whatever it
//! reads, serde reads the same, and what it keeps parsed is what serde
//! parses from the text it kept beside it.

use serde_json::value::RawValue;

use crate::depth::{survey, MAX_DEPTH};
use crate::responses::lenient::{
    unmodeled_fields, Content, CreateResponse, Input, InputItem, ResponseShell, Tool,
};
use crate::RawObject;

/// Whether [`CreateResponse::read`] read `body`; when it did, panics unless
/// serde reads it the same (and the depth survey agrees on its
/// compactness, and serde's [`RawObject`] on its members), and unless a
/// body it notes nothing unmodeled in has no field [`unmodeled_fields`]
/// names.
pub fn read_as_serde(body: &[u8]) -> bool {
    let Some(read) = CreateResponse::read(body) else {
        return false;
    };
    let text = String::from_utf8_lossy(body);
    if !read.unmodeled {
        let found = unmodeled_fields(body);
        assert!(
            found.is_empty(),
            "the reader noted nothing unmodeled, but the walk finds {found:?}: {text}"
        );
    }
    let parsed: CreateResponse<'_> = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("the reader read what serde refuses ({e}): {text}"));
    let found = survey(body, MAX_DEPTH);
    assert_eq!(found.too_deep, None, "{text}");
    assert_eq!(read.compact, found.compact, "{text}");
    let members: RawObject<'_> = serde_json::from_slice(body).expect("an object serde read");
    assert_eq!(
        format!("{:?}", read.members.fields().collect::<Vec<_>>()),
        format!("{:?}", members.fields().collect::<Vec<_>>()),
        "{text}"
    );
    assert_eq!(settle(read.request), settle(parsed), "{text}");
    true
}

/// Whether the one-pass read of a `Response` ([`ResponseShell::parse`])
/// took `body`; when it did, panics unless serde reads it the same.
pub fn shell_as_serde(body: &[u8]) -> bool {
    let Some(read) = std::str::from_utf8(body).ok().and_then(ResponseShell::read) else {
        return false;
    };
    let text = String::from_utf8_lossy(body);
    let parsed: ResponseShell<'_> = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("the reader read what serde refuses ({e}): {text}"));
    assert_eq!(format!("{read:?}"), format!("{parsed:?}"), "{text}");
    true
}

/// The request, its kept forms checked against serde's parse of the text
/// they were kept beside and then set aside, as text to compare.
fn settle(mut request: CreateResponse<'_>) -> String {
    if let Some(tools) = request.parsed_tools.take() {
        let raw = request.tools.expect("parsed tools keep their text");
        let parsed: Vec<Tool<'_>> = serde_json::from_str(raw.get()).expect("serde reads them");
        assert_eq!(format!("{tools:?}"), format!("{parsed:?}"));
    }
    let items = match request.input.take() {
        Some(Input::Items(items)) => {
            let array = items.raw().expect("items read from an array keep it");
            let kept = items.raw_items().expect("kept or scanned");
            let scanned: Vec<&RawValue> = serde_json::from_str(array.get()).expect("an array");
            assert_eq!(format!("{kept:?}"), format!("{scanned:?}"));
            let items: Vec<String> = items.into_vec().into_iter().map(settle_item).collect();
            format!("items {} {items:?}", array.get())
        }
        Some(Input::Text(text)) => format!("text {text:?}"),
        None => "none".into(),
    };
    format!("{items} {request:?}")
}

fn settle_item(mut item: InputItem<'_>) -> String {
    if let Some(parts) = item.parsed_content.take() {
        let raw = item.content.expect("parsed parts keep their text");
        let Ok(Content::Parts(parsed)) = Content::from_raw(raw) else {
            panic!("serde reads kept parts as parts");
        };
        assert_eq!(format!("{parts:?}"), format!("{parsed:?}"));
    }
    item.raw = None;
    format!("{item:?}")
}
