//! The fields of a plain (uncoloured) log line.
//!
//! The same `name=value` text as the default formatter's, written without
//! its styling: that formatter wraps every field name in colour styles
//! even when colours are off, and sends numbers through `Debug`, which made
//! up most of the exchange line's cost. Control characters in messages and
//! in values written with `Display` (a model name is the client's text) are
//! escaped, so that a log viewed in a terminal cannot be made to run its
//! escape sequences.

use std::fmt::{self, Write};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::FormatFields;

/// Formats fields as `name=value`, separated by spaces, the message first
/// as it is; strings quoted, numbers and booleans bare.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainFields;

impl<'writer> FormatFields<'writer> for PlainFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = PlainVisitor {
            out: Escaped(writer),
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct PlainVisitor<'writer> {
    out: Escaped<'writer>,
    first: bool,
    result: fmt::Result,
}

impl PlainVisitor<'_> {
    fn write(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        if self.result.is_err() {
            return;
        }
        let name = field.name();
        // Fields the `log` crate's records carry are already in the line.
        if name.starts_with("log.") {
            return;
        }
        if !self.first {
            self.result = self.out.0.write_char(' ');
        }
        self.first = false;
        self.result = self.result.and_then(|()| match name {
            "message" => self.out.write_fmt(value),
            name => {
                let name = name.strip_prefix("r#").unwrap_or(name);
                self.out.0.write_str(name)?;
                self.out.0.write_char('=')?;
                self.out.write_fmt(value)
            }
        });
    }
}

impl Visit for PlainVisitor<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.write(field, format_args!("{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.write(field, format_args!("{value}"));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.write(field, format_args!("{value}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.write(field, format_args!("{value}"));
        } else {
            self.write(field, format_args!("{value:?}"));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, format_args!("{value:?}"));
    }
}

/// Writes through to the line, escaping control characters.
struct Escaped<'writer>(Writer<'writer>);

impl Write for Escaped<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        if !text.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return self.0.write_str(text);
        }
        for c in text.chars() {
            if c.is_control() {
                write!(self.0, "{}", c.escape_default())?;
            } else {
                self.0.write_char(c)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    /// The fields `log` writes, formatted as `fields` formats them.
    fn line<N>(fields: N, log: impl FnOnce()) -> String
    where
        N: for<'w> FormatFields<'w> + Send + Sync + 'static,
    {
        let out = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .with_level(false)
            .fmt_fields(fields)
            .with_writer(out.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        text.trim().to_owned()
    }

    fn exchange_like() {
        let model = "gpt-5";
        tracing::info!(
            method = "POST",
            path = %"/v1/responses",
            model = %model,
            stream = true,
            status = 200u16,
            total_us = 1_234u64,
            delta = -3i64,
            ttfb_us = Some(17u64),
            missing = Option::<u64>::None,
            r#type = "x",
            "exchange"
        );
    }

    #[test]
    fn the_line_is_the_default_formatters_without_its_styles() {
        let plain = line(PlainFields, exchange_like);
        let default = line(
            tracing_subscriber::fmt::format::DefaultFields::new(),
            exchange_like,
        );
        assert_eq!(plain, default);
        assert_eq!(
            plain,
            "exchange method=\"POST\" path=/v1/responses model=gpt-5 stream=true status=200 \
             total_us=1234 delta=-3 ttfb_us=17 type=\"x\""
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        let plain = line(PlainFields, || {
            let model = "m\u{1b}[31mred\nnext";
            tracing::info!(model = %model, "said \u{7}");
        });
        assert_eq!(plain, "said \\u{7} model=m\\u{1b}[31mred\\nnext");
    }
}
