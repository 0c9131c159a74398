//! The endpoints a store answers itself: `GET` and `DELETE
//! …/responses/{id}`, and `GET …/responses/{id}/input_items`.

use http::{header, HeaderValue, Method, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use wirebridge_wire::Str;

use wirebridge_store::StoreError;

use super::{with_output, Stateful};
use crate::body::ResponseBody;
use crate::refusal::stored::{ResponseNotFound, StoreUnavailable};
use crate::replies::Refused;

/// A request the store answers itself.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Retrieve(String),
    Delete(String),
    InputItems(String),
}

/// `GET|DELETE …/responses/{id}` and `GET …/responses/{id}/input_items`.
pub(crate) fn route(method: &Method, path: &str, endpoint: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    let rest = crate::paths::after_endpoint(path, endpoint)?;
    let (id, tail) = match rest.split_once('/') {
        Some((id, tail)) => (id, Some(tail)),
        None => (rest, None),
    };
    if id.is_empty() {
        return None;
    }
    match (method, tail) {
        (&Method::GET, None) => Some(Route::Retrieve(id.to_owned())),
        (&Method::DELETE, None) => Some(Route::Delete(id.to_owned())),
        (&Method::GET, Some("input_items")) => Some(Route::InputItems(id.to_owned())),
        _ => None,
    }
}

impl Stateful {
    /// Answers a [`Route`] for a tenant; `None`, a request that may keep
    /// nothing, finds nothing.
    pub(crate) async fn serve<B>(
        &self,
        tenant: Option<&str>,
        route: Route,
        query: Option<&str>,
    ) -> Response<ResponseBody<B>> {
        let (Some(tenant), Some(store)) = (tenant, self.store()) else {
            let (Route::Retrieve(id) | Route::Delete(id) | Route::InputItems(id)) = route;
            return Refused::from(ResponseNotFound { id: id.to_string() }).response();
        };
        let result = match route {
            Route::Retrieve(id) => match store.get(tenant, &id).await {
                Ok(Some(record)) => {
                    // A run whose process is gone reads `failed`.
                    let record = super::settled(self, &**store, tenant, record).await;
                    with_output(&record.response, &record.output).map_err(|e| {
                        Refused::from(StoreUnavailable(StoreError::Corrupt(format!(
                            "response {id}: {e}"
                        ))))
                    })
                }
                Ok(None) => Err(Refused::from(ResponseNotFound { id: id.to_string() })),
                Err(e) => Err(Refused::from(StoreUnavailable(e))),
            },
            Route::Delete(id) => match store.delete(tenant, &id).await {
                Ok(true) => Ok(json(&Deleted {
                    id: &id,
                    object: "response.deleted",
                    deleted: true,
                })),
                Ok(false) => Err(Refused::from(ResponseNotFound { id: id.to_string() })),
                Err(e) => Err(Refused::from(StoreUnavailable(e))),
            },
            Route::InputItems(id) => match Page::parse(query) {
                Err(refused) => Err(refused),
                Ok(page) => match store.get(tenant, &id).await {
                    Ok(Some(record)) => page.list(&record.input),
                    Ok(None) => Err(Refused::from(ResponseNotFound { id: id.to_string() })),
                    Err(e) => Err(Refused::from(StoreUnavailable(e))),
                },
            },
        };
        match result {
            Ok(body) => json_response(body),
            Err(refused) => refused.response(),
        }
    }
}

#[derive(Serialize)]
struct Deleted<'a> {
    id: &'a str,
    object: &'static str,
    deleted: bool,
}

/// One page of `input_items`.
#[derive(Serialize)]
struct List<'a> {
    object: &'static str,
    data: &'a [&'a RawValue],
    first_id: Option<&'a str>,
    last_id: Option<&'a str>,
    has_more: bool,
}

/// The id of a stored item.
#[derive(Deserialize)]
struct ItemId<'a> {
    #[serde(borrow)]
    id: Option<Str<'a>>,
}

fn item_id(item: &RawValue) -> Option<Str<'_>> {
    serde_json::from_str::<ItemId<'_>>(item.get()).ok()?.id
}

