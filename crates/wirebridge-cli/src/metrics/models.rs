//! Model names as label values, bounded: the first names seen are kept,
//! every later one is `other`.
//!
//! Each name comes with the handles of its token counters, looked up the
//! first time they are used and kept, so that counting an exchange's
//! tokens hashes no label set.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use prometheus_client::metrics::counter::Counter;

/// The label of a model past the cap.
pub const OTHER: &str = "other";
/// The label of an exchange that named no model (a refused request).
pub const NONE: &str = "none";

/// How many token counters one model can have: one per direction and kind.
pub const TOKEN_SLOTS: usize = 20;

/// A model's label value, and the handles of its series.
#[derive(Debug)]
pub struct Model {
    label: String,
    tokens: [OnceLock<Counter>; TOKEN_SLOTS],
}

impl Model {
    fn new(label: &str) -> Arc<Self> {
        Arc::new(Self {
            label: label.to_owned(),
            tokens: Default::default(),
        })
    }

    /// The label value.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The token counter in `slot`, made by `create` the first time.
    pub fn tokens(&self, slot: usize, create: impl FnOnce() -> Counter) -> &Counter {
        self.tokens[slot].get_or_init(create)
    }
}

/// The model names that have a label of their own.
#[derive(Debug)]
pub struct ModelNames {
    max: usize,
    known: RwLock<HashMap<String, Arc<Model>>>,
    other: Arc<Model>,
    none: Arc<Model>,
}

impl ModelNames {
    /// Up to `max` names of their own.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            known: RwLock::new(HashMap::new()),
            other: Model::new(OTHER),
            none: Model::new(NONE),
        }
    }

    /// The label for `model`.
    pub fn label(&self, model: &str) -> Arc<Model> {
        if model.is_empty() {
            return self.none.clone();
        }
        // Names past the label-value limits a scraper might impose are
        // not worth a series of their own either.
        if model.len() > 128 {
            return self.other.clone();
        }
        {
            let known = self.known.read().unwrap_or_else(|e| e.into_inner());
            if let Some(named) = known.get(model) {
                return named.clone();
            }
            if known.len() >= self.max {
                return self.other.clone();
            }
        }
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        if let Some(named) = known.get(model) {
            return named.clone();
        }
        if known.len() < self.max {
            let named = Model::new(model);
            known.insert(model.to_owned(), named.clone());
            return named;
        }
        self.other.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(names: &ModelNames, model: &str) -> String {
        names.label(model).label().to_owned()
    }

    #[test]
    fn names_past_the_cap_are_other() {
        let names = ModelNames::new(2);
        assert_eq!(label(&names, "a"), "a");
        assert_eq!(label(&names, "b"), "b");
        assert_eq!(label(&names, "c"), "other");
        assert_eq!(label(&names, "a"), "a");
        assert_eq!(label(&names, ""), "none");
        assert_eq!(label(&names, &"x".repeat(129)), "other");
    }

    #[test]
    fn no_cap_means_every_model_is_other() {
        let names = ModelNames::new(0);
        assert_eq!(label(&names, "a"), "other");
    }

    #[test]
    fn a_name_seen_again_is_the_same_model() {
        let names = ModelNames::new(2);
        assert!(Arc::ptr_eq(&names.label("a"), &names.label("a")));
        assert!(Arc::ptr_eq(&names.label("b"), &names.label("b")));
        assert!(!Arc::ptr_eq(&names.label("a"), &names.label("b")));
    }
}
