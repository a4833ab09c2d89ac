//! Where values and variables live in memory: a value's scalar pieces and
//! an arena's variables.

/// One scalar piece of a value in memory: at `offset`, `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    pub offset: u32,
    pub size: u8,
}

/// Where each variable of an arena lives, and what to call it in errors.
#[derive(Debug, Clone, Default)]
pub struct ArenaLayout {
    pub base: Vec<u64>,
    pub size: Vec<u64>,
    pub label: Vec<String>,
}

impl ArenaLayout {
    pub fn push(&mut self, size: u64, align: u64, label: String) -> usize {
        let end = self.total();
        self.base.push(
            end.checked_next_multiple_of(align.max(1))
                .unwrap_or(u64::MAX),
        );
        self.size.push(size);
        self.label.push(label);
        self.base.len() - 1
    }

    pub fn total(&self) -> u64 {
        self.base
            .last()
            .map(|b| b.saturating_add(self.size.last().copied().unwrap_or(0)))
            .unwrap_or(0)
    }
}
