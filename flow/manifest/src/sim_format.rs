//! Oclgrind simulator files (`.sim`), as `oclgrind-kernel` reads them.
//!
//! The file is a stream of whitespace-separated tokens; `#` starts a comment
//! that runs to the end of the line. In order: the kernel file, the kernel
//! name, the global size (3 numbers), the local size (3 numbers), then one
//! argument per kernel parameter. Each argument is a header `<...>` on one
//! line, followed by its data values (on the same line or the next ones)
//! when no `fill`, `range` or `noinit` initialises it. Header tokens:
//! `size=N` (bytes, decimal), a data type (`char uchar short ushort int uint
//! long ulong float double`; by default the parameter's own type), `fill=V`,
//! `range=START:STEP:END` (END inclusive), `noinit`, `null`, `dump`, `hex`
//! (data, fill and range values are hexadecimal integers; dumps in hex),
//! `ro`, `wo`.
//!
//! Whether an argument is a buffer, a scalar or a `__local` size depends on
//! the kernel's parameter, so `.sim` arguments stay [`PendingSimArg`]s
//! until [`crate::Manifest::check`] resolves them.

use crate::error::{ArgRef, ManifestError};
use crate::init::{generate, Initialiser};
use crate::number::{check_fits, Number};
use crate::spec::{
    check_range, ArgSpec, BufferSpec, DumpFormat, LocalSpec, ManifestArg, ManifestFormat,
    ManifestInfo, ScalarSpec, WorkGroups,
};
use clflow_core::{Access, AddressSpace, ElementType, KernelParam, NdRange, ParamKind, ScalarType};
use std::path::Path;

const SIM_TYPES: [ScalarType; 10] = [
    ScalarType::Char,
    ScalarType::UChar,
    ScalarType::Short,
    ScalarType::UShort,
    ScalarType::Int,
    ScalarType::UInt,
    ScalarType::Long,
    ScalarType::ULong,
    ScalarType::Float,
    ScalarType::Double,
];

const KNOWN_OPTIONS: &str =
    "size=N, char … double, fill=V, range=START:STEP:END, noinit, null, dump, hex, ro, wo";

/// A `.sim` argument as its header and data describe it, before the kernel
/// says what kind of parameter it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingSimArg {
    /// The line of the header.
    pub(crate) line: usize,
    size: Option<u64>,
    data_type: Option<ScalarType>,
    fill: Option<String>,
    range: Option<String>,
    noinit: bool,
    null: bool,
    dump: bool,
    hex: bool,
    access: Option<Access>,
    /// Inline data tokens, each with its line.
    data: Vec<(String, usize)>,
}

/// One token of the file: a bare word, or a whole `<...>` header.
struct Token {
    text: String,
    line: usize,
    header: bool,
}

fn tokenize(path: &Path, text: &str) -> Result<Vec<Token>, ManifestError> {
    let mut tokens = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let mut rest = raw.split('#').next().unwrap_or("");
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            if let Some(after) = rest.strip_prefix('<') {
                // A header runs to the last `>` on its line.
                let end = after.rfind('>').ok_or_else(|| {
                    ManifestError::input(path, "argument header has no closing `>` on its line")
                        .at_line(line)
                })?;
                tokens.push(Token { text: after[..end].to_string(), line, header: true });
                rest = &after[end + 1..];
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                tokens.push(Token { text: rest[..end].to_string(), line, header: false });
                rest = &rest[end..];
            }
        }
    }
    Ok(tokens)
}

/// Reads the leading words of a `.sim` file, with where each came from.
struct Reader<'t> {
    path: &'t Path,
    tokens: std::iter::Peekable<std::slice::Iter<'t, Token>>,
    last_line: usize,
}

impl<'t> Reader<'t> {
    fn word(&mut self, what: &str) -> Result<&'t Token, ManifestError> {
        match self.tokens.next() {
            Some(token) if !token.header => Ok(token),
            Some(token) => Err(ManifestError::input(
                self.path,
                format!("expected the {what}, found an argument header"),
            )
            .at_line(token.line)),
            None => Err(ManifestError::input(
                self.path,
                format!("the file ends before the {what}"),
            )
            .at_line(self.last_line)),
        }
    }

    /// Three sizes, and the line the first one is on.
    fn sizes(&mut self, what: &str) -> Result<([u64; 3], usize), ManifestError> {
        let mut out = [0u64; 3];
        let mut first_line = self.last_line;
        for (d, slot) in out.iter_mut().enumerate() {
            let token = self.word(&format!("{what} (3 numbers)"))?;
            if d == 0 {
                first_line = token.line;
            }
            *slot = token.text.parse().map_err(|_| {
                ManifestError::input(
                    self.path,
                    format!("{what} entry `{}` is not a whole number", token.text),
                )
                .at_line(token.line)
            })?;
        }
        Ok((out, first_line))
    }
}

