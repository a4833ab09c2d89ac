//! `clflow capture`: run an unmodified application under the capture layer
//! (`clflow-capture-layer`, loaded by the OpenCL loader through
//! `OPENCL_LAYERS`), then turn each launch it recorded into an ordinary
//! clflow manifest, typed from the kernel's own signature, and list them
//! in `capture.toml`.

use crate::input::prepare;
use crate::outputs::{compare_buffer, Mismatch, Tolerance};
use crate::{Error, Session};
use clflow_capture::record::{ArgRecord, DeviceRecord, LaunchRecord, ProgramRecord};
use clflow_capture::record::{
    DIR_ENV, FROM_SOURCE_ENV, KERNELS_ENV, LAUNCHES_ENV, MAX_BYTES_ENV, REFUSED_BINARIES_FILE,
    SKIPPED_SUFFIX,
};
use clflow_capture::select::Selection;
use clflow_core::{
    Access, AddressSpace, ChannelOrder, ChannelType, ElementType, ImageDesc, ImageFormat,
    ParamKind, ScalarType, StructType,
};
use clflow_spirv::ReflectedKernel;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The layer's file name, looked for beside the running clflow.
pub const LAYER_FILE: &str = "libclflow_capture.so";
/// Names the layer explicitly (an installed clflow, a test).
pub const LAYER_ENV: &str = "CLFLOW_CAPTURE_LAYER";

/// What to capture, as `clflow capture`'s flags give it.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    pub out: PathBuf,
    /// Kernel-name globs; every kernel where empty.
    pub kernels: Vec<String>,
    /// Which launches of each kernel: rules `[GLOB:]SPEC`, SPEC one of
    /// `all`, `first`, `last`, `every:N`, `0,5-9` (all where none).
    pub launches: Vec<String>,
    /// The most bytes of buffer contents to write; launches past it are
    /// passed through and listed as not recorded.
    pub max_bytes: Option<u64>,
    /// Run the application with an empty cache directory
    /// (`XDG_CACHE_HOME`, where most applications and PoCL keep their
    /// kernel caches) and refuse programs from device binaries, so that an
    /// application with a kernel cache builds them from source.
    pub from_source: bool,
    /// The application and its arguments.
    pub app: Vec<OsString>,
}

/// What a capture produced.
pub struct Capture {
    pub status: ExitStatus,
    pub launches: Vec<CapturedLaunch>,
    /// Launches recorded but not turned into manifests, and why.
    pub skipped: Vec<String>,
    /// The devices the captured launches ran on.
    pub devices: Vec<DeviceRecord>,
    /// Programs from device binaries refused (`from_source`).
    pub refused_binaries: usize,
}

/// One launch in `capture.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapturedLaunch {
    pub sequence: u64,
    pub kernel: String,
    pub index: u64,
    pub global_size: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_size: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ns: Option<u64>,
    /// The device's name, one of the capture's `[[device]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    pub manifest: String,
    /// The buffers' contents after the launch on the device, as the
    /// application's runtime computed them.
    pub expected: Vec<Expected>,
}

/// One buffer argument's contents after the launch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Expected {
    pub arg: usize,
    pub file: String,
}

