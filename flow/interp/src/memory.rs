//! The store: global and constant buffers shared by all work-groups, local
//! memory per work-group, private memory per work-item.
//!
//! A pointer is a 64-bit value in the encoding of
//! [`clflow_bytecode::pointer`], checked against the bounds of the one
//! buffer it came from.
//!
//! Global buffers are arrays of relaxed atomic words: work-groups run in
//! parallel, and a kernel whose work-items race on a location gets one of
//! the racing values, as on a device, never undefined behaviour in clflow.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

pub use clflow_bytecode::layout::ArenaLayout;
pub use clflow_bytecode::pointer::{decode, encode, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE};

/// Cache lines touched, one bit each, set by any thread.
pub struct LineSet {
    bits: Box<[AtomicU64]>,
    lines: u64,
}

impl LineSet {
    fn new(lines: u64) -> Self {
        LineSet {
            lines,
            bits: (0..lines.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline(always)]
    fn mark(&self, first: u64, last: u64) {
        for line in first..=last {
            let word = &self.bits[(line / 64) as usize];
            let bit = 1u64 << (line % 64);
            // Most accesses hit a line already marked: test before the locked or.
            if word.load(Relaxed) & bit == 0 {
                word.fetch_or(bit, Relaxed);
            }
        }
    }

    #[inline(always)]
    fn mark_one(&self, line: u64) {
        let word = &self.bits[(line / 64) as usize];
        let bit = 1u64 << (line % 64);
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
    }

    /// The set's 64-line words.
    pub fn words(&self) -> usize {
        self.bits.len()
    }

    /// Marks the lines set in `words`, 64 a word, as [`LineSet::words`]
    /// lays them out.
    pub fn add_words(&self, words: &[u64]) {
        for (mine, theirs) in self.bits.iter().zip(words) {
            if *theirs != 0 {
                mine.fetch_or(*theirs, Relaxed);
            }
        }
    }

    /// [`LineSet::count`] times `factor`, at most every line of the set.
    pub fn scaled(&self, factor: f64) -> u64 {
        ((self.count() as f64 * factor).round() as u64).min(self.lines)
    }

    pub fn count(&self) -> u64 {
        self.bits
            .iter()
            .map(|w| w.load(Relaxed).count_ones() as u64)
            .sum()
    }
}

/// One global or constant buffer.
pub struct SharedBuffer {
    /// The buffer as little-endian words: `nwords` atomics at `words`,
    /// kept alive by `_owner`.
    words: *const AtomicU32,
    nwords: usize,
    _owner: Owner,
    pub len: u64,
    pub label: String,
    pub space: &'static str,
    line_shift: u32,
    pub read_lines: LineSet,
    pub written_lines: LineSet,
}

/// A global buffer as compiled code sees it (`exec::native`): its bytes
/// and their count, valid as long as the buffer.
#[repr(C)]
pub struct BufferView {
    pub base: *mut u8,
    pub len: u64,
    pub line_shift: u64,
}

// SAFETY: a view is only read, and what it points to is made of atomics
// (`SharedBuffer` is `Sync` for the same reason), written by compiled code
// as the interpreter's threads write them.
unsafe impl Send for BufferView {}
unsafe impl Sync for BufferView {}

/// Who frees a buffer's words.
enum Owner {
    /// Words copied in.
    Words(#[allow(dead_code)] Box<[AtomicU32]>),
    /// The caller's own bytes, taken over and used in place (no copy of
    /// buffers of hundreds of megabytes).
    Bytes(*mut [u8]),
}

impl Drop for Owner {
    fn drop(&mut self) {
        if let Owner::Bytes(raw) = *self {
            // SAFETY: `raw` came from `Box::into_raw` in `from_vec` and is
            // freed here only, with the layout it was allocated with.
            drop(unsafe { Box::from_raw(raw) });
        }
    }
}

// SAFETY: every access to the words goes through `AtomicU32`, and the
// owner is freed once, when the buffer is dropped.
unsafe impl Send for SharedBuffer {}
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    pub fn new(bytes: &[u8], label: String, space: &'static str, line_bytes: u64) -> Self {
        let words: Box<[AtomicU32]> = bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                AtomicU32::new(u32::from_le_bytes(w))
            })
            .collect();
        let (ptr, nwords) = (words.as_ptr(), words.len());
        Self::assemble(
            ptr,
            nwords,
            Owner::Words(words),
            bytes.len() as u64,
            label,
            space,
            line_bytes,
        )
    }

