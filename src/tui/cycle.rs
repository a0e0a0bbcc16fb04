//! Stepping through a closed list of choices (tabs, sort keys, form options), wrapping around.

/// The item after `current` in `all` (forward) or before it, wrapping around; the first item
/// when `current` is not in `all`.
pub fn cycled<T: Copy + PartialEq>(all: &[T], current: T, forward: bool) -> T {
    let index = all.iter().position(|item| *item == current).unwrap_or(0);
    let next = if forward {
        (index + 1) % all.len()
    } else {
        (index + all.len() - 1) % all.len()
    };
    all[next]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_wraps_both_ways() {
        let all = [1, 2, 3];
        assert_eq!(cycled(&all, 3, true), 1);
        assert_eq!(cycled(&all, 1, false), 3);
        assert_eq!(cycled(&all, 2, true), 3);
    }
}