/// Runs the application under the layer and writes the capture to
/// `options.out`.
pub fn capture(options: &CaptureOptions, session: &Session) -> crate::Result<Capture> {
    let Some(program) = options.app.first() else {
        return Err(Error::input("no application to capture")
            .with_hint("give it after `--`: clflow capture -- ./app ARGS"));
    };
    Selection::parse(&options.kernels, &options.launches)
        .map_err(|e| Error::input(format!("--launches {e}")))?;
    let layer = find_layer()?;
    clflow_report::check_writable(&options.out, "--out")?;
    let raw = options.out.join("raw");
    replace_earlier(&options.out, session)?;
    let layers = match std::env::var_os("OPENCL_LAYERS") {
        Some(others) if !others.is_empty() => {
            let mut all = layer.clone().into_os_string();
            all.push(":");
            all.push(others);
            all
        }
        _ => layer.clone().into_os_string(),
    };
    session.observer().detail(format!(
        "running {} under {}",
        program.to_string_lossy(),
        layer.display()
    ));
    let mut command = Command::new(program);
    if let Some(max) = options.max_bytes {
        command.env(MAX_BYTES_ENV, max.to_string());
    }
    // Removed when the capture is done.
    let empty_cache = match options.from_source {
        true => Some(
            tempfile::Builder::new()
                .prefix("clflow-capture-cache-")
                .tempdir()
                .map_err(|e| {
                    Error::analysis(format!(
                        "--from-source: cannot make an empty cache directory: {e}"
                    ))
                })?,
        ),
        false => None,
    };
    if let Some(dir) = &empty_cache {
        command
            .env(FROM_SOURCE_ENV, "1")
            .env("XDG_CACHE_HOME", dir.path());
    }
    let status = command
        .args(&options.app[1..])
        .env("OPENCL_LAYERS", layers)
        .env(DIR_ENV, &raw)
        .env(KERNELS_ENV, options.kernels.join(","))
        .env(LAUNCHES_ENV, Selection::launches_text(&options.launches))
        // pyopencl and OpenCV would otherwise build from their caches of
        // device binaries, which hold no source to analyse; building from
        // source changes nothing else the application does.
        .env("PYOPENCL_NO_CACHE", "1")
        .env("OPENCV_OPENCL_CACHE_ENABLE", "0")
        .status()
        .map_err(|e| {
            Error::input(format!("{}: cannot run it: {e}", program.to_string_lossy()))
                .with_hint("give the application's path, or a command on PATH, after `--`")
        })?;
    let written = write_manifests(&options.out, &raw, session)?;
    write_index(&options.out, options, status, &written)?;
    let refused = std::fs::read_to_string(raw.join(REFUSED_BINARIES_FILE)).unwrap_or_default();
    Ok(Capture {
        status,
        launches: written.launches,
        skipped: written.skipped,
        devices: written.devices,
        refused_binaries: refused.lines().count(),
    })
}

/// Clears an earlier capture in `out` (its index, manifests and `raw/`),
/// so that no manifest is left pointing at buffers of another run. Nothing
/// else in `out` is touched.
fn replace_earlier(out: &Path, session: &Session) -> crate::Result<()> {
    let clear = |path: &Path| -> crate::Result<()> {
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        removed.map_err(|e| Error::input(format!("{}: cannot clear: {e}", path.display())))
    };
    if !out.join("capture.toml").is_file() {
        return Ok(());
    }
    session.observer().note(format!(
        "replacing the earlier capture in {}",
        out.display()
    ));
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "raw"
            || name == "capture.toml"
            || (name.starts_with("launch-") && name.ends_with(".toml"))
        {
            clear(&entry.path())?;
        }
    }
    Ok(())
}

/// The layer: `$CLFLOW_CAPTURE_LAYER`, else beside the running clflow or in
/// its `deps/` (a build tree: cargo leaves the layer there when it was built
/// only as clflow's dependency, as `cargo test` does), else in
/// `../lib/clflow/` or `../lib/` from it (an install).
fn find_layer() -> crate::Result<PathBuf> {
    if let Some(path) = std::env::var_os(LAYER_ENV) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok();
    let dir = exe.as_deref().and_then(Path::parent);
    let candidates: Vec<PathBuf> = dir
        .map(|d| {
            vec![
                d.join(LAYER_FILE),
                d.join("deps").join(LAYER_FILE),
                d.join("../lib/clflow").join(LAYER_FILE),
                d.join("../lib").join(LAYER_FILE),
            ]
        })
        .unwrap_or_default();
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        Error::analysis(format!(
            "the capture layer {LAYER_FILE} is neither beside clflow nor in ../lib/clflow or ../lib"
        ))
        .with_hint(format!(
            "build it with `cargo build --release -p clflow-capture-layer` (an installed clflow \
             takes it in lib/clflow/), or name it with {LAYER_ENV}"
        ))
    })
}

/// The manifests written, and what capture.toml says of them.
struct Written {
    launches: Vec<CapturedLaunch>,
    skipped: Vec<String>,
    devices: Vec<DeviceRecord>,
}

