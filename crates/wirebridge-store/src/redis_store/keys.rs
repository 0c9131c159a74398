//! Where a tenant's records live: `{prefix}:{<tenant>}:x` (the tenant's
//! index: which conversation holds each response) and
//! `{prefix}:{<tenant>}:c:<n>` (conversation `n`: its responses, their
//! places and their items).
//!
//! The braces make the tenant a Redis Cluster hash tag: every key of one
//! tenant hashes to the same slot, so a conversation is read by one script
//! on one node. The tenant part is escaped (`%`, `:`, `{` and `}` as `%25`,
//! `%3A`, `%7B` and `%7D`) so it ends at the first `}` and no two tenants
//! share keys; braces in the prefix are escaped alike so that the tenant's
//! braces are the first pair in the key.

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

    /// The keys of conversations are this followed by their number: what
    /// the scripts are given to name them.
    pub(super) fn conversations(&self) -> String {
        let mut stem = self.base.clone();
        stem.push_str("c:");
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
}