/// `limit`, `order` and `after` of a listing.
pub(super) struct Page {
    limit: usize,
    ascending: bool,
    after: Option<String>,
}

impl Page {
    /// The store's query for this page.
    pub(super) fn query(self) -> wirebridge_store::ItemQuery {
        wirebridge_store::ItemQuery {
            after: self.after,
            limit: self.limit,
            order: match self.ascending {
                true => wirebridge_store::Order::Ascending,
                false => wirebridge_store::Order::Descending,
            },
        }
    }

    pub(super) fn parse(query: Option<&str>) -> Result<Page, Refused> {
        let mut page = Page {
            limit: 20,
            ascending: false,
            after: None,
        };
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "limit" => match value.parse::<usize>() {
                    Ok(n) if (1..=100).contains(&n) => page.limit = n,
                    _ => {
                        return Err(Refused::invalid_parameter(
                            "limit",
                            format!("limit must be a number from 1 to 100, not '{value}'"),
                        ))
                    }
                },
                "order" => match value {
                    "asc" => page.ascending = true,
                    "desc" => page.ascending = false,
                    _ => {
                        return Err(Refused::invalid_parameter(
                            "order",
                            format!("order must be asc or desc, not '{value}'"),
                        ))
                    }
                },
                "after" => page.after = Some(value.to_owned()),
                _ => {}
            }
        }
        Ok(page)
    }

    /// The page of a stored turn's input items (a JSON array).
    fn list(&self, input: &str) -> Result<Vec<u8>, Refused> {
        let mut items: Vec<&RawValue> = serde_json::from_str(input).unwrap_or_default();
        if !self.ascending {
            items.reverse();
        }
        let start = match &self.after {
            Some(after) => {
                match items
                    .iter()
                    .position(|i| item_id(i).is_some_and(|id| id == after.as_str()))
                {
                    Some(at) => at + 1,
                    None => {
                        return Err(Refused::invalid_parameter(
                            "after",
                            format!("no input item with id '{after}'"),
                        ))
                    }
                }
            }
            None => 0,
        };
        let rest = &items[start.min(items.len())..];
        let data = &rest[..rest.len().min(self.limit)];
        let first = data.first().and_then(|i| item_id(i));
        let last = data.last().and_then(|i| item_id(i));
        Ok(json(&List {
            object: "list",
            data,
            first_id: first.as_deref(),
            last_id: last.as_deref(),
            has_more: rest.len() > self.limit,
        }))
    }
}

pub(super) fn json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("listings always serialize")
}

pub(super) fn json_response<B>(body: Vec<u8>) -> Response<ResponseBody<B>> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, length);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let r = |m: Method, p: &str| route(&m, p, "/responses");
        assert_eq!(
            r(Method::GET, "/v1/responses/resp_1"),
            Some(Route::Retrieve("resp_1".into()))
        );
        assert_eq!(
            r(Method::DELETE, "/v1/responses/resp_1"),
            Some(Route::Delete("resp_1".into()))
        );
        assert_eq!(
            r(Method::GET, "/x/v1/responses/resp_1/input_items"),
            Some(Route::InputItems("resp_1".into()))
        );
        assert_eq!(r(Method::POST, "/v1/responses/resp_1"), None);
        assert_eq!(r(Method::GET, "/v1/responses"), None);
        assert_eq!(r(Method::GET, "/v1/responses/resp_1/cancel"), None);
    }

    #[test]
    fn pages_read_ids_without_parsing_items_whole() {
        let page = Page::parse(Some("order=asc&limit=1&after=a")).unwrap();
        let body = page
            .list(r#"[{"id":"a","content":"x"},{"id":"b","content":{"deep":[1,2]}},{"id":"c"}]"#)
            .unwrap();
        let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(list["data"][0]["content"]["deep"][1], 2);
        assert_eq!(
            (&list["first_id"], &list["last_id"]),
            (&"b".into(), &"b".into())
        );
        assert_eq!(list["has_more"], true);
    }
}