/// Parses a `.sim` file, for a launch built with `extra_options` after its
/// own.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    extra_options: &str,
) -> Result<(ManifestInfo, Vec<PendingSimArg>), ManifestError> {
    let tokens = tokenize(path, text)?;
    let mut reader = Reader {
        path,
        tokens: tokens.iter().peekable(),
        last_line: text.lines().count().max(1),
    };
    let file = reader.word("kernel file")?;
    let (source_text, source_line) = (file.text.clone(), file.line);
    let kernel = reader.word("kernel name")?.text.clone();
    let (global, global_line) = reader.sizes("global size")?;
    let (local, local_line) = reader.sizes("local size")?;
    // oclgrind-kernel always launches 3 dimensions.
    let range = NdRange { dims: 3, global, local: Some(local), offset: [0; 3] };
    // Options before the first argument are the program's build options.
    let mut options = Vec::new();
    while let Some(word) = reader
        .tokens
        .next_if(|t| !t.header && t.text.starts_with('-'))
    {
        options.push(word.text.as_str());
    }
    let build_options = options.join(" ");
    // OpenCL 1.2, the default, wants whole work-groups.
    let groups = WorkGroups::of(&format!("{build_options} {extra_options}"));
    check_range(&range, groups).map_err(|(dim, message)| {
        ManifestError::input(path, message).at_line(if dim.is_some() {
            local_line
        } else {
            global_line
        })
    })?;

    let source = path.parent().unwrap_or(Path::new("")).join(&source_text);
    check_kernel_file(path, &source_text, &source, source_line)?;

    let mut args = Vec::new();
    let mut stream = reader.tokens;
    while let Some(token) = stream.next() {
        let index = args.len();
        let arg_error = |line: usize, message: String| {
            ManifestError::input(path, message)
                .at_line(line)
                .for_arg(ArgRef { index, name: None })
        };
        if !token.header {
            return Err(arg_error(
                token.line,
                format!("expected an argument header <...>, found `{}`", token.text),
            ));
        }
        let mut pending =
            parse_header(&token.text, token.line).map_err(|why| arg_error(token.line, why))?;
        while let Some(data) = stream.next_if(|t| !t.header) {
            pending.data.push((data.text.clone(), data.line));
        }
        args.push(pending);
    }

    let info = ManifestInfo {
        path: path.to_path_buf(),
        format: ManifestFormat::OclgrindSim,
        name: None,
        description: None,
        source,
        kernel,
        build_options,
        range,
    };
    Ok((info, args))
}

fn check_kernel_file(
    path: &Path,
    shown: &str,
    source: &Path,
    line: usize,
) -> Result<(), ManifestError> {
    let mut magic = [0u8; 2];
    let readable =
        std::fs::File::open(source).and_then(|mut f| std::io::Read::read(&mut f, &mut magic));
    match readable {
        Err(e) => Err(ManifestError::input(path, format!("kernel file {shown} cannot be read ({e}; looked for {})", source.display()))
            .at_line(line)
            .with_hint("the kernel file is relative to the .sim file's directory")),
        Ok(_) if &magic == b"BC" => Err(ManifestError::input(
            path,
            format!("`.sim` kernel file {shown} is LLVM bitcode (SPIR); this is not supported by clflow, which compiles OpenCL C source"),
        )
        .at_line(line)
        .with_hint("point the .sim file at the kernel's .cl source, or use a TOML manifest")),
        Ok(_) => Ok(()),
    }
}

