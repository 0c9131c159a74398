//! Where a tenant's records live: `{prefix}:{<tenant>}:x` (the tenant's
//! index: which conversation holds each response) and
//! `{prefix}:{<tenant>}:c:<n>` (conversation `n`: its responses, their
//! places and their items), and `{prefix}:{<tenant>}:l:<id>`, the lease on
//! the background run of response `id`, which expires unless renewed.
//!
//! A conversation of `/v1/conversations` ([`ConversationKeys`]) is three
//! keys, named by its id: `{prefix}:{<tenant>}:v:<id>`, a hash of its record
//! (`v`, the layout version; `created_at`; `metadata`),
//! `{prefix}:{<tenant>}:v:<id>:o`, a list of its item ids in order, and
//! `{prefix}:{<tenant>}:v:<id>:i`, a hash from each item id to the item.
//! The last two are absent while it has no items.
//!
//! A prompt cache fingerprint is one string key, `{prefix}:{<tenant>}:f:<id>`,
//! named by its response's id, escaped as a tenant is.
//!
//! The braces make the tenant a Redis Cluster hash tag: every key of one
//! tenant hashes to the same slot, so a conversation is read by one script
//! on one node. The tenant part is escaped (`%`, `:`, `{` and `}` as `%25`,
//! `%3A`, `%7B` and `%7D`) so it ends at the first `}` and no two tenants
//! share keys; braces in the prefix are escaped alike so that the tenant's
//! braces are the first pair in the key. A conversation id, which the client
//! chooses, is escaped as a tenant is: it holds no `:`, so it ends where
//! its key's suffix (`:o`, `:i`) begins and no id names another's keys.

/// The keys of one tenant.
#[derive(Debug, Clone)]
pub(super) struct TenantKeys {
    /// `{prefix}:{<tenant>}:`.
    base: String,
}

impl TenantKeys {
    pub(super) fn new(prefix: &str, tenant: &str) -> Self {
        let mut base = String::with_capacity(prefix.len() + tenant.len() + 4);
        escape(&mut base, prefix, false);
        base.push_str(":{");
        if tenant.is_empty() {
            // An empty hash tag would hash the whole key; a lone `%` is no
            // escaped tenant's text.
            base.push('%');
        }
        escape(&mut base, tenant, true);
        base.push_str("}:");
        Self { base }
    }

    /// The tenant's index: a hash from each response's id to the number of
    /// its conversation.
    pub(super) fn index(&self) -> String {
        let mut key = self.base.clone();
        key.push('x');
        key
    }

    /// The lease on the background run `id`: a key that exists while the
    /// process running it renews it. The id, which the client may name,
    /// is escaped as a conversation id is.
    pub(super) fn lease(&self, id: &str) -> String {
        let mut key = self.base.clone();
        key.push_str("l:");
        escape(&mut key, id, true);
        key
    }

    /// The keys of conversations are this followed by their number: what
    /// the scripts are given to name them.
    pub(super) fn conversations(&self) -> String {
        let mut stem = self.base.clone();
        stem.push_str("c:");
        stem
    }
}

/// The keys of one conversation of a tenant, in the order the conversation
/// scripts take them as `KEYS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ConversationKeys {
    /// `…:v:<id>`: the record, a hash of `v`, `created_at` and `metadata`.
    pub(super) record: String,
    /// `…:v:<id>:o`: the item ids, oldest first, a list.
    pub(super) order: String,
    /// `…:v:<id>:i`: the items, a hash from item id to item.
    pub(super) items: String,
}

impl ConversationKeys {
    /// The three keys, record first, as a script's `KEYS`.
    pub(super) fn all(&self) -> [String; 3] {
        [self.record.clone(), self.order.clone(), self.items.clone()]
    }
}

impl TenantKeys {
    /// The keys of the tenant's conversation `id` (a `/v1/conversations`
    /// id, escaped).
    pub(super) fn conversation(&self, id: &str) -> ConversationKeys {
        let mut record = String::with_capacity(self.base.len() + id.len() + 2);
        record.push_str(&self.base);
        record.push_str("v:");
        escape(&mut record, id, true);
        let order = format!("{record}:o");
        let items = format!("{record}:i");
        ConversationKeys {
            record,
            order,
            items,
        }
    }
}

