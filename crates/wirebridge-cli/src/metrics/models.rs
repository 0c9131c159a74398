//! Model names as label values, bounded: the first names seen are kept,
//! every later one is `other`.

use std::collections::HashSet;
use std::sync::RwLock;

/// The label of a model past the cap.
pub const OTHER: &str = "other";
/// The label of an exchange that named no model (a refused request).
pub const NONE: &str = "none";

/// The model names that have a label of their own.
#[derive(Debug)]
pub struct ModelNames {
    max: usize,
    known: RwLock<HashSet<String>>,
}

impl ModelNames {
    /// Up to `max` names of their own.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            known: RwLock::new(HashSet::new()),
        }
    }

    /// The label for `model`.
    pub fn label(&self, model: &str) -> String {
        if model.is_empty() {
            return NONE.to_owned();
        }
        // Names past the label-value limits a scraper might impose are
        // not worth a series of their own either.
        if model.len() > 128 {
            return OTHER.to_owned();
        }
        {
            let known = self.known.read().unwrap_or_else(|e| e.into_inner());
            if known.contains(model) {
                return model.to_owned();
            }
            if known.len() >= self.max {
                return OTHER.to_owned();
            }
        }
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        if known.len() < self.max {
            known.insert(model.to_owned());
            return model.to_owned();
        }
        OTHER.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_past_the_cap_are_other() {
        let names = ModelNames::new(2);
        assert_eq!(names.label("a"), "a");
        assert_eq!(names.label("b"), "b");
        assert_eq!(names.label("c"), "other");
        assert_eq!(names.label("a"), "a");
        assert_eq!(names.label(""), "none");
        assert_eq!(names.label(&"x".repeat(129)), "other");
    }

    #[test]
    fn no_cap_means_every_model_is_other() {
        let names = ModelNames::new(0);
        assert_eq!(names.label("a"), "other");
    }
}
