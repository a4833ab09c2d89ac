//! The OpenCL.std extended instructions: how each builtin executes.

use super::*;
use rspirv::spirv::OpenclStd100Op as X;
/// How an extended instruction is executed and counted.
pub(super) enum Ext {
    FUn(FloatUnOp),
    FBin(FloatOp),
    FTer(FloatTerOp),
    IUn(IntUnOp),
    IBin(IntOp),
    ITer(IntTerOp),
    Upsample,
    Bitselect,
    SelectMsb,
    Geometric(Geometric),
    /// A float builtin that also writes a second result through its last
    /// argument, a pointer: frexp, modf, fract, sincos, lgamma_r (unary),
    /// remquo (binary).
    SplitUn {
        value: FloatUnOp,
        out: FloatUnOp,
    },
    SplitBin {
        value: FloatOp,
        out: FloatOp,
    },
    /// A float argument, an int result: ilogb.
    FUnToInt(FloatUnOp),
    /// shuffle (one source vector) and shuffle2 (two).
    Shuffle {
        sources: u8,
    },
    VLoad,
    VStore,
    VLoadHalf {
        n_arg: bool,
        aligned: bool,
    },
    VStoreHalf {
        n_arg: bool,
        aligned: bool,
        rounding_arg: bool,
    },
    /// printf: formatted as it runs (`exec::printf`).
    Printf,
    Nothing,
}

