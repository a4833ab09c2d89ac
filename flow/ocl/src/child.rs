//! Running a launch in a helper process (`clflow-ocl-child`).
//!
//! The OpenCL library is loaded once per process and chosen from the
//! environment at load time (`OPENCL_DYLIB_PATH`), so running on a different
//! runtime than the parent's, such as Oclgrind's, takes a fresh process.
//!
//! The exchange goes through a scratch directory: `request.json` holds the
//! program and the launch with its buffers left empty, each buffer travels
//! as raw bytes in `arg<N>.bin`; the child answers with `response.json`
//! (the result or the typed error) and the outputs in `out<N>.bin`.

use crate::discovery::{select_device, DeviceSelector};
use crate::error::{OclError, Result};
use crate::execute::{run_launch, LaunchResult};
use crate::program::ProgramSource;
use clflow_core::{ArgValue, Launch, LaunchArg};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The helper binary's name, installed beside `clflow`.
pub const CHILD_BINARY: &str = "clflow-ocl-child";

const REQUEST: &str = "request.json";
const RESPONSE: &str = "response.json";

#[derive(Debug, Serialize, Deserialize)]
struct Request {
    /// The device to run on, as a user would select it.
    device: String,
    program: ProgramSource,
    /// The launch with every buffer's bytes moved out to `arg<N>.bin`.
    launch: Launch,
}

#[derive(Debug, Serialize, Deserialize)]
struct Response {
    kernel_ns: u64,
    build_ns: u64,
    /// Which arguments have an `out<N>.bin`.
    outputs: Vec<bool>,
}

/// How the parent starts the helper.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    pub program: PathBuf,
    /// Set in the child's environment only.
    pub env: Vec<(String, String)>,
}

/// What the helper process gave back.
#[derive(Debug)]
pub struct ChildRun {
    /// The launch's result or its error, as the helper met it.
    pub result: Result<LaunchResult>,
    /// The helper's standard output and error, where runtimes report.
    pub stdout: String,
    pub stderr: String,
}

impl ChildCommand {
    /// The helper found the usual way: `$CLFLOW_OCL_CHILD`, else beside the
    /// running executable (or one directory up, where test binaries run).
    pub fn locate() -> Result<Self> {
        let program = locate_child()?;
        Ok(ChildCommand { program, env: Vec::new() })
    }

    /// Runs `launch` on the device `device` selects inside the helper. The
    /// outer error means the helper itself failed; the launch's own error is
    /// in [`ChildRun::result`], beside what the helper printed.
    pub fn run(&self, device: &str, source: &ProgramSource, launch: &Launch) -> Result<ChildRun> {
        let name = self.program.display().to_string();
        let fail = |problem: String| OclError::Child { program: name.clone(), problem };
        let dir = tempfile::Builder::new()
            .prefix("clflow-ocl-")
            .tempdir()
            .map_err(|e| fail(format!("creating a scratch directory: {e}")))?;
        write_request(dir.path(), device, source, launch)?;
        let output = Command::new(&self.program)
            .arg(dir.path())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| fail(format!("could not start: {e}")))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let response_path = dir.path().join(RESPONSE);
        if !response_path.exists() {
            let said: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let last_words = match &said[said.len().saturating_sub(3)..] {
                [] => "none".to_string(),
                lines => lines.join(" | "),
            };
            return Err(fail(format!(
                "ended ({}) without an answer; its last words: {last_words}",
                output.status
            )));
        }
        let result = read_response(dir.path(), launch)?;
        Ok(ChildRun { result, stdout, stderr })
    }
}

/// The helper's side: answers the request in `dir`. Errors of the launch go
/// into the response; the returned error means no response could be written.
pub fn serve(dir: &Path) -> Result<()> {
    let answer = read_request(dir).and_then(|(device, source, launch)| {
        let device = select_device(Some(&DeviceSelector::parse(&device)))?;
        let result = run_launch(&device, &source, &launch)?;
        let mut written = Vec::with_capacity(result.outputs.len());
        for (index, output) in result.outputs.iter().enumerate() {
            if let Some(bytes) = output {
                write_file(&dir.join(format!("out{index}.bin")), bytes)?;
            }
            written.push(output.is_some());
        }
        Ok(Response {
            kernel_ns: result.kernel_ns,
            build_ns: result.build_ns,
            outputs: written,
        })
    });
    let json = serde_json::to_vec(&answer).map_err(|e| OclError::Child {
        program: CHILD_BINARY.into(),
        problem: format!("encoding the response: {e}"),
    })?;
    write_file(&dir.join(RESPONSE), &json)
}