    /// Takes the bytes over and uses them in place where they are suitably
    /// aligned (as large allocations are); copies them otherwise.
    pub fn from_vec(
        mut bytes: Vec<u8>,
        label: String,
        space: &'static str,
        line_bytes: u64,
    ) -> Self {
        let len = bytes.len();
        bytes.resize(len.next_multiple_of(4), 0);
        let boxed = bytes.into_boxed_slice();
        let in_place = cfg!(target_endian = "little")
            && (boxed.as_ptr() as usize).is_multiple_of(std::mem::align_of::<AtomicU32>());
        if !in_place {
            return Self::new(&boxed[..len], label, space, line_bytes);
        }
        let nwords = boxed.len() / 4;
        let raw = Box::into_raw(boxed);
        // The words are the bytes themselves: aligned, a whole number of
        // them, little-endian as the buffer's contents are.
        let ptr = raw as *mut u8 as *const AtomicU32;
        Self::assemble(
            ptr,
            nwords,
            Owner::Bytes(raw),
            len as u64,
            label,
            space,
            line_bytes,
        )
    }

    fn assemble(
        words: *const AtomicU32,
        nwords: usize,
        owner: Owner,
        len: u64,
        label: String,
        space: &'static str,
        line_bytes: u64,
    ) -> Self {
        let lines = len.div_ceil(line_bytes).max(1);
        SharedBuffer {
            words,
            nwords,
            _owner: owner,
            len,
            label,
            space,
            line_shift: line_bytes.trailing_zeros(),
            read_lines: LineSet::new(lines),
            written_lines: LineSet::new(lines),
        }
    }

    /// What compiled code needs of the buffer to read, write and mark it.
    pub fn view(&self) -> BufferView {
        BufferView {
            base: self.words as *mut u8,
            len: self.len,
            line_shift: self.line_shift as u64,
        }
    }

    #[inline(always)]
    fn words(&self) -> &[AtomicU32] {
        // SAFETY: `words` points at `nwords` initialised, aligned atomics
        // that `_owner` keeps alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.words, self.nwords) }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; 4 * self.nwords];
        for (bytes, w) in out.chunks_exact_mut(4).zip(self.words()) {
            bytes.copy_from_slice(&w.load(Relaxed).to_le_bytes());
        }
        out.truncate(self.len as usize);
        out
    }

    #[inline]
    fn lines(&self, offset: u64, size: u64) -> (u64, u64) {
        (
            offset >> self.line_shift,
            (offset + size - 1) >> self.line_shift,
        )
    }

    /// Reads `size` (1..=8) bytes at `offset`, which the caller bounds-checked.
    #[inline(always)]
    pub fn read(&self, offset: u64, size: u32) -> u64 {
        let (first, last) = self.lines(offset, size as u64);
        self.read_lines.mark(first, last);
        let word = (offset / 4) as usize;
        if offset.is_multiple_of(4) && size == 4 {
            return self.words()[word].load(Relaxed) as u64;
        }
        let last_word = ((offset + size as u64 - 1) / 4) as usize;
        let mut acc: u128 = 0;
        for (i, w) in self.words()[word..=last_word].iter().enumerate() {
            acc |= (w.load(Relaxed) as u128) << (32 * i);
        }
        ((acc >> (8 * (offset % 4))) as u64) & mask_bytes(size)
    }

    /// The byte at `offset`, which the caller bounds-checked, read without
    /// marking its line: what printf reads is no traffic of the kernel's.
    pub fn peek(&self, offset: u64) -> u8 {
        (self.words()[(offset / 4) as usize].load(Relaxed) >> (8 * (offset % 4))) as u8
    }

    /// Reads the aligned word at `offset`, which the caller bounds-checked.
    #[inline(always)]
    pub fn read_word(&self, offset: u64) -> u32 {
        // An aligned word never straddles two lines.
        self.read_lines.mark_one(offset >> self.line_shift);
        self.words()[(offset / 4) as usize].load(Relaxed)
    }

    /// Writes the aligned word at `offset`, which the caller bounds-checked.
    #[inline(always)]
    pub fn write_word(&self, offset: u64, value: u32) {
        self.written_lines.mark_one(offset >> self.line_shift);
        self.words()[(offset / 4) as usize].store(value, Relaxed);
    }