/// Each recorded launch as a manifest beside the capture's `raw/`.
fn write_manifests(out: &Path, raw: &Path, session: &Session) -> crate::Result<Written> {
    let mut records: Vec<PathBuf> = match std::fs::read_dir(raw) {
        Ok(dir) => dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("launch-") && n.ends_with(".json"))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    records.sort();
    let mut launches = Vec::new();
    // The launches the layer did not record, in its words.
    let mut skipped: Vec<String> = match std::fs::read_dir(raw) {
        Ok(dir) => {
            let mut notes: Vec<PathBuf> = dir
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == SKIPPED_SUFFIX))
                .collect();
            notes.sort();
            notes
                .iter()
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .collect()
        }
        Err(_) => Vec::new(),
    };
    // Each program is compiled once, for all its launches.
    let mut kernels: HashMap<u32, Result<Vec<ReflectedKernel>, String>> = HashMap::new();
    let mut devices = std::collections::BTreeSet::new();
    for path in records {
        let launch: LaunchRecord = read_json(&path)?;
        devices.extend(launch.device.clone());
        let program: ProgramRecord =
            read_json(&raw.join(format!("program-{}.json", launch.program)))?;
        let name = format!(
            "{} #{} (launch {})",
            launch.kernel, launch.index, launch.sequence
        );
        let reflected = kernels
            .entry(program.id)
            .or_insert_with(|| compile_program(&program, raw, session));
        match reflected
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|reflected| manifest_for(&launch, &program, reflected))
        {
            Ok(text) => {
                let file = format!("launch-{:06}.toml", launch.sequence);
                std::fs::write(out.join(&file), text)
                    .map_err(|e| Error::input(format!("{}: {e}", out.join(&file).display())))?;
                let expected = launch
                    .args
                    .iter()
                    .enumerate()
                    .filter_map(|(k, a)| match a {
                        ArgRecord::Buffer { output_file: Some(f), .. }
                        | ArgRecord::Image { output_file: Some(f), .. } => {
                            Some(Expected { arg: k, file: format!("raw/{f}") })
                        }
                        _ => None,
                    })
                    .collect();
                launches.push(CapturedLaunch {
                    sequence: launch.sequence,
                    kernel: launch.kernel.clone(),
                    index: launch.index,
                    global_size: launch.global_size.clone(),
                    local_size: launch.local_size.clone(),
                    device_ns: launch.device_ns,
                    device: launch.device.as_ref().map(|d| d.name.clone()),
                    manifest: file,
                    expected,
                });
            }
            Err(why) => skipped.push(format!("{name}: {why}")),
        }
    }
    Ok(Written { launches, skipped, devices: devices.into_iter().collect() })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> crate::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::analysis(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::analysis(format!(
            "{}: not a record the capture layer writes: {e}",
            path.display()
        ))
    })
}

/// A manifest as TOML: what `clflow count` and the rest read.
#[derive(Serialize)]
struct ManifestOut {
    description: String,
    source: String,
    kernel: String,
    build_options: String,
    global_size: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    local_size: Option<Vec<u64>>,
    global_offset: Vec<u64>,
    arg: Vec<ArgOut>,
}

#[derive(Debug, Serialize, Default)]
struct SamplerOut {
    normalized: bool,
    address: &'static str,
    filter: &'static str,
}

#[derive(Debug, Default, Serialize)]
struct ArgOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    ty: Option<String>,
    /// An image's `ORDER/TYPE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shape: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampler: Option<SamplerOut>,
    /// Said for buffers of structs, which the file implies but only in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    noinit: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    local_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    null: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    same_as: Option<usize>,
}

/// The kernels of a captured program, compiled from its source with its
/// build options; or why it cannot be analysed.
fn compile_program(
    program: &ProgramRecord,
    raw: &Path,
    session: &Session,
) -> Result<Vec<ReflectedKernel>, String> {
    if let Some(why) = &program.not_analysable {
        return Err(format!("program {}: {why}", program.id));
    }
    let source = program
        .source_file
        .as_ref()
        .ok_or("the program's source was not recorded")?;
    let warnings = crate::input::ClangWarnings::Detail;
    prepare(
        &raw.join(source),
        &program.build_options,
        true,
        warnings,
        session,
    )
    .map(|input| input.kernels)
    .map_err(|e| e.message)
}

