use super::*;

type Pieces = Vec<(Side, String)>;

/// Splits `fragments` in order, joining consecutive pieces of one side.
fn split(mode: ThinkTags, fragments: &[&str]) -> Pieces {
    let mut splitter = ThinkSplitter::new(mode).unwrap();
    let mut out = Pieces::new();
    for f in fragments {
        splitter.push(f, &mut |side, piece| collect(&mut out, side, piece));
    }
    splitter.finish(&mut |side, piece| collect(&mut out, side, piece));
    out
}

fn collect(out: &mut Pieces, side: Side, piece: &str) {
    assert!(!piece.is_empty(), "empty pieces are never emitted");
    match out.last_mut() {
        Some((last, text)) if *last == side => text.push_str(piece),
        _ => out.push((side, piece.to_owned())),
    }
}

fn reasoning(text: &str) -> (Side, String) {
    (Side::Reasoning, text.to_owned())
}

fn content(text: &str) -> (Side, String) {
    (Side::Content, text.to_owned())
}

/// Asserts that `whole` splits into `expected` however it is cut: whole,
/// in two and in three pieces at every character boundary, and one
/// character at a time.
fn assert_every_cut(mode: ThinkTags, whole: &str, expected: &Pieces) {
    let cuts: Vec<usize> = (0..=whole.len())
        .filter(|&i| whole.is_char_boundary(i))
        .collect();
    for (n, &a) in cuts.iter().enumerate() {
        for &b in &cuts[n..] {
            let pieces = [&whole[..a], &whole[a..b], &whole[b..]];
            assert_eq!(
                &split(mode, &pieces),
                expected,
                "{mode:?}, {whole:?} cut as {pieces:?}"
            );
        }
    }
    let chars: Vec<String> = whole.chars().map(String::from).collect();
    let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(
        &split(mode, &chars),
        expected,
        "{whole:?} a character at a time"
    );
}

#[test]
fn tags_split_anywhere() {
    assert_every_cut(
        ThinkTags::Tags,
        "<think>a < b</think>\n\nAnswer <thin",
        &vec![reasoning("a < b"), content("Answer <thin")],
    );
}

#[test]
fn starts_inside_when_the_template_opened_the_tag() {
    assert_every_cut(
        ThinkTags::StartsInside,
        "hmm</think>Hi",
        &vec![reasoning("hmm"), content("Hi")],
    );
}

#[test]
fn plain_content_passes_through() {
    assert_eq!(
        split(ThinkTags::Tags, &["no tags ", "here é"]),
        vec![content("no tags here é")]
    );
    assert_eq!(
        split_all(ThinkTags::Tags, "<think>x</think>y"),
        Some(("x".into(), "y".into()))
    );
    assert_eq!(split_all(ThinkTags::Off, "<think>x</think>y"), None);
}

#[test]
fn leading_blocks_split_at_every_byte() {
    let cases: [(&str, Pieces); 6] = [
        (
            "<think>\n2 + 2 < 5, é.\n</think>\n\nIt is 4.",
            vec![reasoning("\n2 + 2 < 5, é.\n"), content("It is 4.")],
        ),
        (
            "<reasoning>The user wants a <think> tag.</reasoning>Here: <think>",
            vec![
                reasoning("The user wants a <think> tag."),
                content("Here: <think>"),
            ],
        ),
        // Whitespace before the tag goes with it.
        (
            " \n<think>hm</think>ok",
            vec![reasoning("hm"), content("ok")],
        ),
        // A block closed by the other tag is not closed.
        ("<think>a</reasoning>b", vec![reasoning("a</reasoning>b")]),
        // Nothing after the block.
        ("<think>only</think>\n", vec![reasoning("only")]),
        // An empty block.
        ("<think></think>Hi", vec![content("Hi")]),
    ];
    for (whole, expected) in &cases {
        assert_every_cut(ThinkTags::Leading, whole, expected);
    }
}

#[test]
fn leading_mode_leaves_other_content_alone() {
    let cases = [
        "Plain text.",
        "Answer first. <think>not reasoning</think>",
        "<b>bold</b>",
        "<thinking>a longer tag</thinking>",
        "<think >a space</think>",
        "<Think>case</Think>",
        "  <reason>close, but no</reason>",
        "<",
        "<thi",
        "\n\n",
        "é<think>x</think>",
    ];
    for whole in cases {
        assert_every_cut(ThinkTags::Leading, whole, &vec![content(whole)]);
    }
}

