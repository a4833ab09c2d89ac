//! NumPy `.npy` headers: the dtype, shape and where the data starts.
//!
//! Format (numpy.lib.format): the magic `\x93NUMPY`, a major and minor
//! version byte, the header length (u16 little-endian in version 1, u32 in
//! versions 2 and 3), then a Python dict literal such as
//! `{'descr': '<u4', 'fortran_order': False, 'shape': (1024,), }`, padded
//! with spaces and a newline. The raw array data follows.

use clflow_core::ScalarType;
use std::io::Read;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NpyHeader {
    /// The dtype as numpy spells it: `<u4`, `<f8`, `|u1` ...
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    /// Byte offset of the first element in the file.
    pub data_offset: u64,
}

impl NpyHeader {
    pub(crate) fn elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &dim| acc.checked_mul(dim))
    }
}

/// The dtype numpy writes for an OpenCL scalar type.
pub(crate) fn descr_for(scalar: ScalarType) -> String {
    let kind = if scalar.is_float() {
        'f'
    } else if scalar.is_signed() {
        'i'
    } else {
        'u'
    };
    let order = if scalar.size_bytes() == 1 { '|' } else { '<' };
    format!("{order}{kind}{}", scalar.size_bytes())
}

/// Whether `descr` holds elements of `scalar`: same kind and size, little-endian
/// (or byte-sized, where order does not apply).
pub(crate) fn descr_matches(descr: &str, scalar: ScalarType) -> bool {
    let wanted = descr_for(scalar);
    let body = |d: &str| d.get(1..).map(str::to_string);
    let order_ok = match descr.chars().next() {
        Some('<') => true,
        Some('|' | '=') => scalar.size_bytes() == 1,
        _ => false,
    };
    order_ok && body(descr) == body(&wanted)
}

pub(crate) fn read_header(reader: &mut impl Read) -> Result<NpyHeader, String> {
    let mut preamble = [0u8; 8];
    reader
        .read_exact(&mut preamble)
        .map_err(|_| "is too short to be a .npy file".to_string())?;
    if &preamble[..6] != b"\x93NUMPY" {
        return Err("is not a .npy file (no \\x93NUMPY magic)".into());
    }
    let major = preamble[6];
    let (length, length_bytes) = match major {
        1 => {
            let mut bytes = [0u8; 2];
            reader.read_exact(&mut bytes).map_err(|e| e.to_string())?;
            (u16::from_le_bytes(bytes) as usize, 2)
        }
        2 | 3 => {
            let mut bytes = [0u8; 4];
            reader.read_exact(&mut bytes).map_err(|e| e.to_string())?;
            (u32::from_le_bytes(bytes) as usize, 4)
        }
        other => {
            return Err(format!(
                "has .npy format version {other}, which clflow does not read (1, 2 or 3)"
            ))
        }
    };
    let mut dict = vec![0u8; length];
    reader
        .read_exact(&mut dict)
        .map_err(|_| "ends inside its .npy header".to_string())?;
    let dict = String::from_utf8_lossy(&dict);
    let mut header =
        parse_dict(&dict).map_err(|what| format!("has a malformed .npy header: {what}"))?;
    header.data_offset = (8 + length_bytes + length) as u64;
    Ok(header)
}

/// Parses the header dict: exactly the three keys numpy writes.
fn parse_dict(text: &str) -> Result<NpyHeader, String> {
    let mut descr = None;
    let mut fortran_order = None;
    let mut shape = None;
    let mut rest = text.trim().strip_prefix('{').ok_or("no `{`")?;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.starts_with('}') {
            break;
        }
        let (key, after) = quoted(rest).ok_or("expected a quoted key")?;
        rest = after
            .trim_start()
            .strip_prefix(':')
            .ok_or("expected `:`")?
            .trim_start();
        match key {
            "descr" => {
                let (value, after) = quoted(rest).ok_or(
                    "descr is not a plain dtype string (structured dtypes are not supported)",
                )?;
                descr = Some(value.to_string());
                rest = after;
            }
            "fortran_order" => {
                let value = if rest.starts_with("True") {
                    true
                } else if rest.starts_with("False") {
                    false
                } else {
                    return Err("fortran_order is neither True nor False".into());
                };
                fortran_order = Some(value);
                rest = &rest[if value { 4 } else { 5 }..];
            }
            "shape" => {
                let body = rest.strip_prefix('(').ok_or("shape is not a tuple")?;
                let end = body.find(')').ok_or("shape has no `)`")?;
                let dims = body[..end]
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(|d| {
                        d.trim_end_matches('L')
                            .parse::<u64>()
                            .map_err(|_| format!("shape entry `{d}` is not a size"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                shape = Some(dims);
                rest = &body[end + 1..];
            }
            other => return Err(format!("unexpected key `{other}`")),
        }
    }
    Ok(NpyHeader {
        descr: descr.ok_or("no descr")?,
        fortran_order: fortran_order.ok_or("no fortran_order")?,
        shape: shape.ok_or("no shape")?,
        data_offset: 0,
    })
}

/// A `'...'` or `"..."` string at the start of `text`, and what follows it.
fn quoted(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = &text[1..];
    let end = body.find(quote)?;
    Some((&body[..end], &body[end + 1..]))
}

/// A complete `.npy` file image (version 1.0) holding `data` as `descr` with
/// `shape`: what tests write, and what a user's numpy would write.
#[cfg(test)]
pub(crate) fn encode(descr: &str, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // numpy pads so that the data starts on a 64-byte boundary.
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_numpy_header() {
        let file = encode("<u4", &[3], &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        let header = read_header(&mut file.as_slice()).unwrap();
        assert_eq!(header.descr, "<u4");
        assert!(!header.fortran_order);
        assert_eq!(header.shape, vec![3]);
        // numpy aligns the data to 64 bytes; this header needs two blocks.
        assert_eq!(header.data_offset, 128);
        assert_eq!(file.len(), 128 + 12);
    }

    #[test]
    fn reads_multi_dimensional_shapes() {
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }";
        let header = parse_dict(dict).unwrap();
        assert_eq!(header.shape, vec![2, 4]);
        assert_eq!(header.elements(), Some(8));
        assert_eq!(
            parse_dict("{'descr': '<f8', 'fortran_order': True, 'shape': (), }")
                .unwrap()
                .elements(),
            Some(1)
        );
    }

    #[test]
    fn dtypes_match_opencl_types() {
        assert!(descr_matches("<u4", ScalarType::UInt));
        assert!(descr_matches("|u1", ScalarType::UChar));
        assert!(descr_matches("<f2", ScalarType::Half));
        assert!(!descr_matches("<i4", ScalarType::UInt));
        assert!(!descr_matches(">u4", ScalarType::UInt));
        assert!(!descr_matches("<f8", ScalarType::Float));
        assert_eq!(descr_for(ScalarType::Long), "<i8");
    }

    #[test]
    fn rejects_what_is_not_npy() {
        assert!(read_header(&mut &b"hello world"[..])
            .unwrap_err()
            .contains("not a .npy"));
        assert!(read_header(&mut &b"\x93NUMPY"[..])
            .unwrap_err()
            .contains("too short"));
    }
}
