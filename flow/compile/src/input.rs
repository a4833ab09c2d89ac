//! What a kernel file is, by its contents rather than its name: a SPIR-V
//! module (its magic number) is taken as it is, anything else that is text
//! is OpenCL C, and a file that is neither is refused before any tool runs.

use crate::CompileError;
use std::io::Read;
use std::path::Path;

/// A kernel file's kind.
pub enum Input {
    OpenClC,
    /// The module's bytes.
    Spirv(Vec<u8>),
}

/// How much of a file is looked at to tell text from binary data (a file
/// such as /dev/zero never ends).
const SNIFF_BYTES: u64 = 64 * 1024;

pub fn sniff(path: &Path) -> Result<Input, CompileError> {
    let unreadable = |e: std::io::Error| CompileError::SourceUnreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(SNIFF_BYTES).read_to_end(&mut head))
        .map_err(unreadable)?;
    let magic = clflow_spirv::SPIRV_MAGIC;
    if head.starts_with(&magic.to_le_bytes()) || head.starts_with(&magic.to_be_bytes()) {
        let bytes = std::fs::read(path).map_err(unreadable)?;
        return Ok(Input::Spirv(bytes));
    }
    if let Some(at) = head.iter().position(|&b| b == 0) {
        return Err(CompileError::NotAKernel {
            path: path.to_path_buf(),
            reason: format!(
                "neither a SPIR-V module (it does not start with the magic number 0x07230203) \
                 nor OpenCL C text (byte {at} is NUL)"
            ),
        });
    }
    Ok(Input::OpenClC)
}
