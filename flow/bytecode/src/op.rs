//! The interpreter's instruction set: what `translate` emits and `exec` runs.
//!
//! Every operand is a register slot index resolved at translation time; a
//! value of `n` lanes occupies slots `r .. r+n`. Integers are held
//! zero-extended to 64 bits and masked to their width, floats as their bit
//! pattern, booleans as 0/1, pointers in the encoding of [`crate::pointer`].
//! Types, strides, offsets and branch targets are all decided before
//! execution starts.

/// A register slot: a value of `n` lanes occupies `r .. r+n`. Its own
/// type, so that a register is never taken for a pc, a width or a count.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Reg(u32);

impl Reg {
    /// The operand of an op that does not use it: slot 0, which every
    /// program that has such an op has.
    pub const UNUSED: Reg = Reg(0);

    #[inline]
    pub const fn new(slot: u32) -> Reg {
        Reg(slot)
    }

    /// The slot's place in a register file of one lane.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Slot `k` of a value that starts at this register.
impl std::ops::Add<u32> for Reg {
    type Output = Reg;

    #[inline(always)]
    fn add(self, k: u32) -> Reg {
        Reg(self.0 + k)
    }
}

/// Printed as its number, as disassembly always showed it.
impl std::fmt::Debug for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

pub type Pc = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    // OpenCL.std integer builtins with two operands.
    SAbsDiff,
    UAbsDiff,
    SAddSat,
    UAddSat,
    SSubSat,
    USubSat,
    SHadd,
    UHadd,
    SRhadd,
    URhadd,
    SMax,
    UMax,
    SMin,
    UMin,
    SMulHi,
    UMulHi,
    Rotate,
    SMul24,
    UMul24,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntUnOp {
    Neg,
    Not,
    BitCount,
    BitReverse,
    SAbs,
    UAbs,
    Clz,
    Ctz,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntTerOp {
    SClamp,
    UClamp,
    SMadHi,
    UMadHi,
    SMadSat,
    UMadSat,
    SMad24,
    UMad24,
    Bitselect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    ULt,
    ULe,
    UGt,
    UGe,
    SLt,
    SLe,
    SGt,
    SGe,
}

/// Float comparisons: `ordered` decides the answer when either side is NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FCmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Both ordered (neither is NaN); used as OpOrdered / OpUnordered.
    Ord,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    /// C fmod: the result has the sign of the dividend (OpFRem).
    Rem,
    /// OpFMod: the result has the sign of the divisor.
    Mod,
    Atan2,
    Atan2Pi,
    Copysign,
    Fdim,
    Fmax,
    Fmin,
    Hypot,
    Nextafter,
    Pow,
    Powr,
    Remainder,
    Maxmag,
    Minmag,
    Step,
    /// Second operand an integer: ldexp, pown, rootn.
    Ldexp,
    Pown,
    Rootn,
    /// remquo's second result: the sign and low bits of x/y rounded to
    /// nearest (an int); its first is Remainder.
    RemquoQuotient,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatUnOp {
    Neg,
    Acos,
    Acosh,
    Acospi,
    Asin,
    Asinh,
    Asinpi,
    Atan,
    Atanh,
    Atanpi,
    Cbrt,
    Ceil,
    Cos,
    Cosh,
    Cospi,
    Exp,
    Exp2,
    Exp10,
    Expm1,
    Fabs,
    Floor,
    Log,
    Log2,
    Log10,
    Log1p,
    Logb,
    Rint,
    Round,
    Rsqrt,
    Sin,
    Sinh,
    Sinpi,
    Sqrt,
    Tan,
    Tanh,
    Tanpi,
    Trunc,
    Recip,
    Degrees,
    Radians,
    Sign,
    Erf,
    Erfc,
    Tgamma,
    Lgamma,
    /// lgamma_r's second result: the sign of gamma(x), an int.
    LgammaSign,
    /// nan(code): a quiet NaN carrying the integer operand as payload.
    Nan,
    /// An int result: ilogb.
    Ilogb,
    /// frexp's results: the mantissa in [0.5, 1), and the exponent (an int).
    FrexpMantissa,
    FrexpExponent,
    /// modf's result, x - trunc(x) keeping the sign (its other is Trunc).
    ModfFraction,
    /// fract's result, min(x - floor(x), 1 - ulp) (its other is Floor).
    Fract,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatTerOp {
    /// fma and mad: evaluated fused (mad may be either; fused is within its limits).
    Fma,
    Clamp,
    Mix,
    Smoothstep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FTestOp {
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBitSet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicOp {
    And,
    Or,
    Eq,
    Ne,
}

pub use clflow_core::half::Rounding;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvKind {
    /// Integer to integer, zero- or sign-extending by `signed`.
    IntToInt {
        signed_src: bool,
        signed_dst: bool,
        saturate: bool,
    },
    FloatToInt {
        signed: bool,
        saturate: bool,
        rounding: Rounding,
    },
    IntToFloat {
        signed: bool,
        rounding: Rounding,
    },
    FloatToFloat {
        rounding: Rounding,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Inc,
    Dec,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    GlobalId,
    LocalId,
    GroupId,
    GlobalSize,
    /// The work-item's own group's size (smaller in a last, partial group).
    LocalSize,
    /// The size the launch asked for (`get_enqueued_local_size`).
    EnqueuedLocalSize,
    NumGroups,
    GlobalOffset,
    WorkDim,
    GlobalLinearId,
    LocalLinearId,
    SubGroupSize,
    SubGroupMaxSize,
    NumSubGroups,
    EnqueuedNumSubGroups,
    SubGroupId,
    SubGroupLocalId,
}

/// A work-group or sub-group collective: every work-item of the group (or
/// sub-group) gives a value and gets one back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    Reduce(GroupOp),
    InclusiveScan(GroupOp),
    ExclusiveScan(GroupOp),
    /// The value of the work-item whose (sub-)group local id is `index`.
    Broadcast,
    All,
    Any,
}

/// How a collective combines values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupOp {
    IAdd,
    FAdd,
    FMin,
    FMax,
    UMin,
    UMax,
    SMin,
    SMax,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geometric {
    Length,
    Distance,
    Normalize,
    Cross,
    Dot,
}

/// One term of an address computation: `sext(regs[reg] as bits) * stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtrTerm {
    pub reg: Reg,
    pub bits: u8,
    pub stride: i64,
}

/// What a printf argument is, as the SPIR-V passes it: scalar floats
/// promoted to double and chars and shorts to int, vectors as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintfKind {
    Int(u8),
    Float(u8),
    Pointer,
}

/// One argument of a printf call: `lanes` slots from `reg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrintfArg {
    pub reg: Reg,
    pub lanes: u8,
    pub kind: PrintfKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub dst: Reg,
    pub src: Reg,
    pub n: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Entry of basic block `block`: counts it and charges `steps` ops.
    Block {
        block: u32,
        steps: u32,
    },
    Mov {
        dst: Reg,
        src: Reg,
        n: u32,
    },
    /// Moves `len` entries of `Program::moves` starting at `start` (phi
    /// edges that already go through temporaries, shuffles, constructs).
    Moves {
        start: u32,
        len: u32,
    },
    /// Lane `i` of dst takes lane 0 of `src` (vector-times-scalar operands).
    Splat {
        dst: Reg,
        src: Reg,
        n: u8,
    },
    Int {
        op: IntOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    // Scalar 32-bit forms of the hottest integer ops, dispatched directly.
    Add32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Sub32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Mul32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Shl32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    LShr32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `rotate(a, b)` on 32 bits (also what `(x << k) | (x >> (32 - k))` becomes).
    Rotl32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    // Scalar 32-bit float forms (`float` add, sub, mul), dispatched directly;
    // an f32 operation rounds as the f64 one rounded to f32 does.
    FAdd32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    FSub32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    FMul32 {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// A 32-bit integer widened to 64 bits with zeros (`OpUConvert`), or
    /// with its sign (`OpSConvert`): the index arithmetic of every access.
    ZExt32 {
        dst: Reg,
        src: Reg,
    },
    SExt32 {
        dst: Reg,
        src: Reg,
    },
    /// A 64-bit integer cut to its low 32 bits (`(uint)get_global_id(0)`).
    Trunc32 {
        dst: Reg,
        src: Reg,
    },
    /// Superinstructions (`translate::fuse`): `(a - b) ^ rotl(b, k)` and
    /// `(a ^ b) - rotl(b, k)` on 32 bits, each in the place of three ops,
    /// the next two of which it skips.
    SubXorRotl32 {
        dst: Reg,
        a: Reg,
        b: Reg,
        k: Reg,
    },
    XorSubRotl32 {
        dst: Reg,
        a: Reg,
        b: Reg,
        k: Reg,
    },
    /// And, or and xor keep any width's values in range.
    And {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Or {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Xor {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    IntUn {
        op: IntUnOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
    },
    IntTer {
        op: IntTerOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// `upsample(hi, lo)`: `bits` is the width of the operands.
    Upsample {
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Cmp {
        op: CmpOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Float {
        op: FloatOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    FloatUn {
        op: FloatUnOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
    },
    FloatTer {
        op: FloatTerOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    FCmp {
        op: FCmpOp,
        ordered: bool,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    FTest {
        op: FTestOp,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
    },
    Logic {
        op: LogicOp,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    LNot {
        n: u8,
        dst: Reg,
        a: Reg,
    },
    /// `cond` has `n` lanes when `vector_cond`, else one.
    Select {
        n: u8,
        vector_cond: bool,
        dst: Reg,
        cond: Reg,
        a: Reg,
        b: Reg,
    },
    /// OpenCL `select(a, b, c)`: per lane, c's top bit (vectors) or c != 0 (scalars).
    SelectMsb {
        n: u8,
        bits: u8,
        msb: bool,
        dst: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    AnyAll {
        all: bool,
        n: u8,
        dst: Reg,
        a: Reg,
    },
    Convert {
        kind: ConvKind,
        from: u8,
        to: u8,
        n: u8,
        dst: Reg,
        src: Reg,
    },
    /// Reinterpret `from_n` lanes of `from` bits as `to_n` lanes of `to` bits.
    Bitcast {
        from: u8,
        from_n: u8,
        to: u8,
        to_n: u8,
        dst: Reg,
        src: Reg,
    },
    ExtractDyn {
        dst: Reg,
        base: Reg,
        index: Reg,
        index_bits: u8,
        n: u8,
    },
    InsertDyn {
        dst: Reg,
        base: Reg,
        value: Reg,
        index: Reg,
        index_bits: u8,
        n: u8,
    },
    Geometric {
        op: Geometric,
        bits: u8,
        n: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `dst = base + disp + Σ terms`.
    Ptr {
        dst: Reg,
        base: Reg,
        disp: i64,
        terms_start: u32,
        terms_len: u16,
    },
    /// `dst = base + disp`.
    Offset {
        dst: Reg,
        base: Reg,
        disp: i64,
    },
    /// `dst = base + disp + sext(regs[index] as bits) * stride`.
    Index {
        dst: Reg,
        base: Reg,
        index: Reg,
        bits: u8,
        stride: i32,
        disp: i32,
    },
    PtrDiff {
        dst: Reg,
        a: Reg,
        b: Reg,
        elem: u32,
    },
    /// A collective over the work-group, or each sub-group where `sub`;
    /// it follows a barrier, so all the group's work-items run it at once.
    /// `kind` says whether values are integers (`Int`) or floats (`Float`)
    /// of `bits`.
    Collective {
        dst: Reg,
        src: Reg,
        index: Reg,
        op: Collective,
        bits: u8,
        sub: bool,
    },
    /// `to_global`/`to_local`/`to_private`: `src` where it points into
    /// `space` (a `memory::SPACE_*`), else NULL.
    CastToSpace {
        dst: Reg,
        src: Reg,
        space: u8,
    },
    /// Counts `bytes` loaded or stored through a generic pointer in the
    /// space the pointer's value names (known only as it runs).
    CountAccess {
        ptr: Reg,
        bytes: u32,
        store: bool,
    },
    /// `n` leaves of `size` bytes, `size` apart.
    Load {
        dst: Reg,
        ptr: Reg,
        size: u8,
        n: u8,
        align: u16,
    },
    Store {
        src: Reg,
        ptr: Reg,
        size: u8,
        n: u8,
        align: u16,
    },
    /// Leaves of an aggregate, from `Program::layouts[layout]`.
    LoadAgg {
        dst: Reg,
        ptr: Reg,
        layout: u32,
    },
    StoreAgg {
        src: Reg,
        ptr: Reg,
        layout: u32,
    },
    /// memcpy of `bytes` (a constant) or of `regs[bytes_reg]` bytes.
    Copy {
        dst: Reg,
        src: Reg,
        bytes: u64,
        bytes_reg: Option<Reg>,
    },
    /// A work-group copy (async_work_group_copy), done at once by one work-item.
    GroupCopy {
        dst: Reg,
        src: Reg,
        elems: Reg,
        stride: Reg,
        elem: u32,
        event: Reg,
        out: Reg,
    },
    /// vload_half(n) / vstore_half(n): f16 in memory, f32 lanes in registers.
    LoadHalf {
        dst: Reg,
        ptr: Reg,
        n: u8,
    },
    StoreHalf {
        src: Reg,
        ptr: Reg,
        n: u8,
        from: u8,
        rounding: Rounding,
    },
    Atomic {
        op: AtomicOp,
        bits: u8,
        dst: Reg,
        ptr: Reg,
        a: Reg,
        b: Reg,
    },
    Builtin {
        which: Builtin,
        dst: Reg,
        lanes: u8,
        bits: u8,
    },
    Jump {
        target: Pc,
    },
    Branch {
        cond: Reg,
        then: Pc,
        other: Pc,
    },
    Switch {
        sel: Reg,
        bits: u8,
        cases_start: u32,
        cases_len: u32,
        default: Pc,
    },
    Call {
        target: Pc,
        moves_start: u32,
        moves_len: u32,
        ret: Reg,
        ret_n: u32,
    },
    Ret {
        src: Reg,
        n: u32,
    },
    /// Every work-item of the group waits here for the others; their
    /// accesses to the memory `fences` names are ordered across it.
    Barrier {
        fences: Fences,
    },
    /// `--detect aggregates`: the index at `index` (`bits` wide, signed)
    /// must lie in 0..`len`, an array inside a private or local variable
    /// (`Program::arrays` names it by `array`).
    CheckIndex {
        index: Reg,
        bits: u8,
        len: u32,
        array: u32,
    },
    /// wait_group_events, after its barrier: the group's work-items wait
    /// for the `num` events at `list` (the same ones, or it is an error).
    WaitEvents {
        num: Reg,
        list: Reg,
    },
    Trap,
    /// An image read: 4 lanes into `dst` from the image handle at `image`,
    /// at `coord`, through the sampler bits at `sampler` where sampled.
    ImageRead {
        dst: Reg,
        image: Reg,
        coord: Reg,
        sampler: Reg,
        form: ImageForm,
    },
    /// An image write of the 4 lanes at `src`.
    ImageWrite {
        image: Reg,
        coord: Reg,
        src: Reg,
        form: ImageForm,
    },
    /// `n` lanes of `bits` bits answering `query` about the image at `image`.
    ImageQuery {
        dst: Reg,
        image: Reg,
        query: ImageQuery,
        n: u8,
        bits: u8,
    },
    /// OpenCL printf: the format string at `format` (a pointer into
    /// `__constant` memory) applied to `args_len` entries of
    /// `Program::printf_args` from `args_start`; `dst` gets 0.
    Printf {
        dst: Reg,
        format: Reg,
        args_start: u32,
        args_len: u32,
    },
}

/// `family!(Name)`: the pattern that matches every op of a family (Block,
/// Scalar, Fused, Int, Float, Vector, Access, Group, Io, Control), each
/// with one handler in the executor (`exec::ops`) and the compiled tier.
/// The families are stated here once; the executor's dispatch, a match
/// over them without a wildcard, proves they cover every op, each once.
#[macro_export]
macro_rules! family {
    (Block) => {
        $crate::Op::Block { .. }
    };
    (Scalar) => {
        $crate::Op::Mov { .. }
            | $crate::Op::Moves { .. }
            | $crate::Op::Splat { .. }
            | $crate::Op::Add32 { .. }
            | $crate::Op::Sub32 { .. }
            | $crate::Op::Mul32 { .. }
            | $crate::Op::Shl32 { .. }
            | $crate::Op::LShr32 { .. }
            | $crate::Op::And { .. }
            | $crate::Op::Or { .. }
            | $crate::Op::Xor { .. }
            | $crate::Op::Rotl32 { .. }
            | $crate::Op::FAdd32 { .. }
            | $crate::Op::FSub32 { .. }
            | $crate::Op::FMul32 { .. }
            | $crate::Op::SExt32 { .. }
            | $crate::Op::ZExt32 { .. }
            | $crate::Op::Trunc32 { .. }
            | $crate::Op::Offset { .. }
            | $crate::Op::Index { .. }
    };
    (Fused) => {
        $crate::Op::SubXorRotl32 { .. } | $crate::Op::XorSubRotl32 { .. }
    };
    (Int) => {
        $crate::Op::Int { .. }
            | $crate::Op::IntUn { .. }
            | $crate::Op::IntTer { .. }
            | $crate::Op::Upsample { .. }
            | $crate::Op::Cmp { .. }
            | $crate::Op::Logic { .. }
            | $crate::Op::LNot { .. }
            | $crate::Op::Select { .. }
            | $crate::Op::SelectMsb { .. }
            | $crate::Op::AnyAll { .. }
    };
    (Float) => {
        $crate::Op::Float { .. }
            | $crate::Op::FloatUn { .. }
            | $crate::Op::FloatTer { .. }
            | $crate::Op::FCmp { .. }
            | $crate::Op::FTest { .. }
            | $crate::Op::Convert { .. }
    };
    (Vector) => {
        $crate::Op::Bitcast { .. }
            | $crate::Op::ExtractDyn { .. }
            | $crate::Op::InsertDyn { .. }
            | $crate::Op::Geometric { .. }
            | $crate::Op::Ptr { .. }
            | $crate::Op::PtrDiff { .. }
            | $crate::Op::CastToSpace { .. }
    };
    (Access) => {
        $crate::Op::CountAccess { .. }
            | $crate::Op::Load { .. }
            | $crate::Op::Store { .. }
            | $crate::Op::LoadAgg { .. }
            | $crate::Op::StoreAgg { .. }
            | $crate::Op::Copy { .. }
            | $crate::Op::LoadHalf { .. }
            | $crate::Op::StoreHalf { .. }
            | $crate::Op::Atomic { .. }
    };
    (Group) => {
        $crate::Op::Collective { .. }
            | $crate::Op::GroupCopy { .. }
            | $crate::Op::CheckIndex { .. }
            | $crate::Op::WaitEvents { .. }
            | $crate::Op::Builtin { .. }
    };
    (Io) => {
        $crate::Op::ImageRead { .. }
            | $crate::Op::ImageWrite { .. }
            | $crate::Op::ImageQuery { .. }
            | $crate::Op::Printf { .. }
    };
    (Control) => {
        $crate::Op::Jump { .. }
            | $crate::Op::Branch { .. }
            | $crate::Op::Switch { .. }
            | $crate::Op::Call { .. }
            | $crate::Op::Ret { .. }
            | $crate::Op::Barrier { .. }
            | $crate::Op::Trap { .. }
    };
}

/// The memory a barrier orders, from its fence flags
/// (`CLK_LOCAL_MEM_FENCE`, `CLK_GLOBAL_MEM_FENCE`): a barrier that fences
/// local memory alone leaves the work-items' global accesses on either side
/// of it unordered, and the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fences {
    pub local: bool,
    /// Global memory, images included.
    pub global: bool,
}

impl Fences {
    /// Both spaces: where the flags are not known, and a group's wait for
    /// its async copies.
    pub const ALL: Fences = Fences { local: true, global: true };
    /// Neither: a wait that orders no memory.
    pub const NONE: Fences = Fences { local: false, global: false };

    /// The memory a SPIR-V barrier's semantics name: `WorkgroupMemory`
    /// local, `CrossWorkgroupMemory` or `ImageMemory` global.
    pub fn of_semantics(bits: u64) -> Fences {
        Fences { local: bits & 0x100 != 0, global: bits & 0xa00 != 0 }
    }
}

/// What an image read takes and gives, decided by its instruction's types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageForm {
    /// Lanes of the coordinate operand (1 to 4).
    pub coord_n: u8,
    /// Float coordinates (else 32-bit integers).
    pub float_coords: bool,
    /// `read_imagef`/`write_imagef` (else the integer forms).
    pub float_texel: bool,
    /// Through a sampler (`OpImageSampleExplicitLod`).
    pub sampled: bool,
}

/// What `OpImageQuery*` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageQuery {
    /// Width, height (or layers), depth (or layers): as many as `n`.
    Size,
    /// The channel type, as SPIR-V numbers it (`CL_*` − 0x10D0).
    Format,
    /// The channel order, as SPIR-V numbers it (`CL_*` − 0x10B0).
    Order,
}

/// An integer op, in its direct form where it has one.
pub fn int_op(op: IntOp, bits: u8, n: u8, dst: Reg, a: Reg, b: Reg) -> Op {
    match (op, bits, n) {
        (IntOp::Add, 32, 1) => Op::Add32 { dst, a, b },
        (IntOp::Sub, 32, 1) => Op::Sub32 { dst, a, b },
        (IntOp::Mul, 32, 1) => Op::Mul32 { dst, a, b },
        (IntOp::Shl, 32, 1) => Op::Shl32 { dst, a, b },
        (IntOp::Rotate, 32, 1) => Op::Rotl32 { dst, a, b },
        (IntOp::LShr, 32, 1) => Op::LShr32 { dst, a, b },
        (IntOp::And, _, 1) => Op::And { dst, a, b },
        (IntOp::Or, _, 1) => Op::Or { dst, a, b },
        (IntOp::Xor, _, 1) => Op::Xor { dst, a, b },
        _ => Op::Int { op, bits, n, dst, a, b },
    }
}

/// A float op, in its direct form where it has one.
pub fn float_op(op: FloatOp, bits: u8, n: u8, dst: Reg, a: Reg, b: Reg) -> Op {
    match (op, bits, n) {
        (FloatOp::Add, 32, 1) => Op::FAdd32 { dst, a, b },
        (FloatOp::Sub, 32, 1) => Op::FSub32 { dst, a, b },
        (FloatOp::Mul, 32, 1) => Op::FMul32 { dst, a, b },
        _ => Op::Float { op, bits, n, dst, a, b },
    }
}

/// A conversion, in its direct form where it has one.
pub fn convert_op(kind: ConvKind, from: u8, to: u8, n: u8, dst: Reg, src: Reg) -> Op {
    match (kind, from, to, n) {
        (ConvKind::IntToInt { signed_src, saturate: false, .. }, 32, 64, 1) => match signed_src {
            false => Op::ZExt32 { dst, src },
            true => Op::SExt32 { dst, src },
        },
        (ConvKind::IntToInt { saturate: false, .. }, 64, 32, 1) => Op::Trunc32 { dst, src },
        _ => Op::Convert { kind, from, to, n, dst, src },
    }
}

/// Makes a one-slot op that writes `from` write `to` instead; false where
/// the op is not one of those.
pub fn retarget(op: &mut Op, from: Reg, to: Reg) -> bool {
    let dst = match op {
        Op::Add32 { dst, .. }
        | Op::Sub32 { dst, .. }
        | Op::Mul32 { dst, .. }
        | Op::Shl32 { dst, .. }
        | Op::Rotl32 { dst, .. }
        | Op::LShr32 { dst, .. }
        | Op::FAdd32 { dst, .. }
        | Op::FSub32 { dst, .. }
        | Op::FMul32 { dst, .. }
        | Op::ZExt32 { dst, .. }
        | Op::SExt32 { dst, .. }
        | Op::Trunc32 { dst, .. }
        | Op::And { dst, .. }
        | Op::Or { dst, .. }
        | Op::Xor { dst, .. }
        | Op::Index { dst, .. }
        | Op::Offset { dst, .. } => dst,
        Op::Int { dst, n: 1, .. }
        | Op::Float { dst, n: 1, .. }
        | Op::FloatUn { dst, n: 1, .. }
        | Op::FloatTer { dst, n: 1, .. }
        | Op::Cmp { dst, n: 1, .. }
        | Op::Convert { dst, n: 1, .. } => dst,
        _ => return false,
    };
    if *dst != from {
        return false;
    }
    *dst = to;
    true
}

/// The side tables an op's operands may be listed in.
#[derive(Clone, Copy, Default)]
pub struct Tables<'a> {
    pub moves: &'a [Move],
    pub terms: &'a [PtrTerm],
    pub printf_args: &'a [PrintfArg],
    pub layouts: &'a [Vec<crate::layout::Leaf>],
}

/// A run of `n` register slots from a first one.
pub type Span = (Reg, u32);

/// The registers an op reads and writes: the one statement of every op's
/// operands, from which translation proves each access inside the register
/// file, the compiled tier keeps what is live across a barrier, the
/// undefined-value checker carries definedness, and the analyses follow
/// values. A `Call`'s `ret` is written by the `Ret` that ends the call, not
/// by the call: it is in neither list (see [`Operands::touched`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Operands {
    pub reads: Vec<Span>,
    pub writes: Vec<Span>,
}

/// One register.
fn one(r: Reg) -> Span {
    (r, 1)
}

/// Operands of these spans.
fn rw(reads: &[Span], writes: &[Span]) -> Operands {
    Operands { reads: reads.to_vec(), writes: writes.to_vec() }
}

impl Operands {
    pub fn of(op: &Op, t: Tables<'_>) -> Operands {
        match op {
            family!(Scalar) | family!(Fused) | family!(Vector) => Operands::of_direct(op, t),
            family!(Int) | family!(Float) => Operands::of_lanes(op),
            _ => Operands::of_effects(op, t),
        }
    }

    /// Moves, the direct scalar ops and the vector and pointer ops.
    fn of_direct(op: &Op, t: Tables<'_>) -> Operands {
        let n = u32::from;
        match *op {
            Op::Mov { dst, src, n } => rw(&[(src, n)], &[(dst, n)]),
            Op::Moves { start, len } => Operands::moves(t, start, len),
            Op::Splat { dst, src, n: k } => rw(&[one(src)], &[(dst, n(k))]),
            Op::Add32 { dst, a, b }
            | Op::Sub32 { dst, a, b }
            | Op::Mul32 { dst, a, b }
            | Op::Shl32 { dst, a, b }
            | Op::LShr32 { dst, a, b }
            | Op::Rotl32 { dst, a, b }
            | Op::And { dst, a, b }
            | Op::Or { dst, a, b }
            | Op::Xor { dst, a, b }
            | Op::FAdd32 { dst, a, b }
            | Op::FSub32 { dst, a, b }
            | Op::FMul32 { dst, a, b }
            | Op::PtrDiff { dst, a, b, .. } => rw(&[one(a), one(b)], &[one(dst)]),
            Op::SubXorRotl32 { dst, a, b, k } | Op::XorSubRotl32 { dst, a, b, k } => {
                rw(&[one(a), one(b), one(k)], &[one(dst)])
            }
            Op::ZExt32 { dst, src }
            | Op::SExt32 { dst, src }
            | Op::Trunc32 { dst, src }
            | Op::CastToSpace { dst, src, .. } => rw(&[one(src)], &[one(dst)]),
            Op::Offset { dst, base, .. } => rw(&[one(base)], &[one(dst)]),
            Op::Index { dst, base, index, .. } => rw(&[one(base), one(index)], &[one(dst)]),
            Op::Ptr { dst, base, terms_start, terms_len, .. } => {
                let terms = t
                    .terms
                    .get(terms_start as usize..terms_start as usize + terms_len as usize)
                    .unwrap_or(&[]);
                Operands {
                    reads: [one(base)]
                        .into_iter()
                        .chain(terms.iter().map(|t| one(t.reg)))
                        .collect(),
                    writes: vec![one(dst)],
                }
            }
            Op::Bitcast { from_n, to_n, dst, src, .. } => {
                rw(&[(src, n(from_n))], &[(dst, n(to_n))])
            }
            Op::ExtractDyn { dst, base, index, n: k, .. } => {
                rw(&[(base, n(k)), one(index)], &[one(dst)])
            }
            Op::InsertDyn { dst, base, value, index, n: k, .. } => {
                rw(&[(base, n(k)), one(value), one(index)], &[(dst, n(k))])
            }
            Op::Geometric { op, n: k, dst, a, b, .. } => {
                // A length, distance or dot product is one lane.
                let lanes = match op {
                    Geometric::Normalize | Geometric::Cross => n(k),
                    _ => 1,
                };
                rw(&[(a, n(k)), (b, n(k))], &[(dst, lanes)])
            }
            _ => unreachable!("`Operands::of` sends only these ops here"),
        }
    }

    /// Integer and float ops: `n` lanes of each operand.
    fn of_lanes(op: &Op) -> Operands {
        let n = u32::from;
        match *op {
            Op::Int { n: k, dst, a, b, .. }
            | Op::Cmp { n: k, dst, a, b, .. }
            | Op::Float { n: k, dst, a, b, .. }
            | Op::FCmp { n: k, dst, a, b, .. }
            | Op::Logic { n: k, dst, a, b, .. }
            | Op::Upsample { n: k, dst, a, b, .. } => rw(&[(a, n(k)), (b, n(k))], &[(dst, n(k))]),
            Op::IntUn { n: k, dst, a, .. }
            | Op::FloatUn { n: k, dst, a, .. }
            | Op::FTest { n: k, dst, a, .. }
            | Op::LNot { n: k, dst, a }
            | Op::Convert { n: k, dst, src: a, .. } => rw(&[(a, n(k))], &[(dst, n(k))]),
            Op::IntTer { n: k, dst, a, b, c, .. }
            | Op::FloatTer { n: k, dst, a, b, c, .. }
            | Op::SelectMsb { n: k, dst, a, b, c, .. } => {
                rw(&[(a, n(k)), (b, n(k)), (c, n(k))], &[(dst, n(k))])
            }
            Op::Select { n: k, vector_cond, dst, cond, a, b } => {
                let c = if vector_cond { n(k) } else { 1 };
                rw(&[(cond, c), (a, n(k)), (b, n(k))], &[(dst, n(k))])
            }
            Op::AnyAll { n: k, dst, a, .. } => rw(&[(a, n(k))], &[one(dst)]),
            _ => unreachable!("`Operands::of` sends only these ops here"),
        }
    }

    /// Blocks, memory, work-group, image and printf ops, and control flow.
    fn of_effects(op: &Op, t: Tables<'_>) -> Operands {
        let n = u32::from;
        match *op {
            Op::Block { .. } | Op::Jump { .. } | Op::Barrier { .. } | Op::Trap => {
                Operands::default()
            }
            Op::Call { moves_start, moves_len, .. } => Operands::moves(t, moves_start, moves_len),
            Op::Ret { src, n } => rw(&[(src, n)], &[]),
            Op::Collective { dst, src, index, .. } => rw(&[one(src), one(index)], &[one(dst)]),
            Op::CountAccess { ptr, .. } => rw(&[one(ptr)], &[]),
            Op::CheckIndex { index, .. } => rw(&[one(index)], &[]),
            Op::WaitEvents { num, list } => rw(&[one(num), one(list)], &[]),
            Op::Load { dst, ptr, n: k, .. } | Op::LoadHalf { dst, ptr, n: k } => {
                rw(&[one(ptr)], &[(dst, n(k))])
            }
            Op::Store { src, ptr, n: k, .. } | Op::StoreHalf { src, ptr, n: k, .. } => {
                rw(&[one(ptr), (src, n(k))], &[])
            }
            Op::LoadAgg { dst, ptr, layout } => {
                let leaves = t.layouts.get(layout as usize).map_or(0, Vec::len);
                rw(&[one(ptr)], &[(dst, leaves as u32)])
            }
            Op::StoreAgg { src, ptr, layout } => {
                let leaves = t.layouts.get(layout as usize).map_or(0, Vec::len);
                rw(&[one(ptr), (src, leaves as u32)], &[])
            }
            Op::Copy { dst, src, bytes_reg, .. } => Operands {
                reads: [one(dst), one(src)]
                    .into_iter()
                    .chain(bytes_reg.map(one))
                    .collect(),
                writes: Vec::new(),
            },
            Op::GroupCopy { dst, src, elems, stride, event, out, .. } => rw(
                &[one(dst), one(src), one(elems), one(stride), one(event)],
                &[one(out)],
            ),
            Op::Atomic { dst, ptr, a, b, .. } => rw(&[one(ptr), one(a), one(b)], &[one(dst)]),
            // The executor fills at most three dimensions.
            Op::Builtin { dst, lanes, .. } => rw(&[], &[(dst, n(lanes.min(3)))]),
            Op::Branch { cond, .. } => rw(&[one(cond)], &[]),
            Op::Switch { sel, .. } => rw(&[one(sel)], &[]),
            Op::ImageRead { dst, image, coord, sampler, form } => rw(
                &[one(image), (coord, n(form.coord_n)), one(sampler)],
                &[(dst, 4)],
            ),
            Op::ImageWrite { image, coord, src, form } => {
                rw(&[one(image), (coord, n(form.coord_n)), (src, 4)], &[])
            }
            Op::ImageQuery { dst, image, n: k, .. } => rw(&[one(image)], &[(dst, n(k))]),
            Op::Printf { dst, format, args_start, args_len } => {
                let args = t
                    .printf_args
                    .get(args_start as usize..args_start as usize + args_len as usize)
                    .unwrap_or(&[]);
                Operands {
                    reads: [one(format)]
                        .into_iter()
                        .chain(args.iter().map(|a| (a.reg, u32::from(a.lanes))))
                        .collect(),
                    writes: vec![one(dst)],
                }
            }
            _ => unreachable!("`Operands::of` sends only these ops here"),
        }
    }

    /// What the moves `start .. start + len` read and write.
    fn moves(t: Tables<'_>, start: u32, len: u32) -> Operands {
        let moves = t
            .moves
            .get(start as usize..start as usize + len as usize)
            .unwrap_or(&[]);
        Operands {
            reads: moves.iter().map(|m| (m.src, m.n)).collect(),
            writes: moves.iter().map(|m| (m.dst, m.n)).collect(),
        }
    }

    /// Every span the op names, read or written, and a call's `ret`: what
    /// must lie inside the register file.
    pub fn touched(op: &Op, t: Tables<'_>) -> impl Iterator<Item = Span> {
        let Operands { reads, writes } = Operands::of(op, t);
        let ret = match *op {
            Op::Call { ret, ret_n, .. } => Some((ret, ret_n)),
            _ => None,
        };
        reads.into_iter().chain(writes).chain(ret)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ops_stay_small() {
        // One op per cache-line quarter keeps the dispatch loop fed.
        assert!(std::mem::size_of::<super::Op>() <= 32);
    }
}
