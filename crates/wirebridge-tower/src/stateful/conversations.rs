//! The Conversations API, answered from the store: `POST …/conversations`,
//! `GET|POST|DELETE …/conversations/{id}`, `GET|POST
//! …/conversations/{id}/items` and `GET|DELETE
//! …/conversations/{id}/items/{item_id}`.

use http::{Method, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use wirebridge_convert::conversation::conversation_items;
use wirebridge_convert::ids::{unix_now, ResponseIds};
use wirebridge_store::{ConversationStore, Lookup, StoreError, StoredConversation, StoredItem};

use super::routes::{json, json_response, Page};
use super::Stateful;
use crate::body::ResponseBody;
use crate::refusal::stored::{
    ConversationNotFound, InvalidJsonBody, ItemNotFound, NeedsCredentials, StoreUnavailable,
};
use crate::replies::Refused;

/// Items a client may add in one request, as the API allows.
const MAX_ITEMS_PER_REQUEST: usize = 20;
/// Keys `metadata` may hold, and their lengths, as the API allows.
const MAX_METADATA_KEYS: usize = 16;
const MAX_METADATA_KEY_CHARS: usize = 64;
const MAX_METADATA_VALUE_CHARS: usize = 512;

/// A request of the Conversations API.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Create,
    Retrieve(String),
    Update(String),
    Delete(String),
    ListItems(String),
    AddItems(String),
    Item(String, String),
    DeleteItem(String, String),
}

impl Route {
    /// Whether the request has a body to read.
    pub(crate) fn has_body(&self) -> bool {
        self.writes()
    }

    /// Whether the request writes to the store (reads and deletes do
    /// not: a credential nobody checked finds nothing, and deletes
    /// nothing, but its own).
    pub(crate) fn writes(&self) -> bool {
        matches!(self, Route::Create | Route::Update(_) | Route::AddItems(_))
    }
}

/// The Conversations API request `method` and `path` make, if any, and the
/// path before `/conversations`: the path ends with `/conversations` and
/// up to three segments after it.
pub(crate) fn route<'p>(method: &Method, path: &'p str) -> Option<(&'p str, Route)> {
    let path = path.trim_end_matches('/');
    // Searched byte by byte: a `str` pattern search sets up more than
    // these short paths cost to scan, and this runs for every request.
    const MARKER: &[u8] = b"/conversations";
    let at = (0..=path.len().checked_sub(MARKER.len())?)
        .rev()
        .find(|&at| path.as_bytes()[at..].starts_with(MARKER))?;
    // After ASCII: a character boundary.
    let rest = &path[at + MARKER.len()..];
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let segments: Vec<&str> = rest.split('/').skip(1).collect();
    if segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    let owned = |s: &str| s.to_owned();
    let route = match (method, segments.as_slice()) {
        (&Method::POST, []) => Some(Route::Create),
        (&Method::GET, [id]) => Some(Route::Retrieve(owned(id))),
        (&Method::POST, [id]) => Some(Route::Update(owned(id))),
        (&Method::DELETE, [id]) => Some(Route::Delete(owned(id))),
        (&Method::GET, [id, "items"]) => Some(Route::ListItems(owned(id))),
        (&Method::POST, [id, "items"]) => Some(Route::AddItems(owned(id))),
        (&Method::GET, [id, "items", item]) => Some(Route::Item(owned(id), owned(item))),
        (&Method::DELETE, [id, "items", item]) => Some(Route::DeleteItem(owned(id), owned(item))),
        _ => None,
    }?;
    Some((&path[..at], route))
}

/// `Conversation`, as the API answers it.
#[derive(Serialize)]
struct Conversation<'a> {
    id: &'a str,
    object: &'static str,
    created_at: u64,
    metadata: &'a RawValue,
}

/// `ConversationItemList`.
#[derive(Serialize)]
struct ItemList<'a> {
    object: &'static str,
    data: Vec<&'a RawValue>,
    first_id: Option<&'a str>,
    last_id: Option<&'a str>,
    has_more: bool,
}