/// Reads the tokens inside `<...>` (on `line`), with oclgrind-kernel's
/// rules on which may go together.
fn parse_header(text: &str, line: usize) -> Result<PendingSimArg, String> {
    let mut arg = PendingSimArg {
        line,
        size: None,
        data_type: None,
        fill: None,
        range: None,
        noinit: false,
        null: false,
        dump: false,
        hex: false,
        access: None,
        data: Vec::new(),
    };
    for token in text.split_whitespace() {
        if let Some(ty) = SIM_TYPES.iter().find(|t| t.name() == token) {
            if arg.data_type.replace(*ty).is_some() {
                return Err("the header names a data type twice".into());
            }
            continue;
        }
        let (key, value) = match token.split_once('=') {
            Some((key, value)) => (key, Some(value)),
            None => (token, None),
        };
        match (key, value) {
            ("size", Some(n)) => arg.size = Some(n.parse().map_err(|_| format!("size={n} is not a whole number of bytes"))?),
            ("fill", Some(v)) if !v.is_empty() => arg.fill = Some(v.to_string()),
            ("range", Some(v)) if !v.is_empty() => arg.range = Some(v.to_string()),
            ("size" | "fill" | "range", _) => return Err(format!("`{token}` needs a value: size=N, fill=V or range=START:STEP:END")),
            ("noinit", None) => arg.noinit = true,
            ("null", None) => arg.null = true,
            ("dump", None) => arg.dump = true,
            ("hex", None) => arg.hex = true,
            ("ro" | "wo", None) => {
                let access = if key == "ro" { Access::ReadOnly } else { Access::WriteOnly };
                if arg.access.is_some_and(|a| a != access) {
                    return Err("`ro` and `wo` are mutually exclusive".into());
                }
                arg.access = Some(access);
            }
            _ => {
                return Err(format!(
                    "`.sim` option `{token}` is not supported by clflow (it reads {KNOWN_OPTIONS}; use a TOML manifest for anything else)"
                ))
            }
        }
    }
    if arg.null {
        if arg.size.is_some() || arg.fill.is_some() || arg.range.is_some() || arg.noinit || arg.dump
        {
            return Err("`null` goes with no other option but a data type".into());
        }
    } else if arg.size.is_none() {
        return Err("the header needs size=N (bytes)".into());
    }
    let initialisers = [arg.noinit, arg.fill.is_some(), arg.range.is_some()];
    if initialisers.iter().filter(|&&given| given).count() > 1 {
        return Err("the header has more than one of fill, range and noinit; keep one".into());
    }
    Ok(arg)
}

/// One value of `scalar` as a `.sim` file writes it: decimal, or
/// hexadecimal integers (optional `0x`) under `hex`.
fn parse_value(token: &str, scalar: ScalarType, hex: bool) -> Result<Number, String> {
    let number = if scalar.is_float() {
        // Parse at the element's own precision, as oclgrind-kernel does.
        match scalar {
            ScalarType::Float => token.parse::<f32>().ok().map(|v| Number::Float(v as f64)),
            _ => token.parse::<f64>().ok().map(Number::Float),
        }
    } else {
        let (negative, digits) = match token.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, token.strip_prefix('+').unwrap_or(token)),
        };
        let magnitude = if hex {
            let digits = digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
                .unwrap_or(digits);
            i128::from_str_radix(digits, 16).ok()
        } else {
            digits.parse::<i128>().ok()
        };
        magnitude
            .filter(|_| !digits.starts_with(['+', '-']))
            .map(|m| Number::Int(if negative { -m } else { m }))
    };
    let number = number.ok_or_else(|| {
        let base = if hex && !scalar.is_float() {
            "hexadecimal "
        } else {
            ""
        };
        format!("`{token}` is not a {base}{scalar} value")
    })?;
    check_fits(scalar, number)?;
    Ok(number)
}

/// What an error in resolving says and where: the header's line unless a
/// data value is at fault.
type Failure = (Option<usize>, String);

impl PendingSimArg {
    /// The argument as the kernel's parameter makes it, named as the
    /// kernel names the parameter (a `.sim` file names none).
    pub(crate) fn resolve(&self, param: &KernelParam) -> Result<ManifestArg, Failure> {
        Ok(ManifestArg {
            name: None,
            description: None,
            line: self.line,
            param_name: param.name.clone(),
            spec: self.spec(param)?,
        })
    }