    /// Writes the low `size` bytes of `value` at `offset` (bounds-checked by
    /// the caller); bytes of a word that other work-items own are kept.
    #[inline]
    pub fn write(&self, offset: u64, size: u32, value: u64) {
        let (first, last) = self.lines(offset, size as u64);
        self.written_lines.mark(first, last);
        let word = (offset / 4) as usize;
        if offset.is_multiple_of(4) && size == 4 {
            self.words()[word].store(value as u32, Relaxed);
            return;
        }
        let shift = 8 * (offset % 4) as u32;
        let bits = ((value & mask_bytes(size)) as u128) << shift;
        let mask = (mask_bytes(size) as u128) << shift;
        let last_word = ((offset + size as u64 - 1) / 4) as usize;
        for (i, w) in self.words()[word..=last_word].iter().enumerate() {
            let m = (mask >> (32 * i)) as u32;
            let b = (bits >> (32 * i)) as u32;
            if m == u32::MAX {
                w.store(b, Relaxed);
            } else {
                let _ = w.fetch_update(Relaxed, Relaxed, |old| Some((old & !m) | b));
            }
        }
    }

    /// A 32-bit read-modify-write on an aligned word; returns the old value.
    pub fn update32(&self, offset: u64, f: impl Fn(u32) -> u32) -> u32 {
        let (first, last) = self.lines(offset, 4);
        self.read_lines.mark(first, last);
        self.written_lines.mark(first, last);
        self.words()[(offset / 4) as usize]
            .fetch_update(Relaxed, Relaxed, |old| Some(f(old)))
            .unwrap_or_else(|old| old)
    }
}

pub fn mask_bytes(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}

/// Every global and constant buffer of one launch.
pub struct GlobalMemory {
    pub buffers: Vec<SharedBuffer>,
    /// The descriptor of each buffer that holds an image's texels.
    pub images: Vec<Option<clflow_core::ImageDesc>>,
    /// Serialises 64-bit atomics, which have no native word here.
    pub wide_atomics: Mutex<()>,
}

/// Local or private memory: plain bytes holding several variables, each a
/// buffer of its own for bounds checks.
#[derive(Debug, Clone, Default)]
pub struct Arena {
    pub bytes: Vec<u8>,
}

impl Arena {
    #[inline]
    pub fn read(&self, at: usize, size: u32) -> u64 {
        let mut buf = [0u8; 8];
        buf[..size as usize].copy_from_slice(&self.bytes[at..at + size as usize]);
        u64::from_le_bytes(buf)
    }

    #[inline]
    pub fn write(&mut self, at: usize, size: u32, value: u64) {
        self.bytes[at..at + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_round_trip_and_step_back() {
        let p = encode(SPACE_GLOBAL, 5, 4096);
        assert_eq!(decode(p), (SPACE_GLOBAL, 5, 4096));
        assert_eq!(decode(p.wrapping_add(8)), (SPACE_GLOBAL, 5, 4104));
        let before = encode(SPACE_LOCAL, 2, 0).wrapping_sub(4);
        assert_eq!(decode(before).2, -4);
        assert_eq!(decode(0).0, 0);
    }

    #[test]
    fn shared_buffer_reads_and_writes_any_alignment() {
        let b = SharedBuffer::new(&(0u8..11).collect::<Vec<_>>(), "b".into(), "__global", 4);
        assert_eq!(b.read(0, 4), 0x03020100);
        assert_eq!(b.read(3, 2), 0x0403);
        assert_eq!(b.read(1, 8), 0x0807060504030201);
        b.write(2, 4, 0xAABBCCDD);
        assert_eq!(b.to_bytes()[..7], [0, 1, 0xDD, 0xCC, 0xBB, 0xAA, 6]);
        assert_eq!(b.read_lines.count(), 3);
        assert_eq!(b.written_lines.count(), 2);
    }

    #[test]
    fn buffers_taken_over_read_and_write_like_copies() {
        let bytes: Vec<u8> = (0u8..=102).collect();
        let copied = SharedBuffer::new(&bytes, "a".into(), "__global", 64);
        let taken = SharedBuffer::from_vec(bytes.clone(), "b".into(), "__global", 64);
        for (offset, size) in [(0, 4), (1, 8), (99, 4), (100, 3)] {
            assert_eq!(taken.read(offset, size), copied.read(offset, size));
        }
        taken.write(98, 4, 0x0403_0201);
        let mut expected = bytes;
        expected[98..102].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(taken.to_bytes(), expected);
        assert_eq!(taken.len, 103);
    }

    #[test]
    fn arena_layout_aligns_variables() {
        let mut l = ArenaLayout::default();
        l.push(3, 1, "a".into());
        l.push(8, 8, "b".into());
        assert_eq!(l.base, vec![0, 8]);
        assert_eq!(l.total(), 16);
    }
}
