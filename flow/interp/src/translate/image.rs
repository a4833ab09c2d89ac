//! Images and samplers: `OpSampledImage` pairs an image with a sampler in
//! two slots; reads, writes and queries become one op each, whose texel
//! traffic is counted as it runs (see `crate::counts`, "Images").

use super::*;
use clflow_core::SamplerDesc;
use clflow_spirv::types::Type;

impl<'m> Translator<'m> {
    /// `OpConstantSampler`: the `CLK_*` bits of the sampler it declares.
    pub(super) fn constant_sampler(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let address = match inst.operands.first() {
            Some(Operand::SamplerAddressingMode(m)) => match m {
                spirv::SamplerAddressingMode::None => clflow_core::AddressMode::None,
                spirv::SamplerAddressingMode::ClampToEdge => clflow_core::AddressMode::ClampToEdge,
                spirv::SamplerAddressingMode::Clamp => clflow_core::AddressMode::Clamp,
                spirv::SamplerAddressingMode::Repeat => clflow_core::AddressMode::Repeat,
                spirv::SamplerAddressingMode::RepeatMirrored => {
                    clflow_core::AddressMode::MirroredRepeat
                }
            },
            _ => {
                return Err(TranslateError::malformed(
                    "OpConstantSampler without an addressing mode",
                ))
            }
        };
        let normalized = literal(inst, 1)? != 0;
        let filter = match inst.operands.get(2) {
            Some(Operand::SamplerFilterMode(spirv::SamplerFilterMode::Linear)) => {
                clflow_core::FilterMode::Linear
            }
            Some(Operand::SamplerFilterMode(_)) => clflow_core::FilterMode::Nearest,
            _ => {
                return Err(TranslateError::malformed(
                    "OpConstantSampler without a filter mode",
                ))
            }
        };
        let bits = SamplerDesc { normalized, address, filter }.bits();
        self.constant(rid, ty, vec![u64::from(bits)])
    }

    /// `OpSampledImage`: the image, then the sampler.
    pub(super) fn sampled_image(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let dst = self.val(rid)?.slot;
        let image = self.val(id(inst, 0)?)?.slot;
        let sampler = self.val(id(inst, 1)?)?.slot;
        let start = self.out.moves.len() as u32;
        self.out.moves.push(Move { dst, src: image, n: 1 });
        self.out
            .moves
            .push(Move { dst: dst + 1, src: sampler, n: 1 });
        self.emit(Op::Moves { start, len: 2 });
        Ok(())
    }

    /// The texel type of a read's result or a write's value: 4 lanes of a
    /// 32-bit float or integer.
    fn texel(&self, ty: Word, what: &str) -> R<(LaneType, bool)> {
        match self.types.lanes(ty)? {
            (SlotKind::Float(32), 4) => Ok((LaneType::Scalar(ScalarType::Float), true)),
            (SlotKind::Int(32), 4) => Ok((LaneType::Scalar(ScalarType::UInt), false)),
            (s, n) => Err(TranslateError::unsupported(
                format!("{what} of {n} lanes of {s:?}"),
                "clflow reads and writes images as float4, int4 and uint4 (no half4)",
            )),
        }
    }

    fn coordinates(&self, coord: Word) -> R<(u8, bool)> {
        match self.types.lanes(self.val(coord)?.ty)? {
            (SlotKind::Float(32), n) => Ok((n, true)),
            (SlotKind::Int(32), n) => Ok((n, false)),
            (s, n) => Err(TranslateError::malformed(format!(
                "image coordinates of {n} lanes of {s:?}"
            ))),
        }
    }