fn write_request(dir: &Path, device: &str, source: &ProgramSource, launch: &Launch) -> Result<()> {
    let mut args = Vec::with_capacity(launch.args.len());
    for (index, arg) in launch.args.iter().enumerate() {
        let value = match &arg.value {
            ArgValue::Buffer { ty, access, bytes } => {
                write_file(&dir.join(format!("arg{index}.bin")), bytes)?;
                ArgValue::Buffer { ty: *ty, access: *access, bytes: Vec::new() }
            }
            other => other.clone(),
        };
        args.push(LaunchArg { name: arg.name.clone(), value });
    }
    let request = Request {
        device: device.to_string(),
        program: source.clone(),
        launch: Launch {
            kernel: launch.kernel.clone(),
            range: launch.range.clone(),
            args,
        },
    };
    let json = serde_json::to_vec(&request).map_err(|e| OclError::Child {
        program: CHILD_BINARY.into(),
        problem: format!("encoding the request: {e}"),
    })?;
    write_file(&dir.join(REQUEST), &json)
}

fn read_request(dir: &Path) -> Result<(String, ProgramSource, Launch)> {
    let path = dir.join(REQUEST);
    let json = std::fs::read(&path).map_err(|e| OclError::io(path.display(), e))?;
    let mut request: Request = serde_json::from_slice(&json).map_err(|e| OclError::Child {
        program: CHILD_BINARY.into(),
        problem: format!("{}: malformed request: {e}", path.display()),
    })?;
    for (index, arg) in request.launch.args.iter_mut().enumerate() {
        if let ArgValue::Buffer { bytes, .. } = &mut arg.value {
            *bytes = read_file(&dir.join(format!("arg{index}.bin")))?;
        }
    }
    Ok((request.device, request.program, request.launch))
}

/// The helper's answer: the outer error when it cannot be read, the inner
/// one when the launch failed.
fn read_response(dir: &Path, launch: &Launch) -> Result<Result<LaunchResult>> {
    let path = dir.join(RESPONSE);
    let json = std::fs::read(&path).map_err(|e| OclError::io(path.display(), e))?;
    let answer: Result<Response> = serde_json::from_slice(&json).map_err(|e| OclError::Child {
        program: CHILD_BINARY.into(),
        problem: format!("{}: malformed response: {e}", path.display()),
    })?;
    let response = match answer {
        Ok(response) => response,
        Err(err) => return Ok(Err(err)),
    };
    let mut outputs = Vec::with_capacity(launch.args.len());
    for (index, present) in response.outputs.iter().enumerate() {
        outputs.push(if *present {
            Some(read_file(&dir.join(format!("out{index}.bin")))?)
        } else {
            None
        });
    }
    Ok(Ok(LaunchResult {
        outputs,
        kernel_ns: response.kernel_ns,
        build_ns: response.build_ns,
    }))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| OclError::io(path.display(), e))
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| OclError::io(path.display(), e))
}

fn locate_child() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("CLFLOW_OCL_CHILD") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(|e| OclError::Child {
        program: CHILD_BINARY.into(),
        problem: format!("cannot tell where the running executable lives: {e}"),
    })?;
    let file_name = format!("{CHILD_BINARY}{}", std::env::consts::EXE_SUFFIX);
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(&file_name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| OclError::Child {
            program: CHILD_BINARY.into(),
            problem: format!(
                "not found beside {}: build it with `cargo build -p clflow-ocl` or set CLFLOW_OCL_CHILD",
                exe.display()
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::{Access, ElementType, NdRange, ScalarType};

    #[test]
    fn requests_keep_buffers_out_of_json_and_restore_them() {
        let launch = Launch {
            kernel: "k".into(),
            range: NdRange { dims: 1, global: [4, 1, 1], local: None, offset: [0; 3] },
            args: vec![
                LaunchArg {
                    name: Some("data".into()),
                    value: ArgValue::Buffer {
                        ty: ElementType::scalar(ScalarType::UChar),
                        access: Access::ReadWrite,
                        bytes: vec![0xAB; 4096],
                    },
                },
                LaunchArg {
                    name: None,
                    value: ArgValue::Scalar { bytes: vec![1, 2, 3, 4] },
                },
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let source = ProgramSource::from_text("k.cl", "__kernel void k() {}", "-DX=1");
        write_request(dir.path(), "oclgrind", &source, &launch).unwrap();
        let json = std::fs::read(dir.path().join(REQUEST)).unwrap();
        assert!(json.len() < 1024, "buffers travel as files, not JSON");
        assert_eq!(
            std::fs::read(dir.path().join("arg0.bin")).unwrap(),
            vec![0xAB; 4096]
        );
        let (device, read_source, read_launch) = read_request(dir.path()).unwrap();
        assert_eq!(
            (device.as_str(), read_source, read_launch),
            ("oclgrind", source, launch)
        );
    }
}