/// The launch's manifest, its arguments typed by the kernel's signature;
/// or why it cannot be written.
fn manifest_for(
    launch: &LaunchRecord,
    program: &ProgramRecord,
    kernels: &[ReflectedKernel],
) -> Result<String, String> {
    let source = program
        .source_file
        .as_ref()
        .ok_or("the program's source was not recorded")?;
    let kernel = kernels
        .iter()
        .find(|k| k.signature.name == launch.kernel)
        .ok_or_else(|| format!("kernel `{}` is not in its program", launch.kernel))?;
    let params = &kernel.signature.params;
    if params.len() != launch.args.len() {
        return Err(format!(
            "the kernel takes {} arguments, the application set {}",
            params.len(),
            launch.args.len()
        ));
    }
    let mut args = Vec::new();
    for (k, ((param, spelled), arg)) in params
        .iter()
        .zip(&kernel.source_types)
        .zip(&launch.args)
        .enumerate()
    {
        let at = || format!("arg {k}");
        let out = match (&param.kind, arg) {
            (
                ParamKind::Pointer { space, pointee, pointee_struct },
                ArgRecord::Buffer { bytes, file, read_only, write_only, never_written, .. },
            ) if *space != AddressSpace::Local => {
                let (ty, count) = match (pointee, whole_structs(pointee_struct, *bytes)) {
                    // A buffer of no whole number of elements: its bytes.
                    (Some(ty), _) if !bytes.is_multiple_of(ty.size_bytes() as u64) => {
                        ("uchar".into(), None)
                    }
                    (Some(ty), _) => (element_name(*ty, spelled.as_deref()), None),
                    (None, Some((name, count))) => (name, Some(count)),
                    // An opaque pointee, or structs of unknown or uneven size: bytes.
                    (None, None) => ("uchar".into(), None),
                };
                ArgOut {
                    ty: Some(ty),
                    count,
                    file: Some(format!("raw/{file}")),
                    // The bytes the device held, which nobody wrote.
                    noinit: never_written.then_some(true),
                    access: Some(match (read_only, write_only) {
                        (true, _) => "ro",
                        (_, true) => "wo",
                        _ => "rw",
                    }),
                    ..ArgOut::default()
                }
            }
            (
                ParamKind::Image { dim, access },
                ArgRecord::Image { order, channel_type, shape, file, .. },
            ) => {
                let format = match (
                    ChannelOrder::from_cl(*order),
                    ChannelType::from_cl(*channel_type),
                ) {
                    (Some(order), Some(ty)) => ImageFormat { order, ty },
                    _ => return Err(format!("{}: an image format clflow does not run", at())),
                };
                let image = ImageDesc::new(*dim, format, shape).map_err(|why| {
                    format!(
                        "{}: the kernel takes an {}, the application gave another image ({why})",
                        at(),
                        dim.name()
                    )
                })?;
                ArgOut {
                    ty: Some(image.dim.name().to_string()),
                    format: Some(format.to_string()),
                    shape: Some(image.shape()),
                    file: Some(format!("raw/{file}")),
                    access: Some(match access {
                        Access::ReadOnly => "ro",
                        Access::WriteOnly => "wo",
                        Access::ReadWrite => "rw",
                    }),
                    ..ArgOut::default()
                }
            }
            (ParamKind::Sampler, ArgRecord::Sampler { normalized, addressing, filter }) => {
                let address = match *addressing {
                    0x1130 => "none",
                    0x1131 => "clamp_to_edge",
                    0x1132 => "clamp",
                    0x1133 => "repeat",
                    0x1134 => "mirrored_repeat",
                    other => return Err(format!("{}: addressing mode {other:#x}", at())),
                };
                ArgOut {
                    sampler: Some(SamplerOut {
                        normalized: *normalized,
                        address,
                        filter: if *filter == 0x1141 {
                            "linear"
                        } else {
                            "nearest"
                        },
                    }),
                    ..ArgOut::default()
                }
            }
            (ParamKind::Pointer { space, .. }, ArgRecord::NullValue { size }) => {
                if *space == AddressSpace::Local {
                    ArgOut { local_bytes: Some(*size), ..ArgOut::default() }
                } else {
                    ArgOut { null: Some(true), ..ArgOut::default() }
                }
            }
            // A null cl_mem passed by value is OpenCL's NULL buffer argument.
            (
                ParamKind::Pointer { space: AddressSpace::Global | AddressSpace::Constant, .. },
                ArgRecord::Value { bytes },
            ) if is_null_handle(bytes) => ArgOut { null: Some(true), ..ArgOut::default() },
            (ParamKind::Scalar { ty }, ArgRecord::Value { bytes }) => {
                let ty = spelled_element(*ty, spelled.as_deref());
                ArgOut {
                    ty: Some(ty.to_string()),
                    value: Some(value_of(ty, bytes).ok_or_else(|| {
                        format!("{}: {} bytes are not a {ty}", at(), bytes.len())
                    })?),
                    ..ArgOut::default()
                }
            }
            (
                ParamKind::Pointer { space: AddressSpace::Global | AddressSpace::Constant, .. },
                ArgRecord::SameBuffer { arg },
            ) => ArgOut { same_as: Some(*arg), ..ArgOut::default() },
            (kind, ArgRecord::Unsupported { what }) => {
                return Err(format!("{}: {what} ({kind}) is not captured", at()))
            }
            (_, ArgRecord::Unset) => return Err(format!("{}: the application never set it", at())),
            (kind, other) => {
                return Err(format!(
                    "{}: a {kind} parameter was given {}",
                    at(),
                    match other {
                        ArgRecord::Buffer { .. } | ArgRecord::SameBuffer { .. } => "a buffer",
                        ArgRecord::Image { .. } => "an image",
                        ArgRecord::Sampler { .. } => "a sampler",
                        ArgRecord::Value { .. } => "a value",
                        _ => "a NULL value",
                    }
                ))
            }
        };
        args.push(ArgOut { name: param.name.clone(), ..out });
    }
    let manifest = ManifestOut {
        description: format!(
            "launch {} of the application ({} #{}), captured",
            launch.sequence, launch.kernel, launch.index
        ),
        source: format!("raw/{source}"),
        kernel: launch.kernel.clone(),
        build_options: program.build_options.clone(),
        global_size: launch.global_size.clone(),
        local_size: launch.local_size.clone(),
        global_offset: launch.global_offset.clone(),
        arg: args,
    };
    toml::to_string(&manifest).map_err(|e| format!("cannot write its manifest: {e}"))
}

