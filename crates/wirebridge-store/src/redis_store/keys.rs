//! Where a tenant's records live: `{prefix}:{<tenant>}:<kind>:<id>`.
//!
//! The braces make the tenant a Redis Cluster hash tag: every key of one
//! tenant hashes to the same slot, so a conversation is read by one script
//! on one node. The tenant part is escaped (`%`, `:`, `{` and `}` as `%25`,
//! `%3A`, `%7B` and `%7D`) so it ends at the first `}` and no two tenants
//! share keys; braces in the prefix are escaped alike so that the tenant's
//! braces are the first pair in the key.

/// What a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// The response object and its metadata.
    Envelope,
    /// The turn's input and output items.
    Turn,
    /// The ids of the response's ancestors.
    Ancestors,
}

impl Part {
    fn letter(self) -> char {
        match self {
            Part::Envelope => 'r',
            Part::Turn => 't',
            Part::Ancestors => 'a',
        }
    }
}

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

    /// The key of `part` of response `id`.
    pub(super) fn key(&self, part: Part, id: &str) -> String {
        let mut key = String::with_capacity(self.base.len() + 2 + id.len());
        key.push_str(&self.base);
        key.push(part.letter());
        key.push(':');
        key.push_str(id);
        key
    }

    /// `{prefix}:{<tenant>}:`, which the save script completes into the keys
    /// of ancestors.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// The keys of `part` are this followed by the id: what the scripts are
    /// given to name the keys of ancestors.
    pub(super) fn stem(&self, part: Part) -> String {
        let mut stem = self.base.clone();
        stem.push(part.letter());
        stem.push(':');
        stem
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

    fn key(prefix: &str, tenant: &str, id: &str) -> String {
        TenantKeys::new(prefix, tenant).key(Part::Turn, id)
    }

    #[test]
    fn the_tenant_is_the_hash_tag() {
        assert_eq!(
            key("wirebridge:resp", "abc", "resp_1"),
            "wirebridge:resp:{abc}:t:resp_1"
        );
        let keys = TenantKeys::new("p", "abc");
        assert_eq!(keys.key(Part::Envelope, "x"), "p:{abc}:r:x");
        assert_eq!(keys.key(Part::Ancestors, "x"), "p:{abc}:a:x");
        assert_eq!(keys.stem(Part::Turn), "p:{abc}:t:");
        // Braces in the prefix cannot open an earlier hash tag.
        assert_eq!(key("p{x}", "abc", "r"), "p%7Bx%7D:{abc}:t:r");
    }

    #[test]
    fn tenants_are_unambiguous() {
        assert_ne!(key("p", "a:b", "c"), key("p", "a", "b:c"));
        assert_ne!(key("p", "a%3Ab", "c"), key("p", "a:b", "c"));
        assert_ne!(key("p", "a}b", "c"), key("p", "a", "b}c"));
        assert_eq!(key("p", "a:b%{}", "c:d"), "p:{a%3Ab%25%7B%7D}:t:c:d");
        assert_eq!(key("p", "", "c"), "p:{%}:t:c");
        assert_ne!(key("p", "", "c"), key("p", "%", "c"));
    }
}
