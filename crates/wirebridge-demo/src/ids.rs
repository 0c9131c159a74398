//! Deterministic ids: every id of an answer is derived from a hash of the
//! request, so the same request always gets the same ids and different
//! requests (the turns of one conversation) get different ones.

/// The ids of one answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ids {
    seed: u64,
}

impl Ids {
    /// Ids for a request to `path` with this body.
    pub(crate) fn for_request(path: &str, body: &[u8]) -> Self {
        Ids {
            seed: fnv1a(fnv1a(FNV_OFFSET, path.as_bytes()), body),
        }
    }

    /// `PREFIX` + 24 hex digits, distinct per `salt`.
    fn make(&self, prefix: &str, salt: &str, index: usize) -> String {
        let a = fnv1a(fnv1a(self.seed, salt.as_bytes()), &index.to_le_bytes());
        let b = fnv1a(a, b"wirebridge-demo");
        format!("{prefix}{a:016x}{:08x}", b as u32)
    }

    /// `chatcmpl-…`
    pub(crate) fn chat_completion(&self) -> String {
        self.make("chatcmpl-", "completion", 0)
    }

    /// `resp_…`
    pub(crate) fn response(&self) -> String {
        self.make("resp_", "response", 0)
    }

    /// `msg_…` (a Responses message item, and a Messages `message`).
    pub(crate) fn message(&self) -> String {
        self.make("msg_", "message", 0)
    }

    /// `rs_…`
    pub(crate) fn reasoning(&self) -> String {
        self.make("rs_", "reasoning", 0)
    }

    /// `fc_…` (the Responses item id of the `index`-th function call).
    pub(crate) fn function_item(&self, index: usize) -> String {
        self.make("fc_", "function_call", index)
    }

    /// `call_…` (the call id of the `index`-th tool call, both APIs).
    pub(crate) fn call(&self, index: usize) -> String {
        self.make("call_", "call", index)
    }

    /// `toolu_…` (the id of the `index`-th `tool_use` block, Messages).
    pub(crate) fn tool_use(&self, index: usize) -> String {
        self.make("toolu_", "tool_use", index)
    }

    /// `req_…` (the `x-request-id` header).
    pub(crate) fn request(&self) -> String {
        self.make("req_", "request", 0)
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_distinct() {
        let a = Ids::for_request("/v1/responses", b"{}");
        let b = Ids::for_request("/v1/responses", b"{ }");
        assert_eq!(a, Ids::for_request("/v1/responses", b"{}"));
        assert_ne!(a.response(), b.response());
        assert_ne!(a.call(0), a.call(1));
        assert_ne!(a.tool_use(0), a.tool_use(1));
        assert!(a.tool_use(0).starts_with("toolu_"));
        assert!(a.response().starts_with("resp_"));
        assert_eq!(a.call(0).len(), "call_".len() + 24);
    }
}
