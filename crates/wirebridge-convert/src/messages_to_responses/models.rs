//! The model list a Messages client reads (`GET /v1/models`, and
//! `GET /v1/models/{id}`), from the OpenAI-style list of the service
//! behind: `{"data":[{"type":"model","id","display_name","created_at"}],
//! "has_more","first_id","last_id"}`, paged by `limit`, `after_id` and
//! `before_id` as Anthropic's API pages it.

use serde::Serialize;
use serde_json::Value;

use crate::error::ConvertError;

/// Models on a page when the client names no `limit`.
const DEFAULT_LIMIT: usize = 20;

/// The most models on a page.
const MAX_LIMIT: usize = 1000;

/// Which page of the list a client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPage {
    /// Models on the page (1 to 1,000; 20 by default).
    pub limit: usize,
    /// The models after this one.
    pub after_id: Option<String>,
    /// The models before this one.
    pub before_id: Option<String>,
}

impl Default for ModelPage {
    fn default() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            after_id: None,
            before_id: None,
        }
    }
}

impl ModelPage {
    /// The page a query string asks for (`limit=5&after_id=m`); a value
    /// that is not a number in range keeps the default, as do unknown
    /// parameters.
    ///
    /// ```
    /// use wirebridge_convert::messages_to_responses::ModelPage;
    ///
    /// let page = ModelPage::from_query(Some("limit=2&after_id=qwen3"));
    /// assert_eq!((page.limit, page.after_id.as_deref()), (2, Some("qwen3")));
    /// assert_eq!(ModelPage::from_query(Some("limit=0")).limit, 20);
    /// ```
    pub fn from_query(query: Option<&str>) -> Self {
        let mut page = Self::default();
        for pair in query.unwrap_or_default().split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decoded(value);
            match name {
                "limit" => {
                    if let Some(limit) = value
                        .parse::<usize>()
                        .ok()
                        .filter(|l| (1..=MAX_LIMIT).contains(l))
                    {
                        page.limit = limit;
                    }
                }
                "after_id" if !value.is_empty() => page.after_id = Some(value),
                "before_id" if !value.is_empty() => page.before_id = Some(value),
                _ => {}
            }
        }
        page
    }
}

/// One model as Anthropic's API describes it.
#[derive(Debug, Serialize)]
struct ModelInfo {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    display_name: String,
    created_at: String,
}

#[derive(Debug, Serialize)]
struct ModelList<'a> {
    data: &'a [ModelInfo],
    has_more: bool,
    first_id: Option<&'a str>,
    last_id: Option<&'a str>,
}

/// The models of an OpenAI-style list (`{"data":[{"id","created"},…]}`),
/// in the order given. Entries without a string `id` are skipped.
fn models(openai_list: &[u8]) -> Result<Vec<ModelInfo>, ConvertError> {
    let list: Value = serde_json::from_slice(openai_list)
        .map_err(|e| ConvertError::InvalidUpstream(format!("the model list is not JSON: {e}")))?;
    let data = list.get("data").and_then(Value::as_array).ok_or_else(|| {
        ConvertError::InvalidUpstream("the model list has no 'data' array".into())
    })?;
    Ok(data
        .iter()
        .filter_map(|entry| {
            let id = entry.get("id")?.as_str()?.to_owned();
            let created = entry.get("created").and_then(Value::as_i64).unwrap_or(0);
            Some(ModelInfo {
                kind: "model",
                display_name: id.clone(),
                id,
                created_at: rfc3339(created),
            })
        })
        .collect())
}

/// A page of Anthropic's model list, from the OpenAI-style list of the
/// service behind.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{model_list, ModelPage};
///
/// let openai = br#"{"object":"list","data":[
///   {"id":"qwen3","object":"model","created":1767225600,"owned_by":"vllm"},
///   {"id":"gemma","object":"model","created":0}]}"#;
/// let page = model_list(openai, &ModelPage { limit: 1, ..ModelPage::default() }).unwrap();
/// let page: serde_json::Value = serde_json::from_slice(&page).unwrap();
/// assert_eq!(page["data"][0]["type"], "model");
/// assert_eq!(page["data"][0]["id"], "qwen3");
/// assert_eq!(page["data"][0]["created_at"], "2026-01-01T00:00:00Z");
/// assert_eq!((page["has_more"].as_bool(), page["last_id"].as_str()), (Some(true), Some("qwen3")));
/// ```
pub fn model_list(openai_list: &[u8], page: &ModelPage) -> Result<Vec<u8>, ConvertError> {
    let all = models(openai_list)?;
    let position = |id: &Option<String>| id.as_ref().map(|id| all.iter().position(|m| &m.id == id));
    let (start, end) = match (position(&page.after_id), position(&page.before_id)) {
        // Unknown ids page from nothing, as a cursor past the end would.
        (Some(None), _) | (_, Some(None)) => (0, 0),
        (Some(Some(after)), _) => (after + 1, (after + 1 + page.limit).min(all.len())),
        (None, Some(Some(before))) => (before.saturating_sub(page.limit), before),
        (None, None) => (0, page.limit.min(all.len())),
    };
    let shown = &all[start..end.max(start)];
    let has_more = match page.before_id {
        _ if shown.is_empty() => false,
        Some(_) => start > 0,
        None => end < all.len(),
    };
    let list = ModelList {
        data: shown,
        has_more,
        first_id: shown.first().map(|m| m.id.as_str()),
        last_id: shown.last().map(|m| m.id.as_str()),
    };
    Ok(serde_json::to_vec(&list).expect("model lists always serialize"))
}

/// One model of Anthropic's list (`GET /v1/models/{id}`), or `None` if the
/// service behind lists no such model.
pub fn model_info(openai_list: &[u8], id: &str) -> Result<Option<Vec<u8>>, ConvertError> {
    Ok(models(openai_list)?
        .iter()
        .find(|m| m.id == id)
        .map(|m| serde_json::to_vec(m).expect("models always serialize")))
}

/// `%XX` escapes of a query value decoded; an invalid escape is kept.
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A Unix time as RFC 3339 in UTC (`1970-01-01T00:00:00Z`), by the civil
/// calendar's days-from-epoch algorithm.
fn rfc3339(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let seconds = unix.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_the_calendars() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_709_164_799), "2024-02-28T23:59:59Z");
        assert_eq!(rfc3339(4_102_444_800), "2100-01-01T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    fn ids(page: &[u8]) -> (Vec<String>, bool) {
        let page: Value = serde_json::from_slice(page).unwrap();
        let ids = page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect();
        (ids, page["has_more"].as_bool().unwrap())
    }

    #[test]
    fn pages_go_forward_and_back_from_a_cursor() {
        let list = br#"{"data":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":7},{"id":"d"}]}"#;
        let page = |query| ids(&model_list(list, &ModelPage::from_query(Some(query))).unwrap());
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(page(""), (strings(&["a", "b", "c", "d"]), false));
        assert_eq!(page("limit=2"), (strings(&["a", "b"]), true));
        assert_eq!(page("limit=2&after_id=b"), (strings(&["c", "d"]), false));
        assert_eq!(page("limit=2&before_id=d"), (strings(&["b", "c"]), true));
        assert_eq!(page("limit=2&before_id=b"), (strings(&["a"]), false));
        assert_eq!(page("after_id=zzz"), (Vec::new(), false));
        assert!(model_list(b"{}", &ModelPage::default()).is_err());
        assert!(model_info(list, "c").unwrap().is_some());
        assert!(model_info(list, "e").unwrap().is_none());
    }
}