impl TenantKeys {
    /// `…:f:<id>`: the prompt cache fingerprint kept for response `id` (a
    /// string, with the store's TTL), the id escaped as a tenant is.
    pub(super) fn fingerprint(&self, id: &str) -> String {
        let mut key = String::with_capacity(self.base.len() + id.len() + 2);
        key.push_str(&self.base);
        key.push_str("f:");
        escape(&mut key, id, true);
        key
    }
}

fn escape(out: &mut String, text: &str, colons: bool) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '{' => out.push_str("%7B"),
            '}' => out.push_str("%7D"),
            ':' if colons => out.push_str("%3A"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(prefix: &str, tenant: &str) -> String {
        TenantKeys::new(prefix, tenant).index()
    }

    #[test]
    fn the_tenant_is_the_hash_tag() {
        assert_eq!(index("wirebridge:resp", "abc"), "wirebridge:resp:{abc}:x");
        assert_eq!(TenantKeys::new("p", "abc").conversations(), "p:{abc}:c:");
        // Braces in the prefix cannot open an earlier hash tag.
        assert_eq!(index("p{x}", "abc"), "p%7Bx%7D:{abc}:x");
    }

    #[test]
    fn tenants_are_unambiguous() {
        assert_ne!(index("p", "a:b"), index("p", "a"));
        assert_ne!(index("p", "a%3Ab"), index("p", "a:b"));
        assert_ne!(index("p", "a}b"), index("p", "a"));
        assert_eq!(index("p", "a:b%{}"), "p:{a%3Ab%25%7B%7D}:x");
        assert_eq!(index("p", ""), "p:{%}:x");
        assert_ne!(index("p", ""), index("p", "%"));
        // A tenant that ends like another's key still has its own tag.
        assert_ne!(index("p", "a}:x"), index("p", "a"));
    }

    #[test]
    fn a_fingerprint_s_key_carries_the_tenant_s_tag() {
        let tenant = TenantKeys::new("p", "abc");
        assert_eq!(tenant.fingerprint("resp_1"), "p:{abc}:f:resp_1");
        assert_eq!(tenant.fingerprint("a}:x"), "p:{abc}:f:a%7D%3Ax");
        assert_ne!(tenant.fingerprint("x"), tenant.conversation("x").record);
    }

    /// The keys of conversation `id` of `tenant`, under prefix `p`.
    fn conversation(tenant: &str, id: &str) -> ConversationKeys {
        TenantKeys::new("p", tenant).conversation(id)
    }

    #[test]
    fn a_conversation_s_keys_carry_the_tenant_s_tag() {
        assert_eq!(
            conversation("abc", "conv_1"),
            ConversationKeys {
                record: "p:{abc}:v:conv_1".into(),
                order: "p:{abc}:v:conv_1:o".into(),
                items: "p:{abc}:v:conv_1:i".into(),
            }
        );
        // Braces in the id open no hash tag of their own.
        assert_eq!(conversation("abc", "{x}").record, "p:{abc}:v:%7Bx%7D");
        assert_eq!(conversation("t", "").items, "p:{t}:v::i");
    }

    #[test]
    fn no_conversation_id_reaches_another_key() {
        let ids = [
            "a", "a:o", "a:i", "a%3Ao", "a%", "", ":", "%", "a}", "a{", "}:x", "a:o:i", "a:i:o",
        ];
        let mut seen = std::collections::BTreeSet::new();
        let tenant = TenantKeys::new("p", "t");
        let others = [tenant.index(), tenant.conversations()];
        for id in ids {
            let keys = conversation("t", id);
            for key in keys.all() {
                assert!(key.starts_with("p:{t}:v:"), "{id:?}: {key}");
                assert!(!others.contains(&key), "{id:?}: {key}");
                assert!(seen.insert(key.clone()), "{id:?} shares {key}");
                // The escaped id holds no `:`, so the suffix is the key's.
                let rest = &key["p:{t}:v:".len()..];
                assert!(rest.matches(':').count() <= 1, "{id:?}: {key}");
            }
        }
        // A response conversation's stem (`c:`) is never a record's prefix.
        assert!(!conversation("t", "x")
            .record
            .starts_with(&tenant.conversations()));
    }
}