    /// `OpImageRead` (integer coordinates, no sampler) and
    /// `OpImageSampleExplicitLod` (a sampled image; the level of detail must
    /// be the constant 0: no mipmaps).
    pub(super) fn image_read(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let sampled = inst.class.opcode == S::ImageSampleExplicitLod;
        let (lane_type, float_texel) = self.texel(ty, "an image read")?;
        let coord = id(inst, 1)?;
        let (coord_n, float_coords) = self.coordinates(coord)?;
        if inst.operands.len() > 2 && !extend_only(inst, 2) {
            let lod_zero = match inst.operands.get(3) {
                Some(Operand::IdRef(lod)) => self
                    .regs
                    .const_slots
                    .get(&self.val(*lod)?.slot)
                    .is_some_and(|v| *v == 0),
                _ => false,
            };
            if !sampled || inst.operands.len() != 4 || !lod_zero {
                return Err(TranslateError::unsupported(
                    "image operands other than an explicit level of detail 0 (mipmaps, offsets, samples)",
                    "clflow runs images without mipmaps",
                ));
            }
        }
        let handle = self.val(id(inst, 0)?)?;
        let (image, sampler) = if sampled {
            (handle.slot, handle.slot + 1)
        } else {
            (handle.slot, Reg::UNUSED)
        };
        let dst = self.val(rid)?.slot;
        self.emit(Op::ImageRead {
            dst,
            image,
            coord: self.val(coord)?.slot,
            sampler,
            form: ImageForm { coord_n, float_coords, float_texel, sampled },
        });
        let name = if sampled {
            "OpImageSampleExplicitLod global"
        } else {
            "OpImageRead global"
        };
        self.hist(name, lane_type, 4);
        Ok(())
    }

    /// `OpImageWrite`.
    pub(super) fn image_write(&mut self, inst: &Instruction) -> R<()> {
        if inst.operands.len() > 3 && !extend_only(inst, 3) {
            return Err(TranslateError::unsupported(
                "image operands on a write (mipmaps)",
                "clflow runs images without mipmaps",
            ));
        }
        let image = self.val(id(inst, 0)?)?.slot;
        let coord = id(inst, 1)?;
        let (coord_n, float_coords) = self.coordinates(coord)?;
        let value = self.val(id(inst, 2)?)?;
        let (lane_type, float_texel) = self.texel(value.ty, "an image write")?;
        if float_coords {
            return Err(TranslateError::malformed(
                "an image write at float coordinates",
            ));
        }
        self.emit(Op::ImageWrite {
            image,
            coord: self.val(coord)?.slot,
            src: value.slot,
            form: ImageForm { coord_n, float_coords, float_texel, sampled: false },
        });
        self.hist("OpImageWrite global", lane_type, 4);
        Ok(())
    }

    /// `OpImageQuerySize(Lod)`, `OpImageQueryFormat`, `OpImageQueryOrder`.
    pub(super) fn image_query(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let query = match inst.class.opcode {
            S::ImageQueryFormat => ImageQuery::Format,
            S::ImageQueryOrder => ImageQuery::Order,
            _ => ImageQuery::Size,
        };
        if inst.class.opcode == S::ImageQuerySizeLod {
            let lod = self.val(id(inst, 1)?)?.slot;
            if self.regs.const_slots.get(&lod) != Some(&0) {
                return Err(TranslateError::unsupported(
                    "an image size at a level of detail other than 0 (mipmaps)",
                    "clflow runs images without mipmaps",
                ));
            }
        }
        let image = self.val(id(inst, 0)?)?;
        if !matches!(self.types.get(image.ty)?, Type::Image(_)) {
            return Err(TranslateError::malformed("an image query of a non-image"));
        }
        let (s, n) = self.types.lanes(ty)?;
        let bits = self.int_bits(s)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::ImageQuery { dst, image: image.slot, query, n, bits });
        let lane_type = self.result_lane_type(inst);
        self.hist(spirv_name(inst.class.opname), lane_type, n as u64);
        Ok(())
    }
}

/// Image operands that only say how integer texels extend (SPIR-V 1.4's
/// `SignExtend`/`ZeroExtend`), which the image's channel type decides anyway.
fn extend_only(inst: &Instruction, at: usize) -> bool {
    let extend = spirv::ImageOperands::SIGN_EXTEND | spirv::ImageOperands::ZERO_EXTEND;
    inst.operands.len() == at + 1
        && matches!(inst.operands.get(at), Some(Operand::ImageOperands(m)) if extend.contains(*m))
}