/// Whether a value an application set is a null `cl_mem`: a handle's
/// size (4 or 8 bytes, as the host's pointers), all zero.
fn is_null_handle(bytes: &[u8]) -> bool {
    matches!(bytes.len(), 4 | 8) && bytes.iter().all(|&b| b == 0)
}

/// The element type as the source spelt it (`int` rather than the
/// sign-less width SPIR-V gives), where the spelling names one of the
/// same size.
fn spelled_element(reflected: ElementType, spelled: Option<&str>) -> ElementType {
    let parsed = spelled.and_then(|s| {
        let bare: String = s
            .replace(['*', '&'], " ")
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
            .collect::<Vec<_>>()
            .join(" ");
        bare.parse::<ElementType>().ok()
    });
    match parsed {
        Some(ty) if ty.size_bytes() == reflected.size_bytes() && ty.lanes == reflected.lanes => ty,
        _ => reflected,
    }
}

/// A buffer of `bytes` as structs: the struct's name and how many, where
/// the kernel points to a struct of known size that divides it evenly.
fn whole_structs(record: &Option<StructType>, bytes: u64) -> Option<(String, u64)> {
    let record = record.as_ref()?;
    let size = record.size_bytes? as u64;
    (size > 0 && bytes > 0 && bytes.is_multiple_of(size))
        .then(|| (record.name.clone(), bytes / size))
}

fn element_name(reflected: ElementType, spelled: Option<&str>) -> String {
    spelled_element(reflected, spelled).to_string()
}

/// A scalar or vector argument's bytes as a manifest value.
fn value_of(ty: ElementType, bytes: &[u8]) -> Option<toml::Value> {
    let size = ty.scalar.size_bytes();
    let lanes: Vec<toml::Value> = (0..ty.lanes as usize)
        .map(|lane| {
            let b = bytes.get(lane * size..(lane + 1) * size)?;
            let mut wide = [0u8; 8];
            wide[..size].copy_from_slice(b);
            let raw = u64::from_le_bytes(wide);
            Some(match ty.scalar {
                ScalarType::Float => toml::Value::Float(f64::from(f32::from_bits(raw as u32))),
                ScalarType::Double => toml::Value::Float(f64::from_bits(raw)),
                ScalarType::Half => toml::Value::Float(clflow_core::half::to_f64(raw as u16)),
                s if s.is_signed() => {
                    let shift = 64 - 8 * size as u32;
                    toml::Value::Integer(((raw << shift) as i64) >> shift)
                }
                _ => toml::Value::Integer(i64::try_from(raw).ok()?),
            })
        })
        .collect::<Option<_>>()?;
    Some(match lanes.as_slice() {
        [one] => one.clone(),
        _ => toml::Value::Array(lanes),
    })
}

/// `capture.toml`: the command, when, how it ended, and every launch.
fn write_index(
    out: &Path,
    options: &CaptureOptions,
    status: ExitStatus,
    written: &Written,
) -> crate::Result<()> {
    #[derive(Serialize)]
    struct Index<'a> {
        command: Vec<String>,
        captured_at: String,
        /// Whether the application ended normally; a crashed one leaves
        /// the launches it made before.
        complete: bool,
        exit_status: Option<i32>,
        kernels: Vec<String>,
        /// The `--launches` rules; none takes every launch.
        launches_selected: &'a [String],
        /// Launches recorded that could not become manifests, and why.
        not_analysable: &'a [String],
        device: &'a [DeviceRecord],
        launch: &'a [CapturedLaunch],
    }
    let index = Index {
        command: options
            .app
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        captured_at: clflow_devices::rfc3339_utc(std::time::SystemTime::now()),
        complete: status.success(),
        exit_status: status.code(),
        kernels: options.kernels.clone(),
        launches_selected: &options.launches,
        not_analysable: &written.skipped,
        device: &written.devices,
        launch: &written.launches,
    };
    let text = toml::to_string(&index)
        .map_err(|e| Error::analysis(format!("cannot write capture.toml: {e}")))?;
    let path = out.join("capture.toml");
    std::fs::write(&path, text).map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

