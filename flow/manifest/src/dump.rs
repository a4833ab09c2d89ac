//! A buffer's contents shown as its elements (`dump` in a manifest).

use crate::DumpFormat;
use clflow_core::{ElementType, ScalarType};

/// The elements of `bytes` as `ty`, comma-separated: decimal numbers, or
/// each lane's bits in hex; vectors in parentheses. 3-lane vectors show
/// their 3 lanes (the fourth is room only).
pub fn render(ty: ElementType, bytes: &[u8], format: DumpFormat) -> String {
    let lane = ty.scalar.size_bytes();
    let stride = ty.size_bytes();
    let lanes = usize::from(ty.lanes);
    bytes
        .chunks_exact(stride)
        .map(|element| {
            let shown: Vec<String> = element
                .chunks_exact(lane)
                .take(lanes)
                .map(|bits| render_lane(ty.scalar, bits, format))
                .collect();
            match lanes {
                1 => shown.join(""),
                _ => format!("({})", shown.join(", ")),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn render_lane(scalar: ScalarType, bits: &[u8], format: DumpFormat) -> String {
    let mut word = [0u8; 8];
    word[..bits.len()].copy_from_slice(bits);
    let raw = u64::from_le_bytes(word);
    if format == DumpFormat::Hex {
        return format!("0x{raw:0width$x}", width = 2 * bits.len());
    }
    let shift = 64 - 8 * bits.len() as u32;
    let signed = ((raw << shift) as i64) >> shift;
    match scalar {
        ScalarType::Half => clflow_core::half::to_f32(raw as u16).to_string(),
        ScalarType::Float => f32::from_bits(raw as u32).to_string(),
        ScalarType::Double => f64::from_bits(raw).to_string(),
        s if s.is_signed() => signed.to_string(),
        _ => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_show_as_their_type_says() {
        let floats: Vec<u8> = [3.0f32, -0.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let float = ElementType::scalar(ScalarType::Float);
        assert_eq!(render(float, &floats, DumpFormat::Decimal), "3, -0.5");
        assert_eq!(
            render(float, &floats, DumpFormat::Hex),
            "0x40400000, 0xbf000000"
        );
        let chars = [0xffu8, 7];
        let char_type = ElementType::scalar(ScalarType::Char);
        assert_eq!(render(char_type, &chars, DumpFormat::Decimal), "-1, 7");
        let uchar = ElementType::scalar(ScalarType::UChar);
        assert_eq!(render(uchar, &chars, DumpFormat::Decimal), "255, 7");
        // int3 takes 16 bytes, shows 3 lanes.
        let int3: Vec<u8> = [1i32, -2, 3, 99]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let ty = ElementType::vector(ScalarType::Int, 3).unwrap();
        assert_eq!(render(ty, &int3, DumpFormat::Decimal), "(1, -2, 3)");
    }
}
