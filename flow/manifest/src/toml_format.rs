//! TOML manifests: every key checked, every error at its line.

use crate::error::{ArgRef, LineIndex, ManifestError};
use crate::init::{npy_header, FileLayout, Initialiser};
use crate::manifest::ParsedArg;
use crate::npy;
use crate::number::{check_fits, element_bytes, Number};
use crate::spec::{
    check_range, ArgSpec, BufferSpec, DumpFormat, ElementName, LocalSpec, ManifestArg,
    ManifestFormat, ManifestInfo, ScalarSpec, WorkGroups,
};
use crate::structs::PendingStructs;
use clflow_core::{
    Access, AddressMode, ElementType, FilterMode, ImageDesc, ImageDim, ImageFormat, NdRange,
    ParseTypeError, SamplerDesc, ScalarType,
};
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "source",
    "kernel",
    "build_options",
    "global_size",
    "local_size",
    "global_offset",
    "arg",
];

const ARG_KEYS: &[&str] = &[
    "name",
    "description",
    "type",
    "count",
    "file",
    "fill",
    "range",
    "random",
    "noinit",
    "access",
    "dump",
    "value",
    "local_bytes",
    "null",
    "same_as",
    "format",
    "shape",
    "sampler",
];

const IMAGE_KEYS: &[&str] = &[
    "name",
    "description",
    "type",
    "format",
    "shape",
    "file",
    "fill",
    "range",
    "random",
    "access",
    "dump",
];

const SAMPLER_KEYS: &[&str] = &["normalized", "address", "filter"];

const RANDOM_KEYS: &[&str] = &["min", "max", "seed"];

/// What an argument may be, for messages about keys that do not go together.
const ARG_KINDS: &str =
    "an [[arg]] is a buffer (type, count, one of file/fill/range/random, access, dump), \
a scalar (type, value), a __local pointer (local_bytes), a NULL pointer (null = true), \
an image (type = \"image2d\" ..., format, shape, one of file/fill/range/random, access, dump) \
or a sampler (sampler = { normalized, address, filter })";

type Value<'i> = Spanned<DeValue<'i>>;

/// Where errors point: the manifest, its lines, and the argument being read.
struct Context<'a> {
    path: &'a Path,
    lines: LineIndex,
    arg: Option<ArgRef>,
}

impl Context<'_> {
    fn error(&self, span_start: usize, message: impl Into<String>) -> ManifestError {
        let error =
            ManifestError::input(self.path, message).at_line(self.lines.line_of(span_start));
        match &self.arg {
            Some(arg) => error.for_arg(arg.clone()),
            None => error,
        }
    }

    fn directory(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// Parses a TOML manifest, for a launch built with `extra_options` after
/// its own.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    extra_options: &str,
) -> Result<(ManifestInfo, Vec<ParsedArg>), ManifestError> {
    let mut cx = Context { path, lines: LineIndex::new(text), arg: None };
    let root = DeTable::parse(text).map_err(|e| {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => cx.error(span.start, format!("TOML syntax: {message}")),
            None => ManifestError::input(path, format!("TOML syntax: {message}")),
        }
    })?;
    let table = root.get_ref();
    check_keys(&cx, table, TOP_KEYS, "top-level")?;

    let source_value = required(&cx, table, "source", 0)?;
    let source_text = string(&cx, source_value, "source")?;
    let source = cx.directory().join(&source_text);
    if !source.is_file() {
        return Err(cx
            .error(
                source_value.span().start,
                format!(
                    "source {source_text} not found (looked for {})",
                    source.display()
                ),
            )
            .with_hint("`source` is relative to the manifest's directory"));
    }
    let kernel = string(&cx, required(&cx, table, "kernel", 0)?, "kernel")?;
    let optional_string = |key: &str| table.get(key).map(|v| string(&cx, v, key)).transpose();
    let name = optional_string("name")?;
    let description = optional_string("description")?;
    let build_options = optional_string("build_options")?.unwrap_or_default();
    let groups = WorkGroups::of(&format!("{build_options} {extra_options}"));
    let range = parse_range(&cx, table, groups)?;

    let mut args = Vec::new();
    if let Some(list) = table.get("arg") {
        let DeValue::Array(entries) = list.get_ref() else {
            return Err(cx.error(list.span().start, "`arg` must be a list of [[arg]] tables"));
        };
        for (index, entry) in entries.iter().enumerate() {
            let DeValue::Table(arg_table) = entry.get_ref() else {
                return Err(cx.error(
                    entry.span().start,
                    format!("arg {index} is not a table; write each argument as an [[arg]] table"),
                ));
            };
            cx.arg = Some(ArgRef { index, name: None });
            let parsed = parse_arg(&mut cx, arg_table, entry.span().start)?;
            if let ParsedArg::Typed(ManifestArg { spec: ArgSpec::SameBuffer { arg }, .. }) = &parsed
            {
                let buffer = matches!(
                    args.get(*arg),
                    Some(ParsedArg::Structs(_))
                        | Some(ParsedArg::Typed(ManifestArg {
                            spec: ArgSpec::Buffer(_),
                            ..
                        }))
                );
                if !buffer {
                    return Err(cx.error(
                        arg_table["same_as"].span().start,
                        format!("`same_as = {arg}`: arg {arg} is not a buffer"),
                    ));
                }
            }
            args.push(parsed);
        }
        cx.arg = None;
    }

    let info = ManifestInfo {
        path: path.to_path_buf(),
        format: ManifestFormat::Toml,
        name,
        description,
        source,
        kernel,
        build_options,
        range,
    };
    Ok((info, args))
}