/// A capture's `capture.toml`, read back.
#[derive(Debug, Deserialize)]
pub struct CaptureIndex {
    pub command: Vec<String>,
    pub exit_status: Option<i32>,
    #[serde(default)]
    pub launch: Vec<CapturedLaunch>,
}

/// Whether `path` is a capture: its directory, or its capture.toml.
pub fn is_capture(path: &Path) -> bool {
    path.is_dir() || path.file_name().is_some_and(|n| n == "capture.toml")
}

/// Reads a capture (its directory or its capture.toml); the directory its
/// manifests are in.
pub fn read_capture(path: &Path) -> crate::Result<(CaptureIndex, PathBuf)> {
    let (dir, index) = if path.is_dir() {
        (path.to_path_buf(), path.join("capture.toml"))
    } else {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        (dir, path.to_path_buf())
    };
    let text = std::fs::read_to_string(&index).map_err(|e| {
        Error::input(format!("{}: {e}", index.display()))
            .with_hint("give a directory `clflow capture --out` wrote, or its capture.toml")
    })?;
    let parsed = toml::from_str(&text).map_err(|e| {
        Error::input(format!(
            "{}: not a capture.toml clflow wrote: {e}",
            index.display()
        ))
    })?;
    Ok((parsed, dir))
}

/// `paths` with every capture among them replaced by its launches'
/// manifests, in launch order.
pub fn expand(paths: &[PathBuf]) -> crate::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if is_capture(path) {
            let (index, dir) = read_capture(path)?;
            out.extend(index.launch.iter().map(|l| dir.join(&l.manifest)));
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// How the interpreter's outputs of a launch compare with the device's.
#[derive(Debug, Clone, Serialize)]
pub struct OutputsCheck {
    pub matches: bool,
    /// Where they first differ.
    pub difference: Option<Mismatch>,
}

/// The interpreter's buffers against the device's after a captured launch,
/// each as its argument's type: integers exactly, floats within the
/// tolerance OpenCL's own latitude calls for (`crate::outputs`), since a
/// builtin such as `exp` may round otherwise on the device.
pub fn compare_outputs(
    dir: &Path,
    launch: &CapturedLaunch,
    types: &[Option<ElementType>],
    outputs: &[clflow_interp::OutputBuffer],
) -> crate::Result<OutputsCheck> {
    for expected in &launch.expected {
        let path = dir.join(&expected.file);
        let device = clflow_manifest::data_file::read(&path)
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        let Some(ours) = outputs.iter().find(|b| b.arg == expected.arg) else {
            continue;
        };
        let label = match &ours.name {
            Some(name) => format!("arg {} ({name})", expected.arg),
            None => format!("arg {}", expected.arg),
        };
        // Bytes compare exactly where the type is unknown.
        let ty = types
            .get(expected.arg)
            .copied()
            .flatten()
            .unwrap_or(ElementType::scalar(ScalarType::UChar));
        let difference = if device.len() != ours.bytes.len() {
            Some(Mismatch {
                buffer: label,
                index: 0,
                lane: None,
                expected: format!("{} bytes", ours.bytes.len()),
                got: format!("{} bytes", device.len()),
                differing: 0,
                elements: 0,
                tolerance: Tolerance::for_type(ty.scalar),
            })
        } else {
            compare_buffer(&label, ty, &ours.bytes, &device).err()
        };
        if difference.is_some() {
            return Ok(OutputsCheck { matches: false, difference });
        }
    }
    Ok(OutputsCheck { matches: true, difference: None })
}

/// W and Q of one captured launch, and whether the interpreter computed
/// what the device did.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchCount {
    pub sequence: u64,
    pub kernel: String,
    pub index: u64,
    pub manifest: String,
    /// Counted (its faults, if any, in `faults`), or why not.
    pub status: LaunchStatus,
    /// Why it was not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// W and Q, where counted.
    #[serde(rename = "W", skip_serializing_if = "Option::is_none")]
    pub w: Option<clflow_counts::WorkReport>,
    #[serde(rename = "Q", skip_serializing_if = "Option::is_none")]
    pub q: Option<clflow_counts::TrafficReport>,
    /// Whether the interpreter's outputs equal the device's; false, and
    /// not compared, where the launch was sampled (`sample`) or not counted.
    pub outputs_match: bool,
    /// Where they first differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<Mismatch>,
    /// Where `--sample` counted part of the launch: how, and the intervals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<clflow_interp::SampleReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ns: Option<u64>,
    /// What the kernel printed (printf) as the interpreter ran it.
    #[serde(skip)]
    pub printed: Vec<u8>,
    /// The faults that stopped work-items, the undefined behaviour the
    /// count went through, and what the checkers `--detect` asked for found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::detect::Fault>,
    /// Where the outputs differ from the device's: what the checkers for
    /// undefined values and races (those `--detect` did not ask for) found
    /// on a second run, the kernel's bugs that leave its outputs to the
    /// device.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnosis: Vec<crate::detect::Fault>,
}

