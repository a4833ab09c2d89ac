//! A program's source (OpenCL C, or a SPIR-V module given as such) and its
//! build on a device.
//!
//! Programs are built from OpenCL C source on the device wherever there is
//! source: not every runtime takes SPIR-V (PoCL 3.1 on CPU does not), and
//! every runtime takes OpenCL C. A SPIR-V module runs only where the device
//! takes intermediate language.

use crate::discovery::OclDevice;
use crate::error::{OclError, Result, Step};
use opencl3::context::Context;
use opencl3::error_codes::{CL_BUILD_PROGRAM_FAILURE, CL_INVALID_BUILD_OPTIONS};
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// OpenCL C source text (or a SPIR-V module), where it came from, and the
/// options to build it with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramSource {
    /// A path or a short label; names the program in error messages.
    pub origin: String,
    pub text: String,
    pub build_options: String,
    /// A SPIR-V module, built with `clCreateProgramWithIL` instead of
    /// `text`.
    #[serde(default)]
    pub il: Option<Vec<u8>>,
}

/// The first bytes of a little-endian SPIR-V module.
const SPIRV_MAGIC_LE: [u8; 4] = 0x0723_0203u32.to_le_bytes();

impl ProgramSource {
    /// The file's OpenCL C text, or its SPIR-V module where it is one (by
    /// its magic number, whatever its name).
    pub fn from_file(path: &Path, build_options: &str) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| OclError::io(path.display(), e))?;
        let origin = path.display().to_string();
        if bytes.starts_with(&SPIRV_MAGIC_LE) {
            return Ok(ProgramSource {
                origin,
                text: String::new(),
                build_options: build_options.to_string(),
                il: Some(bytes),
            });
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            OclError::io(
                path.display(),
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
            )
        })?;
        Ok(Self::from_text(&origin, &text, build_options))
    }

    pub fn from_text(origin: &str, text: &str, build_options: &str) -> Self {
        ProgramSource {
            origin: origin.to_string(),
            text: text.to_string(),
            build_options: build_options.to_string(),
            il: None,
        }
    }
}

/// Builds `source` for `device` in `context` and creates the kernel `name`.
pub(crate) fn build_kernel(
    context: &Context,
    device: &OclDevice,
    source: &ProgramSource,
    name: &str,
) -> Result<(Program, Kernel, String)> {
    let mut program = match &source.il {
        Some(_) if !device.info.spirv => {
            return Err(OclError::Launch {
                kernel: name.to_string(),
                problem: format!(
                    "{} is a SPIR-V module and {} takes no SPIR-V (CL_DEVICE_IL_VERSION {}); \
                     give its OpenCL C source to run it there",
                    source.origin,
                    device.info.label(),
                    device.info.il_version.as_deref().unwrap_or("empty")
                ),
            })
        }
        Some(il) => Program::create_from_il(context, il),
        None => Program::create_from_source(context, &source.text),
    }
    .step(|| format!("{}: creating the program", source.origin))?;
    let (built, chatter) =
        capturing_stderr(|| program.build(&[device.device.id()], &source.build_options));
    if let Err(err) = built {
        let log = program
            .get_build_log(device.device.id())
            .unwrap_or_default();
        return Err(match err.0 {
            CL_BUILD_PROGRAM_FAILURE | CL_INVALID_BUILD_OPTIONS => OclError::Build {
                origin: source.origin.clone(),
                device: device.info.label(),
                code: err.0,
                log: if log.trim().is_empty() {
                    format!(
                        "{} with options '{}'",
                        opencl3::error_codes::error_text(err.0),
                        source.build_options
                    )
                } else {
                    log
                },
            },
            code => OclError::Cl {
                step: format!("{}: building the program", source.origin),
                code,
            },
        });
    }
    let kernel =
        Kernel::create(&program, name).map_err(|err| match program.get_kernel_names() {
            Ok(available) if !available.split(';').any(|k| k == name) => OclError::NoSuchKernel {
                origin: source.origin.clone(),
                kernel: name.to_string(),
                available: available.replace(';', ", "),
            },
            _ => OclError::Cl {
                step: format!("{}: creating kernel '{name}'", source.origin),
                code: err.0,
            },
        })?;
    Ok((program, kernel, chatter))
}

/// Runs `f` with this process's stderr captured, and gives back what was
/// written there: an OpenCL runtime's compiler may print its warnings
/// ("1 warning generated.") straight to the terminal. Where stderr cannot
/// be captured (it already is), `f` runs as it is.
fn capturing_stderr<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::io::Read;
    let Ok(mut redirect) = gag::BufferRedirect::stderr() else {
        return (f(), String::new());
    };
    let value = f();
    let mut said = String::new();
    let _ = redirect.read_to_string(&mut said);
    (value, said)
}