    /// What the parameter makes of the argument: a buffer, a scalar, a
    /// `__local` size or a NULL pointer.
    fn spec(&self, param: &KernelParam) -> Result<ArgSpec, Failure> {
        let fail = |message: String| -> Failure { (None, message) };
        let buffer_only = |what: &str| -> Result<(), Failure> {
            let used = match what {
                "null" => self.null,
                "noinit" => self.noinit,
                "dump" => self.dump,
                _ => self.access.is_some(),
            };
            if used {
                return Err(fail(format!("`{what}` is only valid for a __global or __constant buffer, and the kernel's parameter is `{}`", param.kind)));
            }
            Ok(())
        };
        match &param.kind {
            ParamKind::Pointer {
                space: space @ (AddressSpace::Global | AddressSpace::Constant),
                pointee,
                ..
            } => {
                if self.access.is_some() && *space == AddressSpace::Constant {
                    return Err(fail(
                        "`ro` and `wo` are only valid for __global buffers".into(),
                    ));
                }
                if self.null {
                    return Ok(ArgSpec::Null { ty: None });
                }
                let data_type =
                    self.data_type_or(pointee.map(|p| p.scalar).unwrap_or(ScalarType::UChar))?;
                // size=0 is legal where the kernel never touches the buffer.
                let count = self.element_count(data_type)?;
                let ty = ElementType::scalar(data_type);
                Ok(ArgSpec::Buffer(BufferSpec {
                    ty,
                    count,
                    init: self.initialiser(data_type, count)?,
                    undefined: self.noinit,
                    access: self.access.unwrap_or(Access::ReadWrite),
                    dump: self.dump.then_some(if self.hex {
                        DumpFormat::Hex
                    } else {
                        DumpFormat::Decimal
                    }),
                    structs: None,
                    image: None,
                }))
            }
            ParamKind::Pointer { space: AddressSpace::Local, pointee, .. } => {
                for what in ["null", "noinit", "dump", "ro"] {
                    buffer_only(what)?;
                }
                let data_type =
                    self.data_type_or(pointee.map(|p| p.scalar).unwrap_or(ScalarType::UChar))?;
                let bytes = self.element_count(data_type)? * data_type.size_bytes() as u64;
                if let Some((token, line)) = self.data.first() {
                    return Err((Some(*line), format!("a __local argument takes only a size, yet data `{token}` follows its header")));
                }
                if bytes == 0 {
                    return Err(fail(
                        "size=0: a __local argument needs at least 1 byte".into(),
                    ));
                }
                Ok(ArgSpec::Local(LocalSpec { bytes, ty: None }))
            }
            ParamKind::Scalar { ty } => {
                for what in ["null", "noinit", "dump", "ro"] {
                    buffer_only(what)?;
                }
                self.value_bytes(*ty, ty.size_bytes(), self.data_type_or(ty.scalar)?)
            }
            ParamKind::Aggregate { size_bytes } => {
                for what in ["null", "noinit", "dump", "ro"] {
                    buffer_only(what)?;
                }
                let Some(data_type) = self.data_type else {
                    return Err(fail(
                        "a struct parameter needs a data type in the header (e.g. uchar)".into(),
                    ));
                };
                self.value_bytes(ElementType::scalar(data_type), *size_bytes, data_type)
            }
            other => Err(fail(format!(
                "clflow cannot pass a `.sim` argument to a parameter of kind `{other}`"
            ))),
        }
    }

    fn data_type_or(&self, default: ScalarType) -> Result<ScalarType, Failure> {
        match self.data_type {
            Some(ty) => Ok(ty),
            None if SIM_TYPES.contains(&default) => Ok(default),
            None => Err((None, format!("`.sim` files have no {default} data type; name one in the header (e.g. ushort)"))),
        }
    }

    fn element_count(&self, data_type: ScalarType) -> Result<u64, Failure> {
        let size = self.size.unwrap_or(0);
        let width = data_type.size_bytes() as u64;
        if !size.is_multiple_of(width) {
            return Err((
                None,
                format!("size={size} is not a whole number of {data_type} ({width}-byte) values"),
            ));
        }
        Ok(size / width)
    }

