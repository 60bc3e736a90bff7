//! A list of distinct strings in order of first appearance, with each string's index found by
//! hashing (a search of the list per lookup made the plots' layouts quadratic: 10 000 lines,
//! 100 000 configurations).

use std::collections::HashMap;

/// The indices of the strings of one list, which only this index appends to.
#[derive(Default)]
pub struct Index(HashMap<String, usize>);

impl Index {
    /// Index of `v` in `list`, appended when new.
    pub fn intern(&mut self, list: &mut Vec<String>, v: String) -> usize {
        self.intern_with(v, |v| {
            list.push(v.to_string());
            list.len() - 1
        })
    }

    /// Index of `key`; when it is new, `add` appends what the key stands for to its list and
    /// returns its index there.
    pub fn intern_with(&mut self, key: String, add: impl FnOnce(&str) -> usize) -> usize {
        *self.0.entry(key).or_insert_with_key(|k| add(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_appearance_order() {
        let (mut index, mut list) = (Index::default(), Vec::new());
        let got: Vec<usize> = ["b", "a", "b", "c", "a"]
            .map(|s| index.intern(&mut list, s.to_string()))
            .into();
        assert_eq!(got, [0, 1, 0, 2, 1]);
        assert_eq!(list, ["b", "a", "c"]);
    }
}
