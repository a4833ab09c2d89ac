//! OpenCL C's printf (OpenCL C 1.2, 6.12.13), printed as C's printf would:
//! the format, read from `__constant` memory as the call runs, applied to
//! the arguments as the SPIR-V passes them (scalar floats promoted to
//! double, chars and shorts to int, vectors as they are).
//!
//! Everything the section defines is printed: `%d %i %u %o %x %X %c %s %f
//! %F %e %E %g %G %a %A %p %%`, the flags `-+ #0`, width and precision, the
//! length modifiers `hh h l` and, with a vector specifier `vN`, `hl`, each
//! element converted alone and the elements separated by commas. What it
//! forbids or leaves undefined is an error that names the conversion, never
//! a guess: `*` widths, `ll`, `%n`, a vector without its length modifier, a
//! conversion whose argument is of another kind or narrower than it prints,
//! too few arguments. An integer wider than its conversion prints its low
//! bits, converted to the conversion's type, as devices print
//! `%d` of a `size_t`.
//!
//! `number` converts one value; the unit tests in `tests` hold glibc's
//! output for each case.

mod number;
#[cfg(test)]
mod tests;

use super::mem::Mem;
use crate::opencl_std as math;
use clflow_bytecode::{PrintfArg, PrintfKind};

/// Reads a string in `__constant` memory at a pointer: at most `max`
/// bytes, or up to its NUL.
pub(super) type ReadString<'a> = dyn Fn(u64, Option<usize>) -> Result<Vec<u8>, String> + 'a;

/// A printf argument: its kind and its lanes' raw values.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value<'a> {
    pub kind: PrintfKind,
    pub lanes: &'a [u64],
}

/// Widths and precisions past this are refused: a field of megabytes is a
/// mistake, and would be one per work-item.
const MAX_FIELD: usize = 1 << 16;

#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    minus: bool,
    plus: bool,
    space: bool,
    hash: bool,
    zero: bool,
}

/// The length modifier: the width of the integer or float converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    None,
    Char,
    Short,
    /// `hl`: 32-bit vector elements.
    Int,
    Long,
}

/// One conversion specification, such as `%-08.3v4hlf`.
#[derive(Debug, Clone, Copy)]
struct Spec {
    flags: Flags,
    width: usize,
    precision: Option<usize>,
    vector: Option<usize>,
    length: Length,
    conv: u8,
}

/// One work-item's printf call: the format is the string at `format` in
/// `__constant` memory, `values` the lanes of `args` one after the other.
pub(super) fn call(
    mem: &Mem,
    format: u64,
    args: &[PrintfArg],
    values: &[u64],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let text = mem
        .constant_string(format, None)
        .map_err(|e| format!("its format: {e}"))?;
    let mut at = 0;
    let values: Vec<Value> = args
        .iter()
        .map(|a| {
            let lanes = &values[at..at + a.lanes as usize];
            at += a.lanes as usize;
            Value { kind: a.kind, lanes }
        })
        .collect();
    print(&text, &values, &|p, max| mem.constant_string(p, max), out)
}

/// Prints `format` with `args` to `out`; `read` gives `%s`'s strings.
pub(super) fn print(
    format: &[u8],
    args: &[Value],
    read: &ReadString,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut next = 0;
    let mut at = 0;
    while at < format.len() {
        if format[at] != b'%' {
            out.push(format[at]);
            at += 1;
            continue;
        }
        if format.get(at + 1) == Some(&b'%') {
            out.push(b'%');
            at += 2;
            continue;
        }
        let (spec, end) = parse(format, at)?;
        let text = shown(&format[at..end]);
        let arg = args.get(next).ok_or_else(|| {
            format!("`{text}` has no argument (the format has more conversions than the call has arguments)")
        })?;
        next += 1;
        convert(&spec, arg, read, out).map_err(|e| format!("`{text}`: {e}"))?;
        at = end;
    }
    // Arguments left over are evaluated and ignored (6.12.13.2).
    Ok(())
}