pub(super) fn ext_of(op: X) -> Option<Ext> {
    use Ext::*;
    Some(match op {
        X::acos => FUn(FloatUnOp::Acos),
        X::acosh => FUn(FloatUnOp::Acosh),
        X::acospi => FUn(FloatUnOp::Acospi),
        X::asin => FUn(FloatUnOp::Asin),
        X::asinh => FUn(FloatUnOp::Asinh),
        X::asinpi => FUn(FloatUnOp::Asinpi),
        X::atan => FUn(FloatUnOp::Atan),
        X::atanh => FUn(FloatUnOp::Atanh),
        X::atanpi => FUn(FloatUnOp::Atanpi),
        X::cbrt => FUn(FloatUnOp::Cbrt),
        X::ceil => FUn(FloatUnOp::Ceil),
        X::cos | X::native_cos | X::half_cos => FUn(FloatUnOp::Cos),
        X::cosh => FUn(FloatUnOp::Cosh),
        X::cospi => FUn(FloatUnOp::Cospi),
        X::exp | X::native_exp | X::half_exp => FUn(FloatUnOp::Exp),
        X::exp2 | X::native_exp2 | X::half_exp2 => FUn(FloatUnOp::Exp2),
        X::exp10 | X::native_exp10 | X::half_exp10 => FUn(FloatUnOp::Exp10),
        X::expm1 => FUn(FloatUnOp::Expm1),
        X::fabs => FUn(FloatUnOp::Fabs),
        X::floor => FUn(FloatUnOp::Floor),
        X::log | X::native_log | X::half_log => FUn(FloatUnOp::Log),
        X::log2 | X::native_log2 | X::half_log2 => FUn(FloatUnOp::Log2),
        X::log10 | X::native_log10 | X::half_log10 => FUn(FloatUnOp::Log10),
        X::log1p => FUn(FloatUnOp::Log1p),
        X::logb => FUn(FloatUnOp::Logb),
        X::rint => FUn(FloatUnOp::Rint),
        X::round => FUn(FloatUnOp::Round),
        X::rsqrt | X::native_rsqrt | X::half_rsqrt => FUn(FloatUnOp::Rsqrt),
        X::sin | X::native_sin | X::half_sin => FUn(FloatUnOp::Sin),
        X::sinh => FUn(FloatUnOp::Sinh),
        X::sinpi => FUn(FloatUnOp::Sinpi),
        X::sqrt | X::native_sqrt | X::half_sqrt => FUn(FloatUnOp::Sqrt),
        X::tan | X::native_tan | X::half_tan => FUn(FloatUnOp::Tan),
        X::tanh => FUn(FloatUnOp::Tanh),
        X::tanpi => FUn(FloatUnOp::Tanpi),
        X::trunc => FUn(FloatUnOp::Trunc),
        X::native_recip | X::half_recip => FUn(FloatUnOp::Recip),
        X::degrees => FUn(FloatUnOp::Degrees),
        X::radians => FUn(FloatUnOp::Radians),
        X::sign => FUn(FloatUnOp::Sign),
        X::erf => FUn(FloatUnOp::Erf),
        X::erfc => FUn(FloatUnOp::Erfc),
        X::tgamma => FUn(FloatUnOp::Tgamma),
        X::lgamma => FUn(FloatUnOp::Lgamma),
        X::nan => FUn(FloatUnOp::Nan),
        X::ilogb => FUnToInt(FloatUnOp::Ilogb),
        X::frexp => SplitUn {
            value: FloatUnOp::FrexpMantissa,
            out: FloatUnOp::FrexpExponent,
        },
        X::modf => SplitUn { value: FloatUnOp::ModfFraction, out: FloatUnOp::Trunc },
        X::fract => SplitUn { value: FloatUnOp::Fract, out: FloatUnOp::Floor },
        X::sincos => SplitUn { value: FloatUnOp::Sin, out: FloatUnOp::Cos },
        X::lgamma_r => SplitUn { value: FloatUnOp::Lgamma, out: FloatUnOp::LgammaSign },
        X::remquo => SplitBin { value: FloatOp::Remainder, out: FloatOp::RemquoQuotient },
        X::shuffle => Shuffle { sources: 1 },
        X::shuffle2 => Shuffle { sources: 2 },
        X::atan2 => FBin(FloatOp::Atan2),
        X::atan2pi => FBin(FloatOp::Atan2Pi),
        X::copysign => FBin(FloatOp::Copysign),
        X::fdim => FBin(FloatOp::Fdim),
        X::fmax | X::fmax_common => FBin(FloatOp::Fmax),
        X::fmin | X::fmin_common => FBin(FloatOp::Fmin),
        X::fmod => FBin(FloatOp::Rem),
        X::hypot => FBin(FloatOp::Hypot),
        X::nextafter => FBin(FloatOp::Nextafter),
        X::pow => FBin(FloatOp::Pow),
        X::powr | X::native_powr | X::half_powr => FBin(FloatOp::Powr),
        X::remainder => FBin(FloatOp::Remainder),
        X::maxmag => FBin(FloatOp::Maxmag),
        X::minmag => FBin(FloatOp::Minmag),
        X::step => FBin(FloatOp::Step),
        X::ldexp => FBin(FloatOp::Ldexp),
        X::pown => FBin(FloatOp::Pown),
        X::rootn => FBin(FloatOp::Rootn),
        X::native_divide | X::half_divide => FBin(FloatOp::Div),
        X::fma | X::mad => FTer(FloatTerOp::Fma),
        X::fclamp => FTer(FloatTerOp::Clamp),
        X::mix => FTer(FloatTerOp::Mix),
        X::smoothstep => FTer(FloatTerOp::Smoothstep),
        X::s_abs => IUn(IntUnOp::SAbs),
        X::u_abs => IUn(IntUnOp::UAbs),
        X::clz => IUn(IntUnOp::Clz),
        X::ctz => IUn(IntUnOp::Ctz),
        X::popcount => IUn(IntUnOp::BitCount),
        X::s_abs_diff => IBin(IntOp::SAbsDiff),
        X::u_abs_diff => IBin(IntOp::UAbsDiff),
        X::s_add_sat => IBin(IntOp::SAddSat),
        X::u_add_sat => IBin(IntOp::UAddSat),
        X::s_sub_sat => IBin(IntOp::SSubSat),
        X::u_sub_sat => IBin(IntOp::USubSat),
        X::s_hadd => IBin(IntOp::SHadd),
        X::u_hadd => IBin(IntOp::UHadd),
        X::s_rhadd => IBin(IntOp::SRhadd),
        X::u_rhadd => IBin(IntOp::URhadd),
        X::s_max => IBin(IntOp::SMax),
        X::u_max => IBin(IntOp::UMax),
        X::s_min => IBin(IntOp::SMin),
        X::u_min => IBin(IntOp::UMin),
        X::s_mul_hi => IBin(IntOp::SMulHi),
        X::u_mul_hi => IBin(IntOp::UMulHi),
        X::rotate => IBin(IntOp::Rotate),
        X::s_mul24 => IBin(IntOp::SMul24),
        X::u_mul24 => IBin(IntOp::UMul24),
        X::s_clamp => ITer(IntTerOp::SClamp),
        X::u_clamp => ITer(IntTerOp::UClamp),
        X::s_mad_hi => ITer(IntTerOp::SMadHi),
        X::u_mad_hi => ITer(IntTerOp::UMadHi),
        X::s_mad_sat => ITer(IntTerOp::SMadSat),
        X::u_mad_sat => ITer(IntTerOp::UMadSat),
        X::s_mad24 => ITer(IntTerOp::SMad24),
        X::u_mad24 => ITer(IntTerOp::UMad24),
        X::s_upsample | X::u_upsample => Upsample,
        X::bitselect => Bitselect,
        X::select => SelectMsb,
        X::cross => Geometric(clflow_bytecode::Geometric::Cross),
        X::length | X::fast_length => Geometric(clflow_bytecode::Geometric::Length),
        X::distance | X::fast_distance => Geometric(clflow_bytecode::Geometric::Distance),
        X::normalize | X::fast_normalize => Geometric(clflow_bytecode::Geometric::Normalize),
        X::vloadn => VLoad,
        X::vstoren => VStore,
        X::vload_half => VLoadHalf { n_arg: false, aligned: false },
        X::vload_halfn => VLoadHalf { n_arg: true, aligned: false },
        X::vloada_halfn => VLoadHalf { n_arg: true, aligned: true },
        X::vstore_half => VStoreHalf { n_arg: false, aligned: false, rounding_arg: false },
        X::vstore_half_r => VStoreHalf { n_arg: false, aligned: false, rounding_arg: true },
        X::vstore_halfn => VStoreHalf { n_arg: true, aligned: false, rounding_arg: false },
        X::vstore_halfn_r => VStoreHalf { n_arg: true, aligned: false, rounding_arg: true },
        X::vstorea_halfn => VStoreHalf { n_arg: true, aligned: true, rounding_arg: false },
        X::vstorea_halfn_r => VStoreHalf { n_arg: true, aligned: true, rounding_arg: true },
        X::printf => Printf,
        X::prefetch => Nothing,
    })
}