#[derive(Serialize)]
struct Deleted<'a> {
    id: &'a str,
    object: &'static str,
    deleted: bool,
}

/// The body of a create, an update or an addition of items.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    items: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

impl Stateful {
    /// Answers a Conversations API request for a tenant (`None`: a request
    /// without a credential, which keeps nothing and finds nothing).
    pub(crate) async fn serve_conversation<B>(
        &self,
        tenant: Option<&str>,
        route: Route,
        query: Option<&str>,
        body: &[u8],
    ) -> Response<ResponseBody<B>> {
        let answer = match (tenant, self.conversations()) {
            (_, Err(refused)) => Err(refused),
            (None, Ok(_)) => Err(match &route {
                Route::Create => Refused::from(NeedsCredentials {
                    param: "conversation",
                }),
                Route::Retrieve(id)
                | Route::Update(id)
                | Route::Delete(id)
                | Route::ListItems(id)
                | Route::AddItems(id)
                | Route::Item(id, _)
                | Route::DeleteItem(id, _) => Refused::from(ConversationNotFound::at_path(id)),
            }),
            (Some(tenant), Ok(store)) => answer(store, tenant, route, query, body).await,
        };
        match answer {
            Ok((status, body)) => {
                let mut response = json_response(body);
                *response.status_mut() = status;
                response
            }
            Err(refused) => refused.response(),
        }
    }
}

async fn answer(
    store: &dyn ConversationStore,
    tenant: &str,
    route: Route,
    query: Option<&str>,
    body: &[u8],
) -> Result<(StatusCode, Vec<u8>), Refused> {
    let ok = |body| Ok((StatusCode::OK, body));
    match route {
        Route::Create => {
            let body = read_body(body)?;
            let metadata = metadata(body.metadata)?;
            let ids = ResponseIds::new();
            let items = match body.items.filter(|raw| raw.get() != "null") {
                Some(raw) => items(raw, &ids)?,
                None => Vec::new(),
            };
            let conversation = StoredConversation {
                id: ids.conversation(),
                created_at: unix_now(),
                metadata,
            };
            store
                .create_conversation(tenant, conversation.clone(), items)
                .await
                .map_err(|e| Refused::from(StoreUnavailable(e)))?;
            ok(conversation_json(&conversation))
        }
        Route::Retrieve(id) => match store.conversation(tenant, &id).await {
            Ok(Some(conversation)) => ok(conversation_json(&conversation)),
            Ok(None) => Err(Refused::from(ConversationNotFound::at_path(&id))),
            Err(e) => Err(Refused::from(StoreUnavailable(e))),
        },
        Route::Update(id) => {
            let body = read_body(body)?;
            if body.metadata.is_none() {
                return Err(Refused::invalid_parameter(
                    "metadata",
                    "an update of a conversation sets its `metadata`, which is missing".into(),
                ));
            }
            let metadata = metadata(body.metadata)?;
            match store.update_conversation(tenant, &id, metadata).await {
                Ok(Some(conversation)) => ok(conversation_json(&conversation)),
                Ok(None) => Err(Refused::from(ConversationNotFound::at_path(&id))),
                Err(e) => Err(Refused::from(StoreUnavailable(e))),
            }
        }
        Route::Delete(id) => match store.delete_conversation(tenant, &id).await {
            Ok(true) => ok(json(&Deleted {
                id: &id,
                object: "conversation.deleted",
                deleted: true,
            })),
            Ok(false) => Err(Refused::from(ConversationNotFound::at_path(&id))),
            Err(e) => Err(Refused::from(StoreUnavailable(e))),
        },
        Route::ListItems(id) => {
            let query = Page::parse(query)?.query();
            match store.list_items(tenant, &id, &query).await {
                Ok(Lookup::Found(page)) => ok(item_list(&page.items, page.has_more)),
                Ok(Lookup::NoConversation) => {
                    Err(Refused::from(ConversationNotFound::at_path(&id)))
                }
                Ok(Lookup::NoItem) => Err(Refused::invalid_parameter(
                    "after",
                    format!(
                        "conversation {id} has no item with id '{}'",
                        query.after.unwrap_or_default()
                    ),
                )),
                Err(e) => Err(Refused::from(StoreUnavailable(e))),
            }
        }
        Route::AddItems(id) => {
            let body = read_body(body)?;
            let Some(raw) = body.items.filter(|raw| raw.get() != "null") else {
                return Err(Refused::invalid_parameter(
                    "items",
                    "the items to add are missing: send them in `items`".into(),
                ));
            };
            let items = items(raw, &ResponseIds::new())?;
            match store.append_items(tenant, &id, items.clone()).await {
                Ok(true) => ok(item_list(&items, false)),
                Ok(false) => Err(Refused::from(ConversationNotFound::at_path(&id))),
                Err(e) => Err(Refused::from(StoreUnavailable(e))),
            }
        }
        Route::Item(id, item_id) => {
            let item = item_found(store.item(tenant, &id, &item_id).await, &id, &item_id)?;
            ok(item.item.into_bytes())
        }
        Route::DeleteItem(id, item_id) => {
            let lookup = store.delete_item(tenant, &id, &item_id).await;
            ok(conversation_json(&item_found(lookup, &id, &item_id)?))
        }
    }
}

