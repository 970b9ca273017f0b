//! The bound of a limited search: the smallest keys found so far whose
//! weights (matching lines) reach the cap, and the largest of them, past
//! which nothing can be part of the result.
//!
//! A key is an entry's place in the walk: the indices of its ancestors and
//! of itself in their directories' sorted listings. Keys compare as
//! sequences, a prefix first, which is exactly the order of the output
//! (a directory's key is a prefix of all its entries' keys).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

/// Keeps, of the weighted keys recorded, the fewest smallest ones whose
/// weights reach `cap`; once they do, every key after the largest of them
/// is past the bound.
#[derive(Debug)]
pub(super) struct Bound {
    cap: usize,
    state: Mutex<State>,
    /// Bumped each time the bound moves; 0 while it is not set.
    generation: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    kept: BTreeMap<Vec<u32>, usize>,
    total: usize,
    last: Option<Vec<u32>>,
    generation: u64,
}

impl Bound {
    /// A bound that is set once recorded weights reach `cap`.
    pub(super) fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            state: Mutex::new(State::default()),
            generation: AtomicU64::new(0),
        }
    }

    /// The weight the bound waits for.
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// Records `weight` for `key` (once per key).
    pub(super) fn record(&self, key: &[u32], weight: usize) {
        if weight == 0 {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.last.as_deref().is_some_and(|last| key > last) {
            return;
        }
        state.kept.insert(key.to_vec(), weight);
        state.total += weight;
        while let Some((_, &largest)) = state.kept.last_key_value() {
            if state.total - largest < self.cap {
                break;
            }
            state.total -= largest;
            state.kept.pop_last();
        }
        if state.total >= self.cap {
            let last = state.kept.last_key_value().map(|(key, _)| key.clone());
            if last != state.last {
                state.last = last;
                state.generation += 1;
                self.generation.store(state.generation, Ordering::Release);
            }
        }
    }

    /// Whether `key` sorts after the bound (never while it is not set).
    pub(super) fn is_past(&self, key: &[u32]) -> bool {
        if self.generation.load(Ordering::Acquire) == 0 {
            return false;
        }
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.last.as_deref().is_some_and(|last| key > last)
    }

    /// The bound's key, once set.
    pub(super) fn last(&self) -> Option<Vec<u32>> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.last.clone()
    }
}

/// One thread's copy of a [`Bound`], refreshed when the bound moves, so
/// that the walk can compare every entry without taking the lock.
#[derive(Debug, Default)]
pub(super) struct BoundView {
    generation: u64,
    last: Option<Vec<u32>>,
}

impl BoundView {
    /// Whether `key` sorts after `bound`.
    pub(super) fn is_past(&mut self, bound: &Bound, key: &[u32]) -> bool {
        let generation = bound.generation.load(Ordering::Acquire);
        if generation == 0 {
            return false;
        }
        if generation != self.generation {
            self.last = bound.last();
            self.generation = generation;
        }
        self.last.as_deref().is_some_and(|last| key > last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_largest_of_the_fewest_smallest_keys_that_reach_the_cap() {
        let bound = Bound::new(3);
        let mut view = BoundView::default();
        bound.record(&[5], 2);
        assert!(!bound.is_past(&[9]));
        bound.record(&[7, 1], 1);
        assert_eq!(bound.last(), Some(vec![7, 1]));
        assert!(view.is_past(&bound, &[7, 2]));
        assert!(!view.is_past(&bound, &[7]));
        assert!(!view.is_past(&bound, &[7, 1]));
        // A smaller key with enough weight moves the bound down.
        bound.record(&[2, 0], 1);
        assert_eq!(bound.last(), Some(vec![5]));
        assert!(view.is_past(&bound, &[6]));
        assert!(!view.is_past(&bound, &[5]));
        assert!(!view.is_past(&bound, &[4, 9, 9]));
        bound.record(&[1], 4);
        assert_eq!(bound.last(), Some(vec![1]));
        // Keys past the bound are not kept.
        bound.record(&[8], 1);
        assert_eq!(bound.last(), Some(vec![1]));
    }
}