/// Unknown keys are errors: a typo must not pass silently.
fn check_keys(
    cx: &Context,
    table: &DeTable,
    known: &[&str],
    place: &str,
) -> Result<(), ManifestError> {
    for key in table.keys() {
        let spelled = key.get_ref().as_ref();
        if !known.contains(&spelled) {
            let suggestion = closest(spelled, known)
                .map(|k| format!("did you mean `{k}`? "))
                .unwrap_or_default();
            return Err(cx.error(
                key.span().start,
                format!(
                    "unknown {place} key `{spelled}` ({suggestion}known keys: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The known key within two edits of `typo`, if any.
fn closest<'k>(typo: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(typo, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + (ca != *cb) as usize)
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

fn required<'t, 'i>(
    cx: &Context,
    table: &'t DeTable<'i>,
    key: &str,
    at: usize,
) -> Result<&'t Value<'i>, ManifestError> {
    table
        .get(key)
        .ok_or_else(|| cx.error(at, format!("`{key}` is missing")))
}

fn string(cx: &Context, value: &Value, key: &str) -> Result<String, ManifestError> {
    match value.get_ref() {
        DeValue::String(text) => Ok(text.to_string()),
        other => Err(cx.error(
            value.span().start,
            format!("`{key}` must be a string, not {}", other.type_str()),
        )),
    }
}

fn number(cx: &Context, value: &Value, key: &str) -> Result<Number, ManifestError> {
    let parsed = match value.get_ref() {
        DeValue::Integer(int) => i128::from_str_radix(int.as_str(), int.radix())
            .ok()
            .map(Number::Int),
        DeValue::Float(float) => float.as_str().parse::<f64>().ok().map(Number::Float),
        other => {
            return Err(cx.error(
                value.span().start,
                format!("`{key}` must be a number, not {}", other.type_str()),
            ))
        }
    };
    parsed.ok_or_else(|| {
        cx.error(
            value.span().start,
            format!("`{key}` is not a number clflow can hold"),
        )
    })
}

/// A whole number from `low` up.
fn count(cx: &Context, value: &Value, key: &str, low: u64) -> Result<u64, ManifestError> {
    match number(cx, value, key)? {
        Number::Int(n) if n >= low as i128 && n <= u64::MAX as i128 => Ok(n as u64),
        other => Err(cx.error(
            value.span().start,
            format!("`{key}` must be a whole number from {low} up, not {other}"),
        )),
    }
}

fn array<'t, 'i>(
    cx: &Context,
    value: &'t Value<'i>,
    key: &str,
) -> Result<&'t [Value<'i>], ManifestError> {
    match value.get_ref() {
        DeValue::Array(items) => Ok(items),
        other => Err(cx.error(
            value.span().start,
            format!("`{key}` must be an array, not {}", other.type_str()),
        )),
    }
}

fn parse_range(
    cx: &Context,
    table: &DeTable,
    groups: WorkGroups,
) -> Result<NdRange, ManifestError> {
    let global_value = required(cx, table, "global_size", 0)?;
    let global = sizes(cx, global_value, "global_size", 1)?;
    let dims = global.len();
    let same_dims = |key: &str, low: u64| -> Result<Option<(Vec<u64>, &Value)>, ManifestError> {
        let Some(value) = table.get(key) else {
            return Ok(None);
        };
        let list = sizes(cx, value, key, low)?;
        if list.len() != dims {
            return Err(cx.error(
                value.span().start,
                format!("`{key}` has {} dimensions but global_size has {dims}; give one entry per dimension", list.len()),
            ));
        }
        Ok(Some((list, value)))
    };
    let local = same_dims("local_size", 1)?;
    let offset = same_dims("global_offset", 0)?;
    let pad = |list: &[u64], fill: u64| {
        let mut out = [fill; 3];
        out[..list.len()].copy_from_slice(list);
        out
    };
    let range = NdRange {
        dims: dims as u8,
        global: pad(&global, 1),
        local: local.as_ref().map(|(list, _)| pad(list, 1)),
        offset: offset
            .as_ref()
            .map(|(list, _)| pad(list, 0))
            .unwrap_or([0; 3]),
    };
    check_range(&range, groups).map_err(|(dim, message)| {
        let at = match (dim, &local) {
            (Some(_), Some((_, value))) => value.span().start,
            _ => global_value.span().start,
        };
        cx.error(at, message)
    })?;
    Ok(range)
}

/// An array of 1 to 3 sizes, each at least `low`.
fn sizes(cx: &Context, value: &Value, key: &str, low: u64) -> Result<Vec<u64>, ManifestError> {
    let items = array(cx, value, key)?;
    if items.is_empty() || items.len() > 3 {
        return Err(cx.error(
            value.span().start,
            format!(
                "`{key}` has {} dimensions; OpenCL NDRanges have 1 to 3 (e.g. [1024] or [64, 64])",
                items.len()
            ),
        ));
    }
    items.iter().map(|item| count(cx, item, key, low)).collect()
}

fn parse_arg(cx: &mut Context, table: &DeTable, at: usize) -> Result<ParsedArg, ManifestError> {
    let line = cx.lines.line_of(at);
    let name = table
        .get("name")
        .map(|v| string(cx, v, "name"))
        .transpose()?;
    cx.arg = Some(ArgRef {
        index: cx.arg.as_ref().map_or(0, |a| a.index),
        name: name.clone(),
    });
    check_keys(cx, table, ARG_KEYS, "[[arg]]")?;
    let description = table
        .get("description")
        .map(|v| string(cx, v, "description"))
        .transpose()?;
    if let Some(spec) = parse_image_or_sampler(cx, table, at)? {
        return Ok(ParsedArg::Typed(ManifestArg {
            name,
            description,
            line,
            param_name: None,
            spec,
        }));
    }
    // A struct's name is an error only for a scalar, or once the kernel's
    // signature shows it names no struct.
    let ty = table
        .get("type")
        .map(|value| {
            let text = string(cx, value, "type")?;
            ElementName::parse(&text).map_err(|e| cx.error(value.span().start, e.to_string()))
        })
        .transpose()?;

    // The key that decides the kind, and the keys that kind accepts.
    let (kind_key, allowed): (&str, &[&str]) = if table.contains_key("value") {
        ("value", &["name", "description", "type", "value"])
    } else if table.contains_key("local_bytes") {
        (
            "local_bytes",
            &["name", "description", "type", "local_bytes"],
        )
    } else if table.contains_key("null") {
        ("null", &["name", "description", "type", "null"])
    } else if table.contains_key("same_as") {
        ("same_as", &["name", "description", "same_as"])
    } else {
        (
            "",
            &[
                "name",
                "description",
                "type",
                "count",
                "file",
                "fill",
                "range",
                "random",
                "noinit",
                "access",
                "dump",
            ],
        )
    };
    if let Some((key, _)) = table
        .iter()
        .find(|(key, _)| !allowed.contains(&key.get_ref().as_ref()))
    {
        let message = if kind_key.is_empty() {
            format!(
                "`{}` does not go with a buffer's keys; {ARG_KINDS}",
                key.get_ref()
            )
        } else {
            format!(
                "`{}` does not go with `{kind_key}`; {ARG_KINDS}",
                key.get_ref()
            )
        };
        return Err(cx.error(key.span().start, message));
    }

    let spec = match (kind_key, ty) {
        ("value", ty) => ArgSpec::Scalar(parse_scalar(cx, table, ty, at)?),
        ("local_bytes", ty) => {
            let bytes = count(cx, &table["local_bytes"], "local_bytes", 1)?;
            let builtin = match &ty {
                Some(ElementName::Builtin(ty)) => Some(*ty),
                _ => None,
            };
            if let Some(ty) = builtin.filter(|t| bytes % t.size_bytes() as u64 != 0) {
                return Err(cx.error(
                    table["local_bytes"].span().start,
                    format!(
                        "local_bytes = {bytes} is not a whole number of {ty} ({}-byte) elements",
                        ty.size_bytes()
                    ),
                ));
            }
            ArgSpec::Local(LocalSpec { bytes, ty })
        }
        ("null", ty) => {
            let value = &table["null"];
            if !matches!(value.get_ref(), DeValue::Boolean(true)) {
                return Err(cx.error(
                    value.span().start,
                    "`null` takes only `true` (leave it out for a buffer)",
                ));
            }
            ArgSpec::Null { ty }
        }
        ("same_as", _) => {
            let value = &table["same_as"];
            let arg = count(cx, value, "same_as", 0)? as usize;
            let index = cx.arg.as_ref().map_or(0, |a| a.index);
            if arg >= index {
                return Err(cx.error(
                    value.span().start,
                    format!(
                        "`same_as = {arg}` must name an earlier argument (0 to {})",
                        index.saturating_sub(1)
                    ),
                ));
            }
            ArgSpec::SameBuffer { arg }
        }
        (_, Some(ElementName::Struct(struct_name))) => {
            let pending = parse_structs(cx, table, struct_name, at)?;
            return Ok(ParsedArg::Structs(PendingStructs {
                name,
                description,
                ..pending
            }));
        }
        (_, ty) => ArgSpec::Buffer(parse_buffer(cx, table, ty, at, None)?),
    };
    Ok(ParsedArg::Typed(ManifestArg {
        name,
        description,
        line,
        param_name: None,
        spec,
    }))
}

/// The OpenCL type a scalar or a buffer of elements needs: a struct's
/// name here is no type OpenCL knows.
fn need_type(
    cx: &Context,
    ty: Option<ElementName>,
    at: usize,
    what: &str,
) -> Result<ElementType, ManifestError> {
    match ty {
        Some(ElementName::Builtin(ty)) => Ok(ty),
        Some(ElementName::Struct(name)) => Err(cx.error(at, ParseTypeError(name).to_string())),
        None => Err(cx.error(
            at,
            format!("{what} needs `type` (an OpenCL type such as \"uint\" or \"float4\")"),
        )),
    }
}

/// `noinit = true`: the buffer's contents are undefined to the kernel.
fn parse_noinit(cx: &Context, table: &DeTable) -> Result<bool, ManifestError> {
    match table.get("noinit") {
        None => Ok(false),
        Some(value) => match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(cx.error(
                value.span().start,
                format!("`noinit` is true or false, not {}", other.type_str()),
            )),
        },
    }
}

/// A buffer of structs: `count` structs or a raw `file`, zeros or the
/// file's bytes; sized once the kernel's signature gives the struct's size.
fn parse_structs(
    cx: &Context,
    table: &DeTable,
    struct_name: String,
    at: usize,
) -> Result<PendingStructs, ManifestError> {
    if let Some((key, _)) = ["fill", "range", "random"]
        .iter()
        .find_map(|k| table.get_key_value(*k))
    {
        return Err(cx.error(
            key.span().start,
            format!(
                "`{}` does not initialise a buffer of {struct_name}; give `file` (its raw bytes), or nothing for zeros, or the bytes as type = \"uchar\"",
                key.get_ref()
            ),
        ));
    }
    let count = table
        .get("count")
        .map(|v| count(cx, v, "count", 1).map(|n| (n, cx.lines.line_of(v.span().start))))
        .transpose()?;
    let file = match table.get("file") {
        Some(value) => {
            let shown = string(cx, value, "file")?;
            if shown.ends_with(".npy") {
                return Err(cx.error(
                    value.span().start,
                    format!("file {shown}: a buffer of {struct_name} takes a raw file of its bytes, not .npy"),
                ));
            }
            let (init, bytes) = parse_file(cx, value, ElementType::scalar(ScalarType::UChar))?;
            Some((init, bytes, cx.lines.line_of(value.span().start)))
        }
        None => None,
    };
    if count.is_none() && file.is_none() {
        return Err(cx.error(
            at,
            "a buffer needs `count` (elements) unless `file` gives its contents",
        ));
    }
    let (access, dump) = (parse_access(cx, table)?, parse_dump(cx, table)?);
    Ok(PendingStructs {
        name: None,
        description: None,
        line: cx.lines.line_of(at),
        struct_name,
        count,
        file,
        undefined: parse_noinit(cx, table)?,
        access,
        dump,
    })
}

/// One value per lane: a number for a scalar type, an array of `lanes`
/// numbers for a vector type (or, where `broadcast`, one number for all lanes).
fn lane_values(
    cx: &Context,
    value: &Value,
    key: &str,
    ty: ElementType,
    broadcast: bool,
) -> Result<Vec<Number>, ManifestError> {
    let lanes = ty.lanes as usize;
    let values = match value.get_ref() {
        DeValue::Array(items) => {
            if items.len() != lanes {
                return Err(cx.error(
                    value.span().start,
                    format!(
                        "`{key}` has {} values but {ty} has {lanes} lane{}",
                        items.len(),
                        if lanes == 1 { "" } else { "s" }
                    ),
                ));
            }
            items
                .iter()
                .map(|item| number(cx, item, key).map(|n| (n, item.span().start)))
                .collect::<Result<Vec<_>, _>>()?
        }
        _ if lanes == 1 || broadcast => vec![(number(cx, value, key)?, value.span().start); lanes],
        _ => {
            return Err(cx.error(
                value.span().start,
                format!("{ty} has {lanes} lanes: give `{key}` as an array of {lanes} numbers"),
            ));
        }
    };
    values
        .into_iter()
        .map(|(n, at)| {
            check_fits(ty.scalar, n)
                .map(|_| n)
                .map_err(|why| cx.error(at, format!("`{key}`: {why}")))
        })
        .collect()
}

fn parse_scalar(
    cx: &Context,
    table: &DeTable,
    ty: Option<ElementName>,
    at: usize,
) -> Result<ScalarSpec, ManifestError> {
    let ty = need_type(cx, ty, at, "a scalar argument")?;
    let lanes = lane_values(cx, &table["value"], "value", ty, false)?;
    Ok(ScalarSpec { ty, bytes: element_bytes(ty, &lanes) })
}

/// An image (`type = "image2d"`, `format`, `shape`) or a sampler
/// (`sampler = { ... }`); `None` for any other argument.
fn parse_image_or_sampler(
    cx: &Context,
    table: &DeTable,
    at: usize,
) -> Result<Option<ArgSpec>, ManifestError> {
    if let Some(value) = table.get("sampler") {
        if let Some((key, _)) = table
            .iter()
            .find(|(key, _)| !["name", "description", "sampler"].contains(&key.get_ref().as_ref()))
        {
            return Err(cx.error(
                key.span().start,
                format!(
                    "`{}` does not go with `sampler`; {ARG_KINDS}",
                    key.get_ref()
                ),
            ));
        }
        return parse_sampler(cx, value).map(|s| Some(ArgSpec::Sampler(s)));
    }
    let dim = match table.get("type").map(|v| (v, v.get_ref())) {
        Some((_, DeValue::String(text))) => ImageDim::parse(text),
        _ => None,
    };
    let Some(dim) = dim else {
        if let Some(key) = ["format", "shape"]
            .into_iter()
            .find(|k| table.contains_key(*k))
        {
            let (key, _) = table.get_key_value(key).unwrap();
            return Err(cx.error(
                key.span().start,
                format!(
                    "`{}` goes with an image's type ({}); {ARG_KINDS}",
                    key.get_ref(),
                    ImageDim::ALL.map(ImageDim::name).join(", ")
                ),
            ));
        }
        return Ok(None);
    };
    if let Some((key, _)) = table
        .iter()
        .find(|(key, _)| !IMAGE_KEYS.contains(&key.get_ref().as_ref()))
    {
        return Err(cx.error(
            key.span().start,
            format!("`{}` does not go with an image; {ARG_KINDS}", key.get_ref()),
        ));
    }
    let format_value = required(cx, table, "format", at)?;
    let format = ImageFormat::parse(&string(cx, format_value, "format")?)
        .map_err(|why| cx.error(format_value.span().start, why))?;
    let shape_value = required(cx, table, "shape", at)?;
    let shape = sizes(cx, shape_value, "shape", 1)?;
    let image = ImageDesc::new(dim, format, &shape)
        .map_err(|why| cx.error(shape_value.span().start, why))?;
    let ty = ElementName::Builtin(image.element());
    let mut buffer = parse_buffer(cx, table, Some(ty), at, Some(image.texels()))?;
    if !table.contains_key("access") {
        buffer.access = Access::ReadOnly;
    }
    buffer.image = Some(image);
    Ok(Some(ArgSpec::Buffer(buffer)))
}

fn parse_sampler(cx: &Context, value: &Value) -> Result<SamplerDesc, ManifestError> {
    let DeValue::Table(table) = value.get_ref() else {
        return Err(cx.error(
            value.span().start,
            "`sampler` takes a table: sampler = { normalized = false, address = \"clamp_to_edge\", filter = \"nearest\" }",
        ));
    };
    check_keys(cx, table, SAMPLER_KEYS, "`sampler`")?;
    let normalized = match table.get("normalized").map(|v| (v, v.get_ref())) {
        None => false,
        Some((_, DeValue::Boolean(b))) => *b,
        Some((v, _)) => return Err(cx.error(v.span().start, "`normalized` takes true or false")),
    };
    let address = match table.get("address") {
        None => AddressMode::ClampToEdge,
        Some(v) => AddressMode::parse(&string(cx, v, "address")?).ok_or_else(|| {
            cx.error(
                v.span().start,
                format!(
                    "`address` is one of {}",
                    AddressMode::ALL
                        .map(|a| format!("\"{}\"", a.name()))
                        .join(", ")
                ),
            )
        })?,
    };
    let filter = match table.get("filter") {
        None => FilterMode::Nearest,
        Some(v) => FilterMode::parse(&string(cx, v, "filter")?)
            .ok_or_else(|| cx.error(v.span().start, "`filter` is \"nearest\" or \"linear\""))?,
    };
    if !normalized && matches!(address, AddressMode::Repeat | AddressMode::MirroredRepeat) {
        return Err(cx.error(
            value.span().start,
            format!(
                "address = \"{}\" needs normalized = true (OpenCL repeats normalized coordinates only)",
                address.name()
            ),
        ));
    }
    Ok(SamplerDesc { normalized, address, filter })
}

/// A buffer's element type, count, initialiser, access and dump; `texels`
/// is an image's texel count, which its `shape` gives.
fn parse_buffer(
    cx: &Context,
    table: &DeTable,
    ty: Option<ElementName>,
    at: usize,
    texels: Option<u64>,
) -> Result<BufferSpec, ManifestError> {
    let ty = need_type(cx, ty, at, "a buffer argument")?;
    let initialisers: Vec<&str> = ["file", "fill", "range", "random"]
        .into_iter()
        .filter(|k| table.contains_key(*k))
        .collect();
    if initialisers.len() > 1 {
        let second = &table.get_key_value(initialisers[1]).unwrap().0;
        return Err(cx.error(
            second.span().start,
            format!(
                "`{}` and `{}` both initialise this buffer; keep one",
                initialisers[0], initialisers[1]
            ),
        ));
    }
    let given_count = table
        .get("count")
        // A buffer of no elements is legal where the kernel never touches
        // it (any access is then out of bounds).
        .map(|v| count(cx, v, "count", 0).map(|n| (n, v.span().start)))
        .transpose()?
        .or(texels.map(|n| (n, at)));

    let (init, count) = if let Some(file) = table.get("file") {
        let (init, implied) = parse_file(cx, file, ty)?;
        if let Some((given, count_at)) = given_count.filter(|(given, _)| *given != implied) {
            if texels.is_some() {
                return Err(cx.error(
                    file.span().start,
                    format!("the image's shape makes {given} texels of {} bytes ({ty}), but the file holds {implied}; fix `shape` or the file", ty.size_bytes()),
                ));
            }
            return Err(cx.error(
                count_at,
                format!("count = {given} but the file holds {implied} {ty} elements; drop `count` (the file implies it) or fix it"),
            ));
        }
        (init, implied)
    } else {
        let Some((count, _)) = given_count else {
            return Err(cx.error(
                at,
                "a buffer needs `count` (elements) unless `file` gives its contents",
            ));
        };
        check_size(cx, at, count, ty)?;
        let init = if let Some(value) = table.get("fill") {
            Initialiser::Fill {
                element: element_bytes(ty, &lane_values(cx, value, "fill", ty, true)?),
            }
        } else if let Some(value) = table.get("range") {
            parse_range_init(cx, value, ty, count)?
        } else if let Some(value) = table.get("random") {
            parse_random(cx, value, ty)?
        } else {
            Initialiser::Zeros
        };
        (init, count)
    };

    let undefined = parse_noinit(cx, table)?;
    if let Some(other) = ["fill", "range", "random"]
        .into_iter()
        .find(|k| undefined && table.contains_key(*k))
    {
        let (key, _) = table.get_key_value("noinit").unwrap();
        return Err(cx.error(
            key.span().start,
            format!("`noinit` says the contents are undefined, `{other}` gives them; keep one"),
        ));
    }
    Ok(BufferSpec {
        ty,
        count,
        init,
        undefined,
        access: parse_access(cx, table)?,
        dump: parse_dump(cx, table)?,
        structs: None,
        image: None,
    })
}

fn parse_access(cx: &Context, table: &DeTable) -> Result<Access, ManifestError> {
    let Some(value) = table.get("access") else {
        return Ok(Access::ReadWrite);
    };
    match string(cx, value, "access")?.as_str() {
        "ro" => Ok(Access::ReadOnly),
        "wo" => Ok(Access::WriteOnly),
        "rw" => Ok(Access::ReadWrite),
        other => Err(cx.error(
            value.span().start,
            format!("access = \"{other}\" is not one of \"ro\", \"wo\", \"rw\""),
        )),
    }
}

fn parse_dump(cx: &Context, table: &DeTable) -> Result<Option<DumpFormat>, ManifestError> {
    match table.get("dump").map(|v| (v.get_ref(), v.span().start)) {
        None | Some((DeValue::Boolean(false), _)) => Ok(None),
        Some((DeValue::Boolean(true), _)) => Ok(Some(DumpFormat::Decimal)),
        Some((DeValue::String(s), _)) if s == "hex" => Ok(Some(DumpFormat::Hex)),
        Some((_, at)) => Err(cx.error(at, "`dump` takes true, false or \"hex\"")),
    }
}

/// Refuses buffers whose size does not fit in the address space.
fn check_size(cx: &Context, at: usize, count: u64, ty: ElementType) -> Result<(), ManifestError> {
    let bytes = count.checked_mul(ty.size_bytes() as u64);
    if bytes.is_none_or(|bytes| usize::try_from(bytes).is_err()) {
        return Err(cx.error(at, format!("{count} {ty} elements do not fit in memory")));
    }
    Ok(())
}

/// A file initialiser and the element count it implies, checked now so
/// that a wrong file is reported at its manifest line.
fn parse_file(
    cx: &Context,
    value: &Value,
    ty: ElementType,
) -> Result<(Initialiser, u64), ManifestError> {
    let shown = string(cx, value, "file")?;
    let path: PathBuf = cx.directory().join(&shown);
    let at = value.span().start;
    let fail = |why: String| cx.error(at, format!("file {shown} {why}"));
    let metadata = std::fs::metadata(&path).map_err(|e| {
        cx.error(
            at,
            format!(
                "file {shown} cannot be read ({e}; looked for {})",
                path.display()
            ),
        )
        .with_hint("`file` is relative to the manifest's directory")
    })?;
    let element = ty.size_bytes() as u64;
    let is_npy = path.extension().is_some_and(|e| e == "npy");
    if !is_npy {
        let bytes = match crate::data_file::is_compressed(&path) {
            true => crate::data_file::data_len(&path)
                .map_err(|e| fail(format!("cannot be decompressed: {e}")))?,
            false => metadata.len(),
        };
        if bytes % element != 0 {
            return Err(fail(format!(
                "holds {bytes} bytes, not a whole number of {ty} ({element}-byte) elements"
            )));
        }
        let init = Initialiser::File { path, shown, layout: FileLayout::Raw };
        return Ok((init, bytes / element));
    }

    let header = npy_header(&path).map_err(fail)?;
    let wanted = npy::descr_for(ty.scalar);
    if !npy::descr_matches(&header.descr, ty.scalar) {
        return Err(fail(format!(
            "holds {} data; a {ty} buffer needs {wanted} (numpy: array.astype('{wanted}'))",
            header.descr
        )));
    }
    if header.fortran_order && header.shape.len() > 1 {
        return Err(fail(
            "is in Fortran order; save a C-order array (numpy.ascontiguousarray)".into(),
        ));
    }
    let lanes = ty.lanes as u64;
    if lanes > 1 && header.shape.last() != Some(&lanes) {
        return Err(fail(format!(
            "has shape {:?}; a {ty} buffer needs the last dimension to be {lanes}",
            header.shape
        )));
    }
    let elements = header
        .elements()
        .ok_or_else(|| fail("has a shape too large to hold".into()))?
        / lanes;
    if elements == 0 {
        return Err(fail("holds no elements".into()));
    }
    let stored = elements * lanes * ty.scalar.size_bytes() as u64;
    if metadata.len() != header.data_offset + stored {
        return Err(fail(format!(
            "has a header promising {stored} bytes of data but {} follow it",
            metadata.len().saturating_sub(header.data_offset)
        )));
    }
    let init = Initialiser::File {
        path,
        shown,
        layout: FileLayout::Npy {
            data_offset: header.data_offset,
            pad_to_four_lanes: lanes == 3,
        },
    };
    Ok((init, elements))
}

fn parse_range_init(
    cx: &Context,
    value: &Value,
    ty: ElementType,
    count: u64,
) -> Result<Initialiser, ManifestError> {
    let items = array(cx, value, "range")?;
    let at = value.span().start;
    let [start, step] = items else {
        return Err(cx.error(
            at,
            format!("`range` takes [start, step], not {} values", items.len()),
        ));
    };
    let (start, step) = (number(cx, start, "range")?, number(cx, step, "range")?);
    let lanes = (count * ty.lanes as u64) as i128;
    if ty.scalar.is_float() {
        let last = start.as_f64() + (lanes - 1) as f64 * step.as_f64();
        check_fits(ty.scalar, Number::Float(last))
            .map_err(|why| cx.error(at, format!("`range` ends at {last}: {why}")))?;
    } else {
        let (Number::Int(first), Number::Int(delta)) = (start, step) else {
            return Err(cx.error(at, format!("`range` for {ty} takes integers")));
        };
        let Some(last) = (lanes - 1)
            .checked_mul(delta)
            .and_then(|d| d.checked_add(first))
        else {
            return Err(cx.error(at, format!("`range` overflows {ty}")));
        };
        for (which, n) in [("starts", first), ("ends", last)] {
            check_fits(ty.scalar, Number::Int(n))
                .map_err(|why| cx.error(at, format!("`range` {which} at {n}: {why}")))?;
        }
    }
    Ok(Initialiser::Range { start, step, accumulate: false })
}

fn parse_random(
    cx: &Context,
    value: &Value,
    ty: ElementType,
) -> Result<Initialiser, ManifestError> {
    let DeValue::Table(table) = value.get_ref() else {
        return Err(cx.error(
            value.span().start,
            "`random` takes a table: random = { min = 0, max = 60, seed = 1 }",
        ));
    };
    check_keys(cx, table, RANDOM_KEYS, "`random`")?;
    let at = value.span().start;
    let bound = |key: &str| -> Result<Number, ManifestError> {
        let value = required(cx, table, key, at)?;
        let n = number(cx, value, key)?;
        check_fits(ty.scalar, n)
            .map_err(|why| cx.error(value.span().start, format!("random `{key}`: {why}")))?;
        Ok(n)
    };
    let (min, max) = (bound("min")?, bound("max")?);
    let ordered = match (min, max) {
        (Number::Int(low), Number::Int(high)) => low <= high,
        _ => min.as_f64().is_finite() && max.as_f64().is_finite() && min.as_f64() <= max.as_f64(),
    };
    if !ordered {
        return Err(cx.error(
            at,
            format!("random needs finite min <= max, not min = {min}, max = {max}"),
        ));
    }
    // Float types draw floats even from integer bounds.
    let (min, max) = if ty.scalar.is_float() {
        (Number::Float(min.as_f64()), Number::Float(max.as_f64()))
    } else {
        (min, max)
    };
    let seed = count(cx, required(cx, table, "seed", at)?, "seed", 0)?;
    Ok(Initialiser::Random { min, max, seed })
}

#[cfg(test)]
mod tests {
    use crate::testing::Fixture;
    use crate::{ArgSpec, DumpFormat, Initialiser, ManifestFormat};
    use clflow_core::{Access, ArgValue, ScalarType};

    const FULL: &str = r#"# every field
name = "demo"
description = "all the keys"
source = "k.cl"
kernel = "k"
build_options = "-DN=4"
global_size = [64, 4]
local_size = [16, 2]
global_offset = [8, 0]

[[arg]]
name = "keys"
description = "raw bytes"
type = "uint"
file = "data/keys.bin"
access = "ro"

[[arg]]
name = "lut"
type = "ushort"
file = "lut.npy"

[[arg]]
name = "out"
type = "float4"
count = 2
fill = [1.0, 2.0, 3.0, 4.0]
access = "wo"
dump = true

[[arg]]
type = "int"
count = 4
range = [-2, 3]
dump = "hex"

[[arg]]
type = "uchar"
count = 6
random = { min = 0, max = 60, seed = 1 }

[[arg]]
type = "double"
count = 2

[[arg]]
name = "scale"
type = "float2"
value = [0.5, -1]

[[arg]]
type = "uint"
value = 0xff

[[arg]]
local_bytes = 4096
type = "float"

[[arg]]
null = true
"#;

    /// The full manifest, its arguments as it types them (no kernel declares
    /// all ten).
    fn full() -> (Fixture, crate::CheckedManifest) {
        let fixture = Fixture::new();
        fixture.file("data/keys.bin", &[1, 0, 0, 0, 2, 0, 0, 0]);
        let lut: Vec<u8> = [7u16, 8, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
        fixture.file("lut.npy", &crate::npy::encode("<u2", &[3], &lut));
        let manifest = fixture.load("m.toml", FULL).unwrap();
        (fixture, manifest.check_typed().unwrap())
    }

    #[test]
    fn a_full_manifest_loads_every_field() {
        let (fixture, m) = full();
        let info = m.info();
        assert_eq!(info.format, ManifestFormat::Toml);
        assert_eq!(info.name.as_deref(), Some("demo"));
        assert_eq!(info.description.as_deref(), Some("all the keys"));
        assert_eq!(info.source, fixture.dir.path().join("k.cl"));
        assert_eq!(
            (info.kernel.as_str(), info.build_options.as_str()),
            ("k", "-DN=4")
        );
        let range = &info.range;
        assert_eq!(
            (range.dims, range.global, range.local, range.offset),
            (2, [64, 4, 1], Some([16, 2, 1]), [8, 0, 0])
        );
        let args = m.args();
        assert_eq!(args.len(), 10);
        assert_eq!(args[0].line, 11);
        assert_eq!(args[0].description.as_deref(), Some("raw bytes"));
        let ArgSpec::Buffer(keys) = &args[0].spec else {
            panic!("keys is a buffer")
        };
        assert_eq!(
            (keys.ty.scalar, keys.count, keys.access, keys.dump),
            (ScalarType::UInt, 2, Access::ReadOnly, None)
        );
        assert!(matches!(&keys.init, Initialiser::File { shown, .. } if shown == "data/keys.bin"));
        let ArgSpec::Buffer(out) = &args[2].spec else {
            panic!("out is a buffer")
        };
        assert_eq!(
            (out.access, out.dump),
            (Access::WriteOnly, Some(DumpFormat::Decimal))
        );
        assert_eq!(
            m.dumps().collect::<Vec<_>>(),
            [(2, DumpFormat::Decimal), (3, DumpFormat::Hex)]
        );
        assert!(
            matches!(&args[8].spec, ArgSpec::Local(local) if local.bytes == 4096 && local.ty.as_ref().unwrap().to_string() == "float")
        );
        assert!(matches!(&args[9].spec, ArgSpec::Null { ty: None }));
    }

    #[test]
    fn every_initialiser_materialises_its_bytes() {
        let (_fixture, m) = full();
        let launch = m.materialize().unwrap();
        assert_eq!(launch.kernel, "k");
        let bytes = |index: usize| match &launch.args[index].value {
            ArgValue::Buffer { bytes, .. } | ArgValue::Scalar { bytes } => bytes.clone(),
            other => panic!("arg {index} is {other:?}"),
        };
        assert_eq!(launch.args[0].name.as_deref(), Some("keys"));
        assert_eq!(bytes(0), [1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(bytes(1), [7, 0, 8, 0, 9, 0]);
        let floats: Vec<f32> = bytes(2)
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
        let ints: Vec<i32> = bytes(3)
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(ints, [-2, 1, 4, 7]);
        // uchar lanes draw from the same sequence as the uint example in init.rs.
        assert_eq!(bytes(4), [1, 39, 15, 20, 53, 30]);
        assert_eq!(bytes(5), [0; 16]);
        let mut scale = 0.5f32.to_le_bytes().to_vec();
        scale.extend_from_slice(&(-1.0f32).to_le_bytes());
        assert_eq!(bytes(6), scale);
        assert_eq!(bytes(7), [0xff, 0, 0, 0]);
        assert_eq!(launch.args[8].value, ArgValue::Local { bytes: 4096 });
        assert_eq!(launch.args[9].value, ArgValue::NullPointer);
    }

    #[test]
    fn float_ranges_and_three_lane_npy() {
        let fixture = Fixture::new();
        let packed: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        fixture.file("v.npy", &crate::npy::encode("<f4", &[2, 3], &packed));
        let text = "source = \"k.cl\"\nkernel = \"k\"\nglobal_size = [2]\n\
            [[arg]]\ntype = \"float3\"\nfile = \"v.npy\"\n\
            [[arg]]\ntype = \"double\"\ncount = 3\nrange = [0.5, 0.25]\n";
        let launch = fixture
            .load("m.toml", text)
            .unwrap()
            .check_typed()
            .unwrap()
            .materialize()
            .unwrap();
        let ArgValue::Buffer { bytes, .. } = &launch.args[0].value else {
            panic!()
        };
        let floats: Vec<f32> = bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0]);
        let ArgValue::Buffer { bytes, .. } = &launch.args[1].value else {
            panic!()
        };
        let doubles: Vec<f64> = bytes
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(doubles, [0.5, 0.75, 1.0]);
    }

    const HEAD: &str = "source = \"k.cl\"\nkernel = \"k\"\nglobal_size = [16]\n";

    #[test]
    fn same_as_names_an_earlier_buffer() {
        let fixture = Fixture::new();
        let buffer = "[[arg]]\ntype = \"int\"\ncount = 4\n";
        let text = format!("{HEAD}{buffer}[[arg]]\nname = \"out\"\nsame_as = 0\n");
        let manifest = fixture
            .load("m.toml", &text)
            .unwrap()
            .check_typed()
            .unwrap();
        assert!(matches!(
            &manifest.args()[1].spec,
            ArgSpec::SameBuffer { arg: 0 }
        ));
        let launch = manifest.materialize().unwrap();
        assert_eq!(launch.args[1].value, ArgValue::SameBuffer { arg: 0 });
        let later = fixture.load_error("m.toml", &format!("{HEAD}[[arg]]\nsame_as = 1\n{buffer}"));
        assert!(
            later.contains("m.toml:5: arg 0: `same_as = 1` must name an earlier argument"),
            "{later}"
        );
        let scalar = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"int\"\nvalue = 3\n[[arg]]\nsame_as = 0\n"),
        );
        assert!(
            scalar.contains("`same_as = 0`: arg 0 is not a buffer"),
            "{scalar}"
        );
        let mixed = fixture.load_error(
            "m.toml",
            &format!("{HEAD}{buffer}[[arg]]\nsame_as = 0\ncount = 4\n"),
        );
        assert!(
            mixed.contains("`count` does not go with `same_as`"),
            "{mixed}"
        );
    }

    #[test]
    fn unknown_keys_name_the_key_and_line() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\nname = \"keys\"\ntype = \"uint\"\nfil = 1\ncount = 4\n"),
        );
        assert!(
            error.starts_with("DIR/m.toml:7: arg 0 (keys): unknown [[arg]] key `fil` (did you mean `file`? known keys: name,"),
            "{error}"
        );
        let error = fixture.load_error("m.toml", "sorce = \"k.cl\"\n");
        assert!(
            error
                .starts_with("DIR/m.toml:1: unknown top-level key `sorce` (did you mean `source`?"),
            "{error}"
        );
    }

    #[test]
    fn bad_type_names_are_errors() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"uint*\"\ncount = 4\n"),
        );
        assert!(
            error.starts_with("DIR/m.toml:5: arg 0: unknown OpenCL type `uint*`"),
            "{error}"
        );
        // A bare name may be a struct's typedef: only a scalar refuses it
        // before the kernel's signature is known.
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"flaot4\"\nvalue = 4\n"),
        );
        assert!(
            error.starts_with("DIR/m.toml:4: arg 0: unknown OpenCL type `flaot4`"),
            "{error}"
        );
    }

    #[test]
    fn values_out_of_range_are_errors() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\n[[arg]]\nname = \"n\"\ntype = \"uchar\"\nvalue = 300\n"),
        );
        assert_eq!(error, "DIR/m.toml:4: arg 0: a buffer argument needs `type` (an OpenCL type such as \"uint\" or \"float4\")");
        let error = fixture.load_error("m.toml", &format!("{HEAD}[[arg]]\ntype = \"uint\"\ncount = 1\n[[arg]]\nname = \"n\"\ntype = \"uchar\"\nvalue = 300\n"));
        assert_eq!(
            error,
            "DIR/m.toml:10: arg 1 (n): `value`: 300 is out of range for uchar (0 to 255)"
        );
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"uchar\"\ncount = 300\nrange = [0, 1]\n"),
        );
        assert_eq!(
            error,
            "DIR/m.toml:7: arg 0: `range` ends at 299: 299 is out of range for uchar (0 to 255)"
        );
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"float4\"\nvalue = [1, 2, 3]\n"),
        );
        assert_eq!(
            error,
            "DIR/m.toml:6: arg 0: `value` has 3 values but float4 has 4 lanes"
        );
    }

    #[test]
    fn file_size_must_hold_whole_elements() {
        let fixture = Fixture::new();
        fixture.file("data/keys.bin", &[0; 1002]);
        fixture.file("data/words.bin", &[0; 1000]);
        fixture.file("data/keys.npy", &crate::npy::encode("<i4", &[2], &[0; 8]));
        let arg = |file: &str| {
            format!("{HEAD}\n[[arg]]\nname = \"keys\"\ntype = \"ulong\"\nfile = \"{file}\"\n")
        };
        assert_eq!(
            fixture.load_error("m.toml", &arg("data/keys.bin")),
            "DIR/m.toml:8: arg 0 (keys): file data/keys.bin holds 1002 bytes, not a whole number of ulong (8-byte) elements"
        );
        assert_eq!(
            fixture.load_error("m.toml", &arg("data/keys.npy")),
            "DIR/m.toml:8: arg 0 (keys): file data/keys.npy holds <i4 data; a ulong buffer needs <u8 (numpy: array.astype('<u8'))"
        );
        let counted =
            format!("{HEAD}[[arg]]\ntype = \"uint\"\nfile = \"data/words.bin\"\ncount = 10\n");
        assert_eq!(
            fixture.load_error("m.toml", &counted),
            "DIR/m.toml:7: arg 0: count = 10 but the file holds 250 uint elements; drop `count` (the file implies it) or fix it"
        );
    }

    #[test]
    fn missing_files_are_errors() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"uint\"\nfile = \"nope.bin\"\n"),
        );
        assert!(
            error.starts_with("DIR/m.toml:6: arg 0: file nope.bin cannot be read ("),
            "{error}"
        );
        let error = fixture.load_error(
            "m.toml",
            "source = \"missing.cl\"\nkernel = \"k\"\nglobal_size = [1]\n",
        );
        assert!(
            error.starts_with("DIR/m.toml:1: source missing.cl not found"),
            "{error}"
        );
    }

    #[test]
    fn local_size_must_divide_global_size() {
        let fixture = Fixture::new();
        let text =
            "source = \"k.cl\"\nkernel = \"k\"\nglobal_size = [64, 30]\nlocal_size = [8, 4]\n";
        let error = fixture.load_error("m.toml", text);
        assert!(
            error.starts_with(
                "DIR/m.toml:4: local size 4 does not divide global size 30 in dimension 1"
            ),
            "{error}"
        );
    }

    #[test]
    fn ndranges_have_one_to_three_dimensions() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            "source = \"k.cl\"\nkernel = \"k\"\nglobal_size = [4, 4, 4, 4]\n",
        );
        assert_eq!(error, "DIR/m.toml:3: `global_size` has 4 dimensions; OpenCL NDRanges have 1 to 3 (e.g. [1024] or [64, 64])");
        let error = fixture.load_error(
            "m.toml",
            "source = \"k.cl\"\nkernel = \"k\"\nglobal_size = [4]\nlocal_size = [2, 2]\n",
        );
        assert!(
            error.starts_with("DIR/m.toml:4: `local_size` has 2 dimensions but global_size has 1"),
            "{error}"
        );
    }

    #[test]
    fn keys_that_do_not_go_together_are_errors() {
        let fixture = Fixture::new();
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"uint\"\nvalue = 1\ncount = 4\n"),
        );
        assert!(
            error.starts_with("DIR/m.toml:7: arg 0: `count` does not go with `value`;"),
            "{error}"
        );
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"uint\"\ncount = 4\nfill = 1\nrange = [0, 1]\n"),
        );
        assert_eq!(
            error,
            "DIR/m.toml:8: arg 0: `fill` and `range` both initialise this buffer; keep one"
        );
        let error = fixture.load_error("m.toml", &format!("{HEAD}[[arg]]\ntype = \"uint\"\n"));
        assert!(
            error.starts_with("DIR/m.toml:4: arg 0: a buffer needs `count`"),
            "{error}"
        );
        let error = fixture.load_error(
            "m.toml",
            &format!("{HEAD}[[arg]]\ntype = \"int\"\ncount = 2\nrandom = {{ min = 0, max = 5 }}\n"),
        );
        assert_eq!(error, "DIR/m.toml:7: arg 0: `seed` is missing");
    }

    #[test]
    fn syntax_errors_point_at_their_line() {
        let fixture = Fixture::new();
        let error = fixture.load_error("m.toml", "source = \"k.cl\"\nkernel = \n");
        assert!(error.starts_with("DIR/m.toml:2: TOML syntax:"), "{error}");
    }
}