/// Part of a format as the error messages quote it.
fn shown(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The conversion specification at `format[start]` (a `%`), and where it ends.
fn parse(format: &[u8], start: usize) -> Result<(Spec, usize), String> {
    let mut at = start + 1;
    let text = |end: usize| shown(&format[start..end.min(format.len())]);
    let mut flags = Flags::default();
    while let Some(&c) = format.get(at) {
        match c {
            b'-' => flags.minus = true,
            b'+' => flags.plus = true,
            b' ' => flags.space = true,
            b'#' => flags.hash = true,
            b'0' => flags.zero = true,
            _ => break,
        }
        at += 1;
    }
    let number = |at: &mut usize| -> Result<usize, String> {
        if format.get(*at) == Some(&b'*') {
            return Err(format!(
                "`{}`: OpenCL C has no `*` width or precision; write the number into the format",
                text(*at + 1)
            ));
        }
        let mut n = 0usize;
        while let Some(d) = format.get(*at).filter(|c| c.is_ascii_digit()) {
            n = n * 10 + (d - b'0') as usize;
            *at += 1;
            if n > MAX_FIELD {
                return Err(format!(
                    "`{}...`: a width or precision past {MAX_FIELD}",
                    text(*at)
                ));
            }
        }
        Ok(n)
    };
    let width = number(&mut at)?;
    let mut precision = None;
    if format.get(at) == Some(&b'.') {
        at += 1;
        precision = Some(number(&mut at)?);
    }
    let mut vector = None;
    if format.get(at) == Some(&b'v') {
        at += 1;
        let n = number(&mut at)?;
        if ![2, 3, 4, 8, 16].contains(&n) {
            return Err(format!(
                "`{}`: a vector has 2, 3, 4, 8 or 16 elements",
                text(at)
            ));
        }
        vector = Some(n);
    }
    let length = match (format.get(at), format.get(at + 1)) {
        (Some(b'h'), Some(b'h')) => Length::Char,
        (Some(b'h'), Some(b'l')) => Length::Int,
        (Some(b'h'), _) => Length::Short,
        (Some(b'l'), Some(b'l')) => {
            return Err(format!(
                "`{}`: OpenCL C has no `ll` (`l` is 64 bits)",
                text(at + 3)
            ))
        }
        (Some(b'l'), _) => Length::Long,
        (Some(&c), _) if b"Ljztq".contains(&c) => {
            return Err(format!(
                "`{}`: OpenCL C has no `{}` length modifier",
                text(at + 2),
                c as char
            ))
        }
        _ => Length::None,
    };
    at += match length {
        Length::None => 0,
        Length::Short | Length::Long => 1,
        Length::Char | Length::Int => 2,
    };
    let conv = match format.get(at) {
        Some(&c) if b"diouxXcsfFeEgGaAp".contains(&c) => c,
        Some(b'%') => return Err(format!("`{}`: only `%%` prints a `%`", text(at + 1))),
        Some(b'n') => return Err(format!("`{}`: OpenCL C has no `%n`", text(at + 1))),
        Some(_) => {
            let end = (at + 1..=format.len())
                .find(|&e| std::str::from_utf8(&format[at..e]).is_ok())
                .unwrap_or(at + 1);
            return Err(format!("`{}`: no such conversion", text(end)));
        }
        None => {
            return Err(format!(
                "the format ends inside the conversion `{}`",
                text(at)
            ))
        }
    };
    let spec = Spec { flags, width, precision, vector, length, conv };
    Ok((spec, at + 1))
}

/// The name of a value's type in an error message.
fn type_name(kind: PrintfKind, lanes: usize) -> String {
    let scalar = match kind {
        PrintfKind::Int(bits) => format!("{bits}-bit integer"),
        PrintfKind::Float(16) => "half".into(),
        PrintfKind::Float(32) => "float".into(),
        PrintfKind::Float(_) => "double".into(),
        PrintfKind::Pointer => "pointer".into(),
    };
    match lanes {
        1 => format!("a {scalar}"),
        n => format!("a vector of {n} {scalar}s"),
    }
}

/// The element width a vector's length modifier names.
fn vector_bits(spec: &Spec, n: usize, float: bool) -> Result<u8, String> {
    Ok(match spec.length {
        Length::None => {
            let what = if float { "float" } else { "32-bit integer" };
            return Err(format!(
                "a vector needs a length modifier, hh, h, hl or l (`%v{n}hl{}` prints a {what} vector)",
                spec.conv as char
            ));
        }
        Length::Char if float => return Err("hh takes no float vector".into()),
        Length::Char => 8,
        Length::Short => 16,
        Length::Int => 32,
        Length::Long => 64,
    })
}

/// One conversion of one argument.
fn convert(spec: &Spec, arg: &Value, read: &ReadString, out: &mut Vec<u8>) -> Result<(), String> {
    let integer = b"diouxX".contains(&spec.conv);
    let float = b"fFeEgGaA".contains(&spec.conv);
    let given = type_name(arg.kind, arg.lanes.len());
    if let Some(n) = spec.vector {
        if !(integer || float) {
            return Err(
                "a vector specifier takes only d, i, o, u, x, X, f, F, e, E, g, G, a or A".into(),
            );
        }
        let bits = vector_bits(spec, n, float)?;
        let want = if integer {
            PrintfKind::Int(bits)
        } else {
            PrintfKind::Float(bits)
        };
        if arg.kind != want || arg.lanes.len() != n {
            return Err(format!(
                "it prints {}, the argument is {given}",
                type_name(want, n)
            ));
        }
        for (i, &lane) in arg.lanes.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            scalar(spec, arg.kind, bits, lane, out);
        }
        return Ok(());
    }
    if arg.lanes.len() != 1 {
        return Err(format!(
            "the argument is {given}: a vector is printed with a vector specifier, as `%v{}hl{}`",
            arg.lanes.len(),
            spec.conv as char
        ));
    }
    let lane = arg.lanes[0];
    if integer {
        let bits = match spec.length {
            Length::None => 32,
            Length::Char => 8,
            Length::Short => 16,
            Length::Long => 64,
            Length::Int => return Err("hl is for vectors only".into()),
        };
        return match arg.kind {
            PrintfKind::Int(b) if b >= bits => {
                scalar(spec, arg.kind, bits, lane, out);
                Ok(())
            }
            PrintfKind::Int(_) => Err(format!(
                "it prints a {bits}-bit integer, the argument is {given}: cast it"
            )),
            _ => Err(format!("it prints an integer, the argument is {given}")),
        };
    }
    if float {
        match spec.length {
            // `l` changes nothing of a float conversion (C99).
            Length::None | Length::Long => {}
            Length::Int => return Err("hl is for vectors only".into()),
            _ => return Err("a float conversion takes no length modifier but l".into()),
        }
        return match arg.kind {
            PrintfKind::Float(bits) => {
                scalar(spec, arg.kind, bits, lane, out);
                Ok(())
            }
            _ => Err(format!(
                "it prints a floating-point value, the argument is {given}"
            )),
        };
    }
    if spec.length != Length::None {
        return Err(format!("`%{}` takes no length modifier", spec.conv as char));
    }
    match (spec.conv, arg.kind) {
        // The int is converted to an unsigned char.
        (b'c', PrintfKind::Int(_)) => number::pad(spec, b"", &[lane as u8], false, out),
        (b's', PrintfKind::Pointer) => {
            let text = read(lane, spec.precision)?;
            number::pad(spec, b"", &text, false, out);
        }
        (b'p', PrintfKind::Pointer) => number::pointer(spec, lane, out),
        (b'c', _) => return Err(format!("it prints a character, the argument is {given}")),
        _ => return Err(format!("it takes a pointer, the argument is {given}")),
    }
    Ok(())
}

/// One integer or float, `bits` wide as converted.
fn scalar(spec: &Spec, kind: PrintfKind, bits: u8, lane: u64, out: &mut Vec<u8>) {
    match kind {
        PrintfKind::Float(_) => {
            // A NaN keeps its sign through the widening (`-nan`).
            let negative = (lane >> (bits - 1)) & 1 == 1;
            let x = math::to_f64(bits, lane);
            let x = if x.is_nan() {
                f64::NAN.copysign(if negative { -1.0 } else { 1.0 })
            } else {
                x
            };
            number::float(spec, x, out)
        }
        _ => number::integer(spec, lane & math::mask(bits), bits, out),
    }
}