    /// A value passed by copy: exactly `size` bytes, in `data_type` values.
    fn value_bytes(
        &self,
        ty: ElementType,
        size: usize,
        data_type: ScalarType,
    ) -> Result<ArgSpec, Failure> {
        if self.size != Some(size as u64) {
            return Err((
                None,
                format!(
                    "size={} but the kernel's parameter takes {size} bytes",
                    self.size.unwrap_or(0)
                ),
            ));
        }
        let count = self.element_count(data_type)?;
        let init = self.initialiser(data_type, count)?;
        let bytes =
            generate(ElementType::scalar(data_type), count, &init).map_err(|why| (None, why))?;
        Ok(ArgSpec::Scalar(ScalarSpec { ty, bytes }))
    }

    fn initialiser(&self, data_type: ScalarType, count: u64) -> Result<Initialiser, Failure> {
        let header = |why: String| (None, why);
        if self.noinit {
            // Oclgrind leaves such memory uninitialised; clflow zeroes it so
            // runs repeat (`BufferSpec::undefined` says it is undefined).
            return self.no_data().map(|_| Initialiser::Zeros);
        }
        if let Some(fill) = &self.fill {
            self.no_data()?;
            let value = parse_value(fill, data_type, self.hex)
                .map_err(|why| header(format!("fill: {why}")))?;
            let mut element = Vec::new();
            crate::number::push_scalar(data_type, value, &mut element);
            return Ok(Initialiser::Fill { element });
        }
        if let Some(range) = &self.range {
            self.no_data()?;
            return self.range_initialiser(range, data_type, count);
        }
        if self.data.len() as u64 != count {
            let line = self
                .data
                .get(count as usize)
                .or(self.data.last())
                .map(|(_, line)| *line);
            return Err((
                line,
                format!(
                    "size={} holds {count} {data_type} values, but {} follow the header",
                    self.size.unwrap_or(0),
                    self.data.len()
                ),
            ));
        }
        let mut bytes = Vec::with_capacity(count as usize * data_type.size_bytes());
        for (token, line) in &self.data {
            let value =
                parse_value(token, data_type, self.hex).map_err(|why| (Some(*line), why))?;
            crate::number::push_scalar(data_type, value, &mut bytes);
        }
        Ok(Initialiser::Inline { bytes })
    }

    fn no_data(&self) -> Result<(), Failure> {
        match self.data.first() {
            Some((token, line)) => Err((
                Some(*line),
                format!(
                    "`{token}` follows a header whose fill, range or noinit already gives the data"
                ),
            )),
            None => Ok(()),
        }
    }