/// Where a builtin's result goes: its register, lane kind and lanes.
#[derive(Clone, Copy)]
struct Out {
    dst: Reg,
    s: SlotKind,
    n: u8,
}

/// The OpenCL.std builtin `inst` calls, what it is, and its name.
fn ext_kind(inst: &Instruction, opencl_std: &HashSet<Word>) -> R<(X, Ext, &'static str)> {
    let set = id(inst, 0)?;
    if !opencl_std.contains(&set) {
        return Err(TranslateError::unsupported(
            "an extended instruction outside OpenCL.std",
            "only the OpenCL.std instruction set is interpreted",
        ));
    }
    let number = literal(inst, 1)? as u32;
    let op = X::from_u32(number).ok_or_else(|| {
        TranslateError::malformed(format!("unknown OpenCL.std instruction {number}"))
    })?;
    let ext_name: &'static str = rspirv::grammar::ext_inst_table("OpenCL.std")
        .and_then(|t| t.lookup_opcode(number))
        .map(|i| i.opname)
        .unwrap_or("OpExtInst");
    let kind = ext_of(op).ok_or_else(|| {
        TranslateError::unsupported(
            format!("OpenCL builtin `{ext_name}`"),
            "this builtin is not interpreted yet; please report the kernel",
        )
    })?;
    Ok((op, kind, ext_name))
}