/// What became of one launch of a capture's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchStatus {
    Counted,
    /// Counted, with work-items stopped at a fault (`faults` says where).
    Faulted,
    /// Its manifest, inputs or kernel were refused (an input error).
    Refused,
    /// The analysis could not finish.
    Failed,
}

impl LaunchStatus {
    pub fn is_counted(self) -> bool {
        matches!(self, LaunchStatus::Counted | LaunchStatus::Faulted)
    }
}

/// Sums over launches.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub launches: u64,
    #[serde(rename = "W")]
    pub w: u64,
    /// Where launches were sampled, the half-width of the interval on W:
    /// the launches' own half-widths in quadrature (independent samples).
    #[serde(rename = "W_half_width", skip_serializing_if = "Option::is_none")]
    pub w_half_width: Option<f64>,
    #[serde(rename = "Q")]
    pub q: TotalTraffic,
    /// W over Q accessed, from the sums.
    #[serde(rename = "I")]
    pub i: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TotalTraffic {
    pub load_bytes: u64,
    pub store_bytes: u64,
    pub accessed: u64,
}

impl Totals {
    fn add(&mut self, launch: &LaunchCount) {
        let (Some(w), Some(q)) = (&launch.w, &launch.q) else {
            return;
        };
        self.launches += 1;
        self.w += w.total;
        if let Some(sample) = &launch.sample {
            let half = sample.w.high.saturating_sub(sample.w.low) as f64 / 2.0;
            let sum = self.w_half_width.unwrap_or(0.0);
            self.w_half_width = Some((sum * sum + half * half).sqrt());
        }
        self.q.load_bytes += q.load_bytes;
        self.q.store_bytes += q.store_bytes;
        self.q.accessed += q.accessed;
        self.i = (self.q.accessed > 0).then(|| self.w as f64 / self.q.accessed as f64);
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CaptureTotals {
    #[serde(flatten)]
    pub all: Totals,
    pub per_kernel: std::collections::BTreeMap<String, Totals>,
}

/// What `clflow count` says of a whole capture: every launch, and the
/// totals of those counted.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureCount {
    pub capture: PathBuf,
    pub launches: Vec<LaunchCount>,
    pub totals: CaptureTotals,
}

impl CaptureCount {
    /// The launches that could not be counted.
    pub fn not_counted(&self) -> impl Iterator<Item = &LaunchCount> {
        self.launches.iter().filter(|l| !l.status.is_counted())
    }
}

/// Counts every launch of a capture on its captured inputs, with the
/// checkers `detect` asks for watching, and checks the interpreter's
/// outputs against the device's (but where `options` samples: a sample's
/// outputs are partial). A launch that cannot be counted is reported with
/// why, and the others still are.
pub fn count_capture(
    path: &Path,
    ops: &clflow_counts::OpSet,
    options: &clflow_interp::RunOptions,
    detect: crate::detect::Detect,
    session: &Session,
) -> crate::Result<CaptureCount> {
    let (index, dir) = read_capture(path)?;
    let mut launches = Vec::new();
    let mut totals = CaptureTotals::default();
    for launch in &index.launch {
        let counted = count_launch(&dir, launch, ops, options, detect, session)
            .unwrap_or_else(|err| LaunchCount::not_counted(launch, &err));
        if counted.status.is_counted() {
            totals.all.add(&counted);
            totals
                .per_kernel
                .entry(counted.kernel.clone())
                .or_default()
                .add(&counted);
        }
        launches.push(counted);
    }
    Ok(CaptureCount { capture: dir, launches, totals })
}

fn count_launch(
    dir: &Path,
    launch: &CapturedLaunch,
    ops: &clflow_counts::OpSet,
    options: &clflow_interp::RunOptions,
    detect: crate::detect::Detect,
    session: &Session,
) -> crate::Result<LaunchCount> {
    let manifest = dir.join(&launch.manifest);
    let (result, faults, types) = interpret_launch(&manifest, options, detect, session)?;
    // A sample's outputs hold only what its work-groups wrote.
    let check = match result.sample {
        Some(_) => OutputsCheck { matches: false, difference: None },
        None => compare_outputs(dir, launch, &types, &result.buffers)?,
    };
    let diagnosis = match check.matches || result.sample.is_some() {
        true => Vec::new(),
        false => diagnose(&manifest, detect, options, session)?,
    };
    let report = result.counts.report(ops);
    Ok(LaunchCount {
        sequence: launch.sequence,
        kernel: launch.kernel.clone(),
        index: launch.index,
        manifest: launch.manifest.clone(),
        status: match faults.iter().any(crate::detect::Fault::fails) {
            false => LaunchStatus::Counted,
            true => LaunchStatus::Faulted,
        },
        error: None,
        w: Some(report.w),
        q: Some(report.q),
        outputs_match: check.matches,
        difference: check.difference,
        sample: result.sample.clone(),
        device_ns: launch.device_ns,
        printed: result.printed_bytes(),
        faults,
        diagnosis,
    })
}

/// A captured launch run with the checkers `detect` asks for: what it did,
/// the faults, and the type of each argument's outputs.
fn interpret_launch(
    manifest: &Path,
    options: &clflow_interp::RunOptions,
    detect: crate::detect::Detect,
    session: &Session,
) -> crate::Result<(
    clflow_interp::RunResult,
    Vec<crate::detect::Fault>,
    Vec<Option<ElementType>>,
)> {
    let (input, materialised) = crate::input::prepare_manifest(manifest, "count", session)?;
    let types = materialised
        .args
        .iter()
        .map(|arg| crate::outputs::output_type(&arg.value))
        .collect();
    let counted = crate::count::interpret(
        manifest,
        &input.module,
        std::borrow::Cow::Owned(materialised),
        &input.run_options(options),
        crate::count::Watch::default().detect(detect),
        session.observer(),
    )?;
    Ok((counted.run, counted.faults, types))
}

/// A launch whose outputs differ from the device's, run again with the
/// checkers for what leaves outputs to the device (undefined values used,
/// races) that `detect` did not run: what they find.
fn diagnose(
    manifest: &Path,
    detect: crate::detect::Detect,
    options: &clflow_interp::RunOptions,
    session: &Session,
) -> crate::Result<Vec<crate::detect::Fault>> {
    let wanted = crate::detect::Detect {
        uninit: !detect.uninit,
        races: !detect.races,
        ..Default::default()
    };
    if wanted == crate::detect::Detect::default() {
        return Ok(Vec::new());
    }
    session.observer().detail(format!(
        "{}: outputs differ; run again with checkers",
        manifest.display()
    ));
    let (_, found, _) = interpret_launch(manifest, options, wanted, session)?;
    Ok(found
        .into_iter()
        .filter(|f| f.kind != "stop" && f.kind != "undefined")
        .collect())
}

impl LaunchCount {
    /// A launch `err` kept from being counted.
    fn not_counted(launch: &CapturedLaunch, err: &Error) -> Self {
        LaunchCount {
            sequence: launch.sequence,
            kernel: launch.kernel.clone(),
            index: launch.index,
            manifest: launch.manifest.clone(),
            status: match err.kind {
                clflow_core::FailureKind::Input => LaunchStatus::Refused,
                _ => LaunchStatus::Failed,
            },
            error: Some(err.message.clone()),
            w: None,
            q: None,
            outputs_match: false,
            difference: None,
            sample: None,
            device_ns: launch.device_ns,
            printed: Vec::new(),
            faults: Vec::new(),
            diagnosis: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_structs_only_when_whole() {
        let particle = |size_bytes| {
            Some(StructType {
                name: "struct Particle".into(),
                size_bytes,
                members: Vec::new(),
            })
        };
        assert_eq!(
            whole_structs(&particle(Some(48)), 48 * 256),
            Some(("struct Particle".into(), 256))
        );
        // A region that ends mid-struct, or a struct of unknown size, is bytes.
        assert_eq!(whole_structs(&particle(Some(48)), 100), None);
        assert_eq!(whole_structs(&particle(None), 96), None);
        assert_eq!(whole_structs(&None, 96), None);
    }
}