/// What a lookup of the item `item_id` of conversation `id` found, or the
/// 404 that names what was not there.
fn item_found<T>(
    lookup: Result<Lookup<T>, StoreError>,
    id: &str,
    item_id: &str,
) -> Result<T, Refused> {
    match lookup {
        Ok(Lookup::Found(found)) => Ok(found),
        Ok(Lookup::NoConversation) => Err(ConversationNotFound::at_path(id).into()),
        Ok(Lookup::NoItem) => Err(ItemNotFound {
            conversation: id.to_owned(),
            item: item_id.to_owned(),
        }
        .into()),
        Err(e) => Err(StoreUnavailable(e).into()),
    }
}

fn read_body(body: &[u8]) -> Result<Body<'_>, Refused> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| InvalidJsonBody(e).into())
}

/// The items of a request, in full form, at most
/// [`MAX_ITEMS_PER_REQUEST`].
fn items(raw: &RawValue, ids: &ResponseIds) -> Result<Vec<StoredItem>, Refused> {
    let items = conversation_items(raw.get(), ids, "items").map_err(Refused::from_convert)?;
    if items.len() > MAX_ITEMS_PER_REQUEST {
        return Err(Refused::invalid_parameter(
            "items",
            format!(
                "{} items were sent; at most {MAX_ITEMS_PER_REQUEST} are added at a time",
                items.len()
            ),
        ));
    }
    Ok(items
        .into_iter()
        .map(|item| StoredItem {
            id: item.id,
            item: item.item,
        })
        .collect())
}

/// `metadata` as kept: `{}` when absent or `null`, else an object of at most
/// 16 string values, its keys up to 64 characters and values up to 512.
fn metadata(raw: Option<&RawValue>) -> Result<String, Refused> {
    let Some(raw) = raw.filter(|raw| raw.get() != "null") else {
        return Ok("{}".to_owned());
    };
    let pairs: Vec<(String, String)> = serde_json::from_str::<serde_json::Map<_, _>>(raw.get())
        .ok()
        .and_then(|map| {
            map.into_iter()
                .map(|(k, v)| v.as_str().map(|v| (k, v.to_owned())))
                .collect()
        })
        .ok_or_else(|| {
            Refused::invalid_parameter(
                "metadata",
                "metadata must be an object whose values are strings".into(),
            )
        })?;
    if pairs.len() > MAX_METADATA_KEYS {
        return Err(Refused::invalid_parameter(
            "metadata",
            format!(
                "metadata holds {} keys; at most {MAX_METADATA_KEYS} are allowed",
                pairs.len()
            ),
        ));
    }
    for (key, value) in &pairs {
        if key.chars().count() > MAX_METADATA_KEY_CHARS {
            return Err(Refused::invalid_parameter(
                "metadata",
                format!(
                    "the metadata key '{key}' is longer than {MAX_METADATA_KEY_CHARS} characters"
                ),
            ));
        }
        if value.chars().count() > MAX_METADATA_VALUE_CHARS {
            return Err(Refused::invalid_parameter(
                "metadata",
                format!(
                    "the value of metadata key '{key}' is longer than {MAX_METADATA_VALUE_CHARS} \
                     characters"
                ),
            ));
        }
    }
    Ok(raw.get().to_owned())
}