impl<'m> Translator<'m> {
    pub(super) fn ext_inst(&mut self, inst: &Instruction) -> R<()> {
        let (op, kind, ext_name) = ext_kind(inst, &self.opencl_std)?;
        // Only the integer clamps count by whether they work on integers,
        // and they have a result: their rule comes once its type is known.
        let rule = rules::builtin(op, ext_name, false);
        match kind {
            Ext::Nothing => self.ext_nothing(inst, rule),
            Ext::Printf => self.printf(inst, rule),
            Ext::VLoad | Ext::VStore => self.vload_vstore(inst, matches!(kind, Ext::VLoad), rule),
            Ext::VLoadHalf { n_arg, aligned } => self.vload_half(inst, n_arg, aligned, rule),
            Ext::VStoreHalf { n_arg, aligned, rounding_arg } => {
                self.vstore_half(inst, n_arg, aligned, rounding_arg, rule)
            }
            _ => self.ext_value(inst, op, kind, ext_name),
        }
    }

    /// A builtin that does nothing the machine sees (`prefetch`): its
    /// result, if any, is 0.
    fn ext_nothing(&mut self, inst: &Instruction, rule: Rule) -> R<()> {
        if let (Some(r), Some(t)) = (inst.result_id, inst.result_type) {
            if self.types.slots(t)? > 0 {
                let dst = self.val(r)?.slot;
                let zero = self.zero()?;
                self.emit(Op::Mov { dst, src: zero, n: 1 });
            }
        }
        self.counted(rule, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// A builtin that computes a value: lane by lane, but for those
    /// counted by their operands ([`Translator::ext_apart`]).
    fn ext_value(&mut self, inst: &Instruction, op: X, kind: Ext, ext_name: &'static str) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let dst = self.val(rid)?.slot;
        let signed = ext_name.starts_with("s_");
        let lt = lane_type(s, signed || s.bits() > 1 && matches!(s, SlotKind::Float(_)))?;
        let lanes = n as u64;
        let rule = rules::builtin(op, ext_name, matches!(s, SlotKind::Int(_)));
        let out = Out { dst, s, n };
        match kind {
            Ext::SelectMsb | Ext::FUnToInt(_) | Ext::Shuffle { .. } | Ext::Geometric(_) => {
                self.ext_apart(inst, kind, ext_name, out, (rule, lt))
            }
            _ => {
                self.ext_lanes(inst, kind, ext_name, out)?;
                self.counted(rule, lt, lanes);
                Ok(())
            }
        }
    }

    /// The builtins of one op a lane, counted over their result's lanes.
    fn ext_lanes(
        &mut self,
        inst: &Instruction,
        kind: Ext,
        ext_name: &'static str,
        out: Out,
    ) -> R<()> {
        let Out { dst, s, n } = out;
        let arg = |k: usize| id(inst, 2 + k);
        match kind {
            Ext::FUn(f) => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::FloatUn { op: f, bits, n, dst, a });
            }
            Ext::FBin(f) => {
                let bits = self.float_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                self.emit(float_op(f, bits, n, dst, a, b));
            }
            Ext::FTer(f) => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::FloatTer { op: f, bits, n, dst, a, b, c });
            }
            Ext::IUn(f) => {
                let bits = self.int_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::IntUn { op: f, bits, n, dst, a });
            }
            Ext::IBin(f) => {
                let bits = self.int_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                // A scalar 32-bit rotate() runs as the fused shifts do.
                self.emit(clflow_bytecode::int_op(f, bits, n, dst, a, b));
            }
            Ext::ITer(f) => {
                let bits = self.int_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::IntTer { op: f, bits, n, dst, a, b, c });
            }
            Ext::Bitselect => {
                let bits = s.bits();
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::IntTer { op: IntTerOp::Bitselect, bits, n, dst, a, b, c });
            }
            Ext::Upsample => {
                let hi = self.val(arg(0)?)?;
                let (hs, _) = self.types.lanes(hi.ty)?;
                let b = self.operand(arg(1)?, n)?;
                self.emit(Op::Upsample { bits: hs.bits(), n, dst, a: hi.slot, b });
            }
            Ext::SplitUn { value, out } => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                // The pointee first: `dst` may not be read after it is written.
                let tmp = self.alloc(n as u32)?;
                self.emit(Op::FloatUn { op: out, bits, n, dst: tmp, a });
                self.store_through(arg(1)?, tmp, n, ext_name)?;
                self.emit(Op::FloatUn { op: value, bits, n, dst, a });
            }
            Ext::SplitBin { value, out } => {
                let bits = self.float_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                let tmp = self.alloc(n as u32)?;
                self.emit(float_op(out, bits, n, tmp, a, b));
                self.store_through(arg(2)?, tmp, n, ext_name)?;
                self.emit(float_op(value, bits, n, dst, a, b));
            }
            _ => unreachable!("`ext_value` sends only these builtins here"),
        }
        Ok(())
    }

    /// The builtins counted apart: by their operands' lanes or type.
    fn ext_apart(
        &mut self,
        inst: &Instruction,
        kind: Ext,
        ext_name: &'static str,
        out: Out,
        (rule, lt): (Rule, LaneType),
    ) -> R<()> {
        let Out { dst, s: _, n } = out;
        let lanes = n as u64;
        let arg = |k: usize| id(inst, 2 + k);
        match kind {
            Ext::SelectMsb => {
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.val(arg(2)?)?;
                let (cs, _) = self.types.lanes(c.ty)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::SelectMsb { n, bits: cs.bits(), msb: n > 1, dst, a, b, c });
                self.counted(rule, lt, lanes);
            }
            Ext::FUnToInt(f) => {
                let x = self.val(arg(0)?)?;
                let (fs, _) = self.types.lanes(x.ty)?;
                let bits = self.float_bits(fs)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::FloatUn { op: f, bits, n, dst, a });
                // Counted by its float argument's type.
                self.counted(rule, lane_type(fs, true)?, lanes);
            }
            Ext::Shuffle { sources } => self.shuffle(inst, sources, dst, n, rule)?,
            Ext::Geometric(g) => {
                let a = self.val(arg(0)?)?;
                let (fs, in_n) = self.types.lanes(a.ty)?;
                let bits = self.float_bits(fs)?;
                if g == Geometric::Cross && !(in_n == 3 || in_n == 4) || in_n > 4 {
                    return Err(TranslateError::malformed(format!(
                        "`{ext_name}` of {in_n} lanes"
                    )));
                }
                let b = match g {
                    Geometric::Cross | Geometric::Distance | Geometric::Dot => {
                        self.operand(arg(1)?, in_n)?
                    }
                    _ => a.slot,
                };
                self.emit(Op::Geometric { op: g, bits, n: in_n, dst, a: a.slot, b });
                // Counted over its operands' lanes.
                self.counted(rule, lane_type(fs, true)?, in_n as u64);
            }
            _ => unreachable!("`ext_value` sends only these builtins here"),
        }
        Ok(())
    }

    /// printf(format, args...): the format is read from `__constant` memory
    /// and applied as the call runs; here each argument's registers and
    /// kind. A device-side printf does no work W counts: it is counted once
    /// per execution, in the histogram only, as it always was.
    pub(super) fn printf(&mut self, inst: &Instruction, rule: Rule) -> R<()> {
        let (rid, _) = result(inst)?;
        let dst = self.val(rid)?.slot;
        let format = self.val(id(inst, 2)?)?;
        if self.types.pointee(format.ty)?.0 != AddressSpace::Constant {
            return Err(TranslateError::malformed(
                "printf's format is not a pointer to __constant memory",
            ));
        }
        let args_start = self.out.printf_args.len() as u32;
        for k in 3..inst.operands.len() {
            let v = self.val(id(inst, k)?)?;
            let kind = match self.types.get(v.ty)? {
                clflow_spirv::types::Type::Scalar(_)
                | clflow_spirv::types::Type::Vector(..)
                | clflow_spirv::types::Type::Pointer { .. } => match self.types.lanes(v.ty)?.0 {
                    SlotKind::Int(bits) if bits >= 8 => PrintfKind::Int(bits),
                    SlotKind::Float(bits) => PrintfKind::Float(bits),
                    SlotKind::Ptr => PrintfKind::Pointer,
                    _ => return Err(printf_argument(k - 2, "a bool")),
                },
                _ => return Err(printf_argument(k - 2, "a struct or an array")),
            };
            let lanes = self.types.lanes(v.ty)?.1;
            self.out
                .printf_args
                .push(PrintfArg { reg: v.slot, lanes, kind });
        }
        self.emit(Op::Printf {
            dst,
            format: format.slot,
            args_start,
            args_len: self.out.printf_args.len() as u32 - args_start,
        });
        self.counted(rule, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// shuffle(x, mask) / shuffle2(x, y, mask): lane i of the result is
    /// lane `mask[i]` (modulo the source lanes) of x, or of x then y. Each
    /// lane is a dynamic extract from the sources laid side by side.
    pub(super) fn shuffle(
        &mut self,
        inst: &Instruction,
        sources: u8,
        dst: Reg,
        n: u8,
        rule: Rule,
    ) -> R<()> {
        let arg = |k: usize| id(inst, 2 + k);
        let x = self.val(arg(0)?)?;
        let (xs, m) = self.types.lanes(x.ty)?;
        let mask = self.val(arg(sources as usize)?)?;
        let (ms, mn) = self.types.lanes(mask.ty)?;
        let total = m as u32 * sources as u32;
        if mn != n || !total.is_power_of_two() || total > 32 {
            return Err(TranslateError::malformed(format!(
                "`{}` of {m}-lane sources with a {mn}-lane mask into {n} lanes",
                rule.name
            )));
        }
        let index_bits = self.int_bits(ms)?;
        let base = if sources == 1 {
            x.slot
        } else {
            let y = self.val(arg(1)?)?;
            let both = self.alloc(total)?;
            self.emit(Op::Mov { dst: both, src: x.slot, n: m as u32 });
            self.emit(Op::Mov { dst: both + m as u32, src: y.slot, n: m as u32 });
            both
        };
        // Only the low bits of each mask lane select (OpenCL 6.12.12).
        let low_bits = self.alloc(1)?;
        self.regs.const_slots.insert(low_bits, (total - 1) as u64);
        self.regs.init.push((low_bits, (total - 1) as u64));
        let index = self.alloc(n as u32)?;
        for i in 0..n as u32 {
            self.emit(Op::Int {
                op: IntOp::And,
                bits: index_bits,
                n: 1,
                dst: index + i,
                a: mask.slot + i,
                b: low_bits,
            });
        }
        // Into a scratch vector first: `dst` may share registers with a source.
        let out = self.alloc(n as u32)?;
        for i in 0..n as u32 {
            self.emit(Op::ExtractDyn {
                dst: out + i,
                base,
                index: index + i,
                index_bits,
                n: total as u8,
            });
        }
        self.emit(Op::Mov { dst, src: out, n: n as u32 });
        self.counted(rule, lane_type(xs, false)?, n as u64);
        Ok(())
    }
}

/// A printf argument no conversion takes (argument 1 follows the format).
fn printf_argument(index: usize, what: &str) -> TranslateError {
    TranslateError::unsupported(
        format!("printf argument {index} is {what}"),
        "printf prints scalars, vectors, string literals and pointers",
    )
}
