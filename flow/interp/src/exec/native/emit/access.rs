//! Memory accesses: a pointer checked as the interpreter checks it (its
//! space, buffer, bounds and alignment), the global lines it touches
//! marked, and the address of its data.

use super::{ArenaView, Emitter};
use crate::bytecode::Reg;
use crate::memory::{BufferView, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlags, Value};

/// The lines an access touches: read, written, or both (an atomic).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Touch {
    Read,
    Write,
    Both,
}

/// An access being compiled: its pointer taken apart, and where it goes.
struct Access {
    buffer: Value,
    offset: Value,
    bytes: i64,
    align: u16,
    /// Calls `fault` and fails.
    fault: Block,
    /// Takes the address of the data.
    done: Block,
}

/// Loads of what does not change while the kernel runs (views, layouts,
/// the arenas' addresses): the code generator may move and merge them.
pub(super) const FIXED: MemFlags = MemFlags::trusted().with_readonly().with_can_move();

/// `BufferView`'s fields, by offset.
const VIEW_BYTES: i64 = std::mem::size_of::<BufferView>() as i64;
const VIEW_BASE: i32 = std::mem::offset_of!(BufferView, base) as i32;
const VIEW_LEN: i32 = std::mem::offset_of!(BufferView, len) as i32;

impl Emitter<'_, '_> {
    /// Checks the access of `n` elements of `size` bytes at register `ptr`
    /// as the interpreter does (a buffer of its space, in bounds, aligned),
    /// marks the global lines it touches, and returns the address of its
    /// data.
    pub(super) fn access(
        &mut self,
        pc: usize,
        ptr: Reg,
        size: u8,
        n: u8,
        align: u16,
        touch: Touch,
    ) -> Value {
        let bytes = size as i64 * n as i64;
        let p = self.get(ptr);
        let fault = self.b.create_block();
        self.b.set_cold_block(fault);
        let done = self.b.create_block();
        self.b.append_block_param(done, self.pointer);
        if let Some(buffer) = self.known.get(ptr.index()).copied().flatten() {
            self.known_access(p, buffer, (size, n, align, touch), done);
        }
        let space = self.b.ins().ushr_imm(p, 62);
        let buffer = self.b.ins().ushr_imm(p, 40);
        let buffer = self.b.ins().band_imm(buffer, (1 << 22) - 1);
        let offset = self.b.ins().ishl_imm(p, 24);
        let offset = self.b.ins().sshr_imm(offset, 24);
        let at = Access {
            buffer,
            offset,
            bytes,
            align,
            fault,
            done,
        };
        let mut next = self.b.create_block();
        let is = |e: &mut Self, s: u64| e.b.ins().icmp_imm(IntCC::Equal, space, s as i64);
        let global = is(self, SPACE_GLOBAL);
        let global_block = self.b.create_block();
        self.b.ins().brif(global, global_block, &[], next, &[]);
        self.b.switch_to_block(global_block);
        self.global_access(&at, size, n, touch);
        for (space_id, arena) in [(SPACE_LOCAL, self.local), (SPACE_PRIVATE, self.private)] {
            if arena.buffers == 0 {
                continue;
            }
            self.b.switch_to_block(next);
            next = self.b.create_block();
            let here = is(self, space_id);
            let block = self.b.create_block();
            self.b.ins().brif(here, block, &[], next, &[]);
            self.b.switch_to_block(block);
            self.arena_access(&at, arena);
        }
        self.b.switch_to_block(next);
        self.b.ins().jump(fault, &[]);

        self.b.switch_to_block(fault);
        let (bytes, align) = (
            self.b.ins().iconst(I64, bytes),
            self.b.ins().iconst(I64, align as i64),
        );
        self.report_fault(pc, [p, bytes, align]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// The access at pointer value `p` into global buffer `buffer`, where
    /// every value of its register points into that buffer
    /// (`provenance`): in bounds and aligned, its offset is `p` less the
    /// buffer's own pointer, which decoding would give too; it goes on to
    /// `done` with its address. Otherwise it leaves for the general way
    /// (the block it leaves the builder in), which says what is wrong.
    fn known_access(
        &mut self,
        p: Value,
        buffer: u32,
        (size, n, align, touch): (u8, u8, u16, Touch),
        done: Block,
    ) {
        let (address, len) = self.known_views[buffer as usize];
        let bytes = size as u64 * n as u64;
        let general = self.b.create_block();
        if len < bytes {
            self.b.ins().jump(general, &[]);
            self.b.switch_to_block(general);
            return;
        }
        let start = crate::memory::encode(SPACE_GLOBAL, buffer as usize, 0);
        let offset = self.b.ins().iadd_imm(p, (start as i64).wrapping_neg());
        let inside =
            self.b
                .ins()
                .icmp_imm(IntCC::UnsignedLessThanOrEqual, offset, (len - bytes) as i64);
        let misaligned = self.b.ins().band_imm(offset, align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, aligned);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], general, &[]);
        self.b.switch_to_block(pass);
        let index = self.b.ins().iconst(I64, buffer as i64);
        for i in 0..n as i64 {
            for written in [false, true] {
                if touch == Touch::Both || (touch == Touch::Write) == written {
                    self.mark(index, written, offset, i * size as i64, size, align);
                }
            }
        }
        let address = self.b.ins().iadd_imm(offset, address as i64);
        self.b.ins().jump(done, &[BlockArg::Value(address)]);
        self.b.set_cold_block(general);
        self.b.switch_to_block(general);
    }