fn conversation_json(conversation: &StoredConversation) -> Vec<u8> {
    let metadata: &RawValue =
        serde_json::from_str(&conversation.metadata).unwrap_or_else(|_| empty_object());
    json(&Conversation {
        id: &conversation.id,
        object: "conversation",
        created_at: conversation.created_at,
        metadata,
    })
}

fn empty_object() -> &'static RawValue {
    serde_json::from_str("{}").expect("an empty object is JSON")
}

fn item_list(items: &[StoredItem], has_more: bool) -> Vec<u8> {
    let data: Vec<&RawValue> = items
        .iter()
        .filter_map(|item| serde_json::from_str(&item.item).ok())
        .collect();
    json(&ItemList {
        object: "list",
        data,
        first_id: items.first().map(|item| item.id.as_str()),
        last_id: items.last().map(|item| item.id.as_str()),
        has_more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let r = |m: Method, p: &str| route(&m, p).map(|(_, route)| route);
        assert_eq!(r(Method::POST, "/v1/conversations"), Some(Route::Create));
        assert_eq!(
            route(&Method::POST, "/openai/v1/conversations/conv_1/items"),
            Some(("/openai/v1", Route::AddItems("conv_1".into())))
        );
        assert_eq!(
            route(&Method::POST, "/conversations").map(|(prefix, _)| prefix),
            Some("")
        );
        assert_eq!(
            r(Method::GET, "/v1/conversations/conv_1/"),
            Some(Route::Retrieve("conv_1".into()))
        );
        assert_eq!(
            r(Method::POST, "/x/v1/conversations/conv_1"),
            Some(Route::Update("conv_1".into()))
        );
        assert_eq!(
            r(Method::DELETE, "/v1/conversations/conv_1"),
            Some(Route::Delete("conv_1".into()))
        );
        assert_eq!(
            r(Method::POST, "/v1/conversations/conv_1/items"),
            Some(Route::AddItems("conv_1".into()))
        );
        assert_eq!(
            r(Method::DELETE, "/v1/conversations/conv_1/items/msg_1"),
            Some(Route::DeleteItem("conv_1".into(), "msg_1".into()))
        );
        assert_eq!(r(Method::GET, "/v1/conversations"), None);
        assert_eq!(r(Method::GET, "/v1/conversationsx/conv_1"), None);
        assert_eq!(r(Method::GET, "/v1/conversations/conv_1/other"), None);
        assert_eq!(r(Method::GET, "/v1/conversations//items"), None);
        assert_eq!(r(Method::GET, "/v1/responses/resp_1"), None);
    }

    #[test]
    fn metadata_is_bounded_as_the_api_bounds_it() {
        assert_eq!(metadata(None).unwrap(), "{}");
        let raw = |json: &str| RawValue::from_string(json.to_owned()).unwrap();
        assert_eq!(
            metadata(Some(&raw(r#"{"a":"b"}"#))).unwrap(),
            r#"{"a":"b"}"#
        );
        assert!(metadata(Some(&raw(r#"{"a":1}"#))).is_err());
        assert!(metadata(Some(&raw("[]"))).is_err());
        let many: Vec<String> = (0..17).map(|n| format!(r#""k{n}":"v""#)).collect();
        assert!(metadata(Some(&raw(&format!("{{{}}}", many.join(","))))).is_err());
        let long = format!(r#"{{"k":"{}"}}"#, "v".repeat(513));
        assert!(metadata(Some(&raw(&long))).is_err());
    }
}
