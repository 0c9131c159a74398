//! The bound on what the store adds to one request: the stored history it
//! continues and the items its references name, counted as they are
//! resolved, before anything is built from them.
//!
//! A reference is a few dozen bytes of body that stands for a whole stored
//! item, as often as it is repeated: without this bound, a small request
//! could make the bridge build, hold and send a request thousands of times
//! its size.

use crate::refusal::stored::ResolvedInputTooLarge;
use crate::replies::Refused;

/// What the store added to one request so far, within a limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResolvedBudget {
    limit: usize,
    used: usize,
    /// The field whose items passed the limit, once one did.
    passed: Option<&'static str>,
}

impl Default for ResolvedBudget {
    /// No bound: for a request that resolved nothing.
    fn default() -> Self {
        Self::new(usize::MAX)
    }
}

impl ResolvedBudget {
    /// Nothing added yet, of at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            used: 0,
            passed: None,
        }
    }

    /// Adds `bytes` taken in for the request field `param`: a 400 naming
    /// it once the total passes the limit (and naming the first field
    /// that passed it ever after, see [`check`](Self::check)).
    pub(crate) fn add(&mut self, bytes: usize, param: &'static str) -> Result<(), Refused> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limit {
            self.passed.get_or_insert(param);
        }
        self.check()
    }

    /// A 400 naming the field that passed the limit, if one did.
    pub(crate) fn check(&self) -> Result<(), Refused> {
        match self.passed {
            Some(param) => Err(ResolvedInputTooLarge {
                param,
                limit: self.limit,
            }
            .into()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_that_passes_the_limit_is_named() {
        let mut budget = ResolvedBudget::new(10);
        assert!(budget.add(6, "previous_response_id").is_ok());
        assert!(budget.add(4, "input").is_ok());
        let refused = format!("{:?}", budget.add(1, "input").unwrap_err());
        assert!(refused.contains(r#"param: Some("input")"#), "{refused}");
        assert!(
            refused.contains(r#"code: Some("resolved_input_too_large")"#),
            "{refused}"
        );
        assert!(refused.contains("10-byte limit"), "{refused}");
        assert!(refused.contains("status: 400"), "{refused}");
        // What is added after still names the field that passed it.
        let refused = format!("{:?}", budget.add(0, "conversation").unwrap_err());
        assert!(refused.contains(r#"param: Some("input")"#), "{refused}");
        assert!(budget.check().is_err());
    }
}