    /// `range=START:STEP:END`, END included, which must produce exactly
    /// `count` values (computed as oclgrind-kernel does).
    fn range_initialiser(
        &self,
        text: &str,
        data_type: ScalarType,
        count: u64,
    ) -> Result<Initialiser, Failure> {
        let parts: Vec<&str> = text.split(':').collect();
        let [start, step, end] = parts[..] else {
            return Err((None, format!("range={text} is not START:STEP:END")));
        };
        let value = |t: &str| {
            parse_value(t, data_type, self.hex).map_err(|why| (None, format!("range: {why}")))
        };
        let (start, step, end) = (value(start)?, value(step)?, value(end)?);
        let produced = match (start, step, end) {
            (Number::Int(s), Number::Int(d), Number::Int(e)) => {
                if d == 0 || (e - s + d) % d != 0 {
                    None
                } else {
                    Some((e - s + d) / d)
                }
            }
            _ => {
                let span = if data_type == ScalarType::Float {
                    ((end.as_f64() as f32 - start.as_f64() as f32 + step.as_f64() as f32) as f64)
                        / step.as_f64()
                } else {
                    (end.as_f64() - start.as_f64() + step.as_f64()) / step.as_f64()
                };
                (span.is_finite() && span.ceil() == span).then_some(span as i128)
            }
        };
        if produced != Some(count as i128) {
            return Err((
                None,
                format!(
                    "range={text} does not produce the {count} {data_type} values size={} holds",
                    self.size.unwrap_or(0)
                ),
            ));
        }
        Ok(Initialiser::Range { start, step, accumulate: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_tokens_parse() {
        let arg = parse_header("size=16 uint fill=0x10 hex dump ro", 1).unwrap();
        assert_eq!(arg.size, Some(16));
        assert_eq!(arg.data_type, Some(ScalarType::UInt));
        assert_eq!(arg.fill.as_deref(), Some("0x10"));
        assert!(arg.hex && arg.dump);
        assert_eq!(arg.access, Some(Access::ReadOnly));
    }

    #[test]
    fn header_rules_follow_oclgrind() {
        assert!(parse_header("size=4 int float", 1)
            .unwrap_err()
            .contains("twice"));
        assert!(parse_header("int", 1).unwrap_err().contains("size=N"));
        assert!(parse_header("null size=4", 1).unwrap_err().contains("null"));
        assert!(parse_header("size=4 ro wo", 1)
            .unwrap_err()
            .contains("mutually exclusive"));
        assert!(parse_header("size=4 fill=1 noinit", 1)
            .unwrap_err()
            .contains("more than one"));
        assert_eq!(
            parse_header("size=4 image2d", 1).unwrap_err(),
            "`.sim` option `image2d` is not supported by clflow (it reads size=N, char … double, fill=V, range=START:STEP:END, noinit, null, dump, hex, ro, wo; use a TOML manifest for anything else)"
        );
    }

    #[test]
    fn values_parse_decimal_and_hex() {
        assert_eq!(
            parse_value("-5", ScalarType::Int, false),
            Ok(Number::Int(-5))
        );
        assert_eq!(
            parse_value("ff", ScalarType::UChar, true),
            Ok(Number::Int(255))
        );
        assert_eq!(
            parse_value("0x100", ScalarType::UShort, true),
            Ok(Number::Int(256))
        );
        assert_eq!(
            parse_value("2.5", ScalarType::Float, true),
            Ok(Number::Float(2.5))
        );
        assert!(parse_value("300", ScalarType::UChar, false)
            .unwrap_err()
            .contains("out of range for uchar"));
        assert!(parse_value("1.5", ScalarType::Int, false)
            .unwrap_err()
            .contains("not a int value"));
        assert!(parse_value("--1", ScalarType::Int, false).is_err());
    }

    #[test]
    fn tokens_keep_lines_and_headers() {
        let tokens = tokenize(Path::new("t.sim"), "a.cl # file\nk\n<size=8 int> 1\n 2\n").unwrap();
        let view: Vec<(&str, usize, bool)> = tokens
            .iter()
            .map(|t| (t.text.as_str(), t.line, t.header))
            .collect();
        assert_eq!(
            view,
            [
                ("a.cl", 1, false),
                ("k", 2, false),
                ("size=8 int", 3, true),
                ("1", 3, false),
                ("2", 4, false)
            ]
        );
    }
}

#[cfg(test)]
mod file_tests {
    use crate::manifest::ParsedArg;
    use crate::testing::Fixture;
    use crate::{ArgSpec, DumpFormat, IntegerSigns, ManifestFormat};
    use clflow_core::{Access, AddressSpace, ArgValue, KernelParam, KernelSignature, ParamKind};

    /// A file `oclgrind-kernel` 21.10 runs, dumping in:1 -2 3 4,
    /// out: 0.5 0.75 1 1.25 and filled: 0x00000010 0x00000010.
    const SIM: &str = "# a simulator file
sim.cl
sim
4 1 1   # global
2 1 1   # local
<size=16 dump> 1 -2
  3 4            # data over lines
<size=16 float range=0.5:0.25:1.25 dump ro>
<size=8 uint fill=0x10 hex dump>
<null>
<size=32>
<size=4> 7
<size=16> 1 2 3 4.5
";

    fn pointer(space: AddressSpace, pointee: &str) -> ParamKind {
        ParamKind::Pointer {
            space,
            pointee: Some(pointee.parse().unwrap()),
            pointee_struct: None,
        }
    }

    /// `__kernel void sim(__global int* in, __global float* out, __global uint* filled,
    /// __global uint* maybe, __local float* scratch, uint n, float4 scale)`
    fn signature() -> KernelSignature {
        let params = [
            ("in", pointer(AddressSpace::Global, "int")),
            ("out", pointer(AddressSpace::Global, "float")),
            ("filled", pointer(AddressSpace::Global, "uint")),
            ("maybe", pointer(AddressSpace::Global, "uint")),
            ("scratch", pointer(AddressSpace::Local, "float")),
            ("n", ParamKind::Scalar { ty: "uint".parse().unwrap() }),
            ("scale", ParamKind::Scalar { ty: "float4".parse().unwrap() }),
        ];
        KernelSignature {
            name: "sim".into(),
            params: params
                .into_iter()
                .map(|(name, kind)| KernelParam { name: Some(name.into()), kind })
                .collect(),
        }
    }

    fn fixture() -> Fixture {
        let fixture = Fixture::new();
        fixture.file("sim.cl", b"__kernel void sim() {}\n");
        fixture
    }

    fn values<T>(bytes: &[u8], width: usize, read: impl Fn(&[u8]) -> T) -> Vec<T> {
        bytes.chunks(width).map(read).collect()
    }

    #[test]
    fn a_sim_file_resolves_and_materialises_as_oclgrind_runs_it() {
        let fixture = fixture();
        let manifest = fixture.load("run.sim", SIM).unwrap();
        let info = manifest.info();
        assert_eq!(info.format, ManifestFormat::OclgrindSim);
        assert_eq!(info.source, fixture.dir.path().join("sim.cl"));
        assert_eq!(
            (info.range.dims, info.range.global, info.range.local),
            (3, [4, 1, 1], Some([2, 1, 1]))
        );
        assert_eq!(manifest.args.len(), 7);
        assert!(manifest.args.iter().all(|a| matches!(a, ParsedArg::Sim(_))));
        assert_eq!(manifest.args[1].line(), 8);

        let manifest = manifest
            .check(&signature(), IntegerSigns::WidthOnly)
            .unwrap();
        assert_eq!(
            manifest.dumps().collect::<Vec<_>>(),
            [
                (0, DumpFormat::Decimal),
                (1, DumpFormat::Decimal),
                (2, DumpFormat::Hex)
            ]
        );
        let ArgSpec::Buffer(out) = &manifest.args()[1].spec else {
            panic!()
        };
        assert_eq!(out.access, Access::ReadOnly);

        let launch = manifest.materialize().unwrap();
        let bytes = |i: usize| match &launch.args[i].value {
            ArgValue::Buffer { bytes, .. } | ArgValue::Scalar { bytes } => bytes.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            values(&bytes(0), 4, |c| i32::from_le_bytes(c.try_into().unwrap())),
            [1, -2, 3, 4]
        );
        assert_eq!(
            values(&bytes(1), 4, |c| f32::from_le_bytes(c.try_into().unwrap())),
            [0.5, 0.75, 1.0, 1.25]
        );
        assert_eq!(
            values(&bytes(2), 4, |c| u32::from_le_bytes(c.try_into().unwrap())),
            [0x10, 0x10]
        );
        assert_eq!(launch.args[3].value, ArgValue::NullPointer);
        assert_eq!(launch.args[4].value, ArgValue::Local { bytes: 32 });
        assert_eq!(bytes(5), [7, 0, 0, 0]);
        assert_eq!(
            values(&bytes(6), 4, |c| f32::from_le_bytes(c.try_into().unwrap())),
            [1.0, 2.0, 3.0, 4.5]
        );
        assert_eq!(launch.args[6].name.as_deref(), Some("scale"));
    }

    #[test]
    fn files_without_the_extension_are_recognised() {
        let fixture = fixture();
        let manifest = fixture.load("run.txt", SIM).unwrap();
        assert_eq!(manifest.info().format, ManifestFormat::OclgrindSim);
    }

    #[test]
    fn without_a_signature_a_sim_file_does_not_check() {
        let fixture = fixture();
        let error = fixture
            .load("run.sim", SIM)
            .unwrap()
            .check_typed()
            .unwrap_err();
        assert!(error.to_string().ends_with("run.sim:6: arg 0: a `.sim` argument's kind (buffer, scalar or __local size) comes from the kernel's signature"), "{error}");
    }

    fn resolve_error(text: &str) -> String {
        let fixture = fixture();
        let manifest = fixture.load("run.sim", text).unwrap();
        let error = manifest
            .check(&signature(), IntegerSigns::WidthOnly)
            .unwrap_err();
        error
            .to_string()
            .replace(&fixture.dir.path().display().to_string(), "DIR")
    }

    fn with_arg(line: usize, replacement: &str) -> String {
        let mut lines: Vec<&str> = SIM.lines().collect();
        lines[line - 1] = replacement;
        if line == 6 {
            lines[6] = ""; // the data continuation of argument 0
        }
        lines.join("\n") + "\n"
    }

    #[test]
    fn data_must_match_the_size() {
        let error = resolve_error(&with_arg(6, "<size=16> 1 2 3"));
        assert_eq!(
            error,
            "DIR/run.sim:6: arg 0 (in): size=16 holds 4 int values, but 3 follow the header"
        );
        let error = resolve_error(&with_arg(6, "<size=16> 1 2 3 x"));
        assert_eq!(error, "DIR/run.sim:6: arg 0 (in): `x` is not a int value");
        let error = resolve_error(&with_arg(6, "<size=4 uchar> 1 2 3 300"));
        assert_eq!(
            error,
            "DIR/run.sim:6: arg 0 (in): 300 is out of range for uchar (0 to 255)"
        );
        let error = resolve_error(&with_arg(8, "<size=16 float range=0:1:5>"));
        assert_eq!(error, "DIR/run.sim:8: arg 1 (out): range=0:1:5 does not produce the 4 float values size=16 holds");
    }

    #[test]
    fn options_must_suit_the_parameter() {
        let error = resolve_error(&with_arg(12, "<size=4 dump> 7"));
        assert!(error.starts_with("DIR/run.sim:12: arg 5 (n): `dump` is only valid for a __global or __constant buffer"), "{error}");
        let error = resolve_error(&with_arg(11, "<size=32> 1"));
        assert!(
            error.contains("arg 4 (scratch): a __local argument takes only a size"),
            "{error}"
        );
        let error = resolve_error(&with_arg(12, "<size=8 uint> 7 8"));
        assert_eq!(
            error,
            "DIR/run.sim:12: arg 5 (n): size=8 but the kernel's parameter takes 4 bytes"
        );
    }

    #[test]
    fn argument_counts_must_agree() {
        let mut text = SIM.to_string();
        text.push_str("<size=4> 1\n");
        let error = resolve_error(&text);
        assert!(error.starts_with("DIR/run.sim:14: kernel `sim` takes 7 parameters, the manifest gives 8 argument headers"), "{error}");
    }

    #[test]
    fn load_errors_name_the_line() {
        let fixture = fixture();
        let error = fixture.load_error("run.sim", &with_arg(10, "<null size=4>"));
        assert_eq!(
            error,
            "DIR/run.sim:10: arg 3: `null` goes with no other option but a data type"
        );
        let error = fixture.load_error("run.sim", &with_arg(9, "<size=8 uint image2d>"));
        assert!(
            error.starts_with(
                "DIR/run.sim:9: arg 2: `.sim` option `image2d` is not supported by clflow"
            ),
            "{error}"
        );
        let error = fixture.load_error("run.sim", "sim.cl\nsim\n4 1 1\n3 1 1\n");
        assert!(
            error.starts_with(
                "DIR/run.sim:4: local size 3 does not divide global size 4 in dimension 0"
            ),
            "{error}"
        );
        // A smaller last work-group is OpenCL 2.0's: the header's build
        // options may ask for it.
        let sim = fixture
            .load(
                "run.sim",
                "sim.cl\nsim\n4 1 1\n3 1 1\n-cl-std=CL2.0 -DN=1\n",
            )
            .unwrap();
        assert_eq!(sim.info().build_options, "-cl-std=CL2.0 -DN=1");
        assert_eq!(sim.info().range.local, Some([3, 1, 1]));
        let error = fixture.load_error("run.sim", "sim.cl\nsim\n4 1\n");
        assert_eq!(
            error,
            "DIR/run.sim:3: the file ends before the global size (3 numbers)"
        );
        let error = fixture.load_error("run.sim", "gone.cl\nsim\n4 1 1\n1 1 1\n");
        assert!(
            error.starts_with("DIR/run.sim:1: kernel file gone.cl cannot be read"),
            "{error}"
        );
        fixture.file("k.bc", b"BC\xc0\xde");
        let error = fixture.load_error("run.sim", "k.bc\nsim\n4 1 1\n1 1 1\n");
        assert!(error.starts_with("DIR/run.sim:1: `.sim` kernel file k.bc is LLVM bitcode (SPIR); this is not supported by clflow"), "{error}");
        let error = fixture.load_error("run.sim", "sim.cl\nsim\n4 1 1\n1 1 1\n7\n");
        assert_eq!(
            error,
            "DIR/run.sim:5: arg 0: expected an argument header <...>, found `7`"
        );
    }
}