#[test]
fn leading_mode_releases_what_cannot_be_a_tag_at_once() {
    let mut splitter = ThinkSplitter::new(ThinkTags::Leading).unwrap();
    let mut out = Pieces::new();
    for (fragment, sent) in [
        ("\n", ""),
        ("<", ""),
        ("thin", ""),
        ("g", "\n<thing"),
        (" more", "\n<thing more"),
    ] {
        splitter.push(fragment, &mut |side, piece| collect(&mut out, side, piece));
        let text: String = out.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, sent, "after {fragment:?}");
    }
    assert!(out.iter().all(|(side, _)| *side == Side::Content));
    assert!(splitter.settled());

    // A reasoning block streams as it arrives, holding back only what may
    // start its closing tag.
    let mut splitter = ThinkSplitter::new(ThinkTags::Leading).unwrap();
    let mut out = Pieces::new();
    for (fragment, sent) in [
        ("<reasoning>", ""),
        ("step one</", "step one"),
        ("reason", "step one"),
        ("ed", "step one</reasoned"),
    ] {
        splitter.push(fragment, &mut |side, piece| collect(&mut out, side, piece));
        let text: String = out.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, sent, "after {fragment:?}");
    }
    assert_eq!(out, vec![reasoning("step one</reasoned")]);
}

#[test]
fn leading_mode_settles_once_the_block_is_behind() {
    let mut splitter = ThinkSplitter::new(ThinkTags::Leading).unwrap();
    assert!(!splitter.settled());
    assert!(!splitter.passes_whole("  "), "blank: not yet known");
    assert!(!splitter.passes_whole("<th"), "may open a block");
    assert!(splitter.passes_whole("  Hello"));
    assert!(splitter.passes_whole("<think>later</think>"));

    let mut splitter = ThinkSplitter::new(ThinkTags::Leading).unwrap();
    let mut out = Pieces::new();
    splitter.push("<think>x</think>", &mut |s, p| collect(&mut out, s, p));
    assert!(
        !splitter.settled(),
        "blank lines after the block are dropped"
    );
    splitter.push("\n\nAnswer", &mut |s, p| collect(&mut out, s, p));
    assert!(splitter.settled());
    assert_eq!(out, vec![reasoning("x"), content("Answer")]);

    // Tags can come anywhere: never settled.
    let mut tags = ThinkSplitter::new(ThinkTags::Tags).unwrap();
    assert!(!tags.passes_whole("Hello"));
}

#[test]
fn an_unclosed_leading_block_is_reasoning() {
    assert_eq!(
        split_all(ThinkTags::Leading, "<think>cut off by the token li"),
        Some(("cut off by the token li".into(), String::new()))
    );
    assert_eq!(
        split_all(ThinkTags::Leading, "<think>almost</thi"),
        Some(("almost</thi".into(), String::new()))
    );
}

#[test]
fn leading_blocks_back_to_back_are_one_reasoning() {
    let cases: [(ThinkTags, &str, Pieces); 5] = [
        // gpt-oss on Bedrock: each reasoning chunk in its own pair of tags.
        (
            ThinkTags::Leading,
            "<reasoning>The user</reasoning><reasoning> asks</reasoning>\n<reasoning>.</reasoning>\n\nIt is 4.",
            vec![reasoning("The user asks."), content("It is 4.")],
        ),
        (
            ThinkTags::Leading,
            "<think>a</think>  <think>b</think>c",
            vec![reasoning("ab"), content("c")],
        ),
        // A block of the other tag is content, as any tag after the answer.
        (
            ThinkTags::Leading,
            "<think>a</think><reasoning>b</reasoning>",
            vec![reasoning("a"), content("<reasoning>b</reasoning>")],
        ),
        (
            ThinkTags::Leading,
            "<reasoning>a</reasoning>Answer <reasoning>b</reasoning>",
            vec![reasoning("a"), content("Answer <reasoning>b</reasoning>")],
        ),
        (
            ThinkTags::StartsInside,
            "a</think><think>b</think>c",
            vec![reasoning("ab"), content("c")],
        ),
    ];
    for (mode, whole, expected) in &cases {
        assert_every_cut(*mode, whole, expected);
    }
}

#[test]
fn what_may_open_the_next_block_is_held_back_and_released() {
    assert_eq!(
        split_all(ThinkTags::Leading, "<think>a</think>\n<thi"),
        Some(("a".into(), "<thi".into()))
    );
    let mut splitter = ThinkSplitter::new(ThinkTags::Leading).unwrap();
    let mut out = Pieces::new();
    for (fragment, sent) in [
        ("<reasoning>a</reasoning>", "a"),
        ("<reas", "a"),
        ("on", "a"),
        ("ing>b", "ab"),
        ("</reasoning><rea", "ab"),
        ("l answer", "ab<real answer"),
    ] {
        splitter.push(fragment, &mut |side, piece| collect(&mut out, side, piece));
        let text: String = out.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, sent, "after {fragment:?}");
    }
    assert_eq!(out, vec![reasoning("ab"), content("<real answer")]);
}