    /// Whether `at` lies inside `len` bytes and is aligned: an `I8`.
    fn fits(&mut self, at: &Access, len: Value) -> Value {
        // A negative offset reads as a huge one and fails the bound.
        let inside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, at.offset, len);
        let left = self.b.ins().isub(len, at.offset);
        let fits = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, left, at.bytes);
        let misaligned = self.b.ins().band_imm(at.offset, at.align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, fits);
        self.b.ins().band(ok, aligned)
    }

    /// `at` into a global buffer: checked against its view, its lines
    /// marked, on to `at.done` with its address.
    fn global_access(&mut self, at: &Access, size: u8, n: u8, touch: Touch) {
        if self.nviews == 0 {
            self.b.ins().jump(at.fault, &[]);
            return;
        }
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, self.nviews as i64);
        let zero = self.b.ins().iconst(I64, 0);
        // Read buffer 0's view for a pointer into no buffer: the access
        // fails its check all the same.
        let index = self.b.ins().select(known, at.buffer, zero);
        let scaled = self.b.ins().imul_imm(index, VIEW_BYTES);
        let view = self.b.ins().iadd_imm(scaled, self.views);
        let len = self.b.ins().load(I64, FIXED, view, VIEW_LEN);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        for i in 0..n as i64 {
            for written in [false, true] {
                if touch == Touch::Both || (touch == Touch::Write) == written {
                    let at_element = i * size as i64;
                    self.mark(at.buffer, written, at.offset, at_element, size, at.align);
                }
            }
        }
        let base = self.b.ins().load(self.pointer, FIXED, view, VIEW_BASE);
        let address = self.b.ins().iadd(base, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// `at` into a local or private buffer: checked against the arena's
    /// layout, on to `at.done` with its address.
    fn arena_access(&mut self, at: &Access, arena: ArenaView) {
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, arena.buffers as i64);
        let zero = self.b.ins().iconst(I64, 0);
        let index = self.b.ins().select(known, at.buffer, zero);
        // (base, size) of each buffer, 16 bytes a buffer.
        let scaled = self.b.ins().imul_imm(index, 16);
        let entry = self.b.ins().iadd_imm(scaled, arena.layout);
        let len = self.b.ins().load(I64, FIXED, entry, 8);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        let base = self.b.ins().load(I64, FIXED, entry, 0);
        let memory = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, arena.env_field);
        let address = self.b.ins().iadd(memory, base);
        let address = self.b.ins().iadd(address, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// Marks the lines that `size` bytes at `offset + at` touch in the
    /// view's line set at `field` (read or written).
    fn mark(&mut self, buffer: Value, written: bool, offset: Value, at: i64, size: u8, align: u16) {
        // The thread's own line sets (`Env::lines`): two a buffer, read
        // then written.
        let table = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, self.lines_field);
        let entry = self.b.ins().imul_imm(buffer, 16);
        let entry = self.b.ins().iadd(table, entry);
        let bits = self
            .b
            .ins()
            .load(self.pointer, FIXED, entry, if written { 8 } else { 0 });
        let first = self.b.ins().iadd_imm(offset, at);
        let first_line = self.b.ins().ushr_imm(first, self.line_shift as i64);
        self.mark_line(bits, first_line);
        // An element aligned to its size (a power of two) never straddles
        // two lines no smaller than it; others may.
        let aligned = align.is_multiple_of(size as u16) && (1u64 << self.line_shift) >= size as u64;
        if size > 1 && !aligned {
            let last = self.b.ins().iadd_imm(offset, at + size as i64 - 1);
            let last_line = self.b.ins().ushr_imm(last, self.line_shift as i64);
            self.mark_line(bits, last_line);
        }
    }

    /// Sets `line`'s bit in the line set at `bits`, which this thread
    /// alone writes.
    fn mark_line(&mut self, bits: Value, line: Value) {
        let flags = MemFlags::trusted();
        let word = self.b.ins().ushr_imm(line, 6);
        let word = self.b.ins().imul_imm(word, 8);
        let word = self.b.ins().iadd(bits, word);
        let one = self.b.ins().iconst(I64, 1);
        let bit = self.b.ins().ishl(one, line);
        let old = self.b.ins().load(I64, flags, word, 0);
        let new = self.b.ins().bor(old, bit);
        self.b.ins().store(flags, new, word, 0);
    }
}
